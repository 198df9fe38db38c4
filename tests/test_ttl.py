"""Expiring points through strata.Collection and strata.AsyncCollection: ttl (a scalar or
one per row), expires_at, reading an entry's expiry back, and the errors.

No test waits for time to pass: an entry expires in these tests because its expires_at is
already in the past when it is written (every read hides it from that moment), and one
that must stay has an hour or more to live.
"""

from __future__ import annotations

import asyncio
import math
import time

import numpy as np
import pytest

import strata

DIM = 4


@pytest.fixture
def col(tmp_path):
    c = strata.Collection.create(tmp_path / "c", dim=DIM, metric="l2", seed=1)
    yield c
    c.close()


def vectors(n: int) -> np.ndarray:
    return np.arange(n * DIM, dtype=np.float32).reshape(n, DIM)


def test_ttl_scalar_sets_every_entrys_expiry(col):
    before = time.time()
    col.upsert([1, 2], vectors(2), ttl=3600)
    got = col.get([1, 2], include_expiry=True)
    assert list(got.ids) == [1, 2]
    assert got.expires_at is not None
    assert np.all(got.expires_at >= before + 3600)
    assert np.all(got.expires_at <= time.time() + 3600)


def test_ttl_per_row_with_none_for_never(col):
    col.upsert(["a", "b", "c"], vectors(3), ttl=[3600, None, 7200])
    got = col.get(["a", "b", "c"], include_expiry=True)
    assert list(got.ids) == ["a", "b", "c"]
    assert math.isnan(got.expires_at[1])
    assert got.expires_at[2] - got.expires_at[0] == pytest.approx(3600, abs=1)


def test_an_expired_entry_is_gone_for_every_read(col):
    past = time.time() - 1
    col.upsert([1, 2, 3], vectors(3), [{"k": 1}, {"k": 2}, {"k": 3}], expires_at=[past, None, past])
    assert len(col) == 1
    assert col.count({"k": {"$gte": 0}}) == 1
    assert list(col.get([1, 2, 3]).ids) == [2]
    assert set(col.query(vectors(3), k=3).ids.ravel().tolist()) == {2, -1}
    assert [int(i) for page in col.scan() for i in page.ids] == [2]


def test_upsert_without_ttl_clears_the_expiry(col):
    col.upsert([1], vectors(1), ttl=60)
    col.upsert([1], vectors(1))
    got = col.get([1], include_expiry=True)
    assert math.isnan(got.expires_at[0])


def test_ttl_on_named_fields(tmp_path):
    schema = {"text": {"dim": DIM, "metric": "cosine"}}
    with strata.Collection.create(tmp_path / "f", vectors=schema) as c:
        c.upsert([1, 2], {"text": vectors(2) + 1}, expires_at=[time.time() - 1, time.time() + 3600])
        assert list(c.get([1, 2]).ids) == [2]


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"ttl": -1}, ValueError, "ttl[0]"),
        ({"ttl": float("inf")}, ValueError, "ttl[0]"),
        ({"ttl": float("nan")}, ValueError, "ttl[0]"),
        ({"expires_at": [1.0, float("-inf")]}, ValueError, "expires_at[1]"),
        ({"ttl": [1, 2, 3]}, ValueError, "ttl"),
        ({"ttl": 1, "expires_at": 1}, ValueError, "not both"),
        ({"ttl": []}, ValueError, "ttl"),
        ({"ttl": "10"}, TypeError, "ttl"),
        ({"ttl": [1, "x"]}, TypeError, "ttl[1]"),
        ({"ttl": True}, TypeError, "ttl"),
    ],
)
def test_bad_expiry_raises_and_writes_nothing(col, kwargs, error, words):
    with pytest.raises(error) as info:
        col.upsert([1, 2], vectors(2), **kwargs)
    assert words in str(info.value)
    assert len(col) == 0


def test_async_collection_takes_ttl(tmp_path):
    async def main() -> None:
        async with await strata.AsyncCollection.create(tmp_path / "a", dim=DIM) as col:
            await col.upsert([1, 2], vectors(2), expires_at=[time.time() - 1, None])
            assert await col.count() == 1
            got = await col.get([1, 2], include_expiry=True)
            assert list(got.ids) == [2]
            assert math.isnan(got.expires_at[0])

    asyncio.run(main())


def test_expiry_survives_reopen(tmp_path):
    path = tmp_path / "p"
    with strata.Collection.create(path, dim=DIM) as c:
        c.upsert([1, 2], vectors(2), expires_at=[time.time() - 1, time.time() + 3600])
    with strata.Collection.open(path) as c:
        got = c.get([1, 2], include_expiry=True)
        assert list(got.ids) == [2]
        assert got.expires_at[0] > time.time()
