"""Every bad input raises a clear ValueError/TypeError and leaves the index unchanged."""

import re

import numpy as np
import pytest
from helpers import clustered, make

import strata

KINDS = [strata.Index, strata.FlatIndex]
DIM = 8


@pytest.fixture(params=KINDS, ids=lambda k: k.__name__)
def index(request):
    data, _ = clustered(200, DIM, centres=10, seed=11)
    with make(request.param, DIM) as index:
        index.add(data)
        yield index


def snapshot(index):
    probe, _ = clustered(5, DIM, centres=10, seed=12)
    ids, dists = index.search(probe, k=10)
    return len(index), index._progress(), ids.tolist(), dists.tolist()


def nan_row():
    v = np.ones((3, DIM), dtype=np.float32)
    v[1, 4] = np.nan
    return v


BAD_ADDS = [
    # (name, vectors, ids, exception, words in the message)
    ("wrong dim", np.ones((3, DIM + 1)), None, ValueError, "dimension 9"),
    ("3-D", np.ones((2, 3, DIM)), None, ValueError, "2-D"),
    ("scalar", np.float32(1), None, ValueError, "2-D"),
    ("NaN", nan_row(), None, ValueError, "vectors[1][4]"),
    ("inf", np.full((2, DIM), np.inf), None, ValueError, "finite"),
    ("float64 overflow", np.full((1, DIM), 1e300), None, ValueError, "finite"),
    ("strings", np.array([["a"] * DIM]), None, TypeError, "numeric"),
    ("complex", np.ones((1, DIM), dtype=complex), None, TypeError, "numeric"),
    ("ids too few", np.ones((3, DIM)), [1, 2], ValueError, "2 ids for 3 vectors"),
    ("ids 2-D", np.ones((2, DIM)), [[1, 2]], ValueError, "1-D"),
    ("duplicate ids", np.ones((3, DIM)), [500, 501, 500], ValueError, "duplicate id 500"),
    ("negative id", np.ones((2, DIM)), [3, -1], ValueError, "non-negative"),
    ("float ids", np.ones((2, DIM)), [1.0, 2.0], TypeError, "integers"),
    ("string ids", np.ones((1, DIM)), ["7"], TypeError, "integers"),
    ("id above int64", np.ones((1, DIM)), np.array([2**63], np.uint64), ValueError, "exceeds"),
]


@pytest.mark.parametrize(
    ("vectors", "ids", "exc", "words"),
    [case[1:] for case in BAD_ADDS],
    ids=[case[0] for case in BAD_ADDS],
)
def test_bad_add_raises_and_changes_nothing(index, vectors, ids, exc, words):
    before = snapshot(index)
    with np.errstate(over="ignore"), pytest.raises(exc, match=re.escape(words)):
        index.add(vectors, ids=ids)
    assert snapshot(index) == before
    index.check_integrity()


BAD_SEARCHES = [
    ("k zero", {"k": 0}, ValueError, "k must be"),
    ("k negative", {"k": -3}, ValueError, "k must be"),
    ("k float", {"k": 2.5}, TypeError, "k must be an integer"),
    ("k bool", {"k": True}, TypeError, "k must be an integer"),
    ("ef zero", {"ef": 0}, ValueError, "ef must be"),
    ("threads zero", {"num_threads": 0}, ValueError, "num_threads"),
    ("threads string", {"num_threads": "2"}, TypeError, "num_threads"),
    ("wrong dim", {"queries": np.ones((2, DIM - 1))}, ValueError, "dimension 7"),
    ("3-D", {"queries": np.ones((1, 1, DIM))}, ValueError, "2-D"),
    ("NaN", {"queries": np.full(DIM, np.nan)}, ValueError, "finite"),
]


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [case[1:] for case in BAD_SEARCHES],
    ids=[case[0] for case in BAD_SEARCHES],
)
def test_bad_search_raises(index, kwargs, exc, words):
    before = snapshot(index)
    kwargs = {"queries": np.ones(DIM), **kwargs}
    with pytest.raises(exc, match=re.escape(words)):
        index.search(**kwargs)
    assert snapshot(index) == before


BAD_CONSTRUCTORS = [
    ("dim zero", {"dim": 0}, ValueError),
    ("dim negative", {"dim": -4}, ValueError),
    ("dim too large", {"dim": 10**9}, ValueError),
    ("dim float", {"dim": 4.0}, TypeError),
    ("unknown metric", {"dim": 4, "metric": "hamming"}, ValueError),
    ("metric not a string", {"dim": 4, "metric": 1}, TypeError),
    ("threads zero", {"dim": 4, "num_threads": 0}, ValueError),
]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize(
    ("kwargs", "exc"), [c[1:] for c in BAD_CONSTRUCTORS], ids=[c[0] for c in BAD_CONSTRUCTORS]
)
def test_bad_constructor_arguments(kind, kwargs, exc):
    with pytest.raises(exc):
        kind(**kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"M": 1}, {"ef_construction": 0}, {"seed": -1}, {"seed": 2**64}, {"M": 2**40}]
)
def test_bad_hnsw_parameters(kwargs):
    with pytest.raises(ValueError):
        strata.Index(4, **kwargs)


def test_use_after_close_raises_value_error():
    index = strata.FlatIndex(4)
    index.add(np.eye(4))
    index.close()
    index.close()  # idempotent
    for call in (
        lambda: index.add(np.eye(4)),
        lambda: index.search(np.eye(4)),
        lambda: len(index),
        index.check_integrity,
    ):
        with pytest.raises(ValueError, match="index is closed"):
            call()
    assert "closed" in repr(index)
