"""strata on Ray: an index or collection sharded over actors on one or many machines.

    >>> import numpy as np, strata.ray
    >>> index = strata.ray.ShardedIndex(dim=4, shards=2)      # starts or joins Ray
    >>> ids = index.add(np.eye(4, dtype=np.float32))
    >>> index.search(np.eye(4, dtype=np.float32)[0], k=1)[0]
    array([[0]])

Each shard is a Ray actor owning one strata.Index, strata.FlatIndex or
strata.Collection; an id lives on shard splitmix64(id) % shards. Searches go
to every shard and the per-shard top-k lists are merged (ties by id).
``import strata`` does not import this module or Ray; ``import strata.ray``
needs Ray (``pip install 'strata[ray]'``).
"""

from __future__ import annotations

try:
    import ray as _ray  # noqa: F401 (checked here so the message says what to install)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "strata.ray needs Ray, which is not installed: pip install 'strata[ray]' "
        "(or pip install 'ray>=2.9')"
    ) from exc

from strata.ray._actors import ShardDiedError
from strata.ray._collection import ShardedCollection
from strata.ray._index import ShardedIndex
from strata.ray._manifest import ManifestError

__all__ = ["ManifestError", "ShardDiedError", "ShardedCollection", "ShardedIndex"]
