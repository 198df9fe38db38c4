"""Search results: exact distances, recall against exact search, padding, threads."""

import numpy as np
import pytest
from helpers import METRICS, clustered, make, recall, reference_distances

import strata

KINDS = [strata.Index, strata.FlatIndex]
# l1 (Manhattan) has float indexes only: the quantized tests keep to METRICS.
SEARCH_METRICS = [*METRICS, "l1"]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("metric", SEARCH_METRICS)
def test_distances_match_float64_reference(kind, metric):
    data, queries = clustered(2000, 24, queries=50, seed=3)
    with make(kind, 24, metric) as index:
        index.add(data)
        ids, dists = index.search(queries, k=10)
    assert ids.dtype == np.int64 and dists.dtype == np.float32
    assert ids.shape == dists.shape == (50, 10)
    want = np.take_along_axis(reference_distances(metric, queries, data), ids, axis=1)
    np.testing.assert_allclose(dists, want, rtol=1e-4, atol=1e-4)
    assert (np.diff(dists, axis=1) >= 0).all(), "results not sorted nearest first"


@pytest.mark.parametrize("metric", SEARCH_METRICS)
def test_flat_index_is_exact(metric):
    data, queries = clustered(1500, 16, queries=40, seed=4)
    with strata.FlatIndex(16, metric=metric) as index:
        index.add(data)
        ids, _ = index.search(queries, k=10)
    truth = np.argsort(reference_distances(metric, queries, data), axis=1, kind="stable")[:, :10]
    assert recall(ids, truth) >= 0.999


@pytest.mark.parametrize("metric", SEARCH_METRICS)
def test_hnsw_recall_at_10_against_flat_index(metric):
    data, queries = clustered(5000, 32, queries=300, seed=5)
    with strata.FlatIndex(32, metric=metric) as flat, strata.Index(32, metric=metric) as index:
        flat.add(data)
        index.add(data)
        index.check_integrity()
        truth, _ = flat.search(queries, k=10)
        found, _ = index.search(queries, k=10)
    assert recall(found, truth) >= 0.95


def test_hnsw_recall_does_not_depend_on_thread_count():
    data, queries = clustered(5000, 32, queries=300, seed=6)
    with strata.FlatIndex(32) as flat:
        flat.add(data)
        truth, _ = flat.search(queries, k=10)
    recalls = {}
    for threads in (1, 2, 4):
        with strata.Index(32, num_threads=threads, seed=7) as index:
            index.add(data)
            index.check_integrity()
            recalls[threads] = recall(index.search(queries, k=10, ef=32)[0], truth)
    assert max(recalls.values()) - min(recalls.values()) <= 0.03, recalls
    assert min(recalls.values()) >= 0.9, recalls


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_pads_with_minus_one_and_inf_when_k_exceeds_len(kind):
    with make(kind, 3) as index:
        ids, dists = index.search(np.ones(3), k=4)
        assert ids.tolist() == [[-1] * 4] and np.isposinf(dists).all()
        index.add(np.eye(3), ids=[7, 8, 9])
        ids, dists = index.search(np.zeros((2, 3)), k=5)
    assert ids.shape == (2, 5)
    assert sorted(ids[0, :3].tolist()) == [7, 8, 9] and ids[:, 3:].tolist() == [[-1, -1]] * 2
    assert np.allclose(dists[:, :3], 1) and np.isposinf(dists[:, 3:]).all()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_one_dimensional_query_returns_one_row(kind):
    with make(kind, 4) as index:
        index.add(np.eye(4))
        ids, dists = index.search(np.array([0, 0, 1, 0], dtype=np.float64), k=1)
    assert ids.shape == dists.shape == (1, 1) and ids[0, 0] == 2 and dists[0, 0] == 0


def test_single_row_fast_path_answers_like_the_batch_path_and_reports_errors():
    # Index.search sends one float32 row straight to strata_search_one without an error
    # buffer; it must give the batch path's answers, leave odd inputs to the full
    # path, and still raise the engine's own message.
    data, queries = clustered(800, 16, queries=20, seed=9)
    with strata.Index(16, seed=1) as index:
        index.add(data)
        batch_ids, batch_dists = index.search(queries, k=7, ef=20)
        for i, q in enumerate(queries):
            # fast (1-D and one-row 2-D), strided, cast
            for row in (q, q[None, :], np.repeat(q, 2)[::2], q.astype(np.float64)):
                ids, dists = index.search(row, k=7, ef=20, num_threads=1)
                assert ids.shape == (1, 7) and ids.flags.writeable
                np.testing.assert_array_equal(ids[0], batch_ids[i])
                np.testing.assert_array_equal(dists[0], batch_dists[i])
        bad = queries[0].copy()
        bad[3] = np.nan
        with pytest.raises(ValueError, match="finite"):
            index.search(bad, k=3)
        with pytest.raises(ValueError, match="num_threads"):
            index.search(queries[0], k=3, num_threads=0)
        with pytest.raises(TypeError, match="k must be an integer"):
            index.search(queries[0], k=True)
        with pytest.raises(ValueError):  # a (dim, 1) column is dim queries of dimension 1
            index.search(np.ascontiguousarray(queries[0][:, None]), k=3)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_ids_sequential_explicit_and_upsert(kind):
    with make(kind, 2) as index:
        assert index.add(np.ones((2, 2))).tolist() == [0, 1]
        assert index.add(np.ones((2, 2)), ids=[10, 5]).tolist() == [10, 5]
        assert index.add(np.ones((1, 2))).tolist() == [11]
        assert len(index) == 5
        index.add(np.array([[9.0, 9.0]]), ids=[5])  # replaces id 5's vector
        assert len(index) == 5
        ids, dists = index.search([9.0, 9.0], k=1)
        assert ids[0, 0] == 5 and dists[0, 0] == 0
        index.check_integrity()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_non_float32_and_non_contiguous_input_is_converted(kind):
    data, queries = clustered(300, 8, queries=5, seed=8)
    with make(kind, 8) as a, make(kind, 8) as b:
        a.add(data)
        b.add(np.asfortranarray(data.astype(np.float64)))
        for q in (queries, queries.astype(np.float16).astype(np.float64), queries[:, ::1]):
            np.testing.assert_array_equal(a.search(q, k=5)[0], b.search(q, k=5)[0])
        strided = np.repeat(queries, 2, axis=1)[:, ::2]
        np.testing.assert_array_equal(a.search(strided, k=5)[0], a.search(queries, k=5)[0])


def test_empty_batches():
    with strata.FlatIndex(3) as index:
        assert index.add(np.empty((0, 3), dtype=np.float32)).shape == (0,)
        ids, dists = index.search(np.empty((0, 3)), k=2)
        assert ids.shape == dists.shape == (0, 2) and len(index) == 0
