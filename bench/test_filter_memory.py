"""Tests of bench_filter.py and bench_memory.py: filtered ground truth, allow lists, recall, and a
quick end-to-end run of each on a generated set (skipped when strata lacks the API they need).

Run from outside the repository root (so the source tree's strata/ cannot shadow the installed one):
    cd /tmp && python -m pytest /path/to/strata/bench/test_filter_memory.py
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_filter
import bench_memory
import datasets


def _strata_with(*names: str) -> object:
    """strata, or a skip when it is missing or its Index lacks one of names (methods/keywords)."""
    try:
        strata = importlib.import_module("strata")
    except ImportError as e:
        pytest.skip(f"strata not importable: {e}")
    params = set(inspect.signature(strata.Index.search).parameters)
    params |= set(inspect.signature(strata.Index.__init__).parameters)
    missing = [n for n in names if n not in params and not hasattr(strata.Index, n)]
    if missing:
        pytest.skip(f"strata.Index lacks {missing}")
    return strata


@pytest.fixture
def tiny_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    pytest.importorskip("h5py")
    monkeypatch.setenv("STRATA_BENCH_DATA", str(tmp_path / "data"))
    train, test = datasets.make_clustered(3000, 40, 16, centres=12)
    nb, dist = datasets.exact_knn(train, test, "angular", progress=False)
    datasets.write_hdf5("tiny-angular", train, test, "angular", nb, dist)
    return "tiny-angular"


@pytest.mark.parametrize("distance", ["euclidean", "angular"])
def test_filtered_truth_is_brute_force_over_the_allowed_rows_only(distance: str) -> None:
    rng = np.random.default_rng(1)
    train = rng.standard_normal((400, 8)).astype(np.float32)
    queries = rng.standard_normal((15, 8)).astype(np.float32)
    allowed = np.sort(rng.choice(400, 37, replace=False)).astype(np.int64)
    ids, _ = bench_filter.filtered_truth(train, queries, allowed, distance, k=10)
    x, q = train.astype(np.float64), queries.astype(np.float64)
    if distance == "angular":
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        d = 1.0 - q @ x.T
    else:
        d = np.linalg.norm(q[:, None] - x[None], axis=2)
    d[:, np.setdiff1d(np.arange(400), allowed)] = np.inf
    np.testing.assert_array_equal(ids, np.argsort(d, axis=1, kind="stable")[:, :10])


def test_filtered_truth_with_fewer_allowed_rows_than_k_has_fewer_columns() -> None:
    train = np.eye(5, dtype=np.float32)
    ids, _ = bench_filter.filtered_truth(train, train[:2], np.array([1, 3]), "euclidean", k=10)
    assert ids.shape == (2, 2) and set(ids[0]) == {1, 3}


def test_allow_lists_have_the_requested_sizes_and_correlated_ones_are_one_region() -> None:
    train, _ = datasets.make_clustered(2000, 1, 8, centres=10)
    lists, info = bench_filter.allow_lists(train, "euclidean", [0.5, 0.05, 0.001])
    for kind in ("random", "correlated"):
        assert [lists[(kind, s)].size for s in (0.5, 0.05, 0.001)] == [1000, 100, 2]
        assert all(np.all(np.diff(ids) > 0) for (k, _), ids in lists.items() if k == kind)
    centre = train[info["correlated_centre_row"]]
    near = np.linalg.norm(train[lists[("correlated", 0.05)]] - centre, axis=1)
    rest = np.delete(np.arange(2000), lists[("correlated", 0.05)])
    assert near.max() <= np.linalg.norm(train[rest] - centre, axis=1).min() + 1e-5
    again, _ = bench_filter.allow_lists(train, "euclidean", [0.5, 0.05, 0.001])
    assert all(np.array_equal(lists[key], again[key]) for key in lists)  # fixed seed


def test_recall_counts_minus_one_padding_as_misses_and_caps_k_at_the_truth() -> None:
    truth = np.array([[4, 7]])
    assert bench_filter.recall(np.array([[7, 4, -1, -1]]), truth, 4) == 1.0
    assert bench_filter.recall(np.array([[7, -1, -1, -1]]), truth, 4) == 0.5


def test_filter_quick_run_reports_every_configuration(tiny_dataset: str, tmp_path: Path) -> None:
    _strata_with("filter_ids", "return_stats")
    libs = ["strata"] + [lib for lib, mod in (("hnswlib", "hnswlib"), ("faiss", "faiss"))
                         if importlib.util.find_spec(mod)]
    out = tmp_path / "filter.json"
    rc = bench_filter.main(["--dataset", tiny_dataset, "--quick", "--libs", ",".join(libs),
                            "--budget", "1", "--out", str(out), "--markdown"])
    assert rc == 0
    result = json.loads(out.read_text())
    configs = result["configs"]
    # 2 unfiltered rows + 6 selectivities x 2 kinds x 2 ef
    assert len(configs) == 2 + 6 * 2 * 2
    for e in configs:
        strata = e["libs"]["strata"]
        assert strata["violations"] == 0
        assert strata["queries"] == 40
        if e["kind"] != "none":
            assert set(strata["plans"]) <= {"graph", "exact"}
    # 0.1 % of 3000 rows is 3 ids: fewer than k, so strata pads and every lib is scored on 3.
    smallest = next(e for e in configs if e["selectivity"] == 0.001)
    assert smallest["allowed"] == 3 and smallest["libs"]["strata"]["recall"] == 1.0
    assert "| 0.1% | random | 64 |" in bench_filter.format_table(result, markdown=True)


def test_memory_quick_run_measures_each_configuration_in_its_own_process(
        tiny_dataset: str, tmp_path: Path) -> None:
    _strata_with("quantization", "rerank", "load", "save")
    out = tmp_path / "memory.json"
    rc = bench_memory.main(["--dataset", tiny_dataset, "--quick", "--settle", "0",
                            "--warmup", "5", "--out", str(out)])
    assert rc == 0
    result = json.loads(out.read_text())
    by = {r["config"]: r for r in result["configs"]}
    assert list(by) == list(bench_memory.CONFIGS)
    assert by["float32"]["n"] == 3000 and by["sq8-mmap"]["mmap_vectors"] is True
    assert result["files"]["sq8-codes"]["file_bytes"] < result["files"]["f32"]["file_bytes"]
    for r in by.values():
        assert r["status"]["after_warmup"]["RssAnon"] > 0
        assert [p["ef"] for p in r["sweep"]] == [64, 128]
    assert by["float32"]["sweep"][1]["recall"] >= 0.9
    assert "sq8-mmap / float32" in bench_memory.format_table(result)
