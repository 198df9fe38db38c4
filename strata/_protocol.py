"""strata.CollectionLike: the one contract of a collection, whatever door it is behind.

Three classes implement it: strata.Collection (embedded, in this process),
strata.client.RemoteCollection (a collection on a strata-server) and
strata.ray.ShardedCollection (one collection per Ray actor). Code written
against CollectionLike runs unchanged on any of them; tests/test_contract.py
runs one behavioural suite against all three.

strata.AsyncCollectionLike is the same contract for asyncio: the same
methods, arguments and results, each a coroutine (scan an async iterator,
close awaited, ``async with`` instead of ``with``, no ``len()``). Two classes
implement it: strata.AsyncCollection and strata.client.AsyncRemoteCollection;
tests/test_contract.py runs the same suite against them.

Where a door cannot do something, the method still exists and raises
NotImplementedError naming the alternative (ShardedCollection's hybrid
query). Arguments a door accepts only for compatibility are documented on
the door (RemoteCollection.query's num_threads).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy.typing as npt

if TYPE_CHECKING:
    from strata._collection import GetResult, QueryResult


@runtime_checkable
class CollectionLike(Protocol):
    """What strata.Collection, strata.client.RemoteCollection and
    strata.ray.ShardedCollection all do; see strata.Collection for each method."""

    @property
    def path(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def metric(self) -> str: ...

    @property
    def schema(self) -> dict[str, dict[str, Any]]: ...

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]: ...

    def close(self) -> None: ...

    def __enter__(self) -> CollectionLike: ...  # noqa: PYI034 (Self needs 3.11 typing)

    def __exit__(self, *exc_info: object) -> None: ...

    def __len__(self) -> int: ...

    # --- writes -------------------------------------------------------------

    def upsert(
        self, ids: object, vectors: Any = None, metadata: object = None, *,
        sparse_vectors: dict[str, Any] | None = None, ttl: object = None,
        expires_at: object = None,
    ) -> None: ...  # fmt: skip

    def update_vectors(
        self, ids: object, vectors: dict[str, Any] | None = None, *,
        sparse_vectors: dict[str, Any] | None = None,
    ) -> int: ...  # fmt: skip

    def delete_vectors(self, ids: object, vectors: Sequence[str]) -> int: ...

    def add_vector_field(
        self,
        name: str,
        dim: int,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        multivector: str | None = None,
    ) -> None: ...

    def add_sparse_field(self, name: str, modifier: str = "none") -> None: ...

    def remove_vector_field(self, name: str) -> None: ...

    def update_metadata(self, ids: object, metadata: object) -> int: ...

    def delete(
        self, ids: object = None, where: dict[str, Any] | None = None
    ) -> int: ...

    def create_text_index(self, field: str, analyzer: str = "english") -> None: ...

    def checkpoint(self) -> None: ...

    # --- reads --------------------------------------------------------------

    def query(
        self,
        queries: npt.ArrayLike | None = None,
        k: int = 10,
        where: dict[str, Any] | None = None,
        ef: int | None = None,
        *,
        vector: npt.ArrayLike | None = None,
        text: str | None = None,
        fusion: str | dict[str, float] = "rrf",
        text_field: str | None = None,
        k1: float | None = None,
        b: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
        return_stats: bool = False,
        using: str | None = None,
        sparse: tuple[Any, Any] | None = None,
    ) -> QueryResult: ...

    def search(
        self,
        queries: Sequence[dict[str, Any]],
        k: int = 10,
        *,
        fusion: str | None = "rrf",
        where: dict[str, Any] | None = None,
        rrf_k: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
    ) -> QueryResult: ...

    def get(
        self, ids: object, include_vectors: bool = False, *, vectors: Sequence[str] | None = None,
        include_expiry: bool = False,
    ) -> GetResult: ...  # fmt: skip

    def count(self, where: dict[str, Any] | None = None) -> int: ...

    def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> Iterator[GetResult]: ...

    def check_integrity(self) -> None: ...

    def info(self) -> dict[str, Any]: ...


@runtime_checkable
class AsyncCollectionLike(Protocol):
    """What strata.AsyncCollection and strata.client.AsyncRemoteCollection do: CollectionLike
    with every call awaited; see strata.Collection for each method."""

    @property
    def path(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def metric(self) -> str: ...

    @property
    def schema(self) -> dict[str, dict[str, Any]]: ...

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> AsyncCollectionLike: ...  # noqa: PYI034

    async def __aexit__(self, *exc_info: object) -> None: ...

    # --- writes -------------------------------------------------------------

    async def upsert(
        self, ids: npt.ArrayLike, vectors: Any = None, metadata: object = None, *,
        sparse_vectors: dict[str, Any] | None = None, ttl: object = None,
        expires_at: object = None,
    ) -> None: ...  # fmt: skip

    async def update_vectors(
        self, ids: object, vectors: dict[str, Any] | None = None, *,
        sparse_vectors: dict[str, Any] | None = None,
    ) -> int: ...  # fmt: skip

    async def delete_vectors(self, ids: object, vectors: Sequence[str]) -> int: ...

    async def add_vector_field(
        self,
        name: str,
        dim: int,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        multivector: str | None = None,
    ) -> None: ...

    async def add_sparse_field(self, name: str, modifier: str = "none") -> None: ...

    async def remove_vector_field(self, name: str) -> None: ...

    async def update_metadata(self, ids: npt.ArrayLike, metadata: object) -> int: ...

    async def delete(
        self, ids: npt.ArrayLike | None = None, where: dict[str, Any] | None = None
    ) -> int: ...

    async def create_text_index(self, field: str, analyzer: str = "english") -> None: ...

    async def checkpoint(self) -> None: ...

    # --- reads --------------------------------------------------------------

    async def query(
        self,
        queries: npt.ArrayLike | None = None,
        k: int = 10,
        where: dict[str, Any] | None = None,
        ef: int | None = None,
        *,
        vector: npt.ArrayLike | None = None,
        text: str | None = None,
        fusion: str | dict[str, float] = "rrf",
        text_field: str | None = None,
        k1: float | None = None,
        b: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
        return_stats: bool = False,
        using: str | None = None,
        sparse: tuple[Any, Any] | None = None,
    ) -> QueryResult: ...

    async def search(
        self,
        queries: Sequence[dict[str, Any]],
        k: int = 10,
        *,
        fusion: str | None = "rrf",
        where: dict[str, Any] | None = None,
        rrf_k: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
    ) -> QueryResult: ...

    async def get(
        self, ids: npt.ArrayLike, include_vectors: bool = False, *,
        vectors: Sequence[str] | None = None, include_expiry: bool = False,
    ) -> GetResult: ...  # fmt: skip

    async def count(self, where: dict[str, Any] | None = None) -> int: ...

    def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> AsyncIterator[GetResult]: ...

    async def check_integrity(self) -> None: ...

    async def info(self) -> dict[str, Any]: ...
