"""Sparse vector fields and fused search through strata.Collection (the C ABI door).

The engine's own tests (go/collection) prove the scoring; these prove the door: the
spellings of sparse values, a point lacking the field, the answers as the engine gives
them, and errors that name the problem."""

from __future__ import annotations

import numpy as np
import pytest

import strata

POINTS = {
    1: ([3, 9], [1.0, 2.0]),
    2: None,
    "doc": ([9], [5.0]),
    4: ([1, 3], [0.5, 4.0]),
}


def brute(query: tuple[list[int], list[float]], points=POINTS) -> list[tuple[object, float]]:
    """Every point sharing an index with the query, by dot product, best first."""
    q = dict(zip(*query, strict=True))
    out = []
    for pid, value in points.items():
        if value is None:
            continue
        hit = [q[i] * v for i, v in zip(*value, strict=True) if i in q]
        if hit:
            out.append((pid, sum(hit)))
    return sorted(out, key=lambda p: -p[1])


@pytest.fixture
def col(tmp_path):
    with strata.Collection.create(
        tmp_path / "c", vectors={"text": {"dim": 2, "metric": "ip"}}, sparse_vectors=["kw"],
        fsync="never",
    ) as c:  # fmt: skip
        ids = list(POINTS)
        dense = np.array([[1, 0], [0, 1], [0.7, 0.7], [0.2, 0.9]], dtype=np.float32)
        c.upsert(ids, {"text": dense}, metadata=[{"i": i} for i in range(4)],
                 sparse_vectors={"kw": list(POINTS.values())})  # fmt: skip
        yield c


def test_a_sparse_query_finds_the_exact_dot_products_best_first(col):
    query = ([9, 3], [1.0, 1.0])
    got = col.query(sparse=query, using="kw", k=5)
    want = brute(query)
    assert list(got.ids[0][: len(want)]) == [pid for pid, _ in want]
    np.testing.assert_allclose(got.scores[0][: len(want)], [s for _, s in want], rtol=1e-6)
    assert got.ids[0][len(want)] is None and np.isnan(got.scores[0][len(want)])
    assert got.metadata[0][0] == {"i": 2}


def test_a_sparse_query_takes_the_filter_and_numpy_pairs(col):
    got = col.query(sparse=(np.array([3], np.uint32), np.array([1.0])), using="kw", k=3,
                    where={"i": {"$gte": 3}})  # fmt: skip
    assert got.ids[0][0] == 4 and got.scores[0][0] == pytest.approx(4.0)


def test_get_returns_sparse_vectors_sorted_by_index_and_masks_the_points_without(col):
    got = col.get([1, 2, "doc", 4], vectors=["kw", "text"])
    kw = got.sparse_vectors["kw"]
    assert list(kw.mask) == [True, False, True, True]
    assert kw.value(1) is None
    idx, val = kw.value(3)
    assert list(idx) == [1, 3] and list(val) == [0.5, 4.0]
    assert got.named_vectors["text"].vectors.shape == (4, 2)


def test_sparse_fields_survive_a_reopen_and_are_in_the_schema(tmp_path):
    path = tmp_path / "c"
    with strata.Collection.create(path, dim=2, sparse_vectors={"kw": {"modifier": "idf"}}) as c:
        c.upsert([1, 2], np.eye(2), sparse_vectors={"kw": [([1], [1.0]), ([1, 2], [1.0, 1.0])]})
        assert c.sparse_schema == {"kw": {"modifier": "idf"}}
    with strata.Collection.open(path) as c:
        assert c.sparse_schema == {"kw": {"modifier": "idf"}}
        # idf: index 2 is rarer than index 1, so point 2 ranks first.
        assert list(c.query(sparse=([1, 2], [1.0, 1.0]), using="kw", k=2).ids[0]) == [2, 1]
        assert len(c.query(np.ones(2), k=2).ids[0]) == 2  # the unnamed field still there


def test_update_delete_add_and_remove_sparse_fields(col):
    assert col.update_vectors([2], sparse_vectors={"kw": [([5], [1.0])]}) == 1
    assert list(col.query(sparse=([5], [1.0]), using="kw", k=1).ids[0]) == [2]
    assert col.delete_vectors([2], ["kw"]) == 1
    assert col.query(sparse=([5], [1.0]), using="kw", k=1).ids[0][0] == -1
    col.add_sparse_field("tags", modifier="idf")
    assert set(col.sparse_schema) == {"kw", "tags"}
    col.upsert([7], {"text": np.ones((1, 2)), "tags": [([1], [1.0])]})  # vectors= names it too
    assert col.get([7], vectors=["tags"]).sparse_vectors["tags"].value(0)[0].tolist() == [1]
    col.remove_vector_field("tags")
    assert set(col.sparse_schema) == {"kw"}
    with pytest.raises(FileExistsError):
        col.add_sparse_field("text")


def test_search_fuses_the_engines_way_and_none_returns_one_list(col):
    subs = [{"using": "text", "vector": [0.0, 1.0]}, {"using": "kw", "sparse": ([9, 3], [1, 1])}]
    rrf = col.search(subs, k=4, fusion="rrf")
    # rrf (k = 2): a point's score is the sum of 1 / (2 + rank) over the lists holding it.
    dense = [pid for pid in col.search(subs[:1], k=4, fusion=None).ids[0]]
    sparse = [pid for pid, _ in brute(([9, 3], [1, 1]))]
    want: dict[object, float] = {}
    for ranking in (dense, sparse):
        for rank, pid in enumerate(ranking):
            want[pid] = want.get(pid, 0.0) + 1 / (2 + rank)
    order = sorted(want, key=lambda p: -want[p])
    assert list(rrf.ids[0]) == order
    np.testing.assert_allclose(rrf.scores[0], [want[p] for p in order])
    dbsf = col.search(subs, k=2, fusion="dbsf", where={"i": {"$lt": 3}})
    assert set(dbsf.ids[0]) <= {1, 2, "doc"} and dbsf.scores[0][0] >= dbsf.scores[0][1]


def test_hybrid_text_and_a_named_field_and_mmr_on_a_named_field(tmp_path):
    with strata.Collection.create(tmp_path / "c", vectors={"t": {"dim": 2, "metric": "l2"}},
                                  text_fields=["body"]) as c:  # fmt: skip
        c.upsert([1, 2, 3], {"t": np.array([[0, 0], [1, 0], [5, 5]], np.float32)},
                 metadata=[{"body": "red apple"}, {"body": "green apple"}, {"body": "blue sea"}])
        got = c.query([0.0, 0.0], text="sea", using="t", k=3)
        assert set(got.ids[0]) == {1, 2, 3} and got.scores is not None
        mmr = c.query_mmr([0.0, 0.0], k=2, using="t")
        assert mmr.ids[0][0] == 1


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"sparse": ([1], [1.0])}, ValueError, "needs using="),
    ({"sparse": ([1], [1.0]), "using": "nope"}, ValueError, "no vector field \"nope\""),
    ({"sparse": ([1], [1.0]), "using": "text"}, ValueError, "not sparse"),
    ({"sparse": ([1, 2], [1.0]), "using": "kw"}, ValueError, "one length"),
    ({"sparse": ([-1], [1.0]), "using": "kw"}, ValueError, r"\[0, 2\^32\)"),
    ({"sparse": "x", "using": "kw"}, TypeError, "pair"),
    ({"queries": [1.0, 0.0], "using": "kw"}, ValueError, "is sparse"),
])  # fmt: skip
def test_sparse_query_errors_name_the_problem(col, kwargs, error, match):
    with pytest.raises(error, match=match):
        col.query(k=2, **kwargs)


@pytest.mark.parametrize(("value", "error", "match"), [
    ([([1], [1.0])], ValueError, "'kw': 1 values for 4 ids"),
    ([([1, 1], [1.0, 2.0])] * 4, ValueError, "kw"),
    ([([1], [float("nan")])] * 4, ValueError, "kw"),
    (np.ones((4, 2)), TypeError, "pairs"),
])  # fmt: skip
def test_bad_sparse_values_name_the_field(col, value, error, match):
    with pytest.raises(error, match=match):
        col.upsert([1, 2, 3, 4], sparse_vectors={"kw": value})


@pytest.mark.parametrize(("subs", "fusion", "match"), [
    ([], "rrf", "at least one"),
    ([{"using": "text"}], "rrf", "exactly one of"),
    ([{"using": "text", "vector": [0, 1], "bogus": 1}], "rrf", "unknown keys"),
    ([{"using": "text", "vector": [0, 1]}] * 2, None, "one sub-query"),
    ([{"using": "text", "vector": [0, 1]}], "mean", "'rrf', 'dbsf' or None"),
    ([{"text": "apple"}], "rrf", "no text index"),
])  # fmt: skip
def test_search_errors_name_the_problem(col, subs, fusion, match):
    with pytest.raises(ValueError, match=match):
        col.search(subs, k=2, fusion=fusion)
