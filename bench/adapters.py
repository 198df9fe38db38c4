"""One adapter per library, all with the same small surface, so bench_ann.py times them alike.

    a = ADAPTERS[name](distance, dim, M=16, ef_construction=200)
    a.build(train, threads)         # all cores; train rows get ids 0..n-1
    Q = a.prepare_queries(test)     # once, untimed: whatever the library needs its input to be
    a.set_ef(ef)
    a.query_one(Q[i:i+1], k) -> ids # one query (a (1, dim) row), one thread; k ids, -1 padded
                                    # (returned as the library gives them: no per-query copies)
    a.query_batch(Q, k, threads) -> ids [nq, k]
    a.index_bytes(tmpdir) -> (bytes or None, how it was measured)
    a.reset_stats(); a.stats(nq)    # distance computations per query, where the library says
    a.info() -> dict                # versions, SIMD build flags, variant parameters

Variants (SQ8 quantization now, filtered search later) are extra keyword arguments on the adapter
and extra names in ADAPTERS, e.g. "strata-sq8" and "faiss-sq8"; a filter would be one more keyword
that query_one/query_batch pass through (strata: filter_ids=...).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


def _pkg_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _path_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


class Adapter:
    name = "?"

    def __init__(self, distance: str, dim: int, M: int = 16,
                 ef_construction: int = 200,
                 seed: int = 100) -> None:
        if distance not in ("euclidean", "angular"):
            raise ValueError(f"unsupported distance {distance!r}")
        self.distance = distance
        self.dim = dim
        self.M = M
        self.ef_construction = ef_construction
        self.seed = seed
        self.ef = None

    def build(self, train: np.ndarray, threads: int) -> None:
        raise NotImplementedError

    def prepare_queries(self, queries: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(queries, dtype=np.float32)

    def set_ef(self, ef: int) -> None:
        self.ef = ef

    def query_one(self, q: np.ndarray, k: int) -> np.ndarray:
        raise NotImplementedError

    def query_batch(self, queries: np.ndarray, k: int, threads: int) -> np.ndarray:
        raise NotImplementedError

    def index_bytes(self, tmpdir: Path) -> tuple[int | None, str]:
        return None, "unavailable"

    def reset_stats(self) -> None:
        pass

    def stats(self, nq: int) -> dict | None:
        return None

    def info(self) -> dict:
        return {}

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------- strata


def load_strata() -> ModuleType:
    """The strata module, or the hnswlib-backed stand-in when STRATA_BENCH_STANDIN=1.

    The stand-in only exists to exercise the harness before strata builds; results made with it
    are marked `"standin": true` and summarize.py says so.
    """
    if os.environ.get("STRATA_BENCH_STANDIN") == "1":
        return importlib.import_module("_standin_strata")
    return importlib.import_module("strata")


class StrataAdapter(Adapter):
    name = "strata"
    quantization: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.strata = load_strata()
        self.metric = {"euclidean": "l2", "angular": "cosine"}[self.distance]
        self.index = None
        self.row_of_id = None  # None when strata's ids are already the row numbers

    def build(self, train: np.ndarray, threads: int) -> None:
        kwargs = dict(metric=self.metric, M=self.M, ef_construction=self.ef_construction,
                      num_threads=threads, seed=self.seed)
        if self.quantization:
            kwargs["quantization"] = self.quantization
        self.index = self.strata.Index(self.dim, **kwargs)
        ids = np.asarray(self.index.add(train))
        if not np.array_equal(ids, np.arange(train.shape[0])):
            # Map whatever ids strata chose back to train rows (sorted lookup, no dict).
            order = np.argsort(ids)
            self.row_of_id = (ids[order], order)

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if self.row_of_id is None:
            return ids
        sorted_ids, order = self.row_of_id
        pos = np.clip(np.searchsorted(sorted_ids, ids), 0, len(sorted_ids) - 1)
        return np.where((sorted_ids[pos] == ids) & (ids >= 0), order[pos], -1)

    def query_one(self, q: np.ndarray, k: int) -> np.ndarray:
        ids, _ = self.index.search(q, k=k, ef=self.ef, num_threads=1)
        return ids[0] if self.row_of_id is None else self._rows(ids[0])

    def query_batch(self, queries: np.ndarray, k: int, threads: int) -> np.ndarray:
        ids, _ = self.index.search(queries, k=k, ef=self.ef, num_threads=threads)
        return self._rows(ids)

    def index_bytes(self, tmpdir: Path) -> tuple[int | None, str]:
        save = getattr(self.index, "save", None)
        if save is None:
            return None, "no Index.save yet"
        path = Path(tmpdir) / f"{self.name}.strata"
        save(str(path))
        size = _path_bytes(path)
        return size, "saved file size"

    def stats(self, nq: int) -> dict | None:
        # Hook for when strata exposes search counters (e.g. distance computations).
        get = getattr(self.index, "search_stats", None)
        if get is None:
            return None
        s = dict(get())
        return {k: v / nq for k, v in s.items()}

    def reset_stats(self) -> None:
        reset = getattr(self.index, "reset_search_stats", None)
        if reset is not None:
            reset()

    def info(self) -> dict:
        out = {"version": getattr(self.strata, "__version__", None) or _pkg_version("strata"),
               "metric": self.metric, "quantization": self.quantization,
               "standin": bool(getattr(self.strata, "STANDIN", False))}
        for attr in ("kernel_path", "native_version", "cpu_features"):
            fn = getattr(self.strata, attr, None)
            if callable(fn):
                try:
                    out[attr] = fn()
                except Exception as e:  # noqa: BLE001 (informational only)
                    out[attr] = f"error: {e}"
        return out


class StrataSQ8Adapter(StrataAdapter):
    name = "strata-sq8"
    quantization = "sq8"


class StrataRaBitQAdapter(StrataAdapter):
    """quantization="rabitq": 1-bit codes for the traversal, `bits`-bit codes (or, for 1, the
    float vectors) to refine, the top k rescored exactly."""

    name = "strata-rabitq"
    quantization = "rabitq"
    bits = 8
    layout: str | None = None

    def build(self, train: np.ndarray, threads: int) -> None:
        extra = {"layout": self.layout} if self.layout else {}
        self.index = self.strata.Index(self.dim, metric=self.metric, M=self.M,
                                       ef_construction=self.ef_construction, num_threads=threads,
                                       seed=self.seed, quantization="rabitq", bits=self.bits,
                                       **extra)
        ids = np.asarray(self.index.add(train))
        assert np.array_equal(ids, np.arange(train.shape[0]))

    def info(self) -> dict:
        return {**super().info(), "bits": self.bits, "layout": self.layout,
                "memory_bytes_per_vector": self.index.info()["memory"]["bytes_per_vector"]}


class StrataRaBitQ1Adapter(StrataRaBitQAdapter):
    name = "strata-rabitq1"
    bits = 1


class StrataRaBitQQGAdapter(StrataRaBitQAdapter):
    """layout="qg": SymphonyQG's quantized graph (degree 32, no upper levels, codes relative to
    each node beside its vector), every expanded vector measured exactly."""

    name = "strata-rabitq-qg"
    bits = 1
    layout = "qg"


# ----------------------------------------------------------------------------- hnswlib


class HnswlibAdapter(Adapter):
    name = "hnswlib"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import hnswlib

        self.hnswlib = hnswlib
        self.space = {"euclidean": "l2", "angular": "cosine"}[self.distance]
        self.index = None

    def build(self, train: np.ndarray, threads: int) -> None:
        n = train.shape[0]
        self.index = self.hnswlib.Index(space=self.space, dim=self.dim)
        self.index.init_index(max_elements=n, ef_construction=self.ef_construction, M=self.M,
                              random_seed=self.seed)
        self.index.set_num_threads(threads)
        self.index.add_items(train, np.arange(n))

    def set_ef(self, ef: int) -> None:
        super().set_ef(ef)
        self.index.set_ef(ef)

    def query_one(self, q: np.ndarray, k: int) -> np.ndarray:
        labels, _ = self.index.knn_query(q, k=k, num_threads=1)
        return labels[0]

    def query_batch(self, queries: np.ndarray, k: int, threads: int) -> np.ndarray:
        labels, _ = self.index.knn_query(queries, k=k, num_threads=threads)
        return labels.astype(np.int64)

    def index_bytes(self, tmpdir: Path) -> tuple[int | None, str]:
        path = Path(tmpdir) / "hnswlib.bin"
        self.index.save_index(str(path))
        return _path_bytes(path), "saved file size"

    def info(self) -> dict:
        return {"version": _pkg_version("hnswlib"), "space": self.space,
                "note": "hnswlib exposes no distance-computation counter through Python"}


# ----------------------------------------------------------------------------- faiss


class FaissAdapter(Adapter):
    """IndexHNSWFlat; angular data is normalised and searched by inner product."""

    name = "faiss"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import faiss

        self.faiss = faiss
        self.metric = (faiss.METRIC_L2 if self.distance == "euclidean"
                       else faiss.METRIC_INNER_PRODUCT)
        self.index = None

    def prepare_queries(self, queries: np.ndarray) -> np.ndarray:
        # FAISS has no cosine metric: angular means normalised vectors and inner product. The
        # queries are normalised once here rather than per call, so the Python cost of doing it
        # is not charged to FAISS (strata and hnswlib normalise inside their own search).
        x = np.ascontiguousarray(queries, dtype=np.float32)
        if self.distance == "angular":
            x = np.ascontiguousarray(x / np.linalg.norm(x, axis=-1, keepdims=True))
        return x

    def _new_index(self) -> Any:
        return self.faiss.IndexHNSWFlat(self.dim, self.M, self.metric)

    def build(self, train: np.ndarray, threads: int) -> None:
        self.faiss.omp_set_num_threads(threads)
        self.index = self._new_index()
        self.index.hnsw.efConstruction = self.ef_construction
        x = self.prepare_queries(train)
        if not self.index.is_trained:
            self.index.train(x)
        self.index.add(x)

    def set_ef(self, ef: int) -> None:
        super().set_ef(ef)
        self.index.hnsw.efSearch = ef
        self.faiss.omp_set_num_threads(1)  # for query_one; query_batch sets its own

    def query_one(self, q: np.ndarray, k: int) -> np.ndarray:
        _, ids = self.index.search(q, k)
        return ids[0]

    def query_batch(self, queries: np.ndarray, k: int, threads: int) -> np.ndarray:
        self.faiss.omp_set_num_threads(threads)
        _, ids = self.index.search(queries, k)
        return ids.astype(np.int64)

    def index_bytes(self, tmpdir: Path) -> tuple[int | None, str]:
        path = Path(tmpdir) / "faiss.index"
        self.faiss.write_index(self.index, str(path))
        return _path_bytes(path), "saved file size"

    def reset_stats(self) -> None:
        self.faiss.cvar.hnsw_stats.reset()

    def stats(self, nq: int) -> dict | None:
        s = self.faiss.cvar.hnsw_stats
        out = {"ndis": s.ndis / nq}
        if hasattr(s, "nhops"):
            out["nhops"] = s.nhops / nq
        return out

    def info(self) -> dict:
        f = self.faiss
        opts = f.get_compile_options() if hasattr(f, "get_compile_options") else None
        return {"version": getattr(f, "__version__", None), "pip": _pkg_version("faiss-cpu"),
                "compile_options": opts, "index": type(self._new_index()).__name__,
                "metric": "L2" if self.distance == "euclidean" else "inner product (normalised)"}


class FaissSQ8Adapter(FaissAdapter):
    name = "faiss-sq8"

    def _new_index(self) -> Any:
        return self.faiss.IndexHNSWSQ(self.dim, self.faiss.ScalarQuantizer.QT_8bit, self.M,
                                      self.metric)


class FaissHNSWRaBitQAdapter(FaissAdapter):
    """IndexHNSWRaBitQ (L2 only: angular data is normalised, which ranks alike) with
    `nb_bits`-bit codes, inside IndexRefineFlat so that the k_factor*k candidates are
    re-ranked with the float vectors, as strata's and rabitqlib's modes are."""

    name = "faiss-hnsw-rabitq"
    nb_bits = 4
    k_factor = 2

    def _new_index(self) -> Any:
        base = self.faiss.IndexHNSWRaBitQ(self.dim, self.M, self.nb_bits, self.faiss.METRIC_L2)
        index = self.faiss.IndexRefineFlat(base)
        index.k_factor = self.k_factor
        return index

    def _hnsw(self) -> Any:
        return self.faiss.downcast_index(self.index.base_index).hnsw

    def build(self, train: np.ndarray, threads: int) -> None:
        self.faiss.omp_set_num_threads(threads)
        self.index = self._new_index()
        self._hnsw().efConstruction = self.ef_construction
        x = self.prepare_queries(train)
        self.index.train(x)
        self.index.add(x)

    def set_ef(self, ef: int) -> None:
        self.ef = ef
        self._hnsw().efSearch = ef
        self.faiss.omp_set_num_threads(1)

    def info(self) -> dict:
        return {**super().info(), "nb_bits": self.nb_bits, "k_factor": self.k_factor,
                "metric": "L2 (angular data normalised)"}


# ----------------------------------------------------------------------------- rabitqlib


def kmeans(x: np.ndarray, k: int, iters: int = 10, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means in NumPy: the centroids and assignment rabitqlib's HnswIndex.build takes."""
    rng = np.random.default_rng(seed)
    centres = x[rng.choice(len(x), k, replace=False)].copy()
    norms = (x * x).sum(1)[:, None]
    for _ in range(iters):
        assign = np.empty(len(x), dtype=np.int64)
        for lo in range(0, len(x), 20000):  # bounded memory for the distance block
            d = norms[lo:lo + 20000] - 2 * x[lo:lo + 20000] @ centres.T + (centres * centres).sum(1)
            assign[lo:lo + 20000] = d.argmin(1)
        for j in range(k):
            members = x[assign == j]
            if len(members):
                centres[j] = members.mean(0)
    return centres.astype(np.float32), assign.astype(np.uint32)


class RabitqlibHnswAdapter(Adapter):
    """rabitqlib's HnswIndex: HNSW over RaBitQ codes (1 + 7 ex bits here), no float vectors
    kept; the centroids are a NumPy k-means (one per thousand rows, 16 to 256). Angular data is
    normalised and searched by L2, which ranks alike."""

    name = "rabitqlib-hnsw"
    nbits = 8

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import rabitqlib

        self.rabitqlib = rabitqlib
        self.index = None
        self.clusters = 0

    def prepare_queries(self, queries: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(queries, dtype=np.float32)
        if self.distance == "angular":
            x = np.ascontiguousarray(x / np.linalg.norm(x, axis=-1, keepdims=True))
        return x

    def build(self, train: np.ndarray, threads: int) -> None:
        x = self.prepare_queries(train)
        self.clusters = min(max(len(x) // 1000, 16), 256)
        centres, assign = kmeans(x, self.clusters)
        self.index = self.rabitqlib.HnswIndex(dim=self.dim, max_elements=len(x), M=self.M,
                                              ef_construction=self.ef_construction,
                                              nbits=self.nbits, metric="l2")
        self.index.build(x, centres, assign, num_threads=threads)

    def query_one(self, q: np.ndarray, k: int) -> np.ndarray:
        return self.index.search(q, k=k, ef=max(self.ef, k), num_threads=1)[0][0]

    def query_batch(self, queries: np.ndarray, k: int, threads: int) -> np.ndarray:
        ids = self.index.search(queries, k=k, ef=max(self.ef, k), num_threads=threads)[0]
        return np.asarray(ids, dtype=np.int64)

    def info(self) -> dict:
        return {"version": _pkg_version("rabitqlib"), "index": "HnswIndex", "nbits": self.nbits,
                "clusters": self.clusters, "metric": "l2"}


class RabitqlibSymqgAdapter(RabitqlibHnswAdapter):
    """rabitqlib's SymqgIndex (SymphonyQG: neighbours' 1-bit codes beside each link list,
    FastScan), max_degree 32."""

    name = "rabitqlib-symqg"
    max_degree = 32

    def build(self, train: np.ndarray, threads: int) -> None:
        x = self.prepare_queries(train)
        self.index = self.rabitqlib.SymqgIndex(dim=self.dim, max_degree=self.max_degree,
                                               metric="l2")
        self.index.build(x, ef_construction=self.ef_construction, num_threads=threads)

    def info(self) -> dict:
        return {"version": _pkg_version("rabitqlib"), "index": "SymqgIndex",
                "max_degree": self.max_degree, "metric": "l2"}


ADAPTERS = {
    a.name: a for a in (StrataAdapter, StrataSQ8Adapter, StrataRaBitQAdapter,
                        StrataRaBitQ1Adapter, StrataRaBitQQGAdapter, HnswlibAdapter, FaissAdapter,
                        FaissSQ8Adapter, FaissHNSWRaBitQAdapter, RabitqlibHnswAdapter,
                        RabitqlibSymqgAdapter)
}
# The library that the "algorithm check" compares strata against, ef for ef.
REFERENCE = "hnswlib"
