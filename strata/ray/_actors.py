"""The shard actors and the driver's handle on them.

A shard is one Ray actor owning one strata object (Index, FlatIndex or
Collection) in its worker process. The driver talks to all of them through
a ShardPool: it starts the actors, sends one call per shard, waits for all
answers, and turns Ray's error wrappers back into what the strata object
raised (ValueError, KeyError, ...) or, when an actor's process is gone, into
ShardDiedError naming the shard.

Actors are created with num_cpus=0 by default: a shard is a data holder
whose engine calls use their own threads, and N shards must fit on a node
with fewer than N CPUs. SPREAD scheduling puts the shards of one index on
as many nodes as the cluster has.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

DEFAULT_ACTOR_OPTIONS: dict[str, Any] = {
    "num_cpus": 0,
    "scheduling_strategy": "SPREAD",
    "max_restarts": 0,  # a restarted actor would be empty: restart_shards() reopens it instead
}

INLINE_BYTES = 100 * 1024
"""Arrays larger than this go through the object store (one ray.put), like Ray's own limit
for inlining task arguments; a batch of queries is put once and read by every shard."""

PING_TIMEOUT = 30.0


class ShardDiedError(RuntimeError):
    """A shard's actor (its worker process or its node) is gone.

    shard: its number; where: the file or directory it was loaded from (or
    None). Calls keep raising it until restart_shards() reopens the shard.
    """

    def __init__(self, shard: int, shards: int, where: str | None, hint: str, cause: str) -> None:
        self.shard, self.shards, self.where = shard, shards, where
        place = f" ({where})" if where else ""
        super().__init__(f"strata.ray: shard {shard} of {shards}{place} died: {cause}; {hint}")


def connect(address: str | None) -> None:
    """Joins the Ray cluster at address, or a local one, unless this process already has."""
    if not ray.is_initialized():
        ray.init(address=address)


def put_if_large(array: Any) -> Any:
    """An ObjectRef for a large array (passed by reference), the array itself otherwise."""
    return ray.put(array) if getattr(array, "nbytes", 0) > INLINE_BYTES else array


class _Shard:
    """Runs in a worker process: holds one strata object and calls its methods."""

    def __init__(self) -> None:
        self.obj: Any = None

    def pid(self) -> int:
        return os.getpid()

    def open(self, factory: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, str]:
        import strata  # here, not at the top: the engine starts in the worker, on first use

        owner, _, name = factory.partition(".")
        make = getattr(getattr(strata, owner), name) if name else getattr(strata, owner)
        self.obj = make(*args, **kwargs)
        return self.obj.dim, self.obj.metric

    def run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.obj, method)(*args, **kwargs)

    def close(self) -> None:
        if self.obj is not None:
            self.obj.close()
            self.obj = None


class _IndexShard(_Shard):
    def add(self, vectors: Any, ids: Any, num_threads: int | None) -> int:
        # The ids were assigned and checked by the driver; returning them would only
        # send them back.
        self.obj.add(vectors, ids, num_threads=num_threads)
        return len(ids)

    def search(self, queries: Any, k: int, ef: int | None, num_threads: int | None,
               filter_ids: Any, exclude_ids: Any, return_stats: bool) -> Any:
        # Keywords only when used: strata.FlatIndex.search has none of them, and
        # raises TypeError, as it should, when a filter is asked of it.
        extra: dict[str, Any] = {}
        if filter_ids is not None:
            extra["filter_ids"] = filter_ids
        if exclude_ids is not None:
            extra["exclude_ids"] = exclude_ids
        if return_stats:
            extra["return_stats"] = True
        return self.obj.search(queries, k, ef, num_threads, **extra)

    def missing(self, ids: Any) -> list[int]:
        return [int(i) for i in ids if not self.obj.contains(int(i))]


class _CollectionShard(_Shard):
    def query(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any, Any]:
        result = self.obj.query(*args, **kwargs)
        return result.ids, result.distances, result.metadata, result.stats

    def search_lists(self, subs: Any, limits: Any, where: Any, num_threads: Any,
                     include_metadata: bool) -> list[tuple[Any, Any, Any]]:
        """Each sub-query's own list on this shard: (ids, scores, documents), padding cut."""
        out = []
        for sub, limit in zip(subs, limits, strict=True):
            r = self.obj.search([sub], k=limit, fusion=None, where=where,
                                num_threads=num_threads,
                                include_metadata=include_metadata)  # fmt: skip
            scores = [x for x in r.scores[0].tolist() if not math.isnan(x)]  # NaN: padding
            n = len(scores)
            out.append((r.ids[0][:n].tolist(), scores, r.metadata[0][:n]))
        return out

    def scan_page(self, where: Any, limit: int, after: int | None,
                  include_vectors: bool) -> Any:
        """The first page (up to limit entries past after) of this shard's scan."""
        pages = self.obj.scan(where, limit, include_vectors, after=after)
        return next(pages, None)

    def upsert(self, args: tuple[Any, ...], ttl: Any, expires_at: Any) -> None:
        """strata.Collection.upsert with this shard's part of the expiry (keywords only)."""
        self.obj.upsert(*args, ttl=ttl, expires_at=expires_at)

    def missing(self, ids: Any) -> list[int]:
        found = set(self.obj.get(ids).ids.tolist())
        return [i for i in ids.tolist() if i not in found]


INDEX_SHARD = ray.remote(_IndexShard)
COLLECTION_SHARD = ray.remote(_CollectionShard)


class ShardPool:
    """The driver's side: one actor per shard, calls fanned out and gathered."""

    def __init__(
        self,
        actor_class: Any,
        shards: int,
        actor_options: dict[str, Any] | None,
        where: Callable[[int], str | None],
        hint: Callable[[int], str],
    ) -> None:
        self.actor_class = actor_class
        self.options = {**DEFAULT_ACTOR_OPTIONS, **(actor_options or {})}
        self.where, self.hint = where, hint
        self.actors = [self._spawn() for _ in range(shards)]

    def _spawn(self) -> Any:
        return self.actor_class.options(**self.options).remote()

    def __len__(self) -> int:
        return len(self.actors)

    def call(self, method: str, per_shard: Sequence[tuple[Any, ...]] | None = None,
             shards: Sequence[int] | None = None, **kwargs: Any) -> list[Any]:
        """Calls actor method on shards (all by default); per_shard[j] are the positional
        arguments for shards[j]. Returns the answers in the same order."""
        targets = range(len(self.actors)) if shards is None else shards
        refs = []
        for j, shard in enumerate(targets):
            args = () if per_shard is None else per_shard[j]
            refs.append(getattr(self.actors[shard], method).remote(*args, **kwargs))
        return self.gather(refs, list(targets))

    def run(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Calls the strata object's method name with the same arguments on every shard."""
        refs = [a.run.remote(name, *args, **kwargs) for a in self.actors]
        return self.gather(refs, list(range(len(self.actors))))

    def gather(self, refs: list[Any], shards: list[int]) -> list[Any]:
        try:
            return ray.get(refs)
        except (RayActorError, RayTaskError):
            pass
        # Something failed: find which shard, in shard order, and say so.
        for ref, shard in zip(refs, shards, strict=True):
            try:
                ray.get(ref)
            except RayActorError as exc:
                raise self.died(shard, exc) from None
            except RayTaskError as exc:
                raise _unwrap(exc, shard) from None
        raise AssertionError("unreachable: a gathered call failed but no shard reports it")

    def died(self, shard: int, exc: BaseException) -> ShardDiedError:
        text = str(exc).strip()
        cause = text.splitlines()[0].rstrip(".") if text else type(exc).__name__
        return ShardDiedError(shard, len(self.actors), self.where(shard), self.hint(shard), cause)

    def dead(self) -> list[int]:
        """The shards whose actor does not answer a ping."""
        refs = [a.pid.remote() for a in self.actors]
        out = []
        for shard, ref in enumerate(refs):
            try:
                ray.get(ref, timeout=PING_TIMEOUT)
            except (RayActorError, GetTimeoutError):
                out.append(shard)
        return out

    def respawn(self, shard: int) -> None:
        """Replaces shard's actor by a new, empty one (the caller reopens its data)."""
        old = self.actors[shard]
        with contextlib.suppress(RayActorError, ValueError):  # already gone
            ray.kill(old, no_restart=True)
        self.actors[shard] = self._spawn()

    def pids(self) -> list[int]:
        return self.call("pid")

    def shutdown(self) -> None:
        """Closes every shard's strata object (flushing a collection), then ends the actors."""
        refs = [a.close.remote() for a in self.actors]
        failure: BaseException | None = None
        try:
            for shard, ref in enumerate(refs):
                try:
                    ray.get(ref)
                except RayActorError:
                    pass  # a dead shard has nothing left to close
                except RayTaskError as exc:
                    failure = failure or _unwrap(exc, shard)
            if failure is not None:
                raise failure
        finally:
            for actor in self.actors:
                with contextlib.suppress(RayActorError, ValueError):
                    ray.kill(actor, no_restart=True)
            self.actors = []


def _unwrap(exc: RayTaskError, shard: int) -> BaseException:
    """What the strata object raised in the actor, with a note naming the shard."""
    cause = getattr(exc, "cause", None)
    if not isinstance(cause, BaseException):
        return exc
    if hasattr(cause, "add_note"):
        cause.add_note(f"(raised by shard {shard})")
    return cause
