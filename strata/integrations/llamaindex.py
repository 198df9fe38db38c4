"""StrataVectorStore: a LlamaIndex vector store on a strata collection (``strata[llamaindex]``).

    >>> from llama_index.core import StorageContext, VectorStoreIndex
    >>> from strata.integrations.llamaindex import StrataVectorStore
    >>> store = StrataVectorStore(path="docs.strata")
    >>> index = VectorStoreIndex.from_documents(
    ...     documents, storage_context=StorageContext.from_defaults(vector_store=store))
    >>> index.as_retriever(similarity_top_k=4, filters=filters).retrieve("embedded database")

How LlamaIndex's notions map onto the collection (the store only translates):

- A node is one entry: its node_id is a string id of the collection, its embedding the
  entry's vector, and its metadata the entry's metadata document, beside the keys
  LlamaIndex's stores keep (``_node_content``, the node as JSON without its text;
  ``_node_type``; ``doc_id``, ``document_id`` and ``ref_doc_id``, the source document),
  ``_node_id`` (the node id, so that filters can name nodes) and the text under text_key
  ("_text"). The store keeps the text (stores_text is True): retrievers rebuild nodes
  from the collection alone.
- ``path=`` opens the collection there, or creates it at the first add with the
  embeddings' dimension, metric= and a BM25 text index over text_key (the other
  Collection.create arguments through collection_options=); ``collection=`` uses an
  open strata.Collection, which the store never closes (text_search and hybrid need it
  to have a text index over text_key).
- MetadataFilters compile to one strata Mongo-style filter, evaluated by the engine
  (see to_where): every FilterOperator and every FilterCondition (and, or, not),
  nested MetadataFilters included.
- A query's node_ids and doc_ids restrict it to those nodes and source documents (an
  empty list restricts nothing, as in LlamaIndex's other stores).
- Query modes: "default" (vector search); "text_search" and "sparse" (BM25 over text_key,
  the query's query_str, sparse_top_k results when set: the BM25 index is the store's
  sparse side, where Qdrant's store searches a learned sparse vector); "hybrid" and
  "semantic_hybrid" (both, fused by the engine as alpha * vector + (1 - alpha) * text
  over min-max normalised scores, LlamaIndex's alpha: 1 is vector search alone, 0 text
  alone; 0.5 when unset; hybrid_top_k results when set. semantic_hybrid is Azure AI
  Search's hybrid plus its semantic re-ranker; strata has no re-ranker, so it is hybrid)
  and "mmr" (Collection.query_mmr, in the engine: mmr_threshold is the weight of
  relevance, LlamaIndex's meaning; mmr_prefetch_k or mmr_prefetch_factor set how many
  candidates it chooses from). The learner modes (svm, logistic_regression,
  linear_regression) fit a classifier to every stored embedding in Python, which only an
  in-memory store can do: they raise ValueError naming the mode, as unknown modes do.
- Similarities are larger for nearer nodes: 1 - distance for cosine and ip (the cosine
  similarity, the inner product), minus the squared distance for l2; the engine's fused
  or BM25 score for text_search and hybrid.
- The async methods (async_add, aquery, adelete, adelete_nodes, aget_nodes, aclear) call
  strata.AsyncCollection, whose calls run on strata's worker threads and never block the
  event loop.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

try:
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.schema import BaseNode
    from llama_index.core.vector_stores.types import (
        BasePydanticVectorStore,
        FilterCondition,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
        VectorStoreQuery,
        VectorStoreQueryMode,
        VectorStoreQueryResult,
    )
    from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "strata.integrations.llamaindex needs llama-index-core: pip install 'strata[llamaindex]'"
    ) from exc

from strata._collection import Collection, QueryResult
from strata.integrations._store import StoreCollection

__all__ = ["StrataVectorStore", "to_where"]

_NODE_ID_KEY = "_node_id"
_DOC_ID_KEY = "ref_doc_id"
# Characters RE2 gives a meaning to (Go's regexp.QuoteMeta escapes exactly these).
_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$")
_DEFAULT_ALPHA = 0.5
# The store's keyword side is the BM25 text index over text_key: sparse (LlamaIndex's
# sparse-only retrieval, a learned sparse vector in Qdrant's store) and text_search both
# search it.
_TEXT_MODES = frozenset({VectorStoreQueryMode.TEXT_SEARCH, VectorStoreQueryMode.SPARSE})
# semantic_hybrid is hybrid search re-ranked by Azure AI Search's semantic ranker; strata
# has no re-ranker, so it is the engine's fusion of dense and BM25, as hybrid is.
_HYBRID_MODES = frozenset({VectorStoreQueryMode.HYBRID, VectorStoreQueryMode.SEMANTIC_HYBRID})
# Modes that fit a classifier to the stored embeddings (SimpleVectorStore's learners).
_LEARNER_MODES = frozenset(
    {
        VectorStoreQueryMode.SVM,
        VectorStoreQueryMode.LOGISTIC_REGRESSION,
        VectorStoreQueryMode.LINEAR_REGRESSION,
    }
)


def _literal(text: str) -> str:
    """text as an RE2 pattern matching itself."""
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def _values(f: MetadataFilter) -> list[Any]:
    if not isinstance(f.value, list):
        raise ValueError(
            f"filter on {f.key!r}: operator {f.operator.value!r} takes a list of values, "
            f"got {f.value!r}"
        )
    return list(f.value)


def _condition(f: MetadataFilter) -> dict[str, Any]:
    """One MetadataFilter as a strata filter on its key."""
    op, key, value = f.operator, f.key, f.value
    if op == FilterOperator.EQ:
        return {key: {"$eq": value}}
    if op == FilterOperator.NE:
        return {key: {"$ne": value}}
    ranges = {
        FilterOperator.GT: "$gt",
        FilterOperator.GTE: "$gte",
        FilterOperator.LT: "$lt",
        FilterOperator.LTE: "$lte",
    }
    if op in ranges:
        return {key: {ranges[op]: value}}
    if op in (FilterOperator.IN, FilterOperator.ANY):
        # in: the value is one of these; any: the list holds one of them. A strata $in
        # is both (a list matches when one of its elements does).
        return {key: {"$in": _values(f)}}
    if op == FilterOperator.NIN:
        return {key: {"$nin": _values(f)}}
    if op == FilterOperator.ALL:
        return {key: {"$all": _values(f)}}
    if op == FilterOperator.CONTAINS:
        # The list holds value: strata's $eq on a list matches an element.
        return {key: {"$eq": value}}
    if op in (FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE):
        if not isinstance(value, str):
            raise TypeError(
                f"filter on {key!r}: {op.value} takes a str, got {type(value).__name__}"
            )
        cond: dict[str, Any] = {"$regex": _literal(value)}
        if op == FilterOperator.TEXT_MATCH_INSENSITIVE:
            cond["$options"] = "i"
        return {key: cond}
    if op == FilterOperator.IS_EMPTY:
        # Missing, null, "" or [] (a list holding null or "" is not empty).
        return {
            "$or": [
                {key: {"$exists": False}},
                {key: {"$in": [None, ""], "$not": {"$type": "array"}}},
                {key: {"$size": 0}},
            ]
        }
    raise ValueError(f"filter on {key!r}: unknown operator {op!r}")


def to_where(filters: MetadataFilters | None) -> dict[str, Any] | None:
    """MetadataFilters as one strata filter (None for no filters).

    ==, !=, >, >=, <, <=, in, nin, any, all, contains become $eq, $ne, $gt, $gte, $lt,
    $lte, $in, $nin, $in, $all, $eq (strata's operators test the elements of a list
    field as Mongo's do); text_match and text_match_insensitive a $regex matching the
    value as a substring (with $options "i"); is_empty the field missing, null, "" or [].
    Conditions: and is $and, or $or, not $nor (none of the filters holds, as in
    LlamaIndex's SimpleVectorStore); nested MetadataFilters nest."""
    if filters is None:
        return None
    if not isinstance(filters, MetadataFilters):
        raise TypeError(f"filters must be MetadataFilters, got {type(filters).__name__}")
    if not filters.filters:
        return None
    parts: list[dict[str, Any]] = []
    for f in filters.filters:
        if isinstance(f, MetadataFilters):
            sub = to_where(f)
            if sub is not None:  # an empty MetadataFilters adds no condition (as in Qdrant's)
                parts.append(sub)
        elif isinstance(f, MetadataFilter):
            parts.append(_condition(f))
        else:
            raise TypeError(f"filters holds a {type(f).__name__}, not a MetadataFilter")
    if not parts:
        return None
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        return parts[0] if len(parts) == 1 else {"$and": parts}
    if condition == FilterCondition.OR:
        return {"$or": parts}
    if condition == FilterCondition.NOT:
        return {"$nor": parts}
    raise ValueError(f"unknown filter condition {condition!r}")


def _all_of(*wheres: dict[str, Any] | None) -> dict[str, Any] | None:
    parts = [w for w in wheres if w]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


def _id_list(ids: object, name: str) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise TypeError(f"{name} must be a list of str, got {type(ids).__name__}")
    for i, id_ in enumerate(ids):
        if not isinstance(id_, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(id_).__name__}")
    return list(ids)


class StrataVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over a strata.Collection (see the module documentation)."""

    stores_text: bool = True
    flat_metadata: bool = False
    text_key: str = "_text"
    metric: str = "cosine"

    _store: StoreCollection = PrivateAttr()

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        collection: Collection | None = None,
        metric: str = "cosine",
        text_key: str = "_text",
        collection_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        store = StoreCollection(path, collection)
        if not isinstance(text_key, str) or not text_key or "." in text_key:
            raise ValueError(f"text_key must be a non-empty str without '.', got {text_key!r}")
        super().__init__(text_key=text_key, metric=metric, **kwargs)
        self._store = store
        options = {"metric": metric, "text_fields": [text_key], **(collection_options or {})}
        opened = store.open(**options)
        if opened is not None:
            self.metric = opened.metric

    @classmethod
    def class_name(cls) -> str:
        return "StrataVectorStore"

    # --- the collection -----------------------------------------------------

    @property
    def client(self) -> Collection | None:
        """The strata.Collection (None until the first add creates it at path)."""
        return self._store.collection

    def close(self) -> None:
        """Closes the collection if the store opened it (path=); one passed in stays open."""
        self._store.close()

    # --- writes -------------------------------------------------------------

    def _entries(
        self, nodes: Sequence[BaseNode]
    ) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
        ids, vectors, docs = [], [], []
        for i, node in enumerate(nodes):
            if not isinstance(node, BaseNode):
                raise TypeError(f"nodes[{i}] must be a llama_index BaseNode, got {type(node)}")
            if node.embedding is None:
                raise ValueError(
                    f"nodes[{i}] (id {node.node_id!r}) has no embedding: embed it first "
                    "(VectorStoreIndex does)"
                )
            doc = node_to_metadata_dict(node, remove_text=True, flat_metadata=self.flat_metadata)
            for key in (self.text_key, _NODE_ID_KEY):
                if key in node.metadata:
                    raise ValueError(
                        f"nodes[{i}] has the metadata key {key!r}, which the store keeps "
                        "for itself (pass another text_key= to the store)"
                    )
            doc[self.text_key] = node.get_content()
            doc[_NODE_ID_KEY] = node.node_id
            ids.append(node.node_id)
            vectors.append(node.embedding)
            docs.append(doc)
        try:
            rows = np.asarray(vectors, dtype=np.float32)
        except ValueError as exc:
            raise ValueError(f"the nodes' embeddings are not of one dimension: {exc}") from None
        return ids, rows, docs

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Upserts nodes (an existing node id is replaced); returns their ids."""
        if not nodes:
            return []
        ids, rows, docs = self._entries(nodes)
        self._store.created(rows.shape[1]).upsert(ids, rows, docs)
        return ids

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """add through strata.AsyncCollection."""
        if not nodes:
            return []
        ids, rows, docs = self._entries(nodes)
        acol = await self._store.acreated(rows.shape[1])
        await acol.upsert(ids, rows, docs)
        return ids

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Deletes every node of the source document ref_doc_id."""
        if not isinstance(ref_doc_id, str):
            raise TypeError(f"ref_doc_id must be a str, got {type(ref_doc_id).__name__}")
        col = self._store.collection
        if col is not None:
            col.delete(where={_DOC_ID_KEY: ref_doc_id})

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """delete through strata.AsyncCollection."""
        if not isinstance(ref_doc_id, str):
            raise TypeError(f"ref_doc_id must be a str, got {type(ref_doc_id).__name__}")
        acol = self._store.async_collection()
        if acol is not None:
            await acol.delete(where={_DOC_ID_KEY: ref_doc_id})

    def _delete_args(
        self, node_ids: list[str] | None, filters: MetadataFilters | None
    ) -> dict[str, Any]:
        where = to_where(filters)
        if node_ids is not None:
            ids = _id_list(node_ids, "node_ids")
            if where is None:
                return {"ids": ids}
            return {"where": _all_of({_NODE_ID_KEY: {"$in": ids}}, where)}
        return {"where": where or {}}

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Deletes the nodes among node_ids matching filters; with neither, every node
        (as LlamaIndex's SimpleVectorStore does)."""
        args = self._delete_args(node_ids, filters)
        col = self._store.collection
        if col is not None:
            col.delete(**args)

    async def adelete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """delete_nodes through strata.AsyncCollection."""
        args = self._delete_args(node_ids, filters)
        acol = self._store.async_collection()
        if acol is not None:
            await acol.delete(**args)

    def clear(self) -> None:
        """Deletes every node (the collection and its dimension stay)."""
        col = self._store.collection
        if col is not None:
            col.delete(where={})

    async def aclear(self) -> None:
        """clear through strata.AsyncCollection."""
        acol = self._store.async_collection()
        if acol is not None:
            await acol.delete(where={})

    # --- reads --------------------------------------------------------------

    def _node(self, doc: dict[str, Any]) -> BaseNode:
        return metadata_dict_to_node(doc, text=doc.get(self.text_key))

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """The nodes among node_ids (in that order, missing ones left out) matching
        filters; with node_ids None, every node matching filters."""
        col = self._store.collection
        if col is None:
            return []
        where = to_where(filters)
        if node_ids is not None:
            ids = _id_list(node_ids, "node_ids")
            if not ids:
                return []
            if where is None:
                return [self._node(d) for d in col.get(ids).metadata]
            where = _all_of({_NODE_ID_KEY: {"$in": ids}}, where)
            found = {d[_NODE_ID_KEY]: d for page in col.scan(where) for d in page.metadata}
            return [self._node(found[i]) for i in dict.fromkeys(ids) if i in found]
        return [self._node(d) for page in col.scan(where) for d in page.metadata]

    async def aget_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """get_nodes through strata.AsyncCollection."""
        acol = self._store.async_collection()
        if acol is None:
            return []
        where = to_where(filters)
        if node_ids is not None:
            ids = _id_list(node_ids, "node_ids")
            if not ids:
                return []
            if where is None:
                return [self._node(d) for d in (await acol.get(ids)).metadata]
            where = _all_of({_NODE_ID_KEY: {"$in": ids}}, where)
            found = {d[_NODE_ID_KEY]: d async for page in acol.scan(where) for d in page.metadata}
            return [self._node(found[i]) for i in dict.fromkeys(ids) if i in found]
        return [self._node(d) async for page in acol.scan(where) for d in page.metadata]

    def _plan(self, query: VectorStoreQuery, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The Collection method and its arguments that answer query."""
        if not isinstance(query, VectorStoreQuery):
            raise TypeError(f"query must be a VectorStoreQuery, got {type(query).__name__}")
        k = query.similarity_top_k
        # An empty node_ids or doc_ids restricts nothing, as in LlamaIndex's other stores:
        # VectorStoreIndex.as_retriever passes the (empty) node ids of its index struct
        # to a store that keeps the text.
        where = _all_of(
            to_where(query.filters),
            {_DOC_ID_KEY: {"$in": _id_list(query.doc_ids, "doc_ids")}} if query.doc_ids else None,
            {_NODE_ID_KEY: {"$in": _id_list(query.node_ids, "node_ids")}}
            if query.node_ids
            else None,
        )
        mode = VectorStoreQueryMode(query.mode)
        if mode in _LEARNER_MODES:
            raise ValueError(
                f"query mode {mode.value!r} is not supported: it trains a classifier over "
                "every stored embedding in Python (LlamaIndex's SimpleVectorStore does); "
                "a database store answers default, sparse, text_search, hybrid, "
                "semantic_hybrid or mmr"
            )
        if (mode in _TEXT_MODES or mode in _HYBRID_MODES) and not query.query_str:
            raise ValueError(f"a {mode.value} query needs query_str (the text to search for)")
        if mode not in _TEXT_MODES and query.query_embedding is None:
            raise ValueError(f"a {mode.value} query needs query_embedding")
        vector = (
            None
            if query.query_embedding is None
            else np.asarray(query.query_embedding, dtype=np.float32)
        )
        if mode == VectorStoreQueryMode.DEFAULT:
            return "query", {"queries": vector, "k": k, "where": where}
        if mode in _TEXT_MODES:
            # sparse_top_k, as Qdrant's store sizes its sparse-only search.
            return "query", {
                "text": query.query_str,
                "k": query.sparse_top_k or k,
                "where": where,
                "text_field": self.text_key,
            }
        if mode in _HYBRID_MODES:
            alpha = _DEFAULT_ALPHA if query.alpha is None else query.alpha
            return "query", {
                "queries": vector,
                "text": query.query_str,
                "k": query.hybrid_top_k or k,
                "where": where,
                "fusion": {"alpha": alpha},
                "text_field": self.text_key,
            }
        if mode == VectorStoreQueryMode.MMR:
            threshold = kwargs.get("mmr_threshold", query.mmr_threshold)
            args: dict[str, Any] = {
                "vector": vector,
                "k": k,
                "where": where,
                "lambda_mult": 0.5 if threshold is None else threshold,
            }
            if kwargs.get("mmr_prefetch_k") is not None:
                args["fetch_k"] = kwargs["mmr_prefetch_k"]
            elif kwargs.get("mmr_prefetch_factor") is not None:
                args["fetch_k"] = max(k, int(k * kwargs["mmr_prefetch_factor"]))
            return "query_mmr", args
        raise ValueError(
            f"query mode {mode.value!r} is not supported: use default, sparse, text_search, "
            "hybrid, semantic_hybrid or mmr"
        )

    def _similarity(self, distance: float) -> float:
        if self.metric == "l2":
            return -distance
        return 1.0 - distance

    def _result(self, res: QueryResult) -> VectorStoreQueryResult:
        nodes, similarities, ids = [], [], []
        for j, doc in enumerate(res.metadata[0]):
            if doc is None:
                break
            node = self._node(doc)
            nodes.append(node)
            ids.append(node.node_id)
            if res.scores is not None:
                similarities.append(float(res.scores[0, j]))
            else:
                similarities.append(self._similarity(float(res.distances[0, j])))
        return VectorStoreQueryResult(nodes=nodes, similarities=similarities, ids=ids)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The nodes nearest the query among those matching its filters, doc_ids and
        node_ids, by its mode (see the module documentation)."""
        method, args = self._plan(query, kwargs)
        col = self._store.collection
        if col is None:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        return self._result(getattr(col, method)(**args))

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """query through strata.AsyncCollection."""
        method, args = self._plan(query, kwargs)
        acol = self._store.async_collection()
        if acol is None:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        return self._result(await getattr(acol, method)(**args))
