"""Collection.query_mmr: maximal marginal relevance computed in the engine (go/collection/mmr.go).

The engine's own tests check the picks against a reference implementation; these check what
the Python layer adds: arguments, string ids, metadata, padding, errors and the async door."""

import asyncio

import numpy as np
import pytest

import strata

DIM = 8


def _axis(i: int, scale: float = 1.0) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = scale
    return v


@pytest.fixture
def col(tmp_path):
    """Five near copies of one point next to the query, and two points further away."""
    c = strata.Collection.create(tmp_path / "c", dim=DIM, metric="l2")
    copies = np.stack([_axis(0) + _axis(1, i * 1e-3) for i in range(5)])
    vectors = np.concatenate([copies, np.stack([_axis(2), _axis(3)])])
    ids = [f"copy-{i}" for i in range(5)] + ["other-2", "other-3"]
    c.upsert(ids, vectors, metadata=[{"n": i, "copy": i < 5} for i in range(7)])
    yield c
    c.close()


def test_mmr_returns_the_diverse_points_a_plain_query_misses(col):
    query = _axis(0, 0.6)
    plain = col.query(query, k=3)
    assert all(str(i).startswith("copy") for i in plain.ids[0])
    mmr = col.query_mmr(query, k=3, lambda_mult=0.5)
    assert mmr.ids.shape == mmr.distances.shape == (1, 3)
    assert mmr.ids[0, 0] == "copy-0"
    assert set(mmr.ids[0, 1:]) == {"other-2", "other-3"}
    assert mmr.distances[0, 0] == pytest.approx(plain.distances[0, 0])
    by_id = {m["n"]: m for m in mmr.metadata[0]}
    assert sorted(by_id) == [0, 5, 6]


def test_lambda_one_is_the_plain_query_and_where_filters(col):
    query = _axis(0, 0.6)
    plain = col.query(query, k=4)
    mmr = col.query_mmr(query, k=4, lambda_mult=1.0, fetch_k=7)
    assert list(mmr.ids[0]) == list(plain.ids[0])
    np.testing.assert_allclose(mmr.distances, plain.distances, rtol=1e-6)
    only = col.query_mmr(query, k=4, where={"copy": False})
    assert set(only.ids[0, :2]) == {"other-2", "other-3"}
    assert list(only.ids[0, 2:]) == [None, None]
    assert np.isinf(only.distances[0, 2:]).all()
    assert only.metadata[0][2:] == [None, None]


def test_integer_ids_stay_int64_and_metadata_can_be_left_out(tmp_path):
    with strata.Collection.create(tmp_path / "c", dim=DIM) as c:
        c.upsert(np.arange(20), np.random.default_rng(0).normal(size=(20, DIM)))
        result = c.query_mmr(_axis(0), k=5, include_metadata=False)
    assert result.ids.dtype == np.int64 and result.ids.shape == (1, 5)
    assert len(set(result.ids[0])) == 5
    assert result.metadata == [[None] * 5]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"lambda_mult": 1.5}, ValueError, "lambda must be in"),
        ({"lambda_mult": float("nan")}, ValueError, "lambda must be in"),
        ({"lambda_mult": "high"}, TypeError, "lambda_mult must be a number"),
        ({"fetch_k": 2}, ValueError, "fetch_k must be in"),
        ({"fetch_k": 0}, ValueError, "fetch_k must be positive"),
        ({"k": 0}, ValueError, "k must be in"),
        ({"ef": -1}, ValueError, "ef"),
        ({"where": {"n": {"$bad": 1}}}, ValueError, "bad"),
    ],
)
def test_bad_arguments_raise_with_the_engines_message(col, kwargs, error, message):
    args = {"k": 3, **kwargs}
    with pytest.raises(error, match=message):
        col.query_mmr(_axis(0), **args)


def test_a_query_of_two_rows_or_the_wrong_dim_is_refused(col):
    with pytest.raises(ValueError, match="one query vector"):
        col.query_mmr(np.zeros((2, DIM), dtype=np.float32), k=2)
    with pytest.raises(ValueError, match="dim"):
        col.query_mmr(np.zeros(DIM + 1, dtype=np.float32), k=2)


def test_closed_collection_refuses(tmp_path):
    c = strata.Collection.create(tmp_path / "c", dim=DIM)
    c.close()
    with pytest.raises(ValueError, match="closed"):
        c.query_mmr(_axis(0), k=2)


def test_async_query_mmr_answers_as_the_collection(tmp_path):
    async def main():
        async with await strata.AsyncCollection.create(tmp_path / "c", dim=DIM) as acol:
            await acol.upsert(np.arange(30), np.random.default_rng(1).normal(size=(30, DIM)))
            results = await asyncio.gather(
                *(acol.query_mmr(_axis(i % DIM), k=4, lambda_mult=0.3) for i in range(16))
            )
            sync = acol._col.query_mmr(_axis(0), k=4, lambda_mult=0.3)
        return results, sync

    results, sync = asyncio.run(main())
    assert list(results[0].ids[0]) == list(sync.ids[0])
    assert all(len(set(r.ids[0])) == 4 for r in results)
