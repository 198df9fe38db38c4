"""Filtered search (issue 5): allow/deny lists, planner, padding, exact equality."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import clustered, recall, reference_distances

import strata


def filtered_truth(
    data: np.ndarray, queries: np.ndarray, allowed: np.ndarray, k: int
) -> np.ndarray:
    d = reference_distances("l2", queries, data[allowed])
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    out = np.full((len(queries), k), -1, dtype=np.int64)
    out[:, : order.shape[1]] = allowed[order]
    return out


@pytest.fixture(scope="module")
def indexed() -> tuple[strata.Index, np.ndarray, np.ndarray]:
    data, queries = clustered(6000, 24, queries=100, seed=21)
    index = strata.Index(24, seed=4)
    index.add(data)
    return index, data, queries


def test_exact_plan_equals_brute_force(indexed: tuple) -> None:
    index, data, queries = indexed
    rng = np.random.default_rng(1)
    for size in (1, 5, 50, 400):
        allow = rng.choice(6000, size=size, replace=False)
        deny = allow[: size // 3]
        ids, dists, stats = index.search(
            queries, k=10, filter_ids=allow, exclude_ids=deny, return_stats=True
        )
        assert stats["plan"] == "exact" and stats["allowed"] == size - size // 3
        want = filtered_truth(data, queries, np.setdiff1d(allow, deny), 10)
        wd = np.take_along_axis(
            reference_distances("l2", queries, data), np.maximum(want, 0), axis=1
        )
        np.testing.assert_allclose(
            np.where(want >= 0, dists, 0), np.where(want >= 0, wd, 0), rtol=1e-4, atol=1e-3
        )
        assert ((ids < 0) == (want < 0)).all()


@pytest.mark.parametrize("fraction", [0.5, 0.7])
def test_graph_plan_recall_on_broad_filters(fraction: float) -> None:
    # Large enough that the planner prefers the graph search of the allowed nodes, whose
    # candidate list is widened to ef' = ef/fraction (at most 2·ef).
    data, queries = clustered(20000, 16, queries=100, seed=22)
    index = strata.Index(16, seed=4)
    index.add(data)
    allow = np.random.default_rng(2).choice(20000, size=int(20000 * fraction), replace=False)
    ids, _, stats = index.search(queries, k=10, ef=16, filter_ids=allow, return_stats=True)
    assert stats["plan"] == "graph" and stats["ef"] == int(np.ceil(16 * min(1 / fraction, 2)))
    assert np.isin(ids, allow).all()
    assert recall(ids, filtered_truth(data, queries, np.sort(allow), 10)) >= 0.99


def test_correlated_filter_one_cluster(indexed: tuple) -> None:
    """An allow list that is one region of space, far from most queries."""
    index, data, queries = indexed
    centre = data[0]
    allow = np.argsort(((data - centre) ** 2).sum(1))[:300]
    ids, _ = index.search(queries, k=10, filter_ids=allow)
    assert recall(ids, filtered_truth(data, queries, np.sort(allow), 10)) >= 0.99


def test_edge_cases_pad_instead_of_raising(indexed: tuple) -> None:
    index, _, queries = indexed
    ids, dists, stats = index.search(queries[:2], k=5, filter_ids=[], return_stats=True)
    assert (ids == -1).all() and np.isinf(dists).all() and stats["plan"] == "empty"
    ids, _ = index.search(queries[:2], k=5, filter_ids=[10**12, 10**12 + 1])
    assert (ids == -1).all()
    ids, _ = index.search(queries[:2], k=5, exclude_ids=np.arange(6000))
    assert (ids == -1).all()
    ids, dists = index.search(queries[:2], k=5, filter_ids=[3, 4])
    assert set(ids[0, :2]) == {3, 4} and (ids[:, 2:] == -1).all() and np.isinf(dists[:, 2:]).all()
    ids, _ = index.search(queries[0], k=3, filter_ids=(7, 8, 9))
    assert ids.shape == (1, 3) and set(ids[0]) == {7, 8, 9}


def test_removed_ids_stay_out_of_filtered_results() -> None:
    data, queries = clustered(500, 8, queries=5, seed=3)
    index = strata.Index(8, seed=1)
    index.add(data)
    index.remove([1, 2])
    ids, _ = index.search(queries, k=3, filter_ids=[1, 2, 3])
    assert (ids[:, 0] == 3).all() and (ids[:, 1:] == -1).all()


def test_bad_filters_raise(indexed: tuple) -> None:
    index, _, queries = indexed
    with pytest.raises(ValueError, match="non-negative"):
        index.search(queries, filter_ids=[-1])
    with pytest.raises(ValueError, match="1-D"):
        index.search(queries, exclude_ids=[[1, 2]])
    with pytest.raises(TypeError, match="integers"):
        index.search(queries, filter_ids=[0.5])
