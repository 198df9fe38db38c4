"""A stand-in for the `strata` module, backed by hnswlib, with strata.Index's Python surface.

It exists only to exercise the benchmark harness before strata builds (STRATA_BENCH_STANDIN=1);
nothing measured with it says anything about strata.
"""

from __future__ import annotations

import numpy as np

STANDIN = True
__version__ = "standin"


class Index:
    def __init__(self, dim: int, metric: str = "l2", M: int = 16,
                 ef_construction: int = 200, num_threads: int | None = None,
                 seed: int | None = None, quantization: str | None = None) -> None:
        import hnswlib

        if quantization is not None:
            raise ValueError("the stand-in has no quantization")
        self.dim = dim
        self._space = {"l2": "l2", "ip": "ip", "cosine": "cosine"}[metric]
        self._M = M
        self._efc = ef_construction
        self._threads = num_threads or -1
        self._seed = 100 if seed is None else seed
        self._index = hnswlib.Index(space=self._space, dim=dim)
        self._index.init_index(max_elements=1024, ef_construction=ef_construction, M=M,
                               random_seed=self._seed)
        self._n = 0

    def add(self, vectors: np.ndarray, ids: np.ndarray | None = None) -> np.ndarray:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n = vectors.shape[0]
        if ids is None:
            ids = np.arange(self._n, self._n + n, dtype=np.int64)
        if self._n + n > self._index.get_max_elements():
            self._index.resize_index(self._n + n)
        self._index.set_num_threads(self._threads)
        self._index.add_items(vectors, ids)
        self._n += n
        return np.asarray(ids, dtype=np.int64)

    def search(self, queries: np.ndarray, k: int = 10, ef: int | None = None,
               num_threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        if ef is not None:
            self._index.set_ef(ef)
        queries = np.atleast_2d(queries)
        kk = min(k, self._n)  # strata pads short rows with -1; hnswlib raises instead
        ids = np.full((queries.shape[0], k), -1, dtype=np.int64)
        dists = np.full((queries.shape[0], k), np.inf, dtype=np.float32)
        if kk > 0:
            got, d = self._index.knn_query(queries, k=kk, num_threads=num_threads or -1)
            ids[:, :kk] = got
            dists[:, :kk] = d
        return ids, dists

    def save(self, path: str) -> None:
        self._index.save_index(path)

    def __len__(self) -> int:
        return self._n
