"""strata.Index and strata.FlatIndex: NumPy in, NumPy out, everything else in Go.

This layer only validates arguments, converts arrays when it must, and calls
the C ABI. Arrays that already are C-contiguous float32 are handed to Go as
pointers without a copy; results are written by Go into arrays allocated
here. cffi releases the GIL for the duration of every call.

The engine library is opened by the first Index/FlatIndex created or
loaded (``_engine()``), not when this module is imported: see strata._lib
for why and for the pattern.
"""

from __future__ import annotations

import contextlib
import operator
import os
import sys
import tempfile
import threading
import time
from typing import Any, ClassVar, NoReturn

import numpy as np
import numpy.typing as npt

from strata import _lib
from strata._ffi import ffi
from strata._lib import ERRLEN, check, const

METRICS: dict[str, int] = {
    "l2": const("STRATA_METRIC_L2"),
    "ip": const("STRATA_METRIC_IP"),
    "cosine": const("STRATA_METRIC_COSINE"),
    "l1": const("STRATA_METRIC_L1"),
}
_METRIC_NAMES = {code: name for name, code in METRICS.items()}

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
_U64 = np.dtype(np.uint64)
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_CLOSED = (ValueError, "index is closed")

# Bound once: attribute lookups are a measurable share of a single-query search.
_from_buffer = ffi.from_buffer
_empty = np.empty
_NDARRAY = np.ndarray
# C array types resolved once: from_buffer given a type object skips the
# parse-and-cache lookup of a type string (about 20 ns per buffer).
_FLOATS = ffi.typeof("float[]")
_INT64S = ffi.typeof("int64_t[]")
_UINT64S = ffi.typeof("uint64_t[]")
_errors = _lib._errors

# Bound by _engine() when the first index is created or loaded. Methods of a
# live index may use them unguarded: the index exists, so _engine() has run.
_native: Any = None
_strata_search: Any = None
_strata_add: Any = None
_strata_search_filtered: Any = None
_strata_search_one: Any = None
_NULL = ffi.NULL


def _engine() -> Any:
    """Opens the engine library on first use and binds this module's globals to it.

    Every constructor (and Index.load) calls it before anything else, so a
    child forked after the engine started gets the fork RuntimeError here.
    """
    global _native, _strata_search, _strata_add, _strata_search_filtered, _strata_search_one
    lib = _lib.load()
    if _native is None:
        _strata_search, _strata_add = lib.strata_search, lib.strata_add
        _strata_search_filtered = lib.strata_search_filtered
        _strata_search_one = lib.strata_search_one
        _native = lib
    return lib


def _int(value: object, name: str, low: int, high: int) -> int:
    """Returns value as an int in [low, high], else raises TypeError/ValueError."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    number = operator.index(value)  # type: ignore[arg-type]
    if not low <= number <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {number}")
    return number


def _i64(value: object, name: str) -> int:
    """value as an int that fits the C ABI's int64_t. The engine checks the range
    (go/limits) and raises with its own message; this only converts."""
    return _int(value, name, -_INT64_MAX - 1, _INT64_MAX)


def _set(value: object, name: str) -> int:
    """An explicitly given M, ef_construction or ef: 0 is how the C ABI says "the
    default" (None in Python), so an explicit 0 is refused here; every other range
    is the engine's."""
    number = _i64(value, name)
    if number == 0:
        raise ValueError(f"{name} must be positive, got 0")
    return number


_MAX_K = const("STRATA_MAX_K")


def _k(value: object) -> int:
    """k as an int the engine accepts. The bound and its message are the engine's
    (strata_check_k); it is asked before the (nq, k) outputs are allocated."""
    k = _i64(value, "k")
    if not 1 <= k <= _MAX_K:
        err = _lib.errbuf()
        rc = _engine().strata_check_k(k, err, ERRLEN)
        if rc:
            check(rc, err)
    return k


def _threads(num_threads: object) -> int:
    """None means every core (0 for the engine)."""
    return 0 if num_threads is None else _int(num_threads, "num_threads", 1, _INT32_MAX)


def _id_list(ids: object, name: str) -> npt.NDArray[np.uint64]:
    """Returns ids (an integer, a sequence or an array of them) as a uint64 array."""
    arr = np.asarray(ids)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=_U64)
    if arr.dtype.kind == "i":
        negative = np.flatnonzero(arr < 0)
        if negative.size:
            i = int(negative[0])
            raise ValueError(f"{name} must be non-negative, got {name}[{i}] = {arr[i]}")
    elif arr.dtype.kind != "u":
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=_U64)


def _as_ids(ids: object, n: int) -> npt.NDArray[np.uint64]:
    """ids for n vectors: n non-negative integers as a uint64 array."""
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ValueError(f"ids must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"got {arr.shape[0]} ids for {n} vectors")
    return _id_list(arr, "ids")


def _as_rows(
    data: object, dim: int, what: str, owner: str
) -> tuple[npt.NDArray[np.float32], int]:
    """Returns data as a C-contiguous float32 array (1-D = one row) and its row count.

    An array that already qualifies is returned as is: Go reads it in place.
    owner ("index", "collection") names what has dimension dim in messages.
    """
    arr = data
    if type(arr) is not np.ndarray or arr.dtype is not _F32 or not arr.flags.c_contiguous:
        arr = np.asarray(data)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"{what} must be a numeric array, got dtype {arr.dtype}")
        if arr.ndim not in (1, 2):
            _raise_ndim(what, dim, arr.shape)
        arr = np.ascontiguousarray(arr, dtype=_F32)
    shape = arr.shape
    if len(shape) == 2:
        rows, width = shape
    elif len(shape) == 1:
        rows, width = 1, shape[0]
    else:
        _raise_ndim(what, dim, shape)
    if width != dim:
        raise ValueError(f"{what} have dimension {width}, but the {owner} has dim {dim}")
    return arr, rows


def _raise_ndim(what: str, dim: int, shape: tuple[int, ...]) -> NoReturn:
    expected = f"1-D (one vector) or 2-D (n, {dim})"
    raise ValueError(f"{what} must be {expected}, got shape {shape}")


class _BaseIndex(_lib.NativeObject):
    """What Index and FlatIndex share: everything but construction parameters."""

    __slots__ = ("_threads",)
    _kind: ClassVar[int]
    _FREE = "strata_free"
    _CLOSED = _CLOSED

    _threads: int

    def _new_handle(
        self, lib: Any, dim: int, metric: int, seed: int, has_seed: bool, handle: Any, err: Any
    ) -> int:
        return lib.strata_create(self._kind, dim, metric, 0, 0, seed, has_seed, handle, err, ERRLEN)

    def _create(
        self,
        dim: int,
        metric: str,
        *,
        seed: int | None = None,
        num_threads: int | None = None,
    ) -> None:
        lib = _engine()
        if not isinstance(metric, str):
            raise TypeError(f"metric must be a string, got {type(metric).__name__}")
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
        dim = _int(dim, "dim", 1, _INT64_MAX)
        seed_value = 0 if seed is None else _int(seed, "seed", 0, 2**64 - 1)
        threads = _threads(num_threads)
        handle, err = ffi.new("strata_handle *"), _lib.errbuf()
        rc = self._new_handle(lib, dim, METRICS[metric], seed_value, seed is not None, handle, err)
        if rc:
            check(rc, err)
        self._dim, self._metric, self._threads = dim, metric, threads
        self._attach(handle[0])

    def __len__(self) -> int:
        return self._int_property("strata_len")

    def _progress(self) -> int:
        return self._int_property("strata_progress")

    def _int_property(self, name: str) -> int:
        if self._dead is not None:
            self._raise_dead()
        out, err = ffi.new("int64_t *"), _errors.buf
        rc = getattr(_native, name)(self._handle, out, err, ERRLEN)
        if rc:
            check(rc, err)
        return int(out[0])

    def check_integrity(self) -> None:
        """Raises strata.IntegrityError if an internal invariant is broken."""
        if self._dead is not None:
            self._raise_dead()
        err = _errors.buf
        rc = _native.strata_check_integrity(self._handle, err, ERRLEN)
        if rc:
            check(rc, err)

    def _params(self) -> str:
        return f"dim={self._dim}, metric={self._metric!r}"

    def __repr__(self) -> str:
        name = f"strata.{type(self).__name__}"
        if self._dead is not None:
            state = "closed" if self._dead is _CLOSED else "unusable after fork"
            return f"<{name}({self._params()}) {state}>"
        return f"{name}({self._params()}, len={len(self)})"

    # --- vectors ----------------------------------------------------------

    def _rows(self, data: object, what: str) -> tuple[npt.NDArray[np.float32], int]:
        return _as_rows(data, self._dim, what, "index")

    def add(
        self,
        vectors: npt.ArrayLike,
        ids: npt.ArrayLike | None = None,
        *,
        num_threads: int | None = None,
        progress: bool = False,
    ) -> npt.NDArray[np.uint64]:
        """Adds vectors (n, dim) or one vector (dim,) and returns their uint64 ids.

        ids: n distinct non-negative integers; None assigns sequential ids from
        one past the largest id ever added. An id already in the index has its
        vector replaced. Any bad input raises before the index changes:
        ValueError for shapes, NaN/inf, negative or duplicate ids; TypeError
        for non-numeric vectors or non-integer ids.

        num_threads: threads for this add (default: the index's setting).
        progress: show progress (tqdm if installed, else a line on stderr).
        """
        if self._dead is not None:
            self._raise_dead()
        vecs, n = self._rows(vectors, "vectors")
        id_array = None if ids is None else _as_ids(ids, n)
        threads = self._threads if num_threads is None else _threads(num_threads)
        out = _empty(n, dtype=_U64)
        if n == 0:
            return out
        args = (
            self._handle,
            _from_buffer(_FLOATS, vecs),
            n,
            ffi.NULL if id_array is None else _from_buffer(_UINT64S, id_array),
            _from_buffer(_UINT64S, out, require_writable=True),
            threads,
        )
        if progress:
            self._add_with_progress(args, n)
        else:
            err = _errors.buf
            rc = _strata_add(*args, err, ERRLEN)
            if rc:
                check(rc, err)
        return out

    def _add_with_progress(self, args: tuple[Any, ...], n: int) -> None:
        # The add runs on a worker thread (cffi releases the GIL) while this
        # thread polls the engine's progress counter: one atomic load every
        # 0.1 s, so the build is not slowed down.
        start = self._progress()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                err = _lib.errbuf()
                rc = _strata_add(*args, err, ERRLEN)
                if rc:
                    check(rc, err)
            except BaseException as exc:  # noqa: BLE001 (re-raised by the caller's thread)
                failure.append(exc)

        worker = threading.Thread(target=work, name="strata-add", daemon=True)
        bar = _ProgressBar(n)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.1)
                with contextlib.suppress(ValueError):  # closed by another thread meanwhile
                    bar.update(min(max(self._progress() - start, 0), n))
        except KeyboardInterrupt:
            # The engine cannot abandon a batch half-way; report, let it finish,
            # so the index is in a known state when the interrupt propagates.
            print("\nstrata: interrupted; finishing the batch being added", file=sys.stderr)
            worker.join()
            raise
        finally:
            bar.close(done=not failure)
        if failure:
            raise failure[0]

    def search(
        self,
        queries: npt.ArrayLike,
        k: int = 10,
        ef: int | None = None,
        num_threads: int | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Finds the k nearest vectors of each query.

        queries: (nq, dim), or (dim,) for one query; the result is 2-D either way.
        Returns (ids int64 [nq, k], distances float32 [nq, k]), nearest first
        (equal distances by ascending id); when fewer than k vectors exist the
        rest is id -1, distance +inf.
        ef: candidate list size (Index only; default max(k, 64)); larger is more
        accurate and slower.
        """
        # This method is the latency floor of a single-query search: the
        # common case (one C-contiguous float32 row, defaults) takes the
        # shortest path, and anything else goes through _rows/_int.
        if self._dead is not None:
            self._raise_dead()
        q = queries
        if (
            type(q) is np.ndarray
            and q.dtype is _F32
            and q.ndim == 1
            and q.shape[0] == self._dim
            and q.flags.c_contiguous
        ):
            nq = 1
        else:
            q, nq = self._rows(queries, "queries")
        if type(k) is not int or k <= 0 or k > _MAX_K:
            k = _k(k)
        if ef is None:
            ef_value = 0
        elif type(ef) is int and 0 < ef <= _INT64_MAX:
            ef_value = ef
        else:
            ef_value = _set(ef, "ef")
        threads = self._threads if num_threads is None else _threads(num_threads)
        # Freshly allocated, hence writable: no require_writable check needed.
        ids = _empty((nq, k), dtype=_I64)
        dists = _empty((nq, k), dtype=_F32)
        err = _errors.buf
        rc = _strata_search(
            self._handle, _from_buffer(_FLOATS, q), nq, k, ef_value, threads,
            _from_buffer(_INT64S, ids), _from_buffer(_FLOATS, dists), err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        return ids, dists


_QUANTIZATIONS: dict[str | None, int] = {
    None: const("STRATA_QUANT_NONE"),
    "sq8": const("STRATA_QUANT_SQ8"),
    "rabitq": const("STRATA_QUANT_RABITQ"),
}
# quantization="rabitq" with a layout: the C ABI's own quantization codes.
_LAYOUT_CODES: dict[str, int] = {
    "qg": const("STRATA_QUANT_RABITQ_QG"),
    "rows": const("STRATA_QUANT_RABITQ_ROWS"),
}
_LAYOUTS = (None, *_LAYOUT_CODES)
# The parts info()["memory"] reports, by their strata_info field.
_MEMORY_PARTS = {
    "graph": "graph_bytes",
    "floats": "float_bytes",
    "sq8_codes": "sq8_bytes",
    "rabitq_codes": "rabitq_code_bytes",
    "rabitq_factors": "rabitq_factor_bytes",
    "rabitq_neighbour_blocks": "rabitq_block_bytes",
}
_PLANS = {
    const("STRATA_PLAN_GRAPH"): "graph",
    const("STRATA_PLAN_EXACT"): "exact",
    const("STRATA_PLAN_EMPTY"): "empty",
}


def _ids_pointer(ids: npt.NDArray[np.uint64]) -> Any:
    return _from_buffer(_UINT64S, ids) if ids.size else ffi.NULL


class Index(_BaseIndex):
    """Approximate nearest-neighbour index (HNSW) over float32 vectors.

    M: graph degree (level 0 uses 2*M); ef_construction: candidate list size
    while building; num_threads: default thread count for add and search
    (None: every core); seed: makes the graph reproducible for a given
    insertion order and thread count 1.

    quantization: None (float32) or "sq8" (one byte per dimension; the graph
    is built and searched on codes with integer SIMD kernels). rerank (SQ8
    only): keep the float vectors too and re-rank each search's candidates
    with them, so recall matches the float index; rerank=False keeps codes
    only. The SQ8 ranges are learned by train(sample) or from the first add.

    quantization="rabitq": the graph is built on the float vectors, which
    are kept, and searched on RaBitQ codes (1-bit codes for the traversal,
    bits-bit codes, bits in 2..8, to refine the candidates whose error
    bound can still reach the top k; bits=1 refines with the float
    vectors), the top k rescored exactly. bits=None is the engine's
    default. The codes are fitted on the first add (and again each time the
    index doubles, up to 64,000 vectors) and every add codes its vectors,
    so searches always run on codes; return_stats counts the refinements.
    rerank=False makes it codes-only: no float vectors are kept (bits in
    2..8, None: 3); the one add it takes builds the graph on its vectors,
    then drops them; searches re-rank with the extended codes and return
    their estimated distances; a second add, compact and get_vectors raise
    ValueError.

    layout="qg" (quantization="rabitq", bits 1): searches run on a quantized
    graph laid out as SymphonyQG's: degree 32, no upper levels, one row per
    vector holding the vector, its neighbours' ids and their 1-bit codes
    relative to it, so a hop is one contiguous read; every vector expanded
    is measured exactly. It keeps a second copy of the vectors in the rows
    (info()["memory"]["rabitq_neighbour_blocks"]), and every add rebuilds it.

    layout="rows" (quantization="rabitq", bits 1): the HNSW graph searched on
    each vector's 1-bit code row alone (no copy of the neighbours' codes
    beside each link list), refined with the float vectors; loaded with
    mmap_vectors=True only the graph and the codes are resident memory, the
    vectors staying in the page cache.
    """

    __slots__ = ("_M", "_bits", "_ef_construction", "_layout", "_quantization", "_rerank")
    _kind = const("STRATA_KIND_HNSW")

    def __init__(
        self,
        dim: int,
        metric: str = "l2",
        M: int = 16,  # noqa: N803 (the name every HNSW library uses)
        ef_construction: int = 200,
        num_threads: int | None = None,
        seed: int | None = None,
        quantization: str | None = None,
        rerank: bool = True,
        bits: int | None = None,
        layout: str | None = None,
    ) -> None:
        self._M = _set(M, "M")
        if layout not in _LAYOUTS:
            raise ValueError(f"unknown layout {layout!r}; choose None, 'qg' or 'rows'")
        if layout is not None and quantization != "rabitq":
            raise ValueError(f"layout {layout!r} is a layout of quantization='rabitq'")
        self._layout = layout
        self._ef_construction = _set(ef_construction, "ef_construction")
        if quantization not in _QUANTIZATIONS:
            raise ValueError(
                f"unknown quantization {quantization!r}; choose None, 'sq8' or 'rabitq'"
            )
        if not isinstance(rerank, bool):
            raise TypeError(f"rerank must be a bool, got {type(rerank).__name__}")
        self._quantization, self._rerank = quantization, rerank and quantization is not None
        # 0 is how the C ABI asks for the engine's default (None here), so an
        # explicit 0 is refused; every other range is the engine's to check.
        self._bits = 0 if bits is None else _int(bits, "bits", -_INT32_MAX - 1, _INT32_MAX)
        if bits is not None and self._bits == 0:
            raise ValueError("bits must be positive, got 0")
        self._create(dim, metric, seed=seed, num_threads=num_threads)
        if quantization == "rabitq":
            self._bits = self.info()["rabitq_bits"]

    def _new_handle(
        self, lib: Any, dim: int, metric: int, seed: int, has_seed: bool, handle: Any, err: Any
    ) -> int:
        return lib.strata_create_hnsw(
            dim, metric, self._M, self._ef_construction, seed, has_seed,
            _LAYOUT_CODES[self._layout] if self._layout else _QUANTIZATIONS[self._quantization],
            self._rerank, self._bits, handle, err, ERRLEN,
        )  # fmt: skip

    @property
    def M(self) -> int:  # noqa: N802
        return self._M

    @property
    def ef_construction(self) -> int:
        return self._ef_construction

    @property
    def quantization(self) -> str | None:
        """None (float32 vectors), "sq8" or "rabitq"."""
        return self._quantization

    @property
    def layout(self) -> str | None:
        """The traversal layout of a rabitq index: None (the HNSW graph with neighbour
        records), "qg" or "rows"."""
        return self._layout

    @property
    def bits(self) -> int | None:
        """Bits per dimension of a rabitq index's re-ranking codes (None otherwise)."""
        return self._bits if self._quantization == "rabitq" else None

    @property
    def rerank(self) -> bool:
        """Whether an SQ8 or RaBitQ index keeps float vectors to re-rank with."""
        return self._rerank

    def _params(self) -> str:
        params = f"{super()._params()}, M={self._M}, ef_construction={self._ef_construction}"
        if self._quantization == "rabitq":
            params += f", quantization='rabitq', bits={self._bits}"
            if self._layout is not None:
                params += f", layout={self._layout!r}"
            if not self._rerank:
                params += ", rerank=False"
        elif self._quantization is not None:
            params += f", quantization={self._quantization!r}, rerank={self._rerank}"
        return params

    def info(self) -> dict[str, Any]:
        """The index's state: len, tombstones (what compact() reclaims), trained,
        mmapped, rabitq_bits (0 unless quantization="rabitq") and memory.

        memory: "nodes" (stored vectors, live ones and tombstones), "bytes" of
        each part ("graph": links and bookkeeping; "floats": float32 vectors,
        in the file when mmapped; "sq8_codes"; "rabitq_codes": 1-bit and
        extended codes; "rabitq_factors": their per-vector factors;
        "rabitq_neighbour_blocks": each node's neighbours' codes beside its links) and
        "bytes_per_vector", the same divided by nodes.
        """
        if self._dead is not None:
            self._raise_dead()
        out, err = ffi.new("strata_info *"), _errors.buf
        rc = _native.strata_info_get(self._handle, out, err, ERRLEN)
        if rc:
            check(rc, err)
        nodes = int(out.nodes)
        parts = {name: int(getattr(out, field)) for name, field in _MEMORY_PARTS.items()}
        return {
            "len": int(out.len),
            "tombstones": int(out.tombstones),
            "trained": bool(out.trained),
            "mmapped": bool(out.mmapped),
            "rabitq_bits": int(out.rabitq_bits),
            "memory": {
                "nodes": nodes,
                "bytes": parts,
                "bytes_per_vector": {
                    name: (size / nodes if nodes else 0.0) for name, size in parts.items()
                },
            },
        }

    # --- search with filters ----------------------------------------------

    def search(  # type: ignore[override]
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
        """Finds the k nearest vectors of each query; see FlatIndex.search.

        filter_ids: only these ids may be returned (an allow list; empty
        allows nothing). exclude_ids: these ids are never returned. Both take
        integer arrays or sequences and apply to every query. Removed ids are
        never returned. When fewer than k vectors match, rows are padded
        with id -1 and distance +inf.

        return_stats: also return a dict with "plan" ("graph": HNSW traversal
        admitting only allowed ids; "exact": a scan of the allowed vectors,
        chosen when it is cheaper; "empty"), "ndis" (distance computations,
        all queries), "allowed" (live vectors the filter lets through), "ef"
        (the candidate list size used: filtered graph searches widen it) and
        "refinements" (on a rabitq index: candidates whose 1-bit estimate was
        refined with an extended code or a float vector, all queries).
        """
        # The single-query latency floor: one C-contiguous float32 row, shape
        # (dim,) or (1, dim), and plain int arguments go straight to
        # strata_search_one, with no error buffer (a failure is redone through
        # the full path, which reports it); anything else takes the full path
        # below or _BaseIndex.search.
        q = queries
        dim = self._dim
        if (
            type(q) is _NDARRAY
            and q.dtype is _F32
            and q.size == dim
            and 0 < q.ndim < 3
            and q.shape[-1] == dim
            and type(k) is int
            and 0 < k <= _INT32_MAX
            and (ef is None or (type(ef) is int and 0 < ef <= _INT64_MAX))
            and filter_ids is None
            and exclude_ids is None
            and not return_stats
            and self._dead is None
            and (num_threads is None or (type(num_threads) is int and 0 < num_threads < 2**31))
        ):
            try:
                query = _from_buffer(_FLOATS, q)
            except ValueError:  # not C-contiguous
                pass
            else:
                ids = _empty((1, k), _I64)
                dists = _empty((1, k), _F32)
                if not _strata_search_one(
                    self._handle, query, k, ef or 0,
                    _from_buffer(_INT64S, ids), _from_buffer(_FLOATS, dists), _NULL, 0,
                ):  # fmt: skip
                    return ids, dists
        if filter_ids is None and exclude_ids is None and not return_stats:
            return _BaseIndex.search(self, queries, k, ef, num_threads)  # no super(): hot path
        if self._dead is not None:
            self._raise_dead()
        q, nq = self._rows(queries, "queries")
        k = _k(k)
        ef_value = 0 if ef is None else _set(ef, "ef")
        threads = self._threads if num_threads is None else _threads(num_threads)
        allow = None if filter_ids is None else _id_list(filter_ids, "filter_ids")
        deny = _id_list([] if exclude_ids is None else exclude_ids, "exclude_ids")
        ids = _empty((nq, k), dtype=_I64)
        dists = _empty((nq, k), dtype=_F32)
        stats, err = ffi.new("strata_search_stats *"), _errors.buf
        rc = _strata_search_filtered(
            self._handle, _from_buffer(_FLOATS, q), nq, k, ef_value, threads,
            ffi.NULL if allow is None else _ids_pointer(allow), -1 if allow is None else allow.size,
            _ids_pointer(deny), deny.size,
            _from_buffer(_INT64S, ids), _from_buffer(_FLOATS, dists), stats, err, ERRLEN,
        )  # fmt: skip
        if rc:
            check(rc, err)
        if not return_stats:
            return ids, dists
        info = {
            "plan": _PLANS[stats.plan],
            "ndis": int(stats.distance_computations),
            "allowed": int(stats.allowed),
            "ef": int(stats.ef_search),
            "refinements": int(stats.refinements),
        }
        return ids, dists, info

    # --- data operations --------------------------------------------------

    def remove(self, ids: npt.ArrayLike, *, missing_ok: bool = False) -> int:
        """Removes ids (one or many) and returns how many were removed.

        Removed ids are never returned by searches; their memory is reclaimed
        by compact(). An id not in the index raises KeyError and removes
        nothing, unless missing_ok=True.
        """
        if self._dead is not None:
            self._raise_dead()
        arr = _id_list(ids, "ids")
        out, err = ffi.new("int64_t *"), _errors.buf
        rc = _native.strata_remove(
            self._handle, _ids_pointer(arr), arr.size, missing_ok, out, err, ERRLEN
        )
        if rc:
            check(rc, err)
        return int(out[0])

    def contains(self, id: object) -> bool:
        """Whether id is in the index (False for anything that is not an id)."""
        if self._dead is not None:
            self._raise_dead()
        if isinstance(id, bool) or not hasattr(id, "__index__"):
            return False
        value = operator.index(id)  # type: ignore[arg-type]
        if not 0 <= value <= _INT64_MAX:
            return False
        out, err = ffi.new("int *"), _errors.buf
        rc = _native.strata_contains(self._handle, value, out, err, ERRLEN)
        if rc:
            check(rc, err)
        return bool(out[0])

    def __contains__(self, id: object) -> bool:
        return self.contains(id)

    def get_vectors(self, ids: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Returns the stored vectors of ids as (n, dim) float32.

        Cosine indexes store (and return) vectors normalised to unit length;
        SQ8 indexes without rerank return the decoded codes. An unknown id
        raises KeyError.
        """
        if self._dead is not None:
            self._raise_dead()
        arr = _id_list(ids, "ids")
        out = _empty((arr.size, self._dim), dtype=_F32)
        if arr.size == 0:
            return out
        err = _errors.buf
        rc = _native.strata_get_vectors(
            self._handle, _ids_pointer(arr), arr.size, _from_buffer(_FLOATS, out), err, ERRLEN
        )
        if rc:
            check(rc, err)
        return out

    def ids(self) -> npt.NDArray[np.uint64]:
        """Returns the ids in the index, in insertion order."""
        if self._dead is not None:
            self._raise_dead()
        n, err = ffi.new("int64_t *"), _errors.buf
        capacity = len(self) + 64
        while True:
            out = _empty(capacity, dtype=_U64)
            rc = _native.strata_ids(
                self._handle, _from_buffer(_UINT64S, out), capacity, n, err, ERRLEN
            )
            if rc:
                check(rc, err)
            if n[0] <= capacity:  # else: another thread added meanwhile
                return out[: n[0]]
            capacity = int(n[0]) + 1024

    def compact(self, *, num_threads: int | None = None) -> None:
        """Rebuilds the graph without removed vectors and frees their memory.

        Searches from other threads keep running (on the old graph) until
        the new one is swapped in; adds and removes wait.
        """
        if self._dead is not None:
            self._raise_dead()
        threads = self._threads if num_threads is None else _threads(num_threads)
        err = _errors.buf
        rc = _native.strata_compact(self._handle, threads, err, ERRLEN)
        if rc:
            check(rc, err)

    def train(self, sample: npt.ArrayLike) -> None:
        """Learns the SQ8 ranges from sample (n, dim); call before the first add."""
        if self._dead is not None:
            self._raise_dead()
        rows, n = self._rows(sample, "sample")
        err = _errors.buf
        rc = _native.strata_train(self._handle, _from_buffer(_FLOATS, rows), n, err, ERRLEN)
        if rc:
            check(rc, err)

    # --- persistence ------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the index to path atomically (temp file, fsync, rename).

        The file is versioned and every section carries a CRC-32C; adds and
        removes wait while it is written, searches do not.
        """
        if self._dead is not None:
            self._raise_dead()
        err = _errors.buf
        rc = _native.strata_save(self._handle, _path(path), err, ERRLEN)
        if rc:
            check(rc, err)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        mmap_vectors: bool = False,
        num_threads: int | None = None,
    ) -> Index:
        """Reads an index written by save().

        mmap_vectors: leave the float vectors in the file, memory-mapped
        read-only, so only the graph (and SQ8 codes) use memory; the file
        must stay in place until close(). A damaged file raises
        strata.IntegrityError naming the section and offset.
        """
        lib = _engine()
        handle, err = ffi.new("strata_handle *"), _lib.errbuf()
        rc = lib.strata_load(_path(path), bool(mmap_vectors), handle, err, ERRLEN)
        if rc:
            check(rc, err)
        self = cls.__new__(cls)
        self._attach(handle[0])
        info = ffi.new("strata_info *")
        rc = lib.strata_info_get(self._handle, info, err, ERRLEN)
        if rc:
            self.close()
            check(rc, err)
        layout = next((name for name, code in _LAYOUT_CODES.items()
                       if code == info.quantization), None)
        codes = {code: name for name, code in _QUANTIZATIONS.items()}
        quantization = "rabitq" if layout else codes[info.quantization]
        self._layout = layout
        self._dim, self._metric = int(info.dim), _METRIC_NAMES[info.metric]
        self._M, self._ef_construction = int(info.m), int(info.ef_construction)
        self._quantization, self._rerank = quantization, bool(info.rerank)
        self._bits = int(info.rabitq_bits)
        self._threads = _threads(num_threads)
        return self

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        # Pickles through the same file format as save().
        with tempfile.TemporaryDirectory(prefix="strata-pickle-") as tmp:
            path = os.path.join(tmp, "index.strata")
            self.save(path)
            with open(path, "rb") as f:
                return _index_from_bytes, (f.read(),)


def _path(path: str | os.PathLike[str]) -> bytes:
    raw = os.fsencode(path)
    if b"\0" in raw:
        raise ValueError("path contains a NUL byte")
    return raw


def _index_from_bytes(data: bytes) -> Index:
    """Unpickles an Index (see Index.__reduce__)."""
    with tempfile.TemporaryDirectory(prefix="strata-pickle-") as tmp:
        path = os.path.join(tmp, "index.strata")
        with open(path, "wb") as f:
            f.write(data)
        return Index.load(path)


class FlatIndex(_BaseIndex):
    """Exact brute-force index with the same interface as Index.

    Every search compares each query with every vector: exact answers, cost
    linear in len(index). search() accepts ef and ignores it.
    """

    __slots__ = ()
    _kind = const("STRATA_KIND_FLAT")

    def __init__(self, dim: int, metric: str = "l2", num_threads: int | None = None) -> None:
        self._create(dim, metric, num_threads=num_threads)


class _ProgressBar:
    """tqdm if it is installed, else one line on stderr rewritten twice a second."""

    def __init__(self, total: int) -> None:
        self._total, self._shown, self._last_print = total, 0, 0.0
        try:
            from tqdm.auto import tqdm
        except ImportError:
            self._tqdm: Any = None
        else:
            self._tqdm = tqdm(total=total, unit="vec", desc="strata add")

    def update(self, done: int) -> None:
        if self._tqdm is not None:
            self._tqdm.update(done - self._shown)
        elif time.monotonic() - self._last_print >= 0.5:
            self._last_print = time.monotonic()
            self._print(done, end="\r")
        self._shown = done

    def close(self, *, done: bool) -> None:
        if done:
            self.update(self._total)
        if self._tqdm is not None:
            self._tqdm.close()
        else:
            self._print(self._shown, end="\n")

    def _print(self, done: int, end: str) -> None:
        percent = 100 * done // max(self._total, 1)
        print(f"strata add: {done}/{self._total} vectors ({percent}%)", end=end, file=sys.stderr)
