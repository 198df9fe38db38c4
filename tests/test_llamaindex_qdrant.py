"""LlamaIndex's QdrantVectorStore, unchanged, against strata-server and against Qdrant's local mode.

llama-index-vector-stores-qdrant gives every node a UUID point id and creates its collection
with a named dense vector field ("text-dense") at the first add. Each step below
(from_documents, filtered queries with every operator the store translates, get_nodes,
delete_ref_doc, delete_nodes, retrievers, the async client, clear) runs on
QdrantClient(":memory:") and on strata's Qdrant door, and must answer the same. A step that
raises records the exception's type, so a difference names the step.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

import numpy as np
import pytest
from server_process import BINARY, free_port, running_server

pytest.importorskip("llama_index.vector_stores.qdrant")
import qdrant_client
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.vector_stores.qdrant import QdrantVectorStore

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

TOPICS = ["cats", "dogs", "birds"]


class HashEmbedding(BaseEmbedding):
    """A deterministic embedding of a text (no model): distinct texts, distinct vectors, so
    that rankings have no ties to break differently."""

    def _vector(self, text: str) -> list[float]:
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        return rng.standard_normal(16).tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


def _filters(*parts: tuple[str, Any, Any], condition: str = "and") -> MetadataFilters:
    return MetadataFilters(
        filters=[MetadataFilter(key=k, operator=op, value=v) for k, op, v in parts],
        condition=condition,
    )


FILTERS = {
    "eq": _filters(("topic", FilterOperator.EQ, "cats")),
    "eq_int": _filters(("i", FilterOperator.EQ, 4)),
    "eq_float": _filters(("score", FilterOperator.EQ, 0.5)),
    "ne": _filters(("topic", FilterOperator.NE, "cats")),
    "gt": _filters(("i", FilterOperator.GT, 6)),
    "gte": _filters(("i", FilterOperator.GTE, 6)),
    "lt": _filters(("score", FilterOperator.LT, 1.0)),
    "lte": _filters(("score", FilterOperator.LTE, 1.0)),
    "in": _filters(("topic", FilterOperator.IN, ["dogs", "birds"])),
    "nin": _filters(("topic", FilterOperator.NIN, ["dogs", "birds"])),
    "text_match": _filters(("title", FilterOperator.TEXT_MATCH, "about")),
    # Qdrant matches words, not substrings, on a field without a text index.
    "text_match_part": _filters(("title", FilterOperator.TEXT_MATCH, "abou")),
    "is_empty": _filters(("maybe", FilterOperator.IS_EMPTY, None)),
    "or": _filters(
        ("topic", FilterOperator.EQ, "dogs"), ("i", FilterOperator.LT, 2), condition="or"
    ),
    "not": _filters(("topic", FilterOperator.EQ, "dogs"), condition="not"),
    "nested": MetadataFilters(
        filters=[
            _filters(
                ("topic", FilterOperator.EQ, "cats"),
                ("topic", FilterOperator.EQ, "dogs"),
                condition="or",
            ),
            MetadataFilter(key="i", operator=FilterOperator.GTE, value=3),
        ],
        condition=FilterCondition.AND,
    ),
}


def _docs() -> list[Document]:
    return [
        Document(
            text=f"document {i} is about {TOPICS[i % 3]}",
            id_=f"doc-{i}",
            metadata={
                "topic": TOPICS[i % 3],
                "i": i,
                "score": i / 4,
                "title": f"note {i} about {TOPICS[i % 3]}" if i % 2 else f"note {i}",
                **({"maybe": "set"} if i % 4 == 0 else {}),
            },
        )
        for i in range(9)
    ]


def _hits(result) -> list[tuple[int, float]]:
    return [
        (n.metadata["i"], round(s, 4))
        for n, s in zip(result.nodes, result.similarities, strict=True)
    ]


def _step(out: dict[str, Any], name: str, fn) -> None:
    try:
        out[name] = fn()
    except Exception as exc:  # noqa: BLE001 (a failing step is an answer to compare)
        out[name] = f"raised {type(exc).__name__}"


def _steps(**where: Any) -> dict[str, Any]:
    client = qdrant_client.QdrantClient(**where)
    aclient = qdrant_client.AsyncQdrantClient(**where)
    store = QdrantVectorStore("li", client=client, aclient=aclient)
    embed = HashEmbedding()
    out: dict[str, Any] = {}
    index = VectorStoreIndex.from_documents(
        _docs(),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=embed,
    )
    points = client.scroll("li", limit=100)[0]
    out["point_ids_are_uuids"] = all(len(str(p.id)) == 36 for p in points)
    out["count"] = client.count("li").count
    query = embed.get_query_embedding("cats and dogs")
    for name, filters in FILTERS.items():
        _step(
            out,
            f"query_{name}",
            lambda f=filters: _hits(
                store.query(VectorStoreQuery(query_embedding=query, similarity_top_k=9, filters=f))
            ),
        )
    retriever = index.as_retriever(similarity_top_k=3)
    _step(
        out,
        "retrieve",
        lambda: [
            (h.node.metadata["i"], h.node.get_content(), round(h.score, 4))
            for h in retriever.retrieve("birds")
        ],
    )
    filtered = index.as_retriever(similarity_top_k=9, filters=FILTERS["eq"])
    _step(
        out,
        "retrieve_filtered",
        lambda: sorted(h.node.metadata["i"] for h in filtered.retrieve("x")),
    )
    some = [str(p.id) for p in points if p.payload["i"] in (1, 2)]
    _step(out, "get_nodes_by_id", lambda: sorted(n.metadata["i"] for n in store.get_nodes(some)))
    _step(
        out,
        "get_nodes_by_filter",
        lambda: sorted(n.metadata["i"] for n in store.get_nodes(filters=FILTERS["gt"])),
    )
    index.delete_ref_doc("doc-0")
    out["after_delete_ref_doc"] = client.count("li").count
    _step(out, "delete_nodes", lambda: store.delete_nodes(some))
    out["after_delete_nodes"] = sorted(p.payload["i"] for p in client.scroll("li", limit=100)[0])
    _step(out, "delete_nodes_by_filter", lambda: store.delete_nodes(filters=FILTERS["eq"]))
    out["after_filter_delete"] = sorted(p.payload["i"] for p in client.scroll("li", limit=100)[0])
    _step(
        out,
        "after_delete_query",
        lambda: _hits(store.query(VectorStoreQuery(query_embedding=query, similarity_top_k=9))),
    )
    store.clear()
    out["exists_after_clear"] = client.collection_exists("li")
    client.close()
    # The async client: a store of its own (in local mode two clients share no data).
    out.update(asyncio.run(_async_steps(aclient, embed, query)))
    return out


async def _async_steps(aclient, embed: HashEmbedding, query: list[float]) -> dict[str, Any]:
    store = QdrantVectorStore("li_async", aclient=aclient)
    nodes = SentenceSplitter().get_nodes_from_documents(_docs())
    for node in nodes:
        node.embedding = embed.get_text_embedding(node.get_content())
    out: dict[str, Any] = {}
    try:
        ids = await store.async_add(nodes)
        out["async_add"] = len(ids)
        result = await store.aquery(
            VectorStoreQuery(query_embedding=query, similarity_top_k=3, filters=FILTERS["in"])
        )
        out["aquery"] = _hits(result)
        await store.adelete("doc-1")
        got = await store.aget_nodes(filters=FILTERS["gte"])
        out["aget_nodes_after_adelete"] = sorted(n.metadata["i"] for n in got)
        await store.adelete_nodes(filters=FILTERS["eq"])
        out["async_count"] = (await aclient.count("li_async")).count
    except Exception as exc:  # noqa: BLE001 (a failing step is an answer to compare)
        out["async_failed"] = f"raised {type(exc).__name__}: {exc}"
    await aclient.close()
    return out


def test_llamaindex_qdrant_store_answers_as_on_qdrant_local_mode(tmp_path):
    reference = _steps(location=":memory:")
    port = free_port()
    with running_server(tmp_path / "data", "--qdrant-addr", f"127.0.0.1:{port}"):
        got = _steps(url=f"http://127.0.0.1:{port}")
    diff = {k: (got.get(k), reference[k]) for k in reference if got.get(k) != reference[k]}
    assert not diff, f"steps that differ (strata, qdrant local mode): {diff}"
    # Not vacuous: the reference itself found things at every step.
    assert reference["point_ids_are_uuids"] and reference["count"] == 9
    assert all(not str(v).startswith("raised") for v in reference.values())
    assert reference["query_nested"] and reference["retrieve_filtered"] == [0, 3, 6]
    assert reference["async_add"] == 9 and len(reference["aquery"]) == 3
