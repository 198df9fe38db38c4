"""Full-text (BM25) and hybrid queries of strata.Collection."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import strata

DATA = Path(os.environ.get("STRATA_SHARED_DATA", Path(__file__).parents[1] / "../shared/data"))
DOCS = DATA / "pypi-demo" / "docs.jsonl"
K1, B = 1.2, 0.75
QUERIES = [
    "vector database in go",
    "python",
    "http client",
    "machine learning library",
    "async web framework for APIs",
    "command-line tool",
    "django",
    "pdf parsing and extraction",
]


def lucene_scores(corpus: list[list[str]], query: list[str]) -> np.ndarray:
    """rank_bm25's Okapi BM25 with Lucene's idf and without the (k1 + 1) factor:
    the formula strata documents, computed by an independent implementation."""
    rank_bm25 = pytest.importorskip("rank_bm25")

    class Lucene(rank_bm25.BM25Okapi):
        def _calc_idf(self, nd: dict[str, int]) -> None:
            n = self.corpus_size
            self.idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in nd.items()}

    model = Lucene(corpus, k1=K1, b=B)
    return np.asarray(model.get_scores(query)) / (K1 + 1)


@pytest.fixture(scope="module")
def pypi(tmp_path_factory):
    if not DOCS.exists():
        pytest.skip(f"shared data absent: {DOCS}")
    docs = [json.loads(line) for line in DOCS.read_text().splitlines()]
    path = tmp_path_factory.mktemp("pypi") / "col"
    col = strata.Collection.create(path, dim=4, metric="l2", text_fields=["summary"], fsync="never")
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(docs), 4)).astype(np.float32)
    for start in range(0, len(docs), 10000):
        part = docs[start : start + 10000]
        col.upsert([d["id"] for d in part], vectors[start : start + 10000],
                   [{"summary": d["summary"], "year": d["year"]} for d in part])  # fmt: skip
    yield col, docs, vectors
    col.close()


def test_scores_match_reference_bm25_on_pypi_summaries(pypi):
    col, docs, _ = pypi
    tokens = [strata.analyze(d["summary"] or "") for d in docs]
    # N and avgdl count documents with at least one term (Lucene's docCount).
    kept = [i for i, t in enumerate(tokens) if t]
    corpus = [tokens[i] for i in kept]
    ids = np.array([docs[i]["id"] for i in kept])
    for q in QUERIES:
        ref = lucene_scores(corpus, strata.analyze(q))
        order = np.lexsort((ids, -ref))[:10]
        res = col.query(text=q, k=10)
        assert res.sources[0] == ["text"] * 10, q
        got = dict(zip(res.ids[0].tolist(), res.scores[0].tolist(), strict=True))
        # Same scores within 1e-4, and the same top 10 up to ties at the 10th score.
        for i in order:
            if ids[i] in got:
                assert got[ids[i]] == pytest.approx(ref[i], abs=1e-4), (q, ids[i])
        np.testing.assert_allclose(res.scores[0], ref[order], atol=1e-4, err_msg=q)
        tenth = ref[order[-1]]
        must = {int(ids[i]) for i in order if ref[i] > tenth + 1e-4}
        assert must <= set(got), q


def test_scores_match_bm25s_lucene_method(pypi):
    bm25s = pytest.importorskip("bm25s")
    col, docs, _ = pypi
    tokens = [strata.analyze(d["summary"] or "") for d in docs]
    kept = [i for i, t in enumerate(tokens) if t]
    ids = np.array([docs[i]["id"] for i in kept])
    model = bm25s.BM25(k1=K1, b=B, method="lucene")
    model.index([tokens[i] for i in kept], show_progress=False)
    for q in QUERIES:
        ref = model.get_scores(strata.analyze(q))
        order = np.lexsort((ids, -ref))[:10]
        res = col.query(text=q, k=10)
        np.testing.assert_allclose(res.scores[0], ref[order], atol=1e-4, err_msg=q)


def test_filter_applies_to_text_and_hybrid(pypi):
    col, _docs, vectors = pypi
    where = {"year": {"$gte": 2024}}
    res = col.query(text="database", k=20, where=where)
    assert all(m["year"] >= 2024 for m in res.metadata[0] if m is not None)
    assert (res.ids[0] >= 0).sum() == 20
    hyb = col.query(vectors[5], text="database", k=20, where=where)
    assert all(m["year"] >= 2024 for m in hyb.metadata[0])
    assert set(hyb.sources[0]) <= {"vector", "text", "both"}


def test_hybrid_rrf_and_weighted_fusion(pypi):
    col, _docs, vectors = pypi
    q = vectors[123]
    vec = col.query(q, k=50)
    txt = col.query(text="rest api client", k=50)
    for fusion in ("rrf", {"alpha": 0.5}, {"alpha": 1.0}, {"alpha": 0.0}):
        res = col.query(vector=q, text="rest api client", k=10, fusion=fusion)
        for hid, src, dist in zip(res.ids[0], res.sources[0], res.distances[0], strict=True):
            in_vec, in_txt = hid in vec.ids[0], hid in txt.ids[0]
            names = {(True, True): "both", (True, False): "vector", (False, True): "text"}
            assert src == names[in_vec, in_txt]
            assert math.isnan(dist) == (not in_vec)
        assert np.all(np.diff(res.scores[0]) <= 0)
    # alpha = 1 ranks by the vector side alone; 0 by the text side alone.
    only_vec = col.query(vector=q, text="rest api client", k=10, fusion={"alpha": 1.0})
    assert only_vec.ids[0][0] == vec.ids[0][0]
    only_txt = col.query(vector=q, text="rest api client", k=10, fusion={"alpha": 0.0})
    assert only_txt.ids[0][0] == txt.ids[0][0]
    # RRF: the fused score is the sum of 1/(60 + rank) over the sides.
    rrf = col.query(vector=q, text="rest api client", k=10)
    top = rrf.ids[0][0]
    expect = sum(1 / (60 + list(r.ids[0]).index(top) + 1) for r in (vec, txt) if top in r.ids[0])
    assert rrf.scores[0][0] == pytest.approx(expect, rel=1e-6)


def test_text_without_indexed_terms_finds_nothing_and_hybrid_falls_back(tmp_path):
    col = strata.Collection.create(tmp_path / "c", dim=2, metric="l2", text_fields=["t"])
    col.upsert([1, 2, 3], [[0, 0], [1, 0], [5, 5]], [{"t": "fast vector search"}, {"t": None}, {}])
    res = col.query(text="the of and !!!", k=3)
    assert res.ids.tolist() == [[-1, -1, -1]] and res.sources == [[None, None, None]]
    hyb = col.query([0.9, 0], text="the", k=2)
    assert hyb.ids.tolist() == [[2, 1]] and hyb.sources == [["vector", "vector"]]
    assert hyb.distances[0].tolist() == pytest.approx([0.01, 0.81])
    col.close()


def test_text_index_survives_reopen_and_create_text_index_is_durable(tmp_path):
    path = tmp_path / "c"
    col = strata.Collection.create(path, dim=2, metric="l2")
    col.upsert(
        [1, 2], [[0, 0], [1, 1]], [{"a": {"b": "Über schnelle Suche"}}, {"a": {"b": "slow"}}]
    )
    col.create_text_index("a.b", analyzer="simple")
    col.upsert([3], [[2, 2]], [{"a": {"b": "ÜBER"}}])
    col.close()
    col = strata.Collection.open(path)
    assert col.info()["text_fields"] == [
        {"field": "a.b", "analyzer": "simple", "docs": 3, "terms": 4}
    ]
    assert sorted(col.query(text="über", k=5).ids[0][:2].tolist()) == [1, 3]
    col.delete([3])
    col.update_metadata([1], [{"a": {"b": "slow"}}])
    assert col.query(text="über", k=5).ids[0][0] == -1
    assert col.query(text="slow", k=5).ids[0][:2].tolist() == [1, 2]
    col.close()


def test_invalid_text_arguments_raise_value_error(tmp_path):
    col = strata.Collection.create(tmp_path / "c", dim=2, metric="l2")
    col.upsert([1], [[0, 0]], [{"t": 5}])
    with pytest.raises(ValueError, match="no text index"):
        col.query(text="x")
    with pytest.raises(ValueError, match="not a string"):
        col.create_text_index("t")
    col.create_text_index("s")
    with pytest.raises(ValueError, match="already has a text index"):
        col.create_text_index("s")
    with pytest.raises(ValueError, match="not a string"):
        col.upsert([2], [[1, 1]], [{"s": ["a", "list"]}])
    with pytest.raises(ValueError, match="not a string"):
        col.update_metadata([1], [{"s": 1.5}])
    assert len(col) == 1
    with pytest.raises(ValueError, match="fusion"):
        col.query([0, 0], text="x", fusion="max")
    with pytest.raises(ValueError, match="fusion alpha"):
        col.query([0, 0], text="x", fusion={"alpha": 2})
    with pytest.raises(ValueError, match="one query vector"):
        col.query([[0, 0], [1, 1]], text="x")
    with pytest.raises(ValueError, match="limit"):
        col.query(text="x" * (64 * 1024 + 1))
    with pytest.raises(ValueError, match="k1"):
        col.query(text="x", k1=-1)
    with pytest.raises(ValueError, match="no text index"):
        col.query(text="x", text_field="nope")
    with pytest.raises(TypeError):
        col.query(text=b"bytes")
    with pytest.raises(ValueError, match="analyzer"):
        strata.analyze("x", analyzer="klingon")
    col.close()


def test_analyze_segments_unicode():
    assert strata.analyze("Naïve CAFÉS in 北京, x86_64!", "simple") == [
        "naïve", "cafés", "in", "北", "京", "x86", "64",
    ]  # fmt: skip
    assert strata.analyze("The running databases") == ["run", "databas"]
