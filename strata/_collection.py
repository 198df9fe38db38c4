"""strata.Collection: a durable collection of ids, vectors and JSON metadata.

The engine (go/collection) does everything that matters: the write-ahead
log, group commit, snapshots, recovery, the metadata index and filters.
This layer validates arguments, converts NumPy arrays and JSON, calls the
C ABI and raises the engine's errors as Python exceptions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from strata import _lib
from strata._ffi import ffi
from strata._fields import (
    FieldVectors,
    SparseVectors,
    check_fusion,
    check_names,
    check_schema,
    check_sparse_schema,
    check_sub_queries,
    check_vectors_arg,
    field_shape,
    field_spec,
    field_values,
    query_rows,
    schema_of,
    sparse_pair,
    sparse_schema_of,
    sparse_values,
    split_fields,
)
from strata._ids import id_array, id_values
from strata._index import METRICS, _as_rows, _i64, _id_list, _int, _k, _path, _set, _threads
from strata._lib import ERRLEN, check, const

_FSYNC = {
    "always": const("STRATA_FSYNC_ALWAYS"),
    "batch": const("STRATA_FSYNC_BATCH"),
    "never": const("STRATA_FSYNC_NEVER"),
}
_QUANT = {None: const("STRATA_QUANT_NONE"), "sq8": const("STRATA_QUANT_SQ8")}
_PLANS = {
    const("STRATA_PLAN_GRAPH"): "graph",
    const("STRATA_PLAN_EXACT"): "exact",
    const("STRATA_PLAN_EMPTY"): "empty",
}
_CLOSED = (ValueError, "collection is closed")
_SOURCES = {1: "vector", 2: "text", 3: "both"}
_SEARCH_FUSION = {
    None: const("STRATA_FUSION_NONE"),
    "rrf": const("STRATA_FUSION_RRF"),
    "dbsf": const("STRATA_FUSION_DBSF"),
}
#: the rrf constant of query(text=, using=): query_text's 60, not search()'s 2
_TEXT_RRF_K = 60.0
ANALYZERS = ("simple", "stop", "english")
_INT64_MAX = 2**63 - 1

_native: Any = None


def _engine() -> Any:
    """Opens the engine on first use (see strata._lib)."""
    global _native
    lib = _lib.load()
    if _native is None:
        _native = lib
    return lib


@dataclass(frozen=True)
class QueryResult:
    """Nearest neighbours of each query: ids and distances are [nq, k], padded with -1 / inf;
    metadata[i][j] is the document of ids[i, j] (None for padding).

    For a text or hybrid query (nq = 1): scores[0, j] is the hit's score (BM25 for text
    alone, the fused score for hybrid; higher is better, NaN for padding), distances[0, j]
    its vector distance (NaN where the vector side did not find it), and sources[0][j]
    says which side found it: "vector", "text" or "both" (None for padding).

    A sparse query (query(sparse=...)) and a fused search (search()) have one row too:
    scores[0, j] is the dot product or the fused score (float64, higher is better, NaN
    for padding) and distances is NaN throughout.

    ids is an int64 array when every id of the answer is an integer; when one is a
    string it is an object array of ints and strs, padded with None."""

    ids: npt.NDArray[Any]
    distances: npt.NDArray[np.float32]
    metadata: list[list[dict[str, Any] | None]]
    stats: dict[str, Any] | None = None
    scores: npt.NDArray[np.floating[Any]] | None = None
    sources: list[list[str | None]] | None = None


@dataclass(frozen=True)
class GetResult:
    """Entries found: ids (in request order, missing ids left out), their metadata and,
    when asked for, their vectors ([n, dim] float32; normalised for cosine)."""

    ids: npt.NDArray[Any]
    metadata: list[dict[str, Any]]
    vectors: npt.NDArray[np.float32] | None
    #: with get(..., vectors=[names]): each named field's values of the entries found
    #: (mask[i]: whether entry i has the field; see strata.FieldVectors)
    named_vectors: dict[str, FieldVectors] | None = None
    #: with get(..., include_expiry=True): each entry's expiry, Unix seconds (float64),
    #: NaN for an entry that never expires
    expires_at: npt.NDArray[np.float64] | None = None
    #: with get(..., vectors=[names]) naming sparse fields: their values of the entries
    #: found (see strata.SparseVectors; .value(i) is entry i's (indices, values) or None)
    sparse_vectors: dict[str, SparseVectors] | None = None

    def __len__(self) -> int:
        return len(self.ids)


class _Expiry:
    """ttl or expires_at for the C ABI: float64 values, 1 or one per entry, NaN for
    an entry that never expires (the engine checks the values and the count)."""

    def __init__(self, values: npt.NDArray[np.float64], is_ttl: bool) -> None:
        self.values, self.is_ttl = values, is_ttl

    def pointers(self) -> tuple[Any, Any, int]:
        p = ffi.from_buffer("double[]", self.values)
        return (p, ffi.NULL, self.values.size) if self.is_ttl else (ffi.NULL, p, self.values.size)


def _expiry_arg(ttl: object, expires_at: object) -> _Expiry | None:
    if ttl is not None and expires_at is not None:
        raise ValueError("give ttl or expires_at, not both")
    name, value = ("ttl", ttl) if ttl is not None else ("expires_at", expires_at)
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a number of seconds or a sequence of them, got {value!r}")
    if isinstance(value, (int, float, np.integer, np.floating)):
        items: list[object] = [value]
    else:
        try:
            items = list(value)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError(f"{name} must be a number of seconds or a sequence of them") from None
        if not items:
            raise ValueError(f"{name} is empty: give one value or one per entry")
    out = np.empty(len(items), dtype=np.float64)
    for i, v in enumerate(items):
        if v is None:
            out[i] = np.nan  # the C ABI's "never expires"
            continue
        number = isinstance(v, (int, float, np.integer, np.floating))
        if isinstance(v, (bool, np.bool_)) or not number:
            raise TypeError(f"{name}[{i}] must be a number of seconds or None, got {v!r}")
        if v != v:  # NaN is how None travels: the caller's NaN is an error
            raise ValueError(f"{name}[{i}] is NaN: must be a finite number of seconds >= 0")
        out[i] = float(v)
    return _Expiry(out, name == "ttl")


def _ids_arg(ids: object) -> tuple[npt.NDArray[np.uint64], Any, Any]:
    """ids for the C ABI: (uint64 values, strata_id_strings * or NULL, what to keep
    alive during the call). Integer ids (a NumPy integer array, a list of ints) take
    the path they took before string ids: one uint64 array, no strings."""
    if not isinstance(ids, str):
        arr = np.asarray(ids)
        if arr.dtype.kind in "iu" or arr.size == 0:
            return _id_list(arr, "ids"), ffi.NULL, None
    values = id_values(ids, "ids")
    n = len(values)
    ints = np.zeros(n, dtype=np.uint64)
    kinds = np.zeros(n, dtype=np.uint8)
    offsets = np.zeros(n + 1, dtype=np.int64)
    chunks: list[bytes] = []
    end = 0
    for i, v in enumerate(values):
        if isinstance(v, str):
            raw = _str_id(v, f"ids[{i}]")
            kinds[i] = 1
            chunks.append(raw)
            end += len(raw)
        elif v >= 2**64:
            raise ValueError(f"ids[{i}]: integer id {v} is not below 2^63")
        else:
            ints[i] = v
        offsets[i + 1] = end
    if not chunks:
        return ints, ffi.NULL, None
    data = b"".join(chunks) or b"\0"  # from_buffer needs a byte to point at
    strs = ffi.new("strata_id_strings *")
    keep = (strs, ffi.from_buffer("uint8_t[]", kinds), ffi.from_buffer("char[]", data),
            ffi.from_buffer("int64_t[]", offsets), kinds, offsets)  # fmt: skip
    strs.kinds, strs.bytes, strs.offsets = keep[1], keep[2], keep[3]
    return ints, strs, keep


def check_ids(ids: object) -> None:
    """Raises ValueError (the engine's message) or TypeError if one of ids is not an id a
    write accepts; strata.ray asks it before splitting a batch over its shards."""
    id_arr, strs, _keep = _ids_arg(ids)
    err = _lib.errbuf()
    rc = _engine().strata_check_ids(
        ffi.from_buffer("uint64_t[]", id_arr), id_arr.shape[0], strs, err, ERRLEN
    )
    if rc:
        check(rc, err)


def _str_id(value: str, name: str) -> bytes:
    """A string id as UTF-8; ValueError for a str that is not (a lone surrogate)."""
    try:
        return value.encode()
    except UnicodeEncodeError as exc:
        raise ValueError(f"{name} is not valid UTF-8: {exc.reason} at {exc.start}") from None


def _json_arg(value: object, what: str) -> bytes:
    """Encodes a filter or metadata batch as JSON, with errors that name the argument."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()
    except ValueError as exc:
        raise ValueError(f"{what}: {exc} (NaN and infinity are not JSON)") from None
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None


def check_where(where: object) -> dict[str, Any] | None:
    """Checks a filter argument: None or a dict (the engine parses the rest).

    Shared with strata.client and strata.ray, which validate the same way."""
    if where is not None and not isinstance(where, dict):
        raise TypeError(f"where must be a dict (a Mongo-style filter), got {type(where).__name__}")
    return where


def check_metadata(metadata: object, n: int) -> list[Any] | None:
    """Checks a metadata argument for n ids: None, one dict, or n dicts/None.

    Shared with strata.client and strata.ray, which validate the same way."""
    if metadata is None:
        return None
    if isinstance(metadata, dict):
        metadata = [metadata]
    if not isinstance(metadata, Sequence) or isinstance(metadata, (str, bytes)):
        raise TypeError(f"metadata must be a list of dicts, got {type(metadata).__name__}")
    if len(metadata) != n:
        raise ValueError(f"got {len(metadata)} metadata documents for {n} ids")
    for i, doc in enumerate(metadata):
        if doc is not None and not isinstance(doc, dict):
            raise TypeError(f"metadata[{i}] must be a dict or None, got {type(doc).__name__}")
    return list(metadata)


def _where_arg(where: object) -> tuple[Any, int]:
    if check_where(where) is None:
        return ffi.NULL, 0
    raw = _json_arg(where, "where")
    return raw, len(raw)


def _metadata_arg(metadata: object, n: int) -> tuple[Any, int]:
    docs = check_metadata(metadata, n)
    if docs is None:
        return ffi.NULL, 0
    raw = _json_arg(docs, "metadata")
    return raw, len(raw)


def _fusion_arg(fusion: object) -> tuple[int, float]:
    """fusion="rrf" or {"alpha": a}: the C ABI's (kind, alpha)."""
    if fusion == "rrf":
        return const("STRATA_FUSION_RRF"), 0.0
    if isinstance(fusion, dict) and set(fusion) == {"alpha"}:
        alpha = fusion["alpha"]
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise ValueError(f"fusion alpha must be a number, got {alpha!r}")
        return const("STRATA_FUSION_WEIGHTED"), float(alpha)  # the engine checks [0, 1]
    raise ValueError(f'fusion must be "rrf" or {{"alpha": a}} with a in [0, 1], got {fusion!r}')


def _bm25_arg(value: float | None, name: str) -> float:
    """k1 or b for the C ABI, where a negative value means "the default"; so a
    negative one is refused here, and the engine checks the upper bound."""
    if value is None:
        return -1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not value >= 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def analyze(text: str, analyzer: str = "english") -> list[str]:
    """The terms a text index with that analyzer makes of text (the same at query time)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not isinstance(analyzer, str):
        raise TypeError(f"analyzer must be a str, got {type(analyzer).__name__}")
    lib = _engine()
    raw = text.encode()
    buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
    rc = lib.strata_text_analyze(analyzer.encode(), raw, len(raw), buf, err, ERRLEN)
    if rc:
        check(rc, err)
    terms: list[str] = _take_json(buf)
    return terms


def _take_json(buf: Any) -> Any:
    """Decodes and frees a strata_buffer the engine filled."""
    try:
        return json.loads(ffi.unpack(buf.data, buf.len)) if buf.len else None
    finally:
        _native.strata_buffer_free(buf)


def _text_fields_arg(fields: object) -> list[str]:
    if fields is None:
        return []
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise TypeError(f"text_fields must be a list of str, got {type(fields).__name__}")
    for f in fields:
        if not isinstance(f, str) or not f:
            raise TypeError(f"text_fields must hold non-empty strs, got {f!r}")
    return list(fields)


def _pointer(kind: str, arr: Any) -> Any:
    """arr's memory for the C ABI (NULL when empty: nothing to point at)."""
    return ffi.from_buffer(kind, arr) if arr.size else ffi.NULL


def _query_result(
    ids: Any, dists: Any, id_buf: Any, buf: Any, stats: Any, nq: int, k: int, include_metadata: bool
) -> QueryResult:
    """A vector query's result from the C ABI's outputs (freeing its buffers)."""
    if id_buf.len:
        ids = id_array(_take_json(id_buf), (nq, k))
    docs: list[Any] = _take_json(buf) if include_metadata else [None] * (nq * k)
    rows = [docs[i * k : (i + 1) * k] for i in range(nq)]
    st = None
    if stats != ffi.NULL:
        st = {
            "plan": _PLANS.get(stats.plan, "unknown"),
            "ndis": int(stats.distance_computations),
            "allowed": int(stats.allowed),
            "ef": int(stats.ef_search),
        }
    return QueryResult(ids, dists, rows, st)


def fuse(
    lists: Sequence[tuple[Sequence[Any], npt.ArrayLike]], fusion: str, k: int,
    rrf_k: float | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:  # fmt: skip
    """Fuses ranked lists ((ids, scores) each, best first) as search() does, in the engine
    (collection.Fuse): the positions of the k best in the lists laid end to end (each
    point's first appearance) and their fused scores. For a door that gathers the lists
    itself (strata.ray's sharded search)."""
    if fusion not in ("rrf", "dbsf"):
        raise ValueError(f"fusion must be 'rrf' or 'dbsf', got {fusion!r}")
    k = _k(k)
    lens = np.array([len(ids) for ids, _ in lists], dtype=np.int64)
    flat: list[Any] = []
    for ids, _ in lists:
        flat += ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
    scores = np.ascontiguousarray(
        np.concatenate([np.asarray(sc, dtype=np.float64).reshape(-1) for _, sc in lists])
        if lists else np.zeros(0), dtype=np.float64,
    )  # fmt: skip
    if scores.shape[0] != len(flat):
        raise ValueError(f"{len(flat)} ids for {scores.shape[0]} scores")
    id_arr, strs, _keep = _ids_arg(flat)
    pos = np.zeros(k, dtype=np.int64)
    out = np.zeros(k, dtype=np.float64)
    out_n, err = ffi.new("int64_t *"), _lib.errbuf()
    rc = _engine().strata_fuse(
        len(lens), _pointer("int64_t[]", lens), _pointer("uint64_t[]", id_arr), strs,
        _pointer("double[]", scores), _SEARCH_FUSION[fusion], float(rrf_k or 0), k,
        ffi.from_buffer("int64_t[]", pos), ffi.from_buffer("double[]", out), out_n, err, ERRLEN,
    )  # fmt: skip
    if rc:
        check(rc, err)
    n = int(out_n[0])
    return pos[:n], out[:n]


class Collection(_lib.NativeObject):
    """A durable collection on disk: uint64 ids, float32 vectors and JSON metadata.

    Create one with ``Collection.create(path, dim, ...)`` and reopen it with
    ``Collection.open(path)``. Writes are logged (and, with fsync="always",
    fsynced) before they return; concurrent writers share fsyncs.
    """

    __slots__ = ("_path", "_schema", "_sparse")
    _FREE = "strata_col_close"
    _CLOSED = _CLOSED

    _path: str

    def __init__(self) -> None:
        raise TypeError(
            "use strata.Collection.create(path, dim, ...) or strata.Collection.open(path)"
        )

    @classmethod
    def _wrap(cls, handle: int, path: str | os.PathLike[str]) -> Collection:
        self = object.__new__(cls)
        self._path = os.fspath(path)
        self._attach(handle)
        info = self.info()
        self._dim, self._metric = int(info["dim"]), str(info["metric"])
        self._schema = schema_of(info)
        self._sparse = sparse_schema_of(info)
        return self

    @classmethod
    def create(
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
    ) -> Collection:
        """Creates a new collection in the directory path (made if missing).

        One unnamed vector field of dim (metric, M, ef_construction, quantization), or
        with vectors= a schema of named fields instead: {name: {"dim": 50, "metric":
        "cosine", "M": 16, "ef_construction": 200, "quantization": "sq8",
        "multivector": "max_sim"}} (dim required; the name "" is the unnamed field that
        upsert/query without vectors=/using= use). A multivector field holds a list of
        vectors per point, scored by MAX_SIM (ColBERT).

        sparse_vectors: sparse vector fields, a list of names (["keywords"]) or {name:
        {"modifier": "none" | "idf"}} ("idf" scores as Qdrant's IDF modifier, for BM25-like
        term weights); a point's value is an (indices, values) pair, scored by dot product.

        text_fields: metadata fields (dotted paths) to keep BM25 indexes over, analyzed
        by text_analyzer ("simple", "stop" or "english"; see create_text_index).

        memory: where the unnamed field's float vectors live once sealed into segments:
        "ram" (read into memory) or "mmap" (left in the segment files, memory-mapped, so
        the kernel may evict them and the collection may outgrow RAM; answers are the
        same). Named fields take "memory" in their spec.

        rescore: for quantization="sq8", whether the field keeps its float vectors beside
        the codes (placed by memory) and re-scores each search's candidates with them (the
        default, True), or keeps codes only (False: about a quarter of the vector memory,
        distances and ranking by codes). Named fields take "rescore" in their spec. Raises
        FileExistsError if path already holds a collection."""
        fields = _text_fields_arg(text_fields)
        if not isinstance(text_analyzer, str):
            raise TypeError(f"text_analyzer must be a str, got {type(text_analyzer).__name__}")
        analyze("", text_analyzer)  # the engine's check and message, before anything is made
        if vectors is not None:
            if dim is not None:
                raise ValueError("give dim (one unnamed field) or vectors= (named), not both")
            if memory != "ram" or rescore is not None:
                raise ValueError(
                    "with vectors=, give each field its own 'memory' and 'rescore' in its spec"
                )
            return cls._create_schema(path, vectors, fsync, seed, fields, text_analyzer,
                                      sparse_vectors)  # fmt: skip
        if sparse_vectors is not None or (
            (memory != "ram" or rescore is not None) and dim is not None
        ):
            # The unnamed field as a schema: the door that carries every option.
            spec = field_spec(dim, metric, M, ef_construction, quantization, None, memory, rescore)
            unnamed = {} if dim is None else {"": spec}
            return cls._create_schema(path, unnamed, fsync, seed, fields, text_analyzer,
                                      sparse_vectors)  # fmt: skip
        if dim is None:
            raise TypeError(
                "create needs dim (one unnamed field), vectors= (named fields) or sparse_vectors="
            )
        dim = _i64(dim, "dim")
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
        m = _set(M, "M")
        efc = _set(ef_construction, "ef_construction")
        if quantization not in _QUANT:
            raise ValueError(f"quantization must be None or 'sq8', got {quantization!r}")
        if fsync not in _FSYNC:
            raise ValueError(f"fsync must be one of {sorted(_FSYNC)}, got {fsync!r}")
        seed_value = 0 if seed is None else _int(seed, "seed", 0, 2**64 - 1)
        if seed is None:
            seed_value = int.from_bytes(os.urandom(8), "little")
        lib = _engine()
        handle, err = ffi.new("strata_handle *"), _lib.errbuf()
        rc = lib.strata_col_create(
            _path(path), dim, METRICS[metric], m, efc, _QUANT[quantization], _FSYNC[fsync],
            seed_value, handle, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return cls._with_text(cls._wrap(handle[0], path), path, fields, text_analyzer)

    @classmethod
    def _create_schema(
        cls, path: str | os.PathLike[str], vectors: object, fsync: str, seed: int | None,
        fields: list[str], text_analyzer: str, sparse: object = None,
    ) -> Collection:  # fmt: skip
        if fsync not in _FSYNC:
            raise ValueError(f"fsync must be one of {sorted(_FSYNC)}, got {fsync!r}")
        seed_value = 0 if seed is None else _int(seed, "seed", 0, 2**64 - 1)
        if seed is None:
            seed_value = int.from_bytes(os.urandom(8), "little")
        doc: dict[str, Any] = {"vectors": check_schema(vectors), "fsync": fsync, "seed": seed_value}
        if sparse is not None:
            doc["sparse_vectors"] = check_sparse_schema(sparse)
        raw = _json_arg(doc, "vectors")
        lib = _engine()
        handle, err = ffi.new("strata_handle *"), _lib.errbuf()
        rc = lib.strata_col_create_schema(_path(path), raw, len(raw), handle, err, ERRLEN)
        if rc:
            check(rc, err)
        return cls._with_text(cls._wrap(handle[0], path), path, fields, text_analyzer)

    @classmethod
    def _with_text(
        cls, col: Collection, path: str | os.PathLike[str], fields: list[str], analyzer: str
    ) -> Collection:
        try:
            for field in fields:
                col.create_text_index(field, analyzer)
        except BaseException:
            col.close()
            cls.drop(path)
            raise
        return col

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        fsync: str | None = None,
        repair: bool = False,
        verify: str = "background",
    ) -> Collection:
        """Opens and recovers the collection at path.

        A torn tail of the log (a crash mid-write) is cut off and reported in
        info()["recovery"]; a corrupt record, or a log that lost records (a
        segment deleted or emptied), raises strata.IntegrityError naming file and
        offset, unless repair=True, which keeps .broken copies of the damaged log
        segments, recovers every intact record behind the damage and reports the
        lost sequence numbers in info()["recovery"]["repaired"]["lost_seqs"]
        ([from, through] pairs, through None when unknown). fsync overrides the
        stored policy for this session.

        verify="background" (the default) returns once the segments are mapped
        and the log tail replayed, and checks the segments' CRCs (vectors, links, ids,
        codes) after it returns, in one background thread: info()["verification"]["state"] is
        "pending", then "verified", or "failed", after which every call raises
        strata.IntegrityError naming the segment file and section (nothing is
        deleted). verify="open" checks every byte before returning, as before,
        so that a damaged segment falls back on the previous snapshot or raises
        here."""
        if fsync is not None and fsync not in _FSYNC:
            raise ValueError(f"fsync must be one of {sorted(_FSYNC)} or None, got {fsync!r}")
        lib = _engine()
        handle, err = ffi.new("strata_handle *"), _lib.errbuf()
        if verify not in ("background", "open"):
            raise ValueError(f'verify must be "background" or "open", got {verify!r}')
        code = -1 if fsync is None else _FSYNC[fsync]
        flags = (_lib.const("STRATA_OPEN_REPAIR") if repair else 0) | (
            _lib.const("STRATA_OPEN_VERIFY") if verify == "open" else 0
        )
        rc = lib.strata_col_open(_path(path), code, flags, handle, err, ERRLEN)
        if rc:
            check(rc, err)
        return cls._wrap(handle[0], path)

    @staticmethod
    def exists(path: str | os.PathLike[str]) -> bool:
        """Whether path holds a collection."""
        out, err = ffi.new("int *"), _lib.errbuf()
        rc = _engine().strata_col_exists(_path(path), out, err, ERRLEN)
        if rc:
            check(rc, err)
        return bool(out[0])

    @staticmethod
    def drop(path: str | os.PathLike[str]) -> None:
        """Deletes the collection at path; raises strata.LockedError if it is open."""
        err = _lib.errbuf()
        rc = _engine().strata_col_drop(_path(path), err, ERRLEN)
        if rc:
            check(rc, err)

    @classmethod
    def restore(cls, archive: str | os.PathLike[str], path: str | os.PathLike[str]) -> Collection:
        """Makes a new collection at path from an archive written by snapshot() and opens
        it. path must not exist (FileExistsError). Every file of the archive is checked
        (its place, size and CRCs) before the collection appears at path: a damaged,
        truncated or foreign archive raises ValueError and leaves nothing behind."""
        err = _lib.errbuf()
        rc = _engine().strata_col_restore(_path(archive), _path(path), ffi.NULL, err, ERRLEN)
        if rc:
            check(rc, err)
        return cls.open(path)

    # --- lifecycle ----------------------------------------------------------
    # close(), the context manager, dim and metric: strata._lib.NativeObject.

    @property
    def path(self) -> str:
        return self._path

    def __repr__(self) -> str:
        if self._dead is not None:
            return f"<strata.Collection({self._path!r}) closed>"
        params = f"dim={self._dim}, metric={self._metric!r}, len={len(self)}"
        return f"strata.Collection({self._path!r}, {params})"

    # --- writes -------------------------------------------------------------

    def upsert(
        self, ids: object, vectors: Any = None, metadata: object = None, *,
        sparse_vectors: dict[str, Any] | None = None, ttl: object = None,
        expires_at: object = None,
    ) -> None:  # fmt: skip
        """Inserts or replaces entries: ids (n ids: integers below 2**63 or strs of 1-512
        bytes of UTF-8, mixed as you like, or a NumPy integer array), vectors [n, dim]
        (or one [dim] vector), metadata a list of n dicts (or None).

        With named vector fields, vectors is a dict of field name to values ({"text": t,
        "image": i}; see strata.FieldVectors for a point lacking a field and for
        multivector values): each point gets exactly the fields given, losing any other
        it had (a whole-point write).

        sparse_vectors: {"keywords": [(indices, values) or None per id]} (NumPy arrays or
        lists; None: the point lacks the field; or a strata.SparseVectors); vectors= may
        name sparse fields too.

        ttl (seconds from now) or expires_at (Unix seconds), not both: one number for
        every entry, or one per entry (None: that entry never expires). An expired entry
        is gone for every query, get, scan and count from that moment, and is deleted in
        the background. An upsert without either clears the entries' expiry."""
        expiry = _expiry_arg(ttl, expires_at)
        if isinstance(vectors, dict) or sparse_vectors is not None:
            if vectors is not None and not isinstance(vectors, dict):
                vectors = {"": vectors}
            self._upsert_points(ids, vectors, metadata, expiry, sparse_vectors)
            return
        handle = self._live()
        self._need_default()
        vecs, n = _as_rows(vectors, self._dim, "vectors", "collection")
        id_arr, strs, _keep = _ids_arg(ids)
        if id_arr.shape[0] != n:
            raise ValueError(f"got {id_arr.shape[0]} ids for {n} vectors")
        raw, size = _metadata_arg(metadata, n)
        err = _lib.errbuf()
        if expiry is None:
            rc = _native.strata_col_upsert(
                handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs,
                ffi.from_buffer("float[]", vecs), raw, size, err, ERRLEN,
            )  # fmt: skip
        else:
            ttl_p, at_p, n_expiry = expiry.pointers()
            rc = _native.strata_col_upsert_expiring(
                handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs,
                ffi.from_buffer("float[]", vecs), raw, size, ttl_p, at_p, n_expiry, err, ERRLEN,
            )  # fmt: skip
        if rc:
            check(rc, err)

    # --- named vector fields ------------------------------------------------

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """The vector fields: name -> {"dim", "metric", "M", "ef_construction",
        "quantization", "multivector" ("none" or "max_sim")}; "" is the unnamed field."""
        self._live()
        return {name: dict(spec) for name, spec in self._schema.items()}

    def _need_default(self) -> None:
        """ValueError for a call of the unnamed field on a collection without one."""
        if self._dim == 0 and "" not in self._schema:
            have = ", ".join(repr(k) for k in sorted(self._schema)) or "none"
            raise ValueError(
                f"the collection has no unnamed vector field: name one (vectors={{name: ...}} "
                f"or using=name; its fields: {have})"
            )

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]:
        """The sparse vector fields: name -> {"modifier": "none" | "idf"}."""
        self._live()
        return {name: dict(spec) for name, spec in self._sparse.items()}

    def _refresh(self) -> None:
        """Rereads the schema (it may have changed through another door)."""
        info = self.info()
        self._schema, self._sparse = schema_of(info), sparse_schema_of(info)

    def _field(self, name: str) -> tuple[int, bool]:
        if name not in self._schema:
            self._refresh()
            if name in self._sparse:
                raise ValueError(
                    f"vector field {name!r} is sparse: query it with sparse=(indices, values)"
                )
        return field_shape(self._schema, name)

    def _is_sparse(self, name: str) -> bool:
        if name not in self._sparse and name not in self._schema:
            self._refresh()
        return name in self._sparse

    def _fields_arg(
        self, vectors: object, n: int, sparse_vectors: object = None
    ) -> tuple[Any, int, list[Any]]:
        """The C descriptors of named values for n points (and what to keep alive)."""
        if vectors is not None and not isinstance(vectors, dict):
            check_vectors_arg(vectors)  # the TypeError naming the argument
        names = list(vectors or {}) + list(sparse_vectors or {})
        if any(not isinstance(name, str) for name in names):
            raise TypeError(f"vector field names must be strs, got {names!r}")
        sparse_names = [name for name in names if self._is_sparse(name)]
        values, sparse = split_fields(vectors, sparse_vectors, sparse_names)
        descs = ffi.new("strata_field_values[]", max(len(values) + len(sparse), 1))
        keep: list[Any] = [descs]
        for i, (name, value) in enumerate(sparse.items(), start=len(values)):
            sv = sparse_values(name, value, n)
            raw = name.encode()
            d = descs[i]
            keep += [raw, sv]
            d.name, d.name_len = ffi.from_buffer("char[]", raw or b"\0"), len(raw)
            if sv.mask is None:
                d.n_points, d.points = -1, ffi.NULL
            else:
                pos = sv.positions()
                keep.append(pos)
                d.n_points, d.points = len(pos), _pointer("int64_t[]", pos)
            d.counts = _pointer("int64_t[]", sv.counts)
            d.values, d.n_values = _pointer("float[]", sv.values), sv.values.size
            d.indices = _pointer("uint32_t[]", sv.indices)
        for i, (name, value) in enumerate(values.items()):
            dim, multi = self._field(name)
            fv = field_values(name, value, n, dim, multi)
            raw = name.encode()
            d = descs[i]
            # keep holds every array a descriptor points into until the call returns.
            keep += [raw, fv]
            d.name, d.name_len = ffi.from_buffer("char[]", raw or b"\0"), len(raw)
            if fv.mask is None:
                d.n_points, d.points = -1, ffi.NULL
            else:
                pos = fv.positions()
                keep.append(pos)
                d.n_points, d.points = len(pos), _pointer("int64_t[]", pos)
            if fv.counts is not None:
                d.counts = _pointer("int64_t[]", fv.counts)
            d.values, d.n_values = _pointer("float[]", fv.vectors), fv.vectors.size
        return descs, len(values) + len(sparse), keep

    def _upsert_points(
        self, ids: object, vectors: object, metadata: object, expiry: _Expiry | None,
        sparse_vectors: object = None,
    ) -> None:
        handle = self._live()
        id_arr, strs, _keep = _ids_arg(ids)
        n = id_arr.shape[0]
        descs, nfields, _keep_fields = self._fields_arg(vectors, n, sparse_vectors)
        raw, size = _metadata_arg(metadata, n)
        err = _lib.errbuf()
        if expiry is None:
            rc = _native.strata_col_upsert_points(
                handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs, descs, nfields, raw,
                size, err, ERRLEN,
            )  # fmt: skip
        else:
            ttl_p, at_p, n_expiry = expiry.pointers()
            rc = _native.strata_col_upsert_points_expiring(
                handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs, descs, nfields, raw,
                size, ttl_p, at_p, n_expiry, err, ERRLEN,
            )  # fmt: skip
        if rc:
            check(rc, err)

    def update_vectors(
        self, ids: object, vectors: dict[str, Any] | None = None, *,
        sparse_vectors: dict[str, Any] | None = None,
    ) -> int:  # fmt: skip
        """Replaces the given fields' values of existing points ({"text": t}, sparse
        fields in either argument), leaving their other fields and metadata; raises
        KeyError naming the first id that does not exist. Returns how many points were
        updated."""
        handle = self._live()
        id_arr, strs, _keep = _ids_arg(ids)
        n = id_arr.shape[0]
        descs, nfields, _keep_fields = self._fields_arg(vectors, n, sparse_vectors)
        out, err = ffi.new("int64_t *"), _lib.errbuf()
        rc = _native.strata_col_update_vectors(
            handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs, descs, nfields, out, err,
            ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return int(out[0])

    def delete_vectors(self, ids: object, vectors: Sequence[str]) -> int:
        """Drops the named fields' values of existing points, which keep their other
        fields and metadata; raises KeyError naming the first id that does not exist,
        ValueError naming a field that does not. Returns how many points changed."""
        handle = self._live()
        names = _json_arg(check_names(vectors), "vectors")
        id_arr, strs, _keep = _ids_arg(ids)
        out, err = ffi.new("int64_t *"), _lib.errbuf()
        rc = _native.strata_col_delete_vectors(
            handle, ffi.from_buffer("uint64_t[]", id_arr), id_arr.shape[0], strs, names,
            len(names), out, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return int(out[0])

    def add_vector_field(
        self,
        name: str,
        dim: int,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        multivector: str | None = None,
    ) -> None:
        """Adds an empty vector field (existing points lack it until given a value);
        multivector="max_sim" makes a multivector field. Raises FileExistsError if the
        name is taken. Durable when it returns."""
        handle = self._live()
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        spec = _json_arg(
            field_spec(dim, metric, M, ef_construction, quantization, multivector), "spec"
        )
        raw, err = name.encode(), _lib.errbuf()
        rc = _native.strata_col_add_vector_field(
            handle, raw, len(raw), spec, len(spec), err, ERRLEN
        )
        if rc:
            check(rc, err)
        self._refresh()

    def add_sparse_field(self, name: str, modifier: str = "none") -> None:
        """Adds an empty sparse vector field (modifier "none" or "idf"; see create).
        Raises FileExistsError if the name is taken. Durable when it returns."""
        handle = self._live()
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if not isinstance(modifier, str):
            raise TypeError(f"modifier must be a str, got {type(modifier).__name__}")
        raw, err = name.encode(), _lib.errbuf()
        rc = _native.strata_col_add_sparse_field(handle, raw, len(raw), modifier.encode(), err,
                                                 ERRLEN)  # fmt: skip
        if rc:
            check(rc, err)
        self._refresh()

    def remove_vector_field(self, name: str) -> None:
        """Removes a vector field (dense, multivector or sparse) and its index; points
        keep their other fields. Raises KeyError if there is no such field. Durable when
        it returns."""
        handle = self._live()
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        raw, err = name.encode(), _lib.errbuf()
        rc = _native.strata_col_remove_vector_field(handle, raw, len(raw), err, ERRLEN)
        if rc:
            check(rc, err)
        self._refresh()

    def _get_vectors(self, ids: object, name: str) -> FieldVectors:
        handle = self._live()
        dim, multi = self._field(name)
        id_arr, strs, _keep = _ids_arg(ids)
        n = id_arr.shape[0]
        counts = np.zeros(n, dtype=np.int64)
        buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        raw = name.encode()
        rc = _native.strata_col_get_vectors(
            handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs, raw, len(raw),
            ffi.from_buffer("int64_t[]", counts), buf, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        try:
            flat = np.frombuffer(ffi.buffer(buf.data, buf.len), dtype=np.float32).copy()
        finally:
            _native.strata_buffer_free(buf)
        mask = counts > 0
        return FieldVectors(flat.reshape(-1, dim), mask, counts[mask] if multi else None)

    def _get_sparse(self, ids: object, name: str) -> SparseVectors:
        handle = self._live()
        id_arr, strs, _keep = _ids_arg(ids)
        n = id_arr.shape[0]
        counts = np.zeros(n, dtype=np.int64)
        idx_buf, val_buf = ffi.new("strata_buffer *"), ffi.new("strata_buffer *")
        err = _lib.errbuf()
        raw = name.encode()
        rc = _native.strata_col_get_sparse_vectors(
            handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs, raw, len(raw),
            ffi.from_buffer("int64_t[]", counts), idx_buf, val_buf, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        try:
            indices = np.frombuffer(ffi.buffer(idx_buf.data, idx_buf.len), dtype=np.uint32).copy()
            values = np.frombuffer(ffi.buffer(val_buf.data, val_buf.len), dtype=np.float32).copy()
        finally:
            _native.strata_buffer_free(idx_buf)
            _native.strata_buffer_free(val_buf)
        mask = counts >= 0
        return SparseVectors(indices, values, counts[mask], mask)

    def update_metadata(self, ids: object, metadata: object) -> int:
        """Replaces the metadata of existing ids (their vectors stay); raises KeyError
        naming the first id that does not exist. Returns how many were updated."""
        handle = self._live()
        id_arr, strs, _keep = _ids_arg(ids)
        raw, size = _metadata_arg(metadata, id_arr.shape[0])
        if size == 0:
            raise TypeError("metadata must be a list of dicts, got None")
        out, err = ffi.new("int64_t *"), _lib.errbuf()
        rc = _native.strata_col_update_metadata(
            handle, ffi.from_buffer("uint64_t[]", id_arr), id_arr.shape[0], strs, raw, size,
            out, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return int(out[0])

    def create_text_index(self, field: str, analyzer: str = "english") -> None:
        """Keeps a BM25 index over the string metadata field (a dotted path) of every
        existing and future entry; durable when it returns.

        analyzer: "simple" (Unicode words, case folded), "stop" (plus English stop words)
        or "english" (plus Snowball stemming). Raises ValueError if the field is indexed
        already or an entry holds a value there that is not a string (null and missing
        mean no text); later writes of such values raise ValueError too."""
        handle = self._live()
        if not isinstance(field, str) or not field:
            raise TypeError(f"field must be a non-empty str, got {field!r}")
        if not isinstance(analyzer, str):
            raise TypeError(f"analyzer must be a str, got {type(analyzer).__name__}")
        err = _lib.errbuf()
        rc = _native.strata_col_create_text_index(
            handle, field.encode(), analyzer.encode(), err, ERRLEN
        )
        if rc:
            check(rc, err)

    def delete(self, ids: object = None, where: dict[str, Any] | None = None) -> int:
        """Deletes the given ids (unknown ones are ignored) or every entry matching
        where; returns how many entries were deleted."""
        handle = self._live()
        if (ids is None) == (where is None):
            raise ValueError("delete needs exactly one of ids= or where=")
        out, err = ffi.new("int64_t *"), _lib.errbuf()
        if ids is not None:
            id_arr, strs, _keep = _ids_arg(ids)
            rc = _native.strata_col_delete(
                handle, ffi.from_buffer("uint64_t[]", id_arr), id_arr.shape[0], strs, ffi.NULL, 0,
                out, err, ERRLEN,
            )  # fmt: skip
        else:
            raw, size = _where_arg(where)
            rc = _native.strata_col_delete(
                handle, ffi.NULL, -1, ffi.NULL, raw, size, out, err, ERRLEN
            )
        if rc:
            check(rc, err)
        return int(out[0])

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
    ) -> QueryResult:
        """The k nearest entries to each query among those matching where.

        A 1-D query is one row. ef (default max(k, 64)) trades speed for recall.

        using= names the vector field searched (default the unnamed field ""); points
        lacking it are never returned. A multivector field's query is one [m, dim]
        array (or a list of them, one query each), scored by MAX_SIM.

        With text=, a BM25 query over the collection's text index (text_field names it
        when there are several; k1 and b default to Lucene's 1.2 and 0.75); with text=
        and a query vector (queries or vector=, one row), a hybrid query: both sides
        run with the where filter and are fused by reciprocal rank ("rrf") or by
        {"alpha": a}: a * vector + (1 - a) * text, each min-max normalised. A text with
        no indexed term finds nothing (hybrid: the vector side alone). The result has
        scores and sources (see QueryResult). With text= and using= a field, the hybrid
        query is search()'s: the field's list and the text's fused by "rrf" (constant
        60, as above) or "dbsf", without sources.

        sparse=(indices, values) with using= a sparse field: the k entries with the
        largest dot product (the field's modifier applied), exact; only entries sharing
        an index with the query are found. The result has scores (see QueryResult)."""
        if vector is not None:
            if queries is not None:
                raise ValueError("pass the query vector as queries or as vector=, not both")
            queries = vector
        if sparse is not None:
            if queries is not None or text is not None:
                raise ValueError("a sparse query takes sparse= alone (no query vector or text)")
            if using is None:
                raise ValueError("a sparse query needs using= (the sparse field's name)")
            sub = {"using": using, "sparse": sparse, "limit": k}
            return self.search([sub], k=k, fusion=None, where=where,
                               include_metadata=include_metadata)  # fmt: skip
        if using is not None:
            if text is not None:
                if queries is None:
                    raise ValueError("a text query of a field takes text_field=, not using=")
                if fusion not in ("rrf", "dbsf"):
                    raise ValueError(
                        f"a hybrid query with using= fuses by 'rrf' or 'dbsf', got {fusion!r}"
                    )
                subs = [{"using": using, "vector": queries, "ef": ef},
                        {"text": text, "text_field": text_field}]  # fmt: skip
                rrf = _TEXT_RRF_K if fusion == "rrf" else None
                return self.search(
                    subs, k=k, fusion=fusion, where=where, rrf_k=rrf, num_threads=num_threads,
                    include_metadata=include_metadata,
                )
            if queries is None:
                raise ValueError("query needs a query vector (queries or vector=)")
            return self._query_field(
                using, queries, k, where, ef, num_threads, include_metadata, return_stats
            )
        if text is not None:
            return self._query_text(
                queries, text, k, where, ef, fusion, text_field, k1, b, num_threads,
                include_metadata,
            )  # fmt: skip
        if queries is None:
            raise ValueError("query needs a query vector (queries or vector=), text=, or both")
        handle = self._live()
        self._need_default()
        qs, nq = _as_rows(queries, self._dim, "queries", "collection")
        k = _k(k)
        ef_value = 0 if ef is None else _set(ef, "ef")
        raw, size = _where_arg(where)
        ids: npt.NDArray[Any] = np.empty((nq, k), dtype=np.int64)
        dists = np.empty((nq, k), dtype=np.float32)
        buf = ffi.new("strata_buffer *") if include_metadata else ffi.NULL
        stats = ffi.new("strata_search_stats *") if return_stats else ffi.NULL
        id_buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        rc = _native.strata_col_query(
            handle, ffi.from_buffer("float[]", qs), nq, k, ef_value, _threads(num_threads), raw,
            size, ffi.from_buffer("int64_t[]", ids), id_buf, ffi.from_buffer("float[]", dists),
            buf, stats, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return _query_result(ids, dists, id_buf, buf, stats, nq, k, include_metadata)

    def _query_field(
        self, using: object, queries: object, k: int, where: dict[str, Any] | None,
        ef: int | None, num_threads: int | None, include_metadata: bool, return_stats: bool,
    ) -> QueryResult:  # fmt: skip
        handle = self._live()
        if not isinstance(using, str):
            raise TypeError(f"using must be a vector field name (a str), got {using!r}")
        dim, multi = self._field(using)
        rows, nq, counts = query_rows(queries, dim, multi, using)
        k = _k(k)
        ef_value = 0 if ef is None else _set(ef, "ef")
        raw, size = _where_arg(where)
        q = ffi.new("strata_field_values *")
        name = using.encode() or b"\0"
        keep = [ffi.from_buffer("char[]", name), ffi.from_buffer("float[]", rows)]
        q.name, q.name_len, q.n_points = keep[0], len(using.encode()), nq
        q.values, q.n_values = keep[1], rows.size
        if counts is not None:
            keep.append(ffi.from_buffer("int64_t[]", counts))
            q.counts = keep[-1]
        ids: npt.NDArray[Any] = np.empty((nq, k), dtype=np.int64)
        dists = np.empty((nq, k), dtype=np.float32)
        buf = ffi.new("strata_buffer *") if include_metadata else ffi.NULL
        stats = ffi.new("strata_search_stats *") if return_stats else ffi.NULL
        id_buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        rc = _native.strata_col_query_field(
            handle, q, k, ef_value, _threads(num_threads), raw, size,
            ffi.from_buffer("int64_t[]", ids), id_buf, ffi.from_buffer("float[]", dists), buf,
            stats, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return _query_result(ids, dists, id_buf, buf, stats, nq, k, include_metadata)

    def _query_text(
        self,
        queries: npt.ArrayLike | None,
        text: object,
        k: int,
        where: dict[str, Any] | None,
        ef: int | None,
        fusion: object,
        text_field: str | None,
        k1: float | None,
        b: float | None,
        num_threads: int | None,
        include_metadata: bool,
    ) -> QueryResult:
        handle = self._live()
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if text_field is not None and not isinstance(text_field, str):
            raise TypeError(f"text_field must be a str, got {type(text_field).__name__}")
        kind, alpha = _fusion_arg(fusion)
        k1_value, b_value = _bm25_arg(k1, "k1"), _bm25_arg(b, "b")
        k = _k(k)
        ef_value = 0 if ef is None else _set(ef, "ef")
        vec: Any = ffi.NULL
        if queries is not None:
            qs, nq = _as_rows(queries, self._dim, "queries", "collection")
            if nq != 1:
                raise ValueError(f"a hybrid query takes one query vector, got {nq}")
            vec = ffi.from_buffer("float[]", qs)
        raw = text.encode()
        where_raw, where_size = _where_arg(where)
        ids: npt.NDArray[Any] = np.full((1, k), -1, dtype=np.int64)
        scores = np.full((1, k), np.nan, dtype=np.float32)
        dists = np.full((1, k), np.inf, dtype=np.float32)
        sources = np.zeros(k, dtype=np.uint8)
        out_n = ffi.new("int64_t *")
        buf = ffi.new("strata_buffer *") if include_metadata else ffi.NULL
        field = ffi.NULL if text_field is None else text_field.encode()
        id_buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        rc = _native.strata_col_query_text(
            handle, vec, raw, len(raw), field, k, ef_value, _threads(num_threads), where_raw,
            where_size, kind, alpha, k1_value, b_value, ffi.from_buffer("int64_t[]", ids), id_buf,
            ffi.from_buffer("float[]", scores), ffi.from_buffer("float[]", dists),
            ffi.from_buffer("uint8_t[]", sources), out_n, buf, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        n = int(out_n[0])
        if id_buf.len:
            ids = id_array(_take_json(id_buf), (1, k))
        docs: list[Any] = (_take_json(buf) or []) if include_metadata else [None] * n
        padding: list[Any] = [None] * (k - n)
        names: list[str | None] = [_SOURCES.get(int(s)) for s in sources[:n]]
        return QueryResult(ids, dists, [docs + padding], None, scores, [names + padding])

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
    ) -> QueryResult:
        """A hybrid query: several ranked lists, fused into the k best, in the engine.

        queries: sub-queries, each a dict of one of {"using": field, "vector": v} (a
        dense field's [dim] vector, or a multivector field's [m, dim]), {"using": field,
        "sparse": (indices, values)} or {"text": "...", "text_field": field} (a BM25
        query; text_field may be left out when there is one text index), each with an
        optional "limit" (the list's length, default k) and "ef". Every list runs among
        the entries matching where. fusion: "rrf" (sum of 1 / (rrf_k + rank), rrf_k
        default 2 as Qdrant's) or "dbsf" (each list's scores normalised by mean ± 3
        standard deviations, summed), or None with one sub-query: its own list, scored
        (dense: the similarity, l2 minus the distance; sparse: the dot product; text:
        BM25). The result has one row, with scores (see QueryResult)."""
        handle = self._live()
        subs = check_sub_queries(queries)
        fusion = check_fusion(fusion)
        if fusion is None and len(subs) != 1:
            raise ValueError(f"fusion=None takes one sub-query (its own list), got {len(subs)}")
        k = _k(k)
        if rrf_k is not None and (isinstance(rrf_k, bool) or not isinstance(rrf_k, (int, float))):
            raise TypeError(f"rrf_k must be a number, got {type(rrf_k).__name__}")
        descs = ffi.new("strata_sub_query[]", len(subs))
        keep: list[Any] = [descs]
        for i, q in enumerate(subs):
            d = descs[i]
            d.limit = _k(q.get("limit", k))
            d.ef = 0 if q.get("ef") is None else _set(q["ef"], "ef")
            if q.get("text") is not None:
                raw, field = q["text"].encode(), q.get("text_field") or ""
                if not isinstance(field, str):
                    raise TypeError(f"sub-query {i}: text_field must be a str, got {field!r}")
                keep += [raw, field.encode()]
                d.text, d.text_len = ffi.from_buffer("char[]", raw or b"\0"), len(raw)
                d.field, d.field_len = ffi.from_buffer("char[]", keep[-1] or b"\0"), len(keep[-1])
                continue
            using = q.get("using", "")
            name = using.encode()
            keep.append(name)
            d.field, d.field_len = ffi.from_buffer("char[]", name or b"\0"), len(name)
            if q.get("sparse") is not None:
                idx, val = sparse_pair(q["sparse"], f"sub-query {i}: sparse")
                keep += [idx, val]
                # An empty query still points somewhere: indices not NULL marks it sparse.
                idx_mem = idx if idx.size else np.zeros(1, np.uint32)
                val_mem = val if val.size else np.zeros(1, np.float32)
                keep += [idx_mem, val_mem]
                d.indices = ffi.from_buffer("uint32_t[]", idx_mem)
                d.sparse_values = ffi.from_buffer("float[]", val_mem)
                d.nnz = idx.size
                continue
            if self._is_sparse(using):
                raise ValueError(f"sub-query {i}: field {using!r} is sparse: give sparse=")
            dim, multi = self._field(using)
            rows, nq, _counts = query_rows(q["vector"], dim, multi, using)
            if nq != 1:
                raise ValueError(f"sub-query {i}: one query of field {using!r}, got {nq}")
            keep.append(rows)
            d.vector, d.n_vector = ffi.from_buffer("float[]", rows), rows.size
        raw_where, where_size = _where_arg(where)
        ids: npt.NDArray[Any] = np.full((1, k), -1, dtype=np.int64)
        scores = np.full((1, k), np.nan, dtype=np.float64)
        out_n = ffi.new("int64_t *")
        buf = ffi.new("strata_buffer *") if include_metadata else ffi.NULL
        id_buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        rc = _native.strata_col_search(
            handle, descs, len(subs), _SEARCH_FUSION[fusion], float(rrf_k or 0), k,
            _threads(num_threads), raw_where, where_size, ffi.from_buffer("int64_t[]", ids),
            id_buf, ffi.from_buffer("double[]", scores), out_n, buf, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        n = int(out_n[0])
        if id_buf.len:
            ids = id_array(_take_json(id_buf), (1, k))
        ids.reshape(-1)[n:] = -1 if ids.dtype != object else None
        docs: list[Any] = (_take_json(buf) or []) if include_metadata else [None] * n
        dists = np.full((1, k), np.nan, dtype=np.float32)
        return QueryResult(ids, dists, [docs + [None] * (k - n)], None, scores)

    def query_mmr(
        self,
        vector: npt.ArrayLike,
        k: int = 10,
        *,
        fetch_k: int | None = None,
        lambda_mult: float = 0.5,
        where: dict[str, Any] | None = None,
        ef: int | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
        using: str | None = None,
    ) -> QueryResult:
        """k entries near vector (one query) and far from one another: maximal marginal
        relevance, computed in the engine.

        The index finds the fetch_k nearest entries matching where (default max(k, 20));
        then k of them are picked greedily, first the nearest, then each time the one
        maximising lambda_mult * sim(vector, d) - (1 - lambda_mult) * max sim(d, picked),
        with sim the metric's similarity (the dot product for cosine and ip, minus the
        squared distance for l2). lambda_mult 1 is query()'s nearest k; 0 only spreads.
        The result has one row (ids and distances [1, k], padded with -1 / inf) in pick
        order, each with its distance to vector. using= names the dense field (default
        the unnamed one)."""
        handle = self._live()
        if using is not None and not isinstance(using, str):
            raise TypeError(f"using must be a vector field name (a str), got {using!r}")
        if using:
            dim, multi = self._field(using)
            if multi:
                raise ValueError(f"an MMR query takes a dense field; {using!r} is multivector")
            qs, nq = _as_rows(vector, dim, "vector", f"field {using!r}")
        else:
            qs, nq = _as_rows(vector, self._dim, "vector", "collection")
        if nq != 1:
            raise ValueError(f"an MMR query takes one query vector, got {nq}")
        k = _k(k)
        fetch = 0 if fetch_k is None else _set(fetch_k, "fetch_k")
        if isinstance(lambda_mult, bool) or not isinstance(lambda_mult, (int, float)):
            raise TypeError(f"lambda_mult must be a number, got {type(lambda_mult).__name__}")
        ef_value = 0 if ef is None else _set(ef, "ef")
        raw, size = _where_arg(where)
        ids: npt.NDArray[Any] = np.empty((1, k), dtype=np.int64)
        dists = np.empty((1, k), dtype=np.float32)
        buf = ffi.new("strata_buffer *") if include_metadata else ffi.NULL
        id_buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        name = (using or "").encode()
        rc = _native.strata_col_query_mmr_field(
            handle, name or b"\0", len(name), ffi.from_buffer("float[]", qs), qs.size, k, fetch,
            float(lambda_mult), ef_value, _threads(num_threads), raw, size,
            ffi.from_buffer("int64_t[]", ids), id_buf, ffi.from_buffer("float[]", dists), buf,
            err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        if id_buf.len:
            ids = id_array(_take_json(id_buf), (1, k))
        docs: list[Any] = _take_json(buf) if include_metadata else [None] * k
        return QueryResult(ids, dists, [docs])

    def get(
        self,
        ids: object,
        include_vectors: bool = False,
        *,
        vectors: Sequence[str] | None = None,
        include_expiry: bool = False,
    ) -> GetResult:
        """Looks up ids; those that do not exist (or have expired) are left out.

        include_vectors: the unnamed field's vectors as .vectors [n, dim]. vectors=
        ["text", ...]: those fields' values as .named_vectors {name: FieldVectors},
        whose mask says which of the entries found have the field; sparse fields named
        there come back as .sparse_vectors {name: SparseVectors}. include_expiry: each
        entry's expiry as .expires_at (Unix seconds, NaN: never)."""
        names = None if vectors is None else check_names(vectors)
        result = self._get(ids, include_vectors)
        if names is None and not include_expiry:
            return result
        found: Any = result.ids if result.ids.dtype != object else list(result.ids)
        named, sparse = None, None
        if names is not None:
            dense = [name for name in names if not self._is_sparse(name)]
            named = {name: self._get_vectors(found, name) for name in dense}
            sparse = {name: self._get_sparse(found, name) for name in names if name not in dense}
        expires = self._expires_at(found) if include_expiry else None
        return GetResult(result.ids, result.metadata, result.vectors, named,
                         expires_at=expires, sparse_vectors=sparse or None)  # fmt: skip

    def _expires_at(self, ids: object) -> npt.NDArray[np.float64]:
        handle = self._live()
        id_arr, strs, _keep = _ids_arg(ids)
        n = id_arr.shape[0]
        out, err = np.empty(n, dtype=np.float64), _lib.errbuf()
        rc = _native.strata_col_expires_at(
            handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs,
            ffi.from_buffer("double[]", out), err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return out

    def _get(self, ids: object, include_vectors: bool) -> GetResult:
        handle = self._live()
        id_arr, strs, _keep = _ids_arg(ids)
        n = id_arr.shape[0]
        found = np.empty(n, dtype=np.uint64)
        vectors = np.empty((n, self._dim), dtype=np.float32) if include_vectors else None
        out_n, buf, err = ffi.new("int64_t *"), ffi.new("strata_buffer *"), _lib.errbuf()
        id_buf = ffi.new("strata_buffer *")
        rc = _native.strata_col_get(
            handle, ffi.from_buffer("uint64_t[]", id_arr), n, strs,
            ffi.from_buffer("uint64_t[]", found), id_buf, out_n,
            ffi.NULL if vectors is None else ffi.from_buffer("float[]", vectors), buf, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        count = int(out_n[0])
        docs = _take_json(buf) or []
        vecs = None if vectors is None else vectors[:count].copy()
        if id_buf.len:
            return GetResult(id_array(_take_json(id_buf)), docs, vecs)
        return GetResult(found[:count].astype(np.int64), docs, vecs)

    def count(self, where: dict[str, Any] | None = None) -> int:
        """How many entries match where (all of them without it)."""
        handle = self._live()
        raw, size = _where_arg(where)
        out, err = ffi.new("int64_t *"), _lib.errbuf()
        rc = _native.strata_col_count(handle, raw, size, out, err, ERRLEN)
        if rc:
            check(rc, err)
        return int(out[0])

    def __len__(self) -> int:
        return self.count()

    def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> Iterator[GetResult]:
        """Yields every entry matching where in scan order (integer ids ascending, then
        string ids in byte order), batch_size at a time; after= starts past that id (the
        last id of a batch resumes the scan there). vectors= names fields whose values
        each batch carries, as get(vectors=) does."""
        self._live()
        batch_size = _int(batch_size, "batch_size", 1, 1 << 24)
        raw, size = _where_arg(where)
        after_int, after_str, has_after = 0, b"", 0
        if isinstance(after, str):
            after_str, has_after = _str_id(after, "after"), 2
        elif after is not None:
            after_int, has_after = _int(after, "after", 0, _INT64_MAX), 1
        page = np.empty(batch_size, dtype=np.uint64)
        out_n, id_buf, err = ffi.new("int64_t *"), ffi.new("strata_buffer *"), _lib.errbuf()
        while True:
            rc = _native.strata_col_scan_ids(
                self._live(), raw, size, after_int, has_after, after_str, len(after_str),
                batch_size, ffi.from_buffer("uint64_t[]", page), id_buf, out_n, err, ERRLEN,
            )  # fmt: skip
            if rc:
                check(rc, err)
            n = int(out_n[0])
            if n == 0:
                return
            ids: Any = _take_json(id_buf) if id_buf.len else page[:n].copy()
            result = self.get(ids, include_vectors=include_vectors, vectors=vectors)
            if len(result):
                yield result
            if n < batch_size:
                return
            last = ids[n - 1]
            if isinstance(last, str):
                after_str, has_after = last.encode(), 2
            else:
                after_int, has_after = int(last), 1

    def checkpoint(self) -> None:
        """Writes a snapshot and trims the log; writes and queries go on meanwhile."""
        handle = self._live()
        err = _lib.errbuf()
        rc = _native.strata_col_checkpoint(handle, err, ERRLEN)
        if rc:
            check(rc, err)

    def snapshot(self, path: str | os.PathLike[str]) -> int:
        """Checkpoints and writes the collection as one archive file at path (replaced
        durably if it exists), which Collection.restore turns into a new collection.
        Writes and queries go on meanwhile; the archive holds every write acknowledged
        before the call. Returns the archive's snapshot sequence number."""
        handle = self._live()
        seq, err = ffi.new("uint64_t *"), _lib.errbuf()
        rc = _native.strata_col_export(handle, _path(path), seq, err, ERRLEN)
        if rc:
            check(rc, err)
        return int(seq[0])

    def check_integrity(self) -> None:
        """Raises strata.IntegrityError if the index or the metadata are inconsistent."""
        handle = self._live()
        err = _lib.errbuf()
        rc = _native.strata_col_check_integrity(handle, err, ERRLEN)
        if rc:
            check(rc, err)

    def info(self) -> dict[str, Any]:
        """Sizes, log bytes, sequence numbers, last checkpoint and what recovery found."""
        handle = self._live()
        buf, err = ffi.new("strata_buffer *"), _lib.errbuf()
        rc = _lib.load().strata_col_info(handle, buf, err, ERRLEN)
        if rc:
            check(rc, err)
        info: dict[str, Any] = _take_json(buf)
        return info
