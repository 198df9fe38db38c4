"""Which shard owns an id, and how per-shard top-k lists become one.

Pure NumPy, no Ray: the driver routes rows and merges results with these,
and tests check them without a cluster.

Routing is part of the on-disk format of a sharded index or collection
(the manifest names it): an integer id belongs to shard
``splitmix64(id) % shards``. splitmix64's finaliser mixes every input bit into
every output bit, so sequential ids spread evenly and a shard owns the same ids
in every process and on every machine. A string id belongs to shard
``splitmix64(h) % shards`` where h is the first 8 bytes, little-endian, of the
BLAKE2b-64 digest (``hashlib.blake2b(s.encode(), digest_size=8)``) of its
UTF-8 bytes: stable across processes and machines, unlike Python's salted
``hash()``. Do not change either without a new ROUTING name.

Merges order ties the way the engine's scans do: integer ids ascending, then
string ids in byte order (for valid UTF-8, Python's str order is byte order).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import numpy.typing as npt

ROUTING = "splitmix64-mod"
"""The manifest's name for shard_of(); a manifest naming anything else is refused."""

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_MIX1 = _U64(0xBF58476D1CE4E5B9)
_MIX2 = _U64(0x94D049BB133111EB)


def string_key(s: str) -> int:
    """The 64-bit routing key of a string id (see the module doc)."""
    return int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "little")


def shard_of(ids: npt.NDArray[Any], shards: int) -> npt.NDArray[np.intp]:
    """The shard of each id: splitmix64(key) mod shards, the key being the id itself for
    an integer (a uint64 array, or ints in an object array) and string_key for a str."""
    if ids.dtype == object:
        ids = np.array([string_key(v) if isinstance(v, str) else v for v in ids.tolist()],
                       dtype=_U64)
    with np.errstate(over="ignore"):  # the arithmetic is modulo 2**64 on purpose
        z = ids + _GOLDEN
        z = (z ^ (z >> _U64(30))) * _MIX1
        z = (z ^ (z >> _U64(27))) * _MIX2
        z ^= z >> _U64(31)
    return (z % _U64(shards)).astype(np.intp)


def group(ids: npt.NDArray[Any], shards: int) -> tuple[npt.NDArray[np.intp], list[slice]]:
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
    if any(part.dtype == object for part in ids):
        return _merge_mixed(ids, dists, k)
    all_ids = np.concatenate(ids, axis=1)
    all_dists = np.concatenate(dists, axis=1)
    picked = np.lexsort((all_ids.view(np.uint64), all_dists), axis=-1)[:, :k]
    return (
        np.take_along_axis(all_ids, picked, axis=1),
        np.take_along_axis(all_dists, picked, axis=1),
        picked,
    )


def id_order(value: int | str | None) -> tuple[int, Any]:
    """A sort key putting ids in the engine's scan order, None (padding) last."""
    if value is None:
        return (2, 0)
    return (1, value) if isinstance(value, str) else (0, value)


def _merge_mixed(
    ids: list[npt.NDArray[Any]], dists: list[npt.NDArray[np.float32]], k: int
) -> tuple[npt.NDArray[Any], npt.NDArray[np.float32], npt.NDArray[np.intp]]:
    """merge_topk when some shard answered string ids (object arrays padded with None,
    the others int64 padded with -1): an object array, None for padding."""
    parts = [p if p.dtype == object else np.where(p < 0, None, p.astype(object)) for p in ids]
    all_ids = np.concatenate(parts, axis=1)
    all_dists = np.concatenate(dists, axis=1)
    picked = np.empty((all_ids.shape[0], k), dtype=np.intp)
    for row in range(all_ids.shape[0]):
        values, row_dists = all_ids[row].tolist(), all_dists[row].tolist()
        cols = sorted(range(len(values)), key=lambda j: (row_dists[j], id_order(values[j])))
        picked[row] = cols[:k]
    out = np.take_along_axis(all_ids, picked, axis=1)
    if not any(isinstance(v, str) for v in out.flat):  # integer-only: as strata.Collection
        out = np.where(out == None, -1, out).astype(np.int64)  # noqa: E711 (elementwise)
    return out, np.take_along_axis(all_dists, picked, axis=1), picked


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
