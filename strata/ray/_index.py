"""ShardedIndex: one strata.Index (or FlatIndex) per Ray actor, searched as one.

The driver validates every argument with strata's own checks (so bad input
raises the same ValueError/TypeError as strata.Index, before any shard
changes), routes rows by a hash of their id (strata.ray._routing), sends
each shard one contiguous block, and merges the shards' top-k lists.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strata._index import METRICS, _as_ids, _as_rows, _id_list, _int
from strata.ray import _manifest
from strata.ray._actors import INDEX_SHARD, ShardDiedError, ShardPool, connect, put_if_large
from strata.ray._routing import ROUTING, group, merge_stats, merge_topk, shard_of

FORMAT = "strata-sharded-index"
_KINDS = {"hnsw": "Index", "flat": "FlatIndex"}
_INT64_MAX = 2**63 - 1
_U64 = np.dtype(np.uint64)


def _check_finite(vectors: npt.NDArray[np.float32]) -> None:
    # The engine checks this too, but only on the shard that got the bad row:
    # the others would already have added theirs.
    if not np.isfinite(vectors).all():
        row, col = np.argwhere(~np.isfinite(vectors.reshape(-1, vectors.shape[-1])))[0]
        value = "NaN" if np.isnan(vectors.reshape(-1, vectors.shape[-1])[row, col]) else "infinite"
        raise ValueError(f"vectors[{row}][{col}] is {value}; vectors must be finite")


def _check_distinct(ids: npt.NDArray[np.uint64]) -> None:
    unique, counts = np.unique(ids, return_counts=True)
    if unique.size != ids.size:
        dup = unique[counts > 1][0]
        where = np.flatnonzero(ids == dup)[:2]
        raise ValueError(f"duplicate id {dup} in one batch (ids[{where[0]}] and ids[{where[1]}])")


class ShardedIndex:
    """An index split over `shards` Ray actors, each owning a strata.Index.

    kind: "hnsw" (strata.Index, index_params: M, ef_construction, num_threads,
    seed, quantization, rerank) or "flat" (strata.FlatIndex: exact, no
    remove/save). address: passed to ray.init() unless this process already
    joined a cluster. actor_options: Ray actor options for every shard
    (default num_cpus=0, SPREAD scheduling).

    Results have the types of strata.Index.search; distances are the
    shards' own. Writes are not atomic across shards: a write that fails
    because a shard died may have been applied on the others (adds with
    explicit ids are idempotent, so retry them after restart_shards()).
    """

    def __init__(
        self,
        dim: int,
        shards: int = 2,
        metric: str = "l2",
        *,
        kind: str = "hnsw",
        address: str | None = None,
        actor_options: dict[str, Any] | None = None,
        **index_params: Any,
    ) -> None:
        dim = _int(dim, "dim", 1, _INT64_MAX)
        shards = _int(shards, "shards", 1, 1 << 16)
        if not isinstance(metric, str) or metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
        if kind not in _KINDS:
            raise ValueError(f"unknown kind {kind!r}; choose 'hnsw' or 'flat'")
        connect(address)
        self._setup(dim, metric, kind, shards, dict(index_params), 0, actor_options)
        factory = _KINDS[kind]
        self._open_all([(factory, (dim, metric), index_params)] * shards)

    def _setup(self, dim: int, metric: str, kind: str, shards: int, params: dict[str, Any],
               next_id: int, actor_options: dict[str, Any] | None) -> None:
        self._dim, self._metric, self._kind, self._params = dim, metric, kind, params
        self._next_id = next_id
        self._saved: tuple[Path, list[str]] | None = None
        self._load_options: dict[str, Any] = {}
        self._closed = False
        self._pool = ShardPool(INDEX_SHARD, shards, actor_options, self._where, self._hint)

    def _open_all(self, per_shard: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
        try:
            self._pool.call("open", per_shard)
        except BaseException:
            self._pool.shutdown()
            self._closed = True
            raise

    def _where(self, shard: int) -> str | None:
        return None if self._saved is None else str(self._saved[0] / self._saved[1][shard])

    def _hint(self, shard: int) -> str:
        if self._saved is None:
            return ("it was never saved, so its vectors are lost; build the index again "
                    "(save() makes shards restartable)")
        return "restart_shards() reloads it from the last save (later writes to it are lost)"

    # --- properties ---------------------------------------------------------

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def metric(self) -> str:
        return self._metric

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def shards(self) -> int:
        return len(self._pool)

    def _live(self) -> None:
        if self._closed:
            raise ValueError("index is closed")

    def __len__(self) -> int:
        self._live()
        return sum(self._pool.run("__len__"))

    def __repr__(self) -> str:
        if self._closed:
            return f"<strata.ray.ShardedIndex(dim={self._dim}, metric={self._metric!r}) closed>"
        return (f"strata.ray.ShardedIndex(dim={self._dim}, shards={self.shards}, "
                f"metric={self._metric!r}, kind={self._kind!r}, len={len(self)})")

    def __enter__(self) -> ShardedIndex:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Frees every shard and ends its actor; close() again does nothing."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown()

    # --- vectors ------------------------------------------------------------

    def add(
        self,
        vectors: npt.ArrayLike,
        ids: npt.ArrayLike | None = None,
        *,
        num_threads: int | None = None,
    ) -> npt.NDArray[np.uint64]:
        """Adds vectors (n, dim) or one (dim,) and returns their uint64 ids; see strata.Index.add.

        ids=None assigns sequential ids from one past the largest id this
        driver has added (or the saved index had). An id already present is
        replaced on the shard that owns it.
        """
        self._live()
        vecs, n = _as_rows(vectors, self._dim, "vectors", "index")
        if n == 0:
            return np.empty(0, dtype=_U64)
        if ids is None:
            id_arr = np.arange(self._next_id, self._next_id + n, dtype=_U64)
        else:
            id_arr = _as_ids(ids, n)
            _check_distinct(id_arr)
        _check_finite(vecs)
        vecs = vecs.reshape(n, self._dim)
        order, spans = group(id_arr, self.shards)
        if self.shards > 1:
            vecs, routed = vecs[order], id_arr[order]  # one copy: each shard's rows contiguous
        else:
            routed = id_arr
        targets = [s for s, span in enumerate(spans) if span.stop > span.start]
        per_shard = [(put_if_large(vecs[spans[s]]), routed[spans[s]], num_threads) for s in targets]
        self._pool.call("add", per_shard, targets)
        self._next_id = max(self._next_id, int(id_arr.max()) + 1)
        return id_arr

    def search(
        self,
        queries: npt.ArrayLike,
        k: int = 10,
        ef: int | None = None,
        num_threads: int | None = None,
        *,
        filter_ids: npt.ArrayLike | None = None,
        exclude_ids: npt.ArrayLike | None = None,
        return_stats: bool = False,
    ) -> Any:
        """The k nearest vectors of each query over all shards; see strata.Index.search.

        Every shard searches the whole batch with the same k and ef; the
        per-shard lists are merged by distance, ties by id. filter_ids and
        exclude_ids are split so each shard gets only the ids it owns.
        return_stats: the stats dict sums ndis and allowed over shards and
        lists each shard's own under "shards".
        """
        self._live()
        q, nq = _as_rows(queries, self._dim, "queries", "index")
        k = _int(k, "k", 1, _INT64_MAX)
        if ef is not None:
            ef = _int(ef, "ef", 1, _INT64_MAX)
        allow = self._split_ids(filter_ids, "filter_ids")
        deny = self._split_ids(exclude_ids, "exclude_ids")
        shared = put_if_large(q.reshape(nq, self._dim)) if self.shards > 1 else q
        per_shard = [
            (shared, k, ef, num_threads, None if allow is None else allow[s],
             None if deny is None else deny[s], bool(return_stats))
            for s in range(self.shards)
        ]  # fmt: skip
        results = self._pool.call("search", per_shard)
        ids, dists, _ = merge_topk([r[0] for r in results], [r[1] for r in results], k)
        if return_stats:
            return ids, dists, merge_stats([r[2] for r in results])
        return ids, dists

    def _split_ids(self, ids: npt.ArrayLike | None, name: str) -> list[Any] | None:
        if ids is None:
            return None
        arr = _id_list(ids, name)
        order, spans = group(arr, self.shards)
        routed = arr[order]
        return [routed[span] for span in spans]

    # --- data operations ----------------------------------------------------

    def remove(self, ids: npt.ArrayLike, *, missing_ok: bool = False) -> int:
        """Removes ids and returns how many were removed; an unknown id raises KeyError
        and removes nothing unless missing_ok=True (see strata.Index.remove)."""
        self._live()
        arr = _id_list(ids, "ids")
        order, spans = group(arr, self.shards)
        routed = arr[order]
        targets = [s for s, span in enumerate(spans) if span.stop > span.start]
        per_shard = [(routed[spans[s]],) for s in targets]
        if not missing_ok:
            missing = {i for found in self._pool.call("missing", per_shard, targets) for i in found}
            if missing:
                pos = next(p for p, i in enumerate(arr.tolist()) if i in missing)
                raise KeyError(f"id not found: ids[{pos}] = {arr[pos]}")
        removed = self._pool.call(
            "run", [("remove", *args) for args in per_shard], targets, missing_ok=True
        )
        return sum(removed)

    def contains(self, id: object) -> bool:
        """Whether id is in the index (False for anything that is not an id)."""
        self._live()
        if isinstance(id, bool) or not hasattr(id, "__index__"):
            return False
        value = int(id)  # type: ignore[call-overload]
        if not 0 <= value <= _INT64_MAX:
            return False
        shard = int(shard_of(np.array([value], dtype=_U64), self.shards)[0])
        return bool(self._pool.call("run", [("contains", value)], [shard])[0])

    def __contains__(self, id: object) -> bool:
        return self.contains(id)

    def get_vectors(self, ids: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """The stored vectors of ids as (n, dim) float32; an unknown id raises KeyError."""
        self._live()
        arr = _id_list(ids, "ids")
        out = np.empty((arr.size, self._dim), dtype=np.float32)
        order, spans = group(arr, self.shards)
        routed = arr[order]
        targets = [s for s, span in enumerate(spans) if span.stop > span.start]
        parts = self._pool.call("run", [("get_vectors", routed[spans[s]]) for s in targets],
                                targets)
        for s, part in zip(targets, parts, strict=True):
            out[order[spans[s]]] = part
        return out

    def ids(self) -> npt.NDArray[np.uint64]:
        """Every id in the index: shard 0's in insertion order, then shard 1's, and so on."""
        self._live()
        parts = self._pool.run("ids")
        return np.concatenate(parts) if parts else np.empty(0, dtype=_U64)

    def compact(self, *, num_threads: int | None = None) -> None:
        """Rebuilds every shard's graph without its removed vectors (shards in parallel)."""
        self._live()
        self._pool.run("compact", num_threads=num_threads)

    def train(self, sample: npt.ArrayLike) -> None:
        """Learns the SQ8 ranges of every shard from the same sample; call before the first add,
        so that all shards quantize alike."""
        self._live()
        rows, _ = _as_rows(sample, self._dim, "sample", "index")
        self._pool.run("train", put_if_large(rows))

    def check_integrity(self) -> None:
        """Checks every shard; raises strata.IntegrityError noting the first broken shard."""
        self._live()
        self._pool.run("check_integrity")

    def info(self) -> list[dict[str, Any]]:
        """Each shard's strata.Index.info(), in shard order."""
        self._live()
        return self._pool.run("info")

    # --- persistence and recovery -------------------------------------------

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Writes one index file per shard and a manifest into directory.

        Every actor writes its own file, so on a multi-machine cluster the
        directory must be on a filesystem all nodes share. Each save is a new
        generation: the manifest is replaced (atomically) only after every
        shard file is written, so a crash mid-save leaves the previous save
        whole; the previous generation's files are then deleted.
        """
        self._live()
        if self._kind != "hnsw":
            raise AttributeError("a ShardedIndex of FlatIndex shards cannot be saved "
                                 "(strata.FlatIndex has no save)")
        directory = Path(directory).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        previous = _manifest.read(directory, FORMAT) if _manifest.exists(directory) else None
        generation = previous["generation"] + 1 if previous else 1
        files = [f"shard-{s:04d}.g{generation}.strata" for s in range(self.shards)]
        self._pool.call("run", [("save", str(directory / f)) for f in files])
        lens = self._pool.run("__len__")
        _manifest.write(directory, {
            "format": FORMAT, "version": _manifest.VERSION, "routing": ROUTING,
            "shards": self.shards, "generation": generation, "files": files, "lens": lens,
            "dim": self._dim, "metric": self._metric, "kind": self._kind,
            "params": self._params, "next_id": self._next_id,
        })  # fmt: skip
        for name in (previous or {}).get("files", []):
            if name not in files:
                (directory / name).unlink(missing_ok=True)
        self._saved = (directory, files)

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        address: str | None = None,
        mmap_vectors: bool = False,
        num_threads: int | None = None,
        actor_options: dict[str, Any] | None = None,
    ) -> ShardedIndex:
        """Reads an index written by save(): one actor per shard file in the manifest."""
        directory = Path(directory).resolve()
        m = _manifest.read(directory, FORMAT)
        files = m.get("files")
        if not isinstance(files, list) or len(files) != m["shards"]:
            raise _manifest.ManifestError(
                f"{directory / _manifest.NAME}: lists {files!r} for {m['shards']} shards")
        connect(address)
        self = cls.__new__(cls)
        self._setup(int(m["dim"]), str(m["metric"]), str(m["kind"]), m["shards"],
                    dict(m.get("params", {})), int(m.get("next_id", 0)), actor_options)
        self._saved = (directory, list(files))
        self._load_options = {"mmap_vectors": mmap_vectors, "num_threads": num_threads}
        self._open_all([self._load_args(s) for s in range(m["shards"])])
        return self

    def _load_args(self, shard: int) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
        assert self._saved is not None
        path = str(self._saved[0] / self._saved[1][shard])
        return ("Index.load", (path,), self._load_options)

    def restart_shards(self) -> list[int]:
        """Restarts every shard whose actor died, reloading it from the last save()
        (or load()); returns their numbers. Writes to such a shard after that save
        are lost. Raises ShardDiedError if the index was never saved."""
        self._live()
        dead = self._pool.dead()
        for shard in dead:
            if self._saved is None:
                raise self._pool.died(shard, RuntimeError("the actor does not answer"))
            self._pool.respawn(shard)
            self._pool.call("open", [self._load_args(shard)], [shard])
        return dead


__all__ = ["ShardDiedError", "ShardedIndex"]
