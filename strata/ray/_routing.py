"""Which shard owns an id, and how per-shard top-k lists become one.

Pure NumPy, no Ray: the driver routes rows and merges results with these,
and tests check them without a cluster.

Routing is part of the on-disk format of a sharded index or collection
(the manifest names it): an id belongs to shard ``splitmix64(id) % shards``.
splitmix64's finaliser mixes every input bit into every output bit, so
sequential ids spread evenly and a shard owns the same ids in every process
and on every machine. Do not change it without a new ROUTING name.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

ROUTING = "splitmix64-mod"
"""The manifest's name for shard_of(); a manifest naming anything else is refused."""

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_MIX1 = _U64(0xBF58476D1CE4E5B9)
_MIX2 = _U64(0x94D049BB133111EB)


def shard_of(ids: npt.NDArray[np.uint64], shards: int) -> npt.NDArray[np.intp]:
    """The shard of each id (a uint64 array): splitmix64(id) mod shards."""
    with np.errstate(over="ignore"):  # the arithmetic is modulo 2**64 on purpose
        z = ids + _GOLDEN
        z = (z ^ (z >> _U64(30))) * _MIX1
        z = (z ^ (z >> _U64(27))) * _MIX2
        z ^= z >> _U64(31)
    return (z % _U64(shards)).astype(np.intp)


def group(ids: npt.NDArray[np.uint64], shards: int) -> tuple[npt.NDArray[np.intp], list[slice]]:
    """Groups rows by owning shard.

    Returns (order, spans): rows order[spans[s]] belong to shard s, in their
    original relative order (a stable sort), so data[order] is one copy in
    which every shard's rows are one contiguous block.
    """
    owner = shard_of(ids, shards)
    order = np.argsort(owner, kind="stable")
    ends = np.cumsum(np.bincount(owner, minlength=shards))
    starts = ends - np.bincount(owner, minlength=shards)
    return order, [slice(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]


def merge_topk(
    ids: list[npt.NDArray[np.int64]], dists: list[npt.NDArray[np.float32]], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.intp]]:
    """Merges per-shard results ([nq, k] each, padded with -1 / inf) into the global top-k.

    Rows are ordered by distance, ties by id; padding (-1 read as 2**64-1)
    sorts after every real id. Returns (ids, dists, picked) where picked[i, j]
    is the column of the concatenated per-shard lists that result j of query
    i came from (so callers can carry per-result payloads such as metadata).
    """
    all_ids = np.concatenate(ids, axis=1)
    all_dists = np.concatenate(dists, axis=1)
    picked = np.lexsort((all_ids.view(np.uint64), all_dists), axis=-1)[:, :k]
    return (
        np.take_along_axis(all_ids, picked, axis=1),
        np.take_along_axis(all_dists, picked, axis=1),
        picked,
    )


def merge_stats(per_shard: list[dict]) -> dict:
    """One stats dict for a sharded search: counts summed, ef the largest, plans per shard."""
    plans = {s["plan"] for s in per_shard}
    return {
        "plan": plans.pop() if len(plans) == 1 else "mixed",
        "ndis": sum(s["ndis"] for s in per_shard),
        "allowed": sum(s["allowed"] for s in per_shard),
        "ef": max(s["ef"] for s in per_shard),
        "shards": per_shard,
    }
