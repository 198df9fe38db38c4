"""strata.AsyncCollection: strata.Collection for asyncio, every call a coroutine.

    >>> async with await strata.AsyncCollection.create(path, dim=384) as col:
    ...     await col.upsert([1, 2], vectors, metadata=[{"lang": "en"}, {"lang": "fr"}])
    ...     result = await col.query(vectors[0], k=5, where={"lang": "en"})
    ...     async for page in col.scan(batch_size=1000):
    ...         ...

What it promises, and how:

- The event loop never waits on the engine. Each call runs the matching
  strata.Collection method on a worker thread; the C ABI is called through
  cffi's API-mode wrappers, which release the GIL around every engine call,
  so the loop (and other engine calls) run while one is in Go. The threads
  come from one pool shared by every AsyncCollection of the process (created
  on first use, at most min(32, cores + 4) threads, like asyncio's default
  executor), or from the executor= passed to create()/open(); never a pool
  per call.
- Same methods, arguments and results as strata.Collection (the contract is
  strata.AsyncCollectionLike), and the same errors: validation, engine and
  closed-collection errors are the exceptions Collection raises.
- scan() is an async iterator: ``async for page in col.scan(...)``, one
  worker-thread call per page.
- close() (and leaving ``async with``) refuses new calls at once with
  Collection's ValueError("collection is closed"), waits for the calls
  already running, then closes the engine collection. Calling it again waits
  for the same close.
- Cancelling a task that awaits a call drops the call's result and never
  leaves half a call behind: a call that has not reached a worker thread yet
  never runs; one that has runs to its end (a write is then durable, as any
  acknowledged write) and close() still waits for it.
- There is no ``len(col)``: it could not be awaited; ``await col.count()`` is
  the same number.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from strata._collection import _CLOSED, Collection, GetResult

__all__ = ["AsyncCollection"]

_T = TypeVar("_T")
_P = ParamSpec("_P")

_shared_pool: concurrent.futures.ThreadPoolExecutor | None = None
_shared_pool_pid = 0
_shared_pool_lock = threading.Lock()


def _default_executor() -> concurrent.futures.Executor:
    """The process's one pool for engine calls made from asyncio (made on first use).

    A child forked after the pool started gets a pool of its own: the parent's
    threads do not exist there, and a call queued on them would never run (it
    now runs and raises the engine's forked-child RuntimeError)."""
    global _shared_pool, _shared_pool_pid
    with _shared_pool_lock:
        if _shared_pool is None or _shared_pool_pid != os.getpid():
            workers = min(32, (os.cpu_count() or 1) + 4)
            _shared_pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="strata-async"
            )
            _shared_pool_pid = os.getpid()
        return _shared_pool


async def _run(executor: concurrent.futures.Executor | None, fn: Callable[..., _T],
               *args: Any, **kwargs: Any) -> _T:  # fmt: skip
    """fn(*args, **kwargs) on a worker thread, without a collection to account it to."""
    future = (executor or _default_executor()).submit(fn, *args, **kwargs)
    return await asyncio.wrap_future(future)


_END = object()


def _off_loop(
    method: Callable[Concatenate[Collection, _P], _T],
) -> Callable[Concatenate[AsyncCollection, _P], Coroutine[Any, Any, _T]]:
    """The AsyncCollection method that runs Collection's method on a worker thread,
    with its name, documentation and signature: the arguments are handled once, by
    Collection."""

    name = method.__name__

    async def call(self: AsyncCollection, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return await self._call(getattr(self._col, name), *args, **kwargs)

    functools.update_wrapper(call, method)
    call.__qualname__ = f"AsyncCollection.{name}"
    return call


class AsyncCollection:
    """A strata.Collection whose methods are coroutines run off the event loop.

    Open one with ``await AsyncCollection.create(path, dim, ...)`` or
    ``await AsyncCollection.open(path)``; ``AsyncCollection(collection)``
    wraps a strata.Collection already open (it then belongs to the wrapper,
    which closes it). See the module documentation for the guarantees."""

    def __init__(
        self, collection: Collection, *, executor: concurrent.futures.Executor | None = None
    ) -> None:
        if not isinstance(collection, Collection):
            raise TypeError(
                f"AsyncCollection wraps a strata.Collection, got {type(collection).__name__}"
            )
        self._col = collection
        self._executor = executor  # None: the shared pool, looked up per call (see fork)
        # Calls handed to the executor and not finished: done callbacks run on
        # worker threads, hence the lock.
        self._in_flight: set[concurrent.futures.Future[Any]] = set()
        self._in_flight_lock = threading.Lock()
        self._closing: asyncio.Future[None] | None = None

    # --- opening ------------------------------------------------------------

    @classmethod
    async def create(
        cls,
        path: str | os.PathLike[str],
        dim: int | None = None,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        fsync: str = "always",
        seed: int | None = None,
        *,
        vectors: dict[str, dict[str, Any]] | None = None,
        sparse_vectors: Sequence[str] | dict[str, dict[str, Any]] | None = None,
        text_fields: Sequence[str] | None = None,
        text_analyzer: str = "english",
        memory: str = "ram",
        rescore: bool | None = None,
        executor: concurrent.futures.Executor | None = None,
    ) -> AsyncCollection:
        """strata.Collection.create(...), run on a worker thread."""
        col = await _run(executor, Collection.create, path, dim, metric, M, ef_construction,
                         quantization, fsync, seed, vectors=vectors, sparse_vectors=sparse_vectors,
                         text_fields=text_fields, text_analyzer=text_analyzer,
                         memory=memory, rescore=rescore)  # fmt: skip
        return cls(col, executor=executor)

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        fsync: str | None = None,
        repair: bool = False,
        verify: str = "background",
        executor: concurrent.futures.Executor | None = None,
    ) -> AsyncCollection:
        """strata.Collection.open(...) (recovery included), run on a worker thread."""
        col = await _run(executor, Collection.open, path, fsync=fsync, repair=repair, verify=verify)
        return cls(col, executor=executor)

    @staticmethod
    async def exists(path: str | os.PathLike[str]) -> bool:
        """Whether path holds a collection."""
        return await _run(None, Collection.exists, path)

    @staticmethod
    async def drop(path: str | os.PathLike[str]) -> None:
        """Deletes the collection at path; strata.LockedError if it is open."""
        await _run(None, Collection.drop, path)

    # --- lifecycle ----------------------------------------------------------

    @property
    def path(self) -> str:
        return self._col.path

    @property
    def dim(self) -> int:
        return self._col.dim

    @property
    def metric(self) -> str:
        return self._col.metric

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.schema (as last read: no engine call)."""
        return self._col.schema

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.sparse_schema (as last read: no engine call)."""
        return self._col.sparse_schema

    def __repr__(self) -> str:
        state = " closed" if self._closing is not None else ""
        params = f"dim={self.dim}, metric={self.metric!r}"
        return f"<strata.AsyncCollection({self.path!r}, {params}){state}>"

    async def close(self) -> None:
        """Refuses new calls, waits for those running, then closes the collection."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        elif self._closing.done():
            # Possibly from another event loop than the first close(): nothing to wait for.
            return self._closing.result()
        # shield: a cancelled close() still finishes closing for everyone else.
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        with self._in_flight_lock:
            running = [asyncio.wrap_future(f) for f in self._in_flight]
        if running:
            # wait(), not gather(): it never cancels the calls it waits for.
            await asyncio.wait(running)
        await _run(self._executor, self._col.close)

    async def __aenter__(self) -> AsyncCollection:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _call(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        if self._closing is not None:
            exc, message = _CLOSED
            raise exc(message)
        future = (self._executor or _default_executor()).submit(fn, *args, **kwargs)
        with self._in_flight_lock:
            self._in_flight.add(future)
        future.add_done_callback(self._finished)
        # Cancelling the awaiting task cancels the executor's future, which stops
        # the call only if it has not started; a started one runs to its end.
        return await asyncio.wrap_future(future)

    def _finished(self, future: concurrent.futures.Future[Any]) -> None:
        with self._in_flight_lock:
            self._in_flight.discard(future)

    # --- calls ----------------------------------------------------------------
    # Each is the Collection method of the same name, run on a worker thread:
    # its signature, documentation, checks and errors are Collection's.

    upsert = _off_loop(Collection.upsert)
    update_vectors = _off_loop(Collection.update_vectors)
    delete_vectors = _off_loop(Collection.delete_vectors)
    add_vector_field = _off_loop(Collection.add_vector_field)
    add_sparse_field = _off_loop(Collection.add_sparse_field)
    remove_vector_field = _off_loop(Collection.remove_vector_field)
    update_metadata = _off_loop(Collection.update_metadata)
    delete = _off_loop(Collection.delete)
    create_text_index = _off_loop(Collection.create_text_index)
    checkpoint = _off_loop(Collection.checkpoint)
    query = _off_loop(Collection.query)
    query_mmr = _off_loop(Collection.query_mmr)
    search = _off_loop(Collection.search)
    get = _off_loop(Collection.get)
    count = _off_loop(Collection.count)
    check_integrity = _off_loop(Collection.check_integrity)
    info = _off_loop(Collection.info)

    async def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> AsyncIterator[GetResult]:
        """strata.Collection.scan as an async iterator, one worker-thread call per page."""
        pages = self._col.scan(where, batch_size, include_vectors, after=after, vectors=vectors)
        fetching = False
        try:
            while True:
                fetching = True
                page = await self._call(next, pages, _END)
                fetching = False
                if page is _END:
                    return
                yield page
        finally:
            # A page still being read on a worker thread (the consumer was
            # cancelled) owns the generator until it returns; it is dropped then.
            if not fetching:
                pages.close()
