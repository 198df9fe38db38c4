"""strata for ann-benchmarks: copy this folder to ann_benchmarks/algorithms/strata/ in an
ann-benchmarks checkout (with config.yml and Dockerfile beside it).

Outside a checkout (bench/ann_benchmarks/run_minimal.py, tests) the relative import of BaseANN
fails and a stub with the same interface stands in for it.

ann-benchmarks imports this module in its parent process and runs fit/query in forked workers.
That works because `import strata` starts nothing native: the engine (and its Go runtime, which
does not survive fork) starts in the worker, at the first strata.Index created in fit().
"""

from __future__ import annotations

import numpy as np

import strata

try:
    from ..base.module import BaseANN
except ImportError:  # not inside ann_benchmarks/algorithms/: a stub with BaseANN's interface

    class BaseANN:  # type: ignore[no-redef]
        def done(self) -> None:
            pass

        def get_memory_usage(self) -> float | None:
            """Resident memory in kB, as ann-benchmarks' BaseANN reports it (via psutil)."""
            try:
                with open("/proc/self/statm") as f:
                    import os

                    return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024
            except OSError:
                return None

        def fit(self, vectors: np.ndarray) -> None:
            pass

        def query(self, q: np.ndarray, n: int) -> np.ndarray:
            return np.empty(0, dtype=np.int64)

        def batch_query(self, queries: np.ndarray, n: int) -> None:
            self.res = [self.query(q, n) for q in queries]

        def get_batch_results(self) -> list:
            return self.res

        def get_additional(self) -> dict:
            return {}

        def __str__(self) -> str:
            return self.name


_METRICS = {"euclidean": "l2", "angular": "cosine"}


class Strata(BaseANN):
    """strata.Index (HNSW). method_param: M, efConstruction, optional quantization ("sq8").
    Query argument: ef."""

    def __init__(self, metric: str, method_param: dict) -> None:
        if metric not in _METRICS:
            raise NotImplementedError(f"strata does not support the {metric!r} metric")
        self.metric = _METRICS[metric]
        self.method_param = dict(method_param)
        self.M = int(method_param.get("M", 16))
        self.ef_construction = int(method_param.get("efConstruction", 200))
        self.quantization = method_param.get("quantization")
        self.ef: int | None = None
        self.index = None
        self.res = None
        self.name = f"strata ({self._params()})"

    def _params(self) -> str:
        q = f", quantization={self.quantization}" if self.quantization else ""
        return f"M={self.M}, efConstruction={self.ef_construction}{q}"

    def fit(self, vectors: np.ndarray) -> None:
        X = np.ascontiguousarray(vectors, dtype=np.float32)
        kwargs = {"metric": self.metric, "M": self.M, "ef_construction": self.ef_construction}
        if self.quantization:
            kwargs["quantization"] = self.quantization
        self.index = strata.Index(X.shape[1], **kwargs)
        ids = np.asarray(self.index.add(X), dtype=np.int64)
        # ann-benchmarks scores results as row numbers of X; strata numbers a fresh index's rows
        # 0..n-1, and if it ever does not, results are mapped back through a sorted lookup.
        self._row_of_id = None
        if not np.array_equal(ids, np.arange(X.shape[0])):
            order = np.argsort(ids)
            self._row_of_id = (ids[order], order)

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if self._row_of_id is not None:
            sorted_ids, order = self._row_of_id
            pos = np.clip(np.searchsorted(sorted_ids, ids), 0, len(sorted_ids) - 1)
            ids = np.where((sorted_ids[pos] == ids) & (ids >= 0), order[pos], -1)
        return ids

    def set_query_arguments(self, ef: int) -> None:
        self.ef = int(ef)
        self.name = f"strata ({self._params()}, ef={self.ef})"

    def query(self, q: np.ndarray, n: int) -> np.ndarray:
        q = np.ascontiguousarray(q, dtype=np.float32).reshape(1, -1)
        ids, _ = self.index.search(q, k=n, ef=self.ef, num_threads=1)
        row = self._rows(ids[0])
        return row[row >= 0]

    def batch_query(self, queries: np.ndarray, n: int) -> None:
        """The harness's --batch mode: all queries in one call, spread over every core by the
        engine, with the GIL released for the whole call (no Python thread pool)."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        # num_threads=None: the index's setting, which fit() left at None, i.e. every core.
        ids, _ = self.index.search(queries, k=n, ef=self.ef, num_threads=None)
        self.res = self._rows(ids)

    def get_batch_results(self) -> list:
        return [row[row >= 0] for row in self.res]

    def done(self) -> None:
        self.index = None
        self.res = None

    def __str__(self) -> str:
        return self.name
