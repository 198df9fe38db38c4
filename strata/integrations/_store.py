"""The collection behind a framework's vector store, for every integration.

A store either owns its collection (``path=``: opened there if it exists,
else created at the first add, when the embeddings' dimension is known, and
closed with the store) or borrows one (``collection=``: an open
strata.Collection, which the store never closes). Its async methods go
through one AsyncCollection over that collection, made when first needed.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from strata._async import AsyncCollection
from strata._async import _run as _run_async
from strata._collection import Collection

__all__ = ["StoreCollection"]


class StoreCollection:
    """A vector store's collection: owned (path=) or borrowed (collection=)."""

    def __init__(
        self, path: str | os.PathLike[str] | None, collection: Collection | None
    ) -> None:
        if (path is None) == (collection is None):
            raise ValueError("StrataVectorStore needs exactly one of path= or collection=")
        if collection is not None and not isinstance(collection, Collection):
            raise TypeError(
                f"collection must be a strata.Collection, got {type(collection).__name__}"
            )
        self._path = None if path is None else os.fspath(path)
        self._col = collection
        self._owns = collection is None
        self._acol: AsyncCollection | None = None
        self._lock = threading.Lock()
        self._create_options: dict[str, Any] = {}

    def open(self, **create_options: Any) -> Collection | None:
        """Opens the collection at path if there is one, else keeps Collection.create's
        options for the first add; returns the collection (None until that add)."""
        self._create_options = create_options
        if self._col is None and self._path is not None and Collection.exists(self._path):
            self._col = Collection.open(self._path)
        return self._col

    @property
    def collection(self) -> Collection | None:
        """The strata.Collection (None until the first add creates it at path)."""
        return self._col

    def created(self, dim: int) -> Collection:
        """The collection, created at path with dim and open()'s options when it does not
        exist yet (once, under a lock: two first adds create one)."""
        with self._lock:
            if self._col is None:
                assert self._path is not None  # a borrowed collection is never None
                self._col = Collection.create(self._path, dim, **self._create_options)
            return self._col

    async def acreated(self, dim: int) -> AsyncCollection:
        """created() for the async methods: the AsyncCollection over the collection."""
        if self._col is None:
            # Creating makes a directory and a log: once, on strata's worker threads.
            await _run_async(None, self.created, dim)
        acol = self.async_collection()
        assert acol is not None  # created above
        return acol

    def async_collection(self) -> AsyncCollection | None:
        """The AsyncCollection over the collection (which stays the store's to close)."""
        col = self._col
        if col is None:
            return None
        acol = self._acol
        if acol is None or acol._col is not col:
            acol = self._acol = AsyncCollection(col)
        return acol

    def close(self) -> None:
        """Closes the collection if the store owns it (path=); a borrowed one stays open."""
        if self._owns and self._col is not None:
            self._col.close()
