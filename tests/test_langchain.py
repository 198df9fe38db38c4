"""strata.integrations.langchain.StrataVectorStore against LangChain's own standard tests
(langchain-tests' VectorStoreIntegrationTests, sync and async, as langchain-chroma runs
them), then what the standard suite does not cover: reopening, filters, relevance scores,
MMR, hybrid retrieval, the retriever and bad input."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import ClassVar

import numpy as np
import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_tests")

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_tests.integration_tests.vectorstores import (
    VectorStoreIntegrationTests,
)

import strata
from strata.integrations.langchain import StrataVectorStore, translate_filter


class TestStrataVectorStoreStandard(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, tmp_path):
        """An empty store at a fresh path (the collection is made at the first add)."""
        store = StrataVectorStore(embedding=self.get_embeddings(), path=tmp_path / "lc")
        try:
            yield store
        finally:
            store.close()


class TestStrataVectorStoreOnACollection(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, tmp_path):
        """An empty store over a strata.Collection opened by the caller (collection=)."""
        col = strata.Collection.create(tmp_path / "c", dim=6, metric="l2")
        try:
            yield StrataVectorStore(embedding=self.get_embeddings(), collection=col)
        finally:
            col.close()


class AxisEmbeddings(Embeddings):
    """Texts are words naming unit vectors ("x", "y", "z", "w"; "x y" is their sum,
    normalised): distances are known in advance."""

    AXES: ClassVar[dict[str, int]] = {"x": 0, "y": 1, "z": 2, "w": 3}

    def _one(self, text: str) -> list[float]:
        v = np.zeros(4)
        for word in text.split():
            if word in self.AXES:
                v[self.AXES[word]] += 1.0
        n = np.linalg.norm(v)
        return list(v / n) if n else [0.25] * 4

    def embed_documents(self, texts):
        return [self._one(t) for t in texts]

    def embed_query(self, text):
        return self._one(text)


@pytest.fixture
def store(tmp_path):
    s = StrataVectorStore(embedding=AxisEmbeddings(), path=tmp_path / "axes")
    s.add_texts(
        ["x", "x x", "x y", "y", "z"],
        [{"n": 0, "tag": "a"}, {"n": 1, "tag": "a"}, {"n": 2, "tag": "b"}, {"n": 3},
         {"n": 4, "tag": "c", "year": 2024}],
        ids=["x1", "x2", "xy", "y", "z"],
    )  # fmt: skip
    yield s
    s.close()


def test_the_collection_is_created_at_the_first_add_and_reopened(tmp_path):
    path = tmp_path / "lc"
    store = StrataVectorStore(embedding=AxisEmbeddings(), path=path)
    assert store.collection is None and not strata.Collection.exists(path)
    assert store.similarity_search("x") == []
    ids = store.add_texts(["x", "y"], [{"n": 1}, {"n": 2}])
    assert len(ids) == 2 and all(len(i) == 36 for i in ids)  # uuid4 strings
    info = store.collection.info()
    assert info["dim"] == 4 and info["metric"] == "cosine"
    store.close()
    with StrataVectorStore(embedding=AxisEmbeddings(), path=path) as again:
        docs = again.similarity_search("y", k=1)
        assert docs == [Document(page_content="y", metadata={"n": 2}, id=ids[1])]


def test_from_texts_and_afrom_texts(tmp_path):
    store = StrataVectorStore.from_texts(
        ["x", "y"], AxisEmbeddings(), [{"n": 1}, {"n": 2}], ids=["a", "b"], path=tmp_path / "s"
    )
    assert [d.id for d in store.similarity_search("x", k=2)] == ["a", "b"]
    store.close()

    async def main():
        s = await StrataVectorStore.afrom_texts(["z"], AxisEmbeddings(), path=tmp_path / "a")
        try:
            return await s.asimilarity_search("z", k=3)
        finally:
            s.close()

    assert [d.page_content for d in asyncio.run(main())] == ["z"]


def test_filters_take_mongo_and_the_plain_dicts_of_langchain(store):
    def ids(**kwargs):
        return sorted(d.id for d in store.similarity_search("x", k=5, **kwargs))

    assert ids(filter={"tag": "a"}) == ["x1", "x2"]
    assert ids(filter={"n": {"$gte": 3}}) == ["y", "z"]
    assert ids(filter={"tag": ["b", "c"]}) == ["xy", "z"]  # a list: one of its values
    assert ids(filter={"n": {"$between": [1, 2]}}) == ["x2", "xy"]
    assert ids(filter={"$or": [{"tag": "c"}, {"n": {"$in": [0]}}]}) == ["x1", "z"]
    assert ids(filter={"tag": {"$exists": False}}) == ["y"]
    assert translate_filter({"$and": [{"a": [1]}, {"b": 2}]}) == {
        "$and": [{"a": {"$in": [1]}}, {"b": 2}]
    }
    with pytest.raises(TypeError, match="callable"):
        store.similarity_search("x", filter=lambda doc: True)
    with pytest.raises(ValueError, match="between"):
        store.similarity_search("x", filter={"n": {"$between": [1]}})
    with pytest.raises(ValueError):
        store.similarity_search("x", filter={"n": {"$gtx": "x"}})  # the engine's message


def test_scores_are_distances_and_relevance_follows_the_metric(store, tmp_path):
    pairs = store.similarity_search_with_score("x", k=3)
    assert [d.id for d, _ in pairs][:2] in (["x1", "x2"], ["x2", "x1"])
    assert pairs[0][1] == pytest.approx(0.0, abs=1e-6)
    assert pairs[2][1] == pytest.approx(1 - 1 / math.sqrt(2), abs=1e-6)  # cosine distance
    rel = store.similarity_search_with_relevance_scores("x", k=5)
    assert rel[0][1] == pytest.approx(1.0, abs=1e-6)
    assert {d.id: s for d, s in rel}["y"] == pytest.approx(0.0, abs=1e-6)
    assert [d.id for d, _ in store.similarity_search_with_relevance_scores(
        "x", k=5, score_threshold=0.5)] in (["x1", "x2", "xy"], ["x2", "x1", "xy"])  # fmt: skip
    col = strata.Collection.create(tmp_path / "l2", dim=4, metric="l2")
    l2 = StrataVectorStore(embedding=AxisEmbeddings(), collection=col)
    l2.add_texts(["x", "y"], ids=["x", "y"])
    scores = dict((d.id, s) for d, s in l2.similarity_search_with_relevance_scores("x", k=2))
    assert scores["x"] == pytest.approx(1.0) and scores["y"] == pytest.approx(0.0, abs=1e-6)
    col.close()


def test_mmr_skips_the_near_duplicate_that_similarity_returns(store):
    plain = [d.id for d in store.similarity_search("x", k=2)]
    assert sorted(plain) == ["x1", "x2"]  # "x" and "x x" embed to the same vector
    # lambda_mult 0.5 ties the copy (0.5 - 0.5) with everything else here (xy: 0.5 * 0.71
    # - 0.5 * 0.71; y: 0 - 0), and a tie goes to the nearer; 0.3 prefers the others.
    mmr = [d.id for d in store.max_marginal_relevance_search("x", k=2, fetch_k=5,
                                                             lambda_mult=0.3)]
    assert mmr[0] in ("x1", "x2") and mmr[1] not in ("x1", "x2")
    by_vector = store.max_marginal_relevance_search_by_vector(
        [1, 0, 0, 0], k=2, fetch_k=5, lambda_mult=0.3
    )
    assert [d.id for d in by_vector] == mmr
    assert [d.id for d in store.max_marginal_relevance_search("x", k=3, filter={"tag": "a"})] \
        in (["x1", "x2"], ["x2", "x1"])  # fmt: skip
    # k above fetch_k: LangChain's own MMR answers; so does the engine's (fetch_k widened).
    assert len(store.max_marginal_relevance_search("x", k=5, fetch_k=2)) == 5

    async def amain():
        return await store.amax_marginal_relevance_search("x", k=2, fetch_k=5, lambda_mult=0.3)

    assert [d.id for d in asyncio.run(amain())] == mmr


def test_hybrid_and_text_retrieval_use_the_bm25_index(store):
    text = store.similarity_search("z", k=5, retrieval_mode="text")
    assert [d.id for d in text] == ["z"]
    hybrid = store.similarity_search_with_score("y", k=5, retrieval_mode="hybrid")
    assert hybrid[0][0].id == "y" and len(hybrid) == 5
    assert all(s > 0 for _, s in hybrid)
    weighted = store.similarity_search("x", k=2, retrieval_mode="hybrid", fusion={"alpha": 0.5})
    assert {d.id for d in weighted} <= {"x1", "x2", "xy"}
    with pytest.raises(ValueError, match="retrieval_mode"):
        store.similarity_search("x", retrieval_mode="sparse")
    with pytest.raises(ValueError, match="dense"):
        store.similarity_search_with_relevance_scores("x", retrieval_mode="hybrid")
    with pytest.raises(ValueError, match="query text"):
        store.similarity_search_by_vector([1, 0, 0, 0], retrieval_mode="text")


def test_a_hybrid_store_searches_hybrid_by_default_and_dense_when_asked(tmp_path):
    s = StrataVectorStore(embedding=AxisEmbeddings(), path=tmp_path / "h",
                          retrieval_mode="hybrid", fusion={"alpha": 0.5})  # fmt: skip
    s.add_texts(["x", "y", "z"], ids=["x", "y", "z"])
    pairs = s.similarity_search_with_score("y", k=3)
    assert pairs[0][0].id == "y" and pairs[0][1] == pytest.approx(1.0)  # fused, in [0, 1]
    with pytest.raises(ValueError, match="dense"):
        s.similarity_search_with_relevance_scores("y", k=1)
    rel = s.similarity_search_with_relevance_scores("y", k=1, retrieval_mode="dense")
    assert rel[0][0].id == "y" and rel[0][1] == pytest.approx(1.0)
    s.close()
    with pytest.raises(ValueError, match="metric must be one of"):
        StrataVectorStore(embedding=AxisEmbeddings(), path=tmp_path / "m", metric="dot")


def test_as_retriever_runs_similarity_threshold_and_mmr(store):
    assert [d.id for d in store.as_retriever(search_kwargs={"k": 1}).invoke("z")] == ["z"]
    hybrid = store.as_retriever(search_kwargs={"k": 1, "retrieval_mode": "hybrid"})
    assert [d.id for d in hybrid.invoke("y")] == ["y"]
    mmr = store.as_retriever(
        search_type="mmr", search_kwargs={"k": 2, "fetch_k": 5, "lambda_mult": 0.3}
    )
    got = [d.id for d in mmr.invoke("x")]
    assert got[0] in ("x1", "x2") and got[1] not in ("x1", "x2")
    threshold = store.as_retriever(
        search_type="similarity_score_threshold",
        search_kwargs={"k": 5, "score_threshold": 0.9, "filter": {"tag": "a"}},
    )
    assert sorted(d.id for d in threshold.invoke("x")) == ["x1", "x2"]
    assert [d.id for d in asyncio.run(store.as_retriever(search_kwargs={"k": 1}).ainvoke("y"))] \
        == ["y"]  # fmt: skip


def test_delete_by_filter_and_delete_all(store):
    store.delete(filter={"tag": "a"})
    assert sorted(d.id for d in store.similarity_search("x", k=5)) == ["xy", "y", "z"]
    asyncio.run(store.adelete(filter={"n": 4}))
    assert sorted(d.id for d in store.similarity_search("x", k=5)) == ["xy", "y"]
    store.delete()
    assert store.similarity_search("x", k=5) == []
    with pytest.raises(ValueError, match="not both"):
        store.delete(["y"], filter={"n": 1})


def test_bad_input_raises_clear_errors_and_changes_nothing(store):
    before = store.collection.count()
    with pytest.raises(ValueError, match="holds the text"):
        store.add_texts(["x"], [{"page_content": "clash"}])
    with pytest.raises(ValueError, match="2 metadatas for 1 texts"):
        store.add_texts(["x"], [{}, {}])
    with pytest.raises(ValueError, match="2 ids for 1 texts"):
        store.add_texts(["x"], ids=["a", "b"])
    with pytest.raises(TypeError, match=r"ids\[0\] must be a str"):
        store.add_texts(["x"], ids=[7])
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        store.add_texts(["x", 3])
    with pytest.raises(TypeError, match="unexpected keyword"):
        store.similarity_search("x", k=2, flter={"n": 1})
    with pytest.raises(ValueError, match="dim"):
        store.similarity_search_by_vector([1.0, 0.0], k=1)
    with pytest.raises(ValueError):
        store.add_texts(["x"], [{"bad.key": 1}])  # the engine's document rule
    assert store.collection.count() == before
    with pytest.raises(ValueError, match="exactly one of"):
        StrataVectorStore(embedding=AxisEmbeddings())
    with pytest.raises(TypeError, match=r"strata\.Collection"):
        StrataVectorStore(embedding=AxisEmbeddings(), collection="not a collection")


def test_async_methods_run_on_strata_threads_and_agree_with_sync(tmp_path, monkeypatch):
    """The async methods are AsyncCollection calls (strata's pool), not LangChain's default
    of the sync method in the loop's executor; many concurrent ones answer as sync does."""
    emb = DeterministicFakeEmbedding(size=16)
    texts = [f"text {i}" for i in range(200)]
    store = StrataVectorStore(embedding=emb, path=tmp_path / "a")
    threads: list[str] = []

    def spy(fn):  # records the thread of each engine query
        def call(*args, **kwargs):
            threads.append(threading.current_thread().name)
            return fn(*args, **kwargs)

        return call

    async def main():
        ids = await store.aadd_texts(texts, [{"i": i} for i in range(200)])
        for name in ("query", "query_mmr"):
            monkeypatch.setattr(strata.Collection, name, spy(getattr(strata.Collection, name)))
        answers = await asyncio.gather(*(store.asimilarity_search(q, k=3) for q in texts[:50]))
        mmr = await store.amax_marginal_relevance_search(texts[0], k=3)
        got = await store.aget_by_ids(ids[:3])
        return answers, mmr, got

    answers, mmr, got = asyncio.run(main())
    assert len(threads) == 51 and all(t.startswith("strata-async") for t in threads), threads
    monkeypatch.undo()
    assert [d.metadata["i"] for d in got] == [0, 1, 2]
    assert mmr == store.max_marginal_relevance_search(texts[0], k=3)
    for q, answer in zip(texts[:50], answers, strict=True):
        assert answer == store.similarity_search(q, k=3)
        assert answer[0].page_content == q
    store.close()
