"""The ann-benchmarks wrapper (bench/ann_benchmarks/strata/module.py), driven by the minimal
stand-in runner (bench/ann_benchmarks/run_minimal.py) on small generated data."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest


def _runner_path() -> Path:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "bench" / "ann_benchmarks" / "run_minimal.py"
        if candidate.exists():
            return candidate
        if parent.name == "ann_benchmarks" and (parent / "run_minimal.py").exists():
            return parent / "run_minimal.py"
    raise FileNotFoundError("bench/ann_benchmarks/run_minimal.py not found above " + __file__)


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    import os

    if os.environ.get("STRATA_BENCH_STANDIN") != "1":
        pytest.importorskip("strata")
    path = _runner_path()
    spec = importlib.util.spec_from_file_location("strata_run_minimal", path)
    mod = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path[:] = saved + [p for p in sys.path if p not in saved]
    return mod


def _data(
    runner: ModuleType, metric: str, n: int = 3000, dim: int = 24, nq: int = 100, k: int = 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    train, test = runner.datasets.make_clustered(n, nq, dim, centres=30, seed=5, spread=0.3)
    neighbors, _ = runner.datasets.exact_knn(train, test, metric, k=k, progress=False)
    return train, test, neighbors


GROUP = {"M-16": {"arg_groups": [{"M": 16, "efConstruction": 200}], "query_args": [[10, 64, 256]]}}


@pytest.mark.parametrize("metric", ["euclidean", "angular"])
def test_wrapper_returns_train_row_numbers_with_high_recall(
    runner: ModuleType, metric: str
) -> None:
    train, test, neighbors = _data(runner, metric)
    results = runner.run(train, test, neighbors, metric, k=10, groups=GROUP, log=lambda *_: None)
    assert [r["ef"] for r in results] == [10, 64, 256]
    # Results are row numbers of the fitted array: wrong ids would give recall near 0.
    assert results[-1]["recall"] >= 0.97
    # Recall does not fall as ef grows (beyond noise from ties).
    assert results[-1]["recall"] >= results[0]["recall"] - 0.01
    for r in results:
        assert r["lengths"] == [10]
        assert abs(r["batch_recall"] - r["recall"]) <= 0.02
        assert f"ef={r['ef']}" in r["name"]


def test_wrapper_rejects_metrics_it_cannot_serve(runner: ModuleType) -> None:
    mod = runner.load_wrapper()
    with pytest.raises(NotImplementedError):
        mod.Strata("hamming", {"M": 16, "efConstruction": 200})


def test_wrapper_returns_fewer_ids_when_index_is_smaller_than_k(runner: ModuleType) -> None:
    mod = runner.load_wrapper()
    algo = mod.Strata("euclidean", {"M": 16, "efConstruction": 200})
    train = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    algo.fit(train)
    algo.set_query_arguments(10)
    ids = algo.query(train[2], 10)
    assert len(ids) <= 5 and ids[0] == 2


def test_config_yml_drives_the_runner(runner: ModuleType) -> None:
    groups = runner.run_groups()
    assert "M-16" in groups
    group = groups["M-16"]
    assert group["arg_groups"][0]["M"] == 16
    assert all(isinstance(ef, int) for ef in group["query_args"][0])
