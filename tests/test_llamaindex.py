"""strata.integrations.llamaindex.StrataVectorStore against LlamaIndex's own expectations.

The first part is llama-index-core's SimpleVectorStore test suite
(tests/vector_stores/test_simple.py in run-llama/llama_index), ported to the strata store:
the same nodes, queries and expected answers, each run on a store made with path= and on
one made with collection=. Then every FilterOperator and FilterCondition is checked against
SimpleVectorStore itself (which filters in Python) on richer nodes, nested filters, the
query modes, the async methods, and VectorStoreIndex.from_documents with a retriever.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import MockEmbedding, StorageContext, VectorStoreIndex
from llama_index.core.schema import (
    Document,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    ExactMatchFilter,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

import strata
from strata.integrations.llamaindex import StrataVectorStore, to_where

_NODE_ID_WEIGHT_1_RANK_A = "AF3BE6C4-5F43-4D74-B075-6B0E07900DE8"
_NODE_ID_WEIGHT_2_RANK_C = "7D9CD555-846C-445C-A9DD-F8924A01411D"
_NODE_ID_WEIGHT_3_RANK_C = "452D24AB-F185-414C-A352-590B4B9EE51B"


def _node_embeddings_for_test() -> list[TextNode]:
    return [
        TextNode(
            text="lorem ipsum",
            id_=_NODE_ID_WEIGHT_1_RANK_A,
            embedding=[1.0, 0.0],
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="test-0")},
            metadata={
                "weight": 1.0,
                "rank": "a",
                "quality": ["medium", "high"],
                "identifier": "6FTR78Yun",
            },
        ),
        TextNode(
            text="lorem ipsum",
            id_=_NODE_ID_WEIGHT_2_RANK_C,
            embedding=[0.0, 1.0],
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="test-1")},
            metadata={"weight": 2.0, "rank": "c", "quality": ["medium"], "identifier": "6FTR78Ygl"},
        ),
        TextNode(
            text="lorem ipsum",
            id_=_NODE_ID_WEIGHT_3_RANK_C,
            embedding=[1.0, 1.0],
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="test-2")},
            metadata={
                "weight": 3.0,
                "rank": "c",
                "quality": ["low", "medium", "high"],
                "identifier": "6FTR78Ztl",
            },
        ),
    ]


@pytest.fixture(params=["path", "collection"])
def make_store(request, tmp_path):
    """Makes an empty store: on a path (created at the first add) or on an open collection."""
    made: list[StrataVectorStore] = []
    cols: list[strata.Collection] = []

    def make(dim: int = 2) -> StrataVectorStore:
        where = tmp_path / f"store{len(made)}"
        if request.param == "path":
            store = StrataVectorStore(path=where)
        else:
            col = strata.Collection.create(where, dim, text_fields=["_text"])
            cols.append(col)
            store = StrataVectorStore(collection=col)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()
    for col in cols:
        col.close()


@pytest.fixture
def store(make_store):
    s = make_store()
    s.add(_node_embeddings_for_test())
    return s


def _query(store, filters=None, k=3, **kw):
    q = VectorStoreQuery(query_embedding=[1.0, 1.0], filters=filters, similarity_top_k=k, **kw)
    result = store.query(q)
    assert result.ids is not None
    return result


def _one(key, op, value):
    return MetadataFilters(filters=[MetadataFilter(key=key, operator=op, value=value)])


# --- llama-index-core's tests/vector_stores/test_simple.py, ported -----------------------


def test_query_without_filters_returns_all_rows_sorted_by_similarity(store):
    result = _query(store)
    assert sorted(result.ids) == sorted(
        [_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_2_RANK_C, _NODE_ID_WEIGHT_3_RANK_C]
    )
    assert result.ids[0] == _NODE_ID_WEIGHT_3_RANK_C


def test_query_with_filters_returns_multiple_matches(store):
    filters = MetadataFilters(filters=[ExactMatchFilter(key="rank", value="c")])
    assert _query(store, filters).ids == [_NODE_ID_WEIGHT_3_RANK_C, _NODE_ID_WEIGHT_2_RANK_C]


def test_query_with_filter_applies_top_k(store):
    filters = MetadataFilters(filters=[ExactMatchFilter(key="rank", value="c")])
    assert _query(store, filters, k=1).ids == [_NODE_ID_WEIGHT_3_RANK_C]


def test_query_with_filter_applies_node_id_filter(store):
    filters = MetadataFilters(filters=[ExactMatchFilter(key="rank", value="c")])
    result = _query(store, filters, node_ids=[_NODE_ID_WEIGHT_3_RANK_C])
    assert result.ids == [_NODE_ID_WEIGHT_3_RANK_C]


def test_query_with_exact_filters_returns_single_match(store):
    filters = MetadataFilters(
        filters=[ExactMatchFilter(key="rank", value="c"), ExactMatchFilter(key="weight", value=2.0)]
    )
    assert _query(store, filters, k=1).ids == [_NODE_ID_WEIGHT_2_RANK_C]


def test_query_with_contradictive_filter_returns_no_matches(store):
    filters = MetadataFilters(
        filters=[ExactMatchFilter(key="weight", value=2), ExactMatchFilter(key="weight", value=3)]
    )
    assert _query(store, filters, k=1).ids == []


def test_query_with_filter_on_unknown_field_returns_no_matches(store):
    filters = MetadataFilters(filters=[ExactMatchFilter(key="unknown_field", value="c")])
    assert _query(store, filters, k=1).ids == []


def test_delete_removes_document_from_query_results(store):
    store.delete("test-1")
    assert _query(store, k=2).ids == [_NODE_ID_WEIGHT_3_RANK_C, _NODE_ID_WEIGHT_1_RANK_A]


def test_query_with_filters_with_filter_condition(store):
    either = [ExactMatchFilter(key="rank", value="c"), ExactMatchFilter(key="weight", value=1.0)]
    assert len(_query(store, MetadataFilters(filters=either, condition="or")).ids) == 3
    assert len(_query(store, MetadataFilters(filters=either, condition="and")).ids) == 0


def test_query_with_not_filter_returns_matches(store):
    filters = MetadataFilters(
        filters=[MetadataFilter(key="rank", operator=FilterOperator.EQ, value="a")],
        condition=FilterCondition.NOT,
    )
    assert len(_query(store, filters).ids) == 2


@pytest.mark.parametrize(
    ("key", "op", "value", "want"),
    [
        ("weight", FilterOperator.EQ, 1.0, 1),
        ("weight", FilterOperator.NE, 1.0, 2),
        ("weight", FilterOperator.GT, 1.5, 2),
        ("weight", FilterOperator.GTE, 1.0, 3),
        ("weight", FilterOperator.LT, 1.1, 1),
        ("weight", FilterOperator.LTE, 1.0, 1),
        ("rank", FilterOperator.IN, ["a", "c"], 3),
        ("rank", FilterOperator.NIN, ["c"], 1),
        ("quality", FilterOperator.CONTAINS, "high", 2),
        ("identifier", FilterOperator.TEXT_MATCH, "6FTR78Y", 2),
        ("quality", FilterOperator.ANY, ["high", "low"], 2),
        ("quality", FilterOperator.ALL, ["medium", "high"], 2),
        ("not_existed_key", FilterOperator.IS_EMPTY, None, 3),
    ],
)
def test_query_with_operator_filter_returns_matches(store, key, op, value, want):
    assert len(_query(store, _one(key, op, value)).ids) == want


def test_clear(store):
    store.clear()
    assert _query(store).ids == []


def test_delete_nodes(store):
    store.delete_nodes([_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_2_RANK_C])
    assert _query(store).ids == [_NODE_ID_WEIGHT_3_RANK_C]


# --- every operator and condition, against SimpleVectorStore's own evaluation ----------

_RICH = [
    {"n": 1, "s": "Alpha beta", "tags": ["x", "y"], "f": 0.5},
    {"n": 2, "s": "gamma", "tags": ["y"], "f": 1.5, "e": ""},
    {"n": 3, "s": "ALPHA (gamma)", "tags": [], "e": None},
    {"n": 4, "s": "a.b*c", "tags": ["z", "x"], "f": -1.0, "e": "full"},
    {"n": 5, "s": "delta", "tags": ["x"], "e": []},
    {"n": 6, "tags": ["w"], "e": ["v"]},
]


def _rich_nodes() -> list[TextNode]:
    rng = np.random.default_rng(7)
    return [
        TextNode(
            text=f"node {i}",
            id_=f"rich-{i}",
            embedding=rng.standard_normal(4).tolist(),
            metadata=meta,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=f"doc-{i % 2}")},
        )
        for i, meta in enumerate(_RICH)
    ]


_OPERATOR_CASES = [
    ("n", FilterOperator.EQ, 2),
    ("n", FilterOperator.NE, 2),
    ("n", FilterOperator.GT, 3),
    ("n", FilterOperator.GTE, 3),
    ("n", FilterOperator.LT, 3),
    ("n", FilterOperator.LTE, 3),
    ("f", FilterOperator.GT, 0.0),
    ("f", FilterOperator.NE, 0.5),
    ("n", FilterOperator.IN, [1, 4, 9]),
    ("n", FilterOperator.NIN, [1, 4, 9]),
    ("s", FilterOperator.IN, ["gamma", "delta"]),
    ("s", FilterOperator.NIN, ["gamma"]),
    ("tags", FilterOperator.ANY, ["z", "w"]),
    ("tags", FilterOperator.ALL, ["x", "y"]),
    ("tags", FilterOperator.ALL, ["x"]),
    ("tags", FilterOperator.CONTAINS, "x"),
    ("s", FilterOperator.TEXT_MATCH, "amma"),
    ("s", FilterOperator.TEXT_MATCH, "lpha"),
    ("s", FilterOperator.TEXT_MATCH, "a.b*"),  # regex metacharacters match themselves
    ("s", FilterOperator.TEXT_MATCH, "(gamma)"),
    ("s", FilterOperator.TEXT_MATCH_INSENSITIVE, "alpha"),
    ("e", FilterOperator.IS_EMPTY, None),
    ("f", FilterOperator.IS_EMPTY, None),
]


def _reference_ids(filters: MetadataFilters) -> set[str]:
    """What SimpleVectorStore (LlamaIndex's own evaluator, in Python) answers."""
    ref = SimpleVectorStore()
    ref.add(_rich_nodes())
    q = VectorStoreQuery(query_embedding=[1.0, 0, 0, 0], similarity_top_k=10, filters=filters)
    return set(ref.query(q).ids)


@pytest.mark.parametrize(("key", "op", "value"), _OPERATOR_CASES, ids=lambda v: str(v))
def test_every_operator_selects_what_simple_vector_store_selects(make_store, key, op, value):
    store = make_store(dim=4)
    store.add(_rich_nodes())
    filters = _one(key, op, value)
    want = _reference_ids(filters)
    q = VectorStoreQuery(query_embedding=[1.0, 0, 0, 0], similarity_top_k=10, filters=filters)
    assert set(store.query(q).ids) == want
    assert {n.node_id for n in store.get_nodes(filters=filters)} == want


@pytest.mark.parametrize("condition", ["and", "or", "not"])
def test_every_condition_combines_as_simple_vector_store_does(make_store, condition):
    store = make_store(dim=4)
    store.add(_rich_nodes())
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="tags", operator=FilterOperator.CONTAINS, value="x"),
            MetadataFilter(key="n", operator=FilterOperator.GTE, value=4),
        ],
        condition=condition,
    )
    want = _reference_ids(filters)
    assert {n.node_id for n in store.get_nodes(filters=filters)} == want
    assert want  # the case is not vacuous
    assert (
        set(
            store.query(
                VectorStoreQuery(
                    query_embedding=[1.0, 0, 0, 0], similarity_top_k=10, filters=filters
                )
            ).ids
        )
        == want
    )


def test_nested_filters_compile_to_nested_conditions(make_store):
    # (tags contains x and not (n > 4)) or s text_match "gamma": SimpleVectorStore cannot
    # nest, so the expected set is written out.
    store = make_store(dim=4)
    store.add(_rich_nodes())
    filters = MetadataFilters(
        filters=[
            MetadataFilters(
                filters=[
                    MetadataFilter(key="tags", operator=FilterOperator.CONTAINS, value="x"),
                    MetadataFilters(
                        filters=[MetadataFilter(key="n", operator=FilterOperator.GT, value=4)],
                        condition="not",
                    ),
                ],
                condition="and",
            ),
            MetadataFilter(key="s", operator=FilterOperator.TEXT_MATCH, value="gamma"),
        ],
        condition="or",
    )
    got = {n.node_id for n in store.get_nodes(filters=filters)}
    assert got == {"rich-0", "rich-1", "rich-2", "rich-3"}


def test_filters_compile_to_one_engine_filter():
    # No Python post-filtering: the whole tree is one Mongo-style filter for the engine.
    where = to_where(
        MetadataFilters(
            filters=[
                MetadataFilter(key="a", operator=FilterOperator.TEXT_MATCH, value="x.y"),
                MetadataFilters(filters=[MetadataFilter(key="b", value=1)], condition="not"),
            ],
            condition="or",
        )
    )
    assert where == {"$or": [{"a": {"$regex": r"x\.y"}}, {"$nor": [{"b": {"$eq": 1}}]}]}
    assert to_where(None) is None
    assert to_where(MetadataFilters(filters=[])) is None
    empty = MetadataFilters(filters=[])
    assert to_where(MetadataFilters(filters=[empty], condition="or")) is None
    assert to_where(MetadataFilters(filters=[empty, MetadataFilter(key="b", value=1)])) == {
        "b": {"$eq": 1}
    }


def test_bad_filters_raise_errors_naming_the_key(store):
    with pytest.raises(ValueError, match="'rank': operator 'in' takes a list"):
        _query(store, _one("rank", FilterOperator.IN, "a"))
    with pytest.raises(TypeError, match="'weight': text_match takes a str"):
        _query(store, _one("weight", FilterOperator.TEXT_MATCH, 1))


# --- the store's contract beyond filters ------------------------------------------------


def test_nodes_come_back_whole_with_their_text_and_metadata(store):
    got = store.get_nodes(
        node_ids=[_NODE_ID_WEIGHT_2_RANK_C, "no-such-node", _NODE_ID_WEIGHT_1_RANK_A]
    )
    assert [n.node_id for n in got] == [_NODE_ID_WEIGHT_2_RANK_C, _NODE_ID_WEIGHT_1_RANK_A]
    assert got[0].get_content() == "lorem ipsum"
    assert got[0].metadata == {
        "weight": 2.0,
        "rank": "c",
        "quality": ["medium"],
        "identifier": "6FTR78Ygl",
    }
    assert got[0].ref_doc_id == "test-1"
    result = _query(store, k=1)
    assert result.nodes[0].node_id == _NODE_ID_WEIGHT_3_RANK_C
    assert result.nodes[0].get_content() == "lorem ipsum"
    assert result.similarities[0] == pytest.approx(1.0, abs=1e-6)  # cosine similarity


def test_delete_nodes_with_filters_deletes_only_matching_ones(store):
    store.delete_nodes(
        node_ids=[_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_2_RANK_C],
        filters=_one("rank", FilterOperator.EQ, "c"),
    )
    assert sorted(_query(store).ids) == sorted([_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_3_RANK_C])
    store.delete_nodes(filters=_one("weight", FilterOperator.GT, 2.5))
    assert _query(store).ids == [_NODE_ID_WEIGHT_1_RANK_A]


def test_doc_ids_restrict_a_query(store):
    assert _query(store, doc_ids=["test-0", "test-2"]).ids == [
        _NODE_ID_WEIGHT_3_RANK_C,
        _NODE_ID_WEIGHT_1_RANK_A,
    ]


def test_an_empty_path_store_answers_nothing_until_the_first_add(tmp_path):
    store = StrataVectorStore(path=tmp_path / "empty")
    assert store.client is None
    assert _query(store).ids == []
    assert store.get_nodes(node_ids=["x"]) == []
    store.delete("x")
    store.add(_node_embeddings_for_test())
    assert store.client.dim == 2
    store.close()


def test_a_path_store_reopens_with_its_nodes(tmp_path):
    store = StrataVectorStore(path=tmp_path / "s")
    store.add(_node_embeddings_for_test())
    store.close()
    again = StrataVectorStore(path=tmp_path / "s")
    assert _query(again).ids[0] == _NODE_ID_WEIGHT_3_RANK_C
    again.close()


def test_bad_arguments_raise_clear_errors(tmp_path, store):
    with pytest.raises(ValueError, match="exactly one of path= or collection="):
        StrataVectorStore()
    with pytest.raises(TypeError, match=r"collection must be a strata\.Collection"):
        StrataVectorStore(collection="nope")
    with pytest.raises(ValueError, match="has no embedding"):
        store.add([TextNode(text="t", id_="no-embedding")])
    with pytest.raises(ValueError, match="metadata key '_text'"):
        store.add([TextNode(text="t", id_="x", embedding=[1.0, 0.0], metadata={"_text": "t"})])
    with pytest.raises(ValueError, match="needs query_embedding"):
        store.query(VectorStoreQuery(query_embedding=None))
    for learner in (
        VectorStoreQueryMode.SVM,
        VectorStoreQueryMode.LOGISTIC_REGRESSION,
        VectorStoreQueryMode.LINEAR_REGRESSION,
    ):
        with pytest.raises(ValueError, match=f"query mode '{learner.value}' is not supported"):
            store.query(VectorStoreQuery(query_embedding=[1.0, 1.0], mode=learner))
    with pytest.raises(ValueError, match="needs query_str"):
        store.query(VectorStoreQuery(query_embedding=[1.0, 1.0], mode="text_search"))
    for mode in ("sparse", "semantic_hybrid"):
        with pytest.raises(ValueError, match=f"a {mode} query needs query_str"):
            store.query(VectorStoreQuery(query_embedding=[1.0, 1.0], mode=mode))
    with pytest.raises(ValueError, match="a semantic_hybrid query needs query_embedding"):
        store.query(VectorStoreQuery(query_str="lorem", mode="semantic_hybrid"))
    with pytest.raises(ValueError, match="dim"):  # the engine's message
        store.add([TextNode(text="t", id_="wide", embedding=[1.0, 0.0, 0.0])])


# --- query modes ----------------------------------------------------------------------


def _text_nodes() -> list[TextNode]:
    texts = [
        "the cat sat on the mat",
        "dogs chase cats",
        "a bird in the hand",
        "cats and dogs and birds",
        "stock markets fell",
    ]
    vectors = [[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0.5, 0.5, 0], [0, 0, 1]]
    return [
        TextNode(text=t, id_=f"t{i}", embedding=v, metadata={"i": i})
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    ]


def test_text_search_ranks_by_bm25_over_the_node_text(make_store):
    store = make_store(dim=3)
    store.add(_text_nodes())
    q = VectorStoreQuery(query_str="cats", mode="text_search", similarity_top_k=5)
    result = store.query(q)
    # The english analyzer stems: "cats" finds "cat" too, never "birds" or "stock".
    assert set(result.ids) == {"t0", "t1", "t3"}
    assert result.similarities == sorted(result.similarities, reverse=True)
    filtered = store.query(
        VectorStoreQuery(
            query_str="cats", mode="text_search", similarity_top_k=5, filters=_one("i", "==", 3)
        )
    )
    assert filtered.ids == ["t3"]


def test_hybrid_alpha_runs_from_text_alone_to_vector_alone(make_store):
    store = make_store(dim=3)
    store.add(_text_nodes())

    def hybrid(alpha):
        q = VectorStoreQuery(
            query_embedding=[0, 0, 1],
            query_str="birds",
            mode="hybrid",
            alpha=alpha,
            similarity_top_k=5,
        )
        return store.query(q).ids

    vector = store.query(VectorStoreQuery(query_embedding=[0, 0, 1], similarity_top_k=5)).ids
    assert hybrid(1.0)[0] == vector[0] == "t4"  # alpha 1: vector search decides
    assert hybrid(0.0)[0] in {"t2", "t3"}  # alpha 0: BM25 decides
    assert "t4" not in hybrid(0.0)[:2]


def test_sparse_mode_searches_the_bm25_index_sized_by_sparse_top_k(make_store):
    store = make_store(dim=3)
    store.add(_text_nodes())

    def search(mode, **kw):
        return store.query(VectorStoreQuery(query_str="cats", mode=mode, **kw))

    # No query_embedding needed: the text is the sparse query, as in Qdrant's store.
    everything = search("sparse", similarity_top_k=5)
    assert everything.ids == search("text_search", similarity_top_k=5).ids
    assert set(everything.ids) == {"t0", "t1", "t3"}
    assert everything.similarities == search("text_search", similarity_top_k=5).similarities
    # sparse_top_k sizes the sparse search; similarity_top_k when unset.
    assert search("sparse", similarity_top_k=5, sparse_top_k=1).ids == everything.ids[:1]
    assert search("sparse", similarity_top_k=2).ids == everything.ids[:2]
    filtered = search("sparse", similarity_top_k=5, filters=_one("i", "!=", 0))
    assert set(filtered.ids) == {"t1", "t3"}


def test_semantic_hybrid_is_the_engines_hybrid_fusion(make_store):
    store = make_store(dim=3)
    store.add(_text_nodes())

    def search(mode, alpha, **kw):
        q = VectorStoreQuery(
            query_embedding=[0, 0, 1], query_str="birds", mode=mode, alpha=alpha, **kw
        )
        return store.query(q)

    for alpha in (0.0, 0.3, 1.0, None):
        semantic = search("semantic_hybrid", alpha, similarity_top_k=5)
        hybrid = search("hybrid", alpha, similarity_top_k=5)
        assert semantic.ids == hybrid.ids
        assert semantic.similarities == hybrid.similarities
    # alpha moves the ranking from text alone to vector alone, as in hybrid mode.
    assert search("semantic_hybrid", 1.0, similarity_top_k=5).ids[0] == "t4"
    assert "t4" not in search("semantic_hybrid", 0.0, similarity_top_k=5).ids[:2]
    assert len(search("semantic_hybrid", 0.5, similarity_top_k=5, hybrid_top_k=2).ids) == 2


def test_the_new_modes_answer_through_the_async_methods_too(make_store):
    store = make_store(dim=3)
    store.add(_text_nodes())
    queries = [
        VectorStoreQuery(query_str="cats", mode="sparse", similarity_top_k=5),
        VectorStoreQuery(
            query_embedding=[0, 0, 1], query_str="birds", mode="semantic_hybrid", similarity_top_k=5
        ),
    ]

    async def main():
        return await asyncio.gather(*(store.aquery(q) for q in queries))

    for sync, asynchronous in zip(
        (store.query(q) for q in queries), asyncio.run(main()), strict=True
    ):
        assert sync.ids == asynchronous.ids and sync.ids


def test_mmr_spreads_picks_in_the_engine(make_store):
    store = make_store(dim=3)
    store.add(_text_nodes())
    q = VectorStoreQuery(query_embedding=[1, 0, 0], mode="mmr", similarity_top_k=2)
    plain = store.query(VectorStoreQuery(query_embedding=[1, 0, 0], similarity_top_k=2)).ids
    assert plain == ["t0", "t1"]
    # Relevance weighted 0.1: the second pick moves away from t0's near twin t1.
    spread = store.query(q, mmr_threshold=0.1).ids
    assert spread[0] == "t0" and spread[1] != "t1"
    assert store.query(q, mmr_threshold=1.0).ids == plain


# --- async ----------------------------------------------------------------------------


def test_async_methods_answer_as_the_sync_ones(make_store):
    async def main(store):
        await store.async_add(_node_embeddings_for_test())
        q = VectorStoreQuery(
            query_embedding=[1.0, 1.0],
            similarity_top_k=3,
            filters=_one("rank", FilterOperator.EQ, "c"),
        )
        queried = await asyncio.gather(*(store.aquery(q) for _ in range(20)))
        nodes = await store.aget_nodes(filters=_one("weight", FilterOperator.LT, 2.5))
        await store.adelete("test-1")
        after_delete = await store.aquery(
            VectorStoreQuery(query_embedding=[1.0, 1.0], similarity_top_k=3)
        )
        await store.adelete_nodes([_NODE_ID_WEIGHT_1_RANK_A])
        after_nodes = await store.aquery(
            VectorStoreQuery(query_embedding=[1.0, 1.0], similarity_top_k=3)
        )
        await store.aclear()
        cleared = await store.aquery(
            VectorStoreQuery(query_embedding=[1.0, 1.0], similarity_top_k=3)
        )
        return queried, nodes, after_delete, after_nodes, cleared

    queried, nodes, after_delete, after_nodes, cleared = asyncio.run(main(make_store()))
    assert all(r.ids == [_NODE_ID_WEIGHT_3_RANK_C, _NODE_ID_WEIGHT_2_RANK_C] for r in queried)
    assert sorted(n.node_id for n in nodes) == sorted(
        [_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_2_RANK_C]
    )
    assert after_delete.ids == [_NODE_ID_WEIGHT_3_RANK_C, _NODE_ID_WEIGHT_1_RANK_A]
    assert after_nodes.ids == [_NODE_ID_WEIGHT_3_RANK_C]
    assert cleared.ids == []


# --- end to end: VectorStoreIndex and a retriever, no LLM --------------------------------


def test_vector_store_index_from_documents_and_a_retriever(tmp_path):
    store = StrataVectorStore(path=tmp_path / "index")
    docs = [
        Document(
            text=f"document {i} is about {topic}", id_=f"doc-{i}", metadata={"topic": topic, "i": i}
        )
        for i, topic in enumerate(["cats", "dogs", "birds", "cats", "fish"])
    ]
    index = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=MockEmbedding(embed_dim=8),
    )
    assert len(store.client) == 5
    retriever = index.as_retriever(
        similarity_top_k=5,
        filters=_one("topic", FilterOperator.EQ, "cats"),
    )
    hits = retriever.retrieve("cats")
    assert sorted(h.node.metadata["i"] for h in hits) == [0, 3]
    assert {h.node.get_content() for h in hits} == {
        "document 0 is about cats",
        "document 3 is about cats",
    }
    assert {h.node.ref_doc_id for h in hits} == {"doc-0", "doc-3"}
    # The index deletes a document's nodes through the store.
    index.delete_ref_doc("doc-0")
    assert [h.node.metadata["i"] for h in retriever.retrieve("cats")] == [3]
    text = index.as_retriever(similarity_top_k=2, vector_store_query_mode="text_search")
    assert {h.node.metadata["i"] for h in text.retrieve("fish")} == {4}
    store.close()


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_similarities_are_larger_for_nearer_nodes_under_every_metric(tmp_path, metric):
    store = StrataVectorStore(path=tmp_path / metric, metric=metric)
    store.add(_text_nodes())
    result = store.query(VectorStoreQuery(query_embedding=[1.0, 0.0, 0.0], similarity_top_k=5))
    assert result.ids[0] == "t0"
    assert result.similarities == sorted(result.similarities, reverse=True)
    assert store.client.metric == metric
    store.close()
