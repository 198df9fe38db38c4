"""strata: an embedded vector database.

    >>> import numpy as np, strata
    >>> index = strata.Index(dim=4)
    >>> ids = index.add(np.eye(4, dtype=np.float32))
    >>> index.search(np.eye(4, dtype=np.float32)[0], k=1)[0]
    array([[0]])

The engine is written in Go and loaded as a shared library through cffi.
Importing strata loads nothing native: the library (and its Go runtime) is
opened by the first call that needs it, which is creating an Index or
FlatIndex, Index.load() (or unpickling an Index), Collection.create(),
Collection.open(), Collection.exists(), Collection.drop(), kernel_path() or
native_version(). A process may fork before that; a child forked after it
gets RuntimeError from every strata call (the Go runtime does not survive
fork).
"""

from strata._async import AsyncCollection
from strata._collection import Collection, GetResult, QueryResult, analyze
from strata._fields import FieldVectors, SparseVectors
from strata._index import FlatIndex, Index
from strata._lib import (
    CollectionFailedError,
    IntegrityError,
    LockedError,
    kernel_path,
    native_version,
)
from strata._protocol import AsyncCollectionLike, CollectionLike

__version__ = "0.1.0"

__all__ = [
    "AsyncCollection",
    "AsyncCollectionLike",
    "Collection",
    "CollectionFailedError",
    "CollectionLike",
    "FieldVectors",
    "FlatIndex",
    "GetResult",
    "Index",
    "IntegrityError",
    "LockedError",
    "QueryResult",
    "SparseVectors",
    "__version__",
    "analyze",
    "kernel_path",
    "native_version",
]
