"""Named vector fields as NumPy users pass them, for every door.

A collection's schema is a set of vector fields (``Collection.schema``): the unnamed
default ``""`` and any named ones, each dense (one vector per point) or a multivector
field (a list of vectors per point, scored by MAX_SIM). Writes and reads carry one
value per field in columns, as a FieldVectors: the rows of the points that have a
value, a mask saying which points those are, and for a multivector field how many rows
each has. A point lacking a field is a False in the mask: never a NaN row.

Accepted spellings of one field's values for n points (``vectors={"text": ...}``):

- dense: an array [n, dim] (every point has the field), or a list of n vectors or
  None (None: the point lacks it);
- multivector: a list of n 2-D arrays [m_i, dim] or None, or an array [n, m, dim]
  (every point m vectors);
- either: a FieldVectors (flat rows, mask, counts).

strata.Collection, strata.client and strata.ray all normalise with ``field_values``;
the engine checks the numbers (dimensions, finiteness, limits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

_F32 = np.dtype(np.float32)


@dataclass(frozen=True)
class FieldVectors:
    """One vector field's values for n points, in columns.

    vectors: float32 [rows, dim], the rows of the points that have a value, in order;
    mask: bool [n], which points have a value (None: every point);
    counts: int64 [mask.sum()], the rows of each of those points (multivector fields
    only; None for a dense field: one row each)."""

    vectors: npt.NDArray[np.float32]
    mask: npt.NDArray[np.bool_] | None = None
    counts: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        """How many points have a value."""
        if self.counts is not None:
            return len(self.counts)
        return int(self.vectors.shape[0])

    def positions(self) -> npt.NDArray[np.int64]:
        """The positions of the points that have a value."""
        if self.mask is None:
            return np.arange(len(self), dtype=np.int64)
        return np.flatnonzero(self.mask).astype(np.int64)

    def value(self, i: int) -> npt.NDArray[np.float32] | None:
        """Point i's value: a [dim] vector (dense), a [m, dim] array (multivector), or
        None if it lacks the field."""
        if self.mask is not None:
            if not self.mask[i]:
                return None
            i = int(np.count_nonzero(self.mask[:i]))
        if self.counts is None:
            return self.vectors[i]
        start = int(self.counts[:i].sum())
        return self.vectors[start : start + int(self.counts[i])]

    def values(self, n: int) -> list[npt.NDArray[np.float32] | None]:
        """Every point's value (value(i) for i in range(n))."""
        return [self.value(i) for i in range(n)]

    def take(self, positions: npt.NDArray[np.int64]) -> FieldVectors:
        """The values of the points at positions (a new batch of len(positions))."""
        n = len(self.mask) if self.mask is not None else len(self)
        have = self.mask if self.mask is not None else np.ones(n, dtype=bool)
        rank = np.cumsum(have) - 1  # point -> its value's index, where it has one
        picked = positions[have[positions]]
        idx = rank[picked]
        mask = have[positions]
        if self.counts is None:
            return FieldVectors(np.ascontiguousarray(self.vectors[idx]), mask)
        starts = np.concatenate(([0], np.cumsum(self.counts)))
        rows = [np.arange(starts[j], starts[j + 1]) for j in idx]
        flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        return FieldVectors(np.ascontiguousarray(self.vectors[flat]), mask, self.counts[idx])


def _rows(data: object, what: str) -> npt.NDArray[np.float32]:
    arr = data
    if type(arr) is not np.ndarray or arr.dtype is not _F32 or not arr.flags.c_contiguous:
        arr = np.asarray(data)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"{what} must be a numeric array, got dtype {arr.dtype}")
        arr = np.ascontiguousarray(arr, dtype=_F32)
    return arr


def _width(arr: npt.NDArray[np.float32], dim: int, name: str) -> None:
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(
            f"vector field {name!r}: values must be rows of dimension {dim}, got shape {arr.shape}"
        )


def field_values(name: str, value: object, n: int, dim: int, multi: bool) -> FieldVectors:
    """Normalises one field's values for n points (see the module doc for the forms)."""
    what = f"vectors[{name!r}]"
    if isinstance(value, FieldVectors):
        vecs = _rows(value.vectors, what)
        if vecs.ndim == 1 and vecs.size == 0:
            vecs = vecs.reshape(0, dim)
        _width(vecs, dim, name)
        mask = None if value.mask is None else np.asarray(value.mask, dtype=bool)
        if mask is not None and mask.shape != (n,):
            raise ValueError(f"vector field {name!r}: mask has shape {mask.shape}, want ({n},)")
        counts = None
        if value.counts is not None:
            if not multi:
                raise ValueError(f"vector field {name!r} is dense: counts given")
            counts = np.ascontiguousarray(value.counts, dtype=np.int64)
        elif multi:
            raise ValueError(f"multivector field {name!r}: a FieldVectors needs counts")
        have = n if mask is None else int(mask.sum())
        got = len(counts) if counts is not None else vecs.shape[0]
        if got != have:
            raise ValueError(f"vector field {name!r}: {got} values for {have} points")
        return FieldVectors(vecs, mask, counts)
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise TypeError(f"{what} must be an array or a list of arrays, got {type(value).__name__}")
    if isinstance(value, Sequence) and not isinstance(value, np.ndarray) and (
        any(v is None for v in value) or multi
    ):
        return _per_point(name, value, n, dim, multi)
    arr = _rows(value, what)
    if multi:
        if arr.ndim != 3 or arr.shape[0] != n or arr.shape[2] != dim:
            raise ValueError(
                f"multivector field {name!r}: values must be [n, m, {dim}] or a list of n "
                f"[m, {dim}] arrays, got shape {arr.shape}"
            )
        counts = np.full(n, arr.shape[1], dtype=np.int64)
        return FieldVectors(arr.reshape(-1, dim), None, counts)
    if arr.ndim == 1 and n == 1:
        arr = arr.reshape(1, -1)
    _width(arr, dim, name)
    if arr.shape[0] != n:
        raise ValueError(f"vector field {name!r}: {arr.shape[0]} vectors for {n} ids")
    return FieldVectors(arr)


def _per_point(name: str, value: Sequence[Any], n: int, dim: int, multi: bool) -> FieldVectors:
    if len(value) != n:
        raise ValueError(f"vector field {name!r}: {len(value)} values for {n} ids")
    mask = np.array([v is not None for v in value], dtype=bool)
    parts = [_rows(v, f"vectors[{name!r}][{i}]") for i, v in enumerate(value) if v is not None]
    counts = None
    if multi:
        for i, p in zip(np.flatnonzero(mask), parts, strict=True):
            if p.ndim != 2:
                raise ValueError(
                    f"multivector field {name!r}: point {i}'s value must be [m, {dim}], "
                    f"got shape {p.shape}"
                )
        counts = np.array([p.shape[0] for p in parts], dtype=np.int64)
    else:
        parts = [p.reshape(1, -1) for p in parts]
    vecs = np.concatenate(parts) if parts else np.zeros((0, dim), dtype=_F32)
    _width(vecs, dim, name)
    return FieldVectors(np.ascontiguousarray(vecs), None if mask.all() else mask, counts)


def check_vectors_arg(vectors: object) -> Mapping[str, Any]:
    """A named-vectors argument: a dict of field name to values."""
    if not isinstance(vectors, Mapping):
        kind = type(vectors).__name__
        raise TypeError(f"vectors must be a dict of field name to values, got {kind}")
    for name in vectors:
        if not isinstance(name, str):
            raise TypeError(f"vector field names must be strs, got {name!r}")
    return vectors


def check_names(names: object, what: str = "vectors") -> list[str]:
    """A list of field names (one str is a list of one)."""
    if isinstance(names, str):
        return [names]
    if not isinstance(names, Sequence) or not all(isinstance(x, str) for x in names):
        raise TypeError(f"{what} must be a list of vector field names, got {names!r}")
    return list(names)


def field_spec(
    dim: int,
    metric: str = "cosine",
    M: int = 16,  # noqa: N803 (hnswlib's name)
    ef_construction: int = 200,
    quantization: str | None = None,
    multivector: str | None = None,
    memory: str | None = None,
    rescore: bool | None = None,
) -> dict[str, Any]:
    """One field's spec as the engine reads it (go/collection/schema_json.go)."""
    spec: dict[str, Any] = {"dim": dim, "metric": metric, "M": M}
    spec["ef_construction"] = ef_construction
    if quantization is not None:
        spec["quantization"] = quantization
    if multivector is not None:
        spec["multivector"] = multivector
    if memory is not None:
        spec["memory"] = memory
    if rescore is not None:
        spec["rescore"] = rescore
    return spec


def check_schema(vectors: object) -> dict[str, dict[str, Any]]:
    """A create's vectors= argument: field name -> spec dict (keys the engine checks)."""
    if not isinstance(vectors, Mapping):
        raise TypeError(
            f"vectors must be a dict of field name to spec (e.g. {{'text': {{'dim': 50}}}}), "
            f"got {type(vectors).__name__}"
        )
    out: dict[str, dict[str, Any]] = {}
    for name, spec in vectors.items():
        if not isinstance(name, str):
            raise TypeError(f"vector field names must be strs, got {name!r}")
        if not isinstance(spec, Mapping):
            kind = type(spec).__name__
            raise TypeError(f"vector field {name!r}: the spec must be a dict, got {kind}")
        out[name] = {k: v for k, v in spec.items() if not (k == "quantization" and v is None)}
    return out


def schema_of(info: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Collection.schema from info()["vectors"]: field name -> its spec."""
    keys = ("dim", "metric", "M", "ef_construction", "quantization", "multivector")
    out: dict[str, dict[str, Any]] = {}
    for f in info.get("vectors", []):
        spec = {**{k: f[k] for k in keys}, "memory": f.get("memory", "ram")}
        if f["quantization"] == "sq8":
            spec["rescore"] = f.get("rescore", False)
        out[f["name"]] = spec
    return out


def field_shape(schema: Mapping[str, Mapping[str, Any]], name: str) -> tuple[int, bool]:
    """(dim, is multivector) of the field, or ValueError naming it."""
    spec = schema.get(name)
    if spec is None:
        have = ", ".join(repr(k) for k in sorted(schema)) or "none"
        raise ValueError(f"no vector field {name!r} (the collection's fields: {have})")
    return int(spec["dim"]), spec["multivector"] != "none"


def query_rows(
    queries: object, dim: int, multi: bool, name: str
) -> tuple[npt.NDArray[np.float32], int, npt.NDArray[np.int64] | None]:
    """A query of a field: (rows, number of queries, rows of each for a multivector).

    Dense: a [dim] vector or [nq, dim] rows. Multivector: one [m, dim] array (one
    query), a list of them, or an [nq, m, dim] array."""
    what = f"queries of {name!r}"
    if not multi:
        arr = _rows(queries, what)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        _width(arr, dim, name)
        return arr, arr.shape[0], None
    if isinstance(queries, Sequence) and not isinstance(queries, np.ndarray) and queries and (
        np.ndim(queries[0]) == 2
    ):
        fv = _per_point(name, queries, len(queries), dim, True)
        if fv.mask is not None:
            raise TypeError(f"{what}: a query cannot be None")
        assert fv.counts is not None
        return fv.vectors, len(fv.counts), fv.counts
    arr = _rows(queries, what)
    if arr.ndim == 2:
        arr = arr.reshape(1, *arr.shape)
    if arr.ndim != 3 or arr.shape[2] != dim:
        raise ValueError(
            f"multivector field {name!r}: a query is [m, {dim}] (or a list of them), "
            f"got shape {arr.shape}"
        )
    nq = arr.shape[0]
    return arr.reshape(-1, dim), nq, np.full(nq, arr.shape[1], dtype=np.int64)


# --- the native REST API's JSON (strata.client, sync and async) --------------


def _point_json(fv: FieldVectors, n: int) -> list[Any]:
    return [None if v is None else v.tolist() for v in fv.values(n)]


def named_json(schema: Mapping[str, Mapping[str, Any]], vectors: object, n: int) -> dict[str, Any]:
    """A write's {"field": [value or null per id]} (go/server/fields.go)."""
    out: dict[str, Any] = {}
    for name, value in check_vectors_arg(vectors).items():
        dim, multi = field_shape(schema, name)
        fv = field_values(name, value, n, dim, multi)
        _check_finite(name, fv.vectors)
        out[name] = _point_json(fv, n)
    return out


def _check_finite(name: str, rows: npt.NDArray[np.float32]) -> None:
    """JSON carries no NaN or infinity: refuse them naming the field, as the engine does."""
    bad = ~np.isfinite(rows)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ValueError(f"vector field {name!r}: row {row} holds NaN or infinity")


def query_json(
    schema: Mapping[str, Mapping[str, Any]], using: str, queries: object
) -> tuple[list[Any], int]:
    """A query's "vectors" for the field using (a batch) and its number of queries."""
    if not isinstance(using, str):
        raise TypeError(f"using must be a vector field name (a str), got {using!r}")
    dim, multi = field_shape(schema, using)
    rows, nq, counts = query_rows(queries, dim, multi, using)
    _check_finite(using, rows)
    if counts is None:
        return rows.tolist(), nq
    starts = np.concatenate(([0], np.cumsum(counts)))
    return [rows[starts[q] : starts[q + 1]].tolist() for q in range(nq)], nq


def named_from_points(
    schema: Mapping[str, Mapping[str, Any]], points: Sequence[Mapping[str, Any]], names: list[str]
) -> dict[str, FieldVectors]:
    """get's answer ({"vectors": {field: value}} per point) as FieldVectors."""
    out: dict[str, FieldVectors] = {}
    for name in names:
        dim, multi = field_shape(schema, name)
        values = [p.get("vectors", {}).get(name) for p in points]
        mask = np.array([v is not None for v in values], dtype=bool)
        have = [np.asarray(v, dtype=_F32).reshape(-1, dim) for v in values if v is not None]
        vecs = np.concatenate(have) if have else np.zeros((0, dim), dtype=_F32)
        counts = np.array([len(h) for h in have], dtype=np.int64) if multi else None
        out[name] = FieldVectors(vecs, mask, counts)
    return out


# --- sparse vector fields ------------------------------------------------------
#
# A sparse field holds for some points a sparse vector: (indices, values), uint32
# indices and float32 values of equal length, any order, no index twice (the engine
# checks). One field's values for n points are a list of n pairs or None (None: the
# point lacks it), or a SparseVectors. A create's sparse_vectors= is a list of names or
# {name: {"modifier": "none" | "idf"}} (go/collection/schema_json.go parses it).

_U32 = np.dtype(np.uint32)


@dataclass(frozen=True)
class SparseVectors:
    """One sparse field's values for n points, in columns.

    indices: uint32 and values: float32, the coordinates of the points that have a
    value, one after the other; counts: int64 [mask.sum()], how many each has; mask:
    bool [n], which points have a value (None: every point)."""

    indices: npt.NDArray[np.uint32]
    values: npt.NDArray[np.float32]
    counts: npt.NDArray[np.int64]
    mask: npt.NDArray[np.bool_] | None = None

    def __len__(self) -> int:
        """How many points have a value."""
        return len(self.counts)

    def positions(self) -> npt.NDArray[np.int64]:
        """The positions of the points that have a value."""
        if self.mask is None:
            return np.arange(len(self), dtype=np.int64)
        return np.flatnonzero(self.mask).astype(np.int64)

    def value(self, i: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]] | None:
        """Point i's (indices, values), or None if it lacks the field."""
        if self.mask is not None:
            if not self.mask[i]:
                return None
            i = int(np.count_nonzero(self.mask[:i]))
        start = int(self.counts[:i].sum())
        end = start + int(self.counts[i])
        return self.indices[start:end], self.values[start:end]

    def values_list(
        self, n: int
    ) -> list[tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]] | None]:
        """Every point's value (value(i) for i in range(n))."""
        return [self.value(i) for i in range(n)]

    def take(self, positions: npt.NDArray[np.int64]) -> SparseVectors:
        """The values of the points at positions (a new batch of len(positions))."""
        n = len(self.mask) if self.mask is not None else len(self)
        have = self.mask if self.mask is not None else np.ones(n, dtype=bool)
        rank = np.cumsum(have) - 1
        idx = rank[positions[have[positions]]]
        starts = np.concatenate(([0], np.cumsum(self.counts))).astype(np.int64)
        rows = [np.arange(starts[j], starts[j + 1]) for j in idx]
        flat = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
        return SparseVectors(
            np.ascontiguousarray(self.indices[flat]), np.ascontiguousarray(self.values[flat]),
            np.ascontiguousarray(self.counts[idx]), have[positions],
        )  # fmt: skip


def sparse_pair(value: object, what: str) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]:
    """One sparse vector: an (indices, values) pair of equal-length 1-D sequences."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{what} must be an (indices, values) pair, got {type(value).__name__}")
    if len(value) != 2:
        raise ValueError(f"{what} must be an (indices, values) pair, got {len(value)} items")
    raw_idx, raw_val = np.asarray(value[0]), np.asarray(value[1])
    if raw_idx.size and raw_idx.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices must be integers, got dtype {raw_idx.dtype}")
    if raw_val.size and raw_val.dtype.kind not in "fiu":
        raise TypeError(f"{what}: values must be numbers, got dtype {raw_val.dtype}")
    if raw_idx.ndim != 1 or raw_val.ndim != 1 or raw_idx.shape != raw_val.shape:
        raise ValueError(
            f"{what}: indices and values must be 1-D of one length, got shapes "
            f"{raw_idx.shape} and {raw_val.shape}"
        )
    if raw_idx.size and (raw_idx.min() < 0 or raw_idx.max() > 2**32 - 1):
        raise ValueError(f"{what}: indices must be in [0, 2^32)")
    return (
        np.ascontiguousarray(raw_idx, dtype=_U32),
        np.ascontiguousarray(raw_val, dtype=_F32),
    )


def sparse_values(name: str, value: object, n: int) -> SparseVectors:
    """Normalises one sparse field's values for n points: a SparseVectors, or a list of
    n (indices, values) pairs or None."""
    if isinstance(value, SparseVectors):
        mask = None if value.mask is None else np.asarray(value.mask, dtype=bool)
        have = n if mask is None else int(mask.sum())
        if (mask is not None and mask.shape != (n,)) or len(value.counts) != have:
            raise ValueError(f"sparse field {name!r}: {len(value.counts)} values for {have} points")
        return SparseVectors(
            np.ascontiguousarray(value.indices, dtype=_U32),
            np.ascontiguousarray(value.values, dtype=_F32),
            np.ascontiguousarray(value.counts, dtype=np.int64), mask,
        )  # fmt: skip
    if isinstance(value, (str, bytes, Mapping, np.ndarray)) or not isinstance(value, Sequence):
        raise TypeError(
            f"sparse_vectors[{name!r}] must be a list of (indices, values) pairs or None, "
            f"got {type(value).__name__}"
        )
    if len(value) != n:
        raise ValueError(f"sparse field {name!r}: {len(value)} values for {n} ids")
    mask = np.array([v is not None for v in value], dtype=bool)
    pairs = [sparse_pair(v, f"sparse_vectors[{name!r}][{i}]") for i, v in enumerate(value)
             if v is not None]  # fmt: skip
    counts = np.array([len(p[0]) for p in pairs], dtype=np.int64)
    indices = np.concatenate([p[0] for p in pairs]) if pairs else np.zeros(0, dtype=_U32)
    values = np.concatenate([p[1] for p in pairs]) if pairs else np.zeros(0, dtype=_F32)
    return SparseVectors(indices, values, counts, None if mask.all() else mask)


def check_sparse_schema(sparse: object) -> list[str] | dict[str, dict[str, Any]]:
    """A create's sparse_vectors=: a list of names, or {name: {"modifier": ...}}."""
    if isinstance(sparse, Mapping):
        out: dict[str, dict[str, Any]] = {}
        for name, spec in sparse.items():
            if not isinstance(name, str):
                raise TypeError(f"sparse field names must be strs, got {name!r}")
            if not isinstance(spec, Mapping):
                kind = type(spec).__name__
                raise TypeError(f"sparse field {name!r}: the spec must be a dict, got {kind}")
            out[name] = dict(spec)
        return out
    if isinstance(sparse, str) or not isinstance(sparse, Sequence):
        raise TypeError(
            "sparse_vectors must be a list of field names or a dict of name to "
            f"{{'modifier': 'none' | 'idf'}}, got {type(sparse).__name__}"
        )
    for name in sparse:
        if not isinstance(name, str):
            raise TypeError(f"sparse field names must be strs, got {name!r}")
    return list(sparse)


def sparse_schema_of(info: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Collection.sparse_schema from info()["sparse_vectors"]: name -> {"modifier"}."""
    return {f["name"]: {"modifier": f["modifier"]} for f in info.get("sparse_vectors") or []}


def split_fields(
    vectors: object, sparse_vectors: object, sparse_names: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A write's (dense, sparse) values: vectors= may name sparse fields too, and
    sparse_vectors= names only sparse ones (the engine says which names are not)."""
    dense = dict(check_vectors_arg(vectors)) if vectors is not None else {}
    sparse: dict[str, Any] = {}
    for name in list(dense):
        if name in sparse_names:
            sparse[name] = dense.pop(name)
    if sparse_vectors is not None:
        for name, value in check_vectors_arg(sparse_vectors).items():
            if name in sparse or name in dense:
                raise ValueError(f"vector field {name!r} given twice")
            sparse[name] = value
    return dense, sparse


_FUSIONS = ("rrf", "dbsf")


def check_fusion(fusion: object) -> str | None:
    """search()'s fusion=: "rrf", "dbsf" or None (one sub-query's own list)."""
    if fusion is not None and fusion not in _FUSIONS:
        raise ValueError(f"fusion must be 'rrf', 'dbsf' or None, got {fusion!r}")
    return fusion  # type: ignore[return-value]


def check_sub_queries(queries: object) -> list[dict[str, Any]]:
    """search()'s sub-queries: a list of dicts, each one of {"using": field, "vector":
    v} (a dense or multivector field), {"using": field, "sparse": (indices, values)} or
    {"text": str, "text_field": field}, with optional "limit" and "ef"."""
    if isinstance(queries, (str, bytes, Mapping)) or not isinstance(queries, Sequence):
        raise TypeError(f"search takes a list of sub-query dicts, got {type(queries).__name__}")
    if not queries:
        raise ValueError("search needs at least one sub-query")
    allowed = {"using", "vector", "sparse", "text", "text_field", "limit", "ef"}
    out = []
    for i, q in enumerate(queries):
        if not isinstance(q, Mapping):
            raise TypeError(f"sub-query {i} must be a dict, got {type(q).__name__}")
        unknown = set(q) - allowed
        if unknown:
            raise ValueError(
                f"sub-query {i}: unknown keys {sorted(unknown)} (known: {sorted(allowed)})"
            )
        kinds = [key for key in ("vector", "sparse", "text") if q.get(key) is not None]
        if len(kinds) != 1:
            raise ValueError(
                f"sub-query {i} needs exactly one of vector, sparse or text, got {kinds}"
            )
        if kinds[0] != "text" and not isinstance(q.get("using", ""), str):
            raise TypeError(f"sub-query {i}: using must be a field name (a str)")
        if kinds[0] == "text" and not isinstance(q["text"], str):
            raise TypeError(f"sub-query {i}: text must be a str")
        if kinds[0] == "text" and "using" in q:
            raise ValueError(f"sub-query {i}: a text sub-query names its index with text_field=")
        out.append(dict(q))
    return out


def sparse_json(name: str, value: object, n: int) -> list[Any]:
    """A sparse field's values for n points as the native REST API takes them: a list of
    {"indices", "values"} or null (go/server/sparse.go)."""
    sv = sparse_values(name, value, n)
    bad = ~np.isfinite(sv.values)
    if bad.any():  # JSON carries no NaN: refuse it naming the field, as the engine does
        raise ValueError(f"sparse field {name!r}: a value is NaN or infinite")
    out: list[Any] = []
    for v in sv.values_list(n):
        out.append(None if v is None else {"indices": v[0].tolist(), "values": v[1].tolist()})
    return out


def sparse_query_json(sparse: object, what: str = "sparse") -> dict[str, Any]:
    """A sparse query vector as JSON."""
    idx, val = sparse_pair(sparse, what)
    if not np.isfinite(val).all():
        raise ValueError(f"{what}: a value is NaN or infinite")
    return {"indices": idx.tolist(), "values": val.tolist()}


def sparse_from_points(points: Sequence[Mapping[str, Any]], name: str) -> SparseVectors:
    """get's answer ({"vectors": {field: {"indices", "values"}}} per point) as one sparse
    field's SparseVectors."""
    values = [p.get("vectors", {}).get(name) for p in points]
    pairs = [None if v is None else (v["indices"], v["values"]) for v in values]
    sv = sparse_values(name, pairs, len(points))
    mask = np.array([v is not None for v in values], dtype=bool)
    return SparseVectors(sv.indices, sv.values, sv.counts, mask)


def search_json(
    queries: object, schema: Mapping[str, Mapping[str, Any]], sparse_names: Sequence[str]
) -> list[dict[str, Any]]:
    """search()'s sub-queries as the native REST API takes them (go/server/sparse.go)."""
    out = []
    for i, q in enumerate(check_sub_queries(queries)):
        sub: dict[str, Any] = {}
        if "limit" in q:
            sub["limit"] = q["limit"]
        if q.get("ef") is not None:
            sub["ef"] = q["ef"]
        if q.get("text") is not None:
            sub["text"] = q["text"]
            if q.get("text_field") is not None:
                sub["text_field"] = q["text_field"]
        elif q.get("sparse") is not None:
            sub["using"] = q.get("using", "")
            sub["sparse"] = sparse_query_json(q["sparse"], f"sub-query {i}: sparse")
        else:
            using = q.get("using", "")
            if using in sparse_names:
                raise ValueError(f"sub-query {i}: field {using!r} is sparse: give sparse=")
            dim, multi = field_shape(schema, using)
            rows, nq, _counts = query_rows(q["vector"], dim, multi, using)
            if nq != 1:
                raise ValueError(f"sub-query {i}: one query of field {using!r}, got {nq}")
            _check_finite(using, rows)
            sub["using"] = using
            sub["vector"] = rows.tolist() if multi else rows.reshape(-1).tolist()
        out.append(sub)
    return out
