"""StrataVectorStore: a LangChain vector store on a strata collection (``strata[langchain]``).

    >>> from strata.integrations.langchain import StrataVectorStore
    >>> store = StrataVectorStore(embedding=embeddings, path="docs.strata")
    >>> store.add_texts(["strata is an embedded vector database"], [{"lang": "en"}])
    >>> store.similarity_search("embedded database", k=4, filter={"lang": "en"})
    >>> store.max_marginal_relevance_search("database", k=4, fetch_k=20)
    >>> store.as_retriever(search_kwargs={"retrieval_mode": "hybrid"})

How LangChain's notions map onto the collection (the store only translates):

- A Document is one entry: its id is a string id of the collection (uuid4 when the
  document has none), its embedding the entry's vector, and its metadata the entry's
  metadata document with the text under one more key, text_key ("page_content"; a
  metadata key of that name is refused). Filters therefore see the metadata as is.
- ``path=`` opens the collection there, or creates it at the first add with the
  embedding's dimension (metric, a BM25 text index over text_key and
  ``collection_options`` for Collection.create); ``collection=`` uses an open
  strata.Collection, which the store never closes.
- filter= is strata's Mongo-style filter ({"lang": "en", "year": {"$gte": 2020}}); two
  spellings other LangChain stores accept are translated: a list as a field's value is
  one of its values ({"lang": ["en", "fr"]} is {"lang": {"$in": [...]}}, as in FAISS's
  store) and {"$between": [low, high]} is {"$gte": low, "$lte": high} (PGVector's).
- similarity_search_with_score answers the collection's distance (smaller is nearer);
  the relevance scores are LangChain's functions of it for the metric (cosine: 1 -
  distance; ip: the inner product; l2: 1 - euclidean / sqrt(2)).
- retrieval_mode (the store's default, or per call): "dense" (vector search), "text"
  (BM25 over text_key) or "hybrid" (both, fused by fusion=: "rrf" or {"alpha": a}); text
  and hybrid results score by the engine's score, larger is better.
- max_marginal_relevance_search runs in the engine (Collection.query_mmr).
- The async methods (aadd_texts, asimilarity_search, amax_marginal_relevance_search,
  adelete, aget_by_ids...) call strata.AsyncCollection, whose calls run on strata's own
  worker threads and never block the event loop; embeddings are awaited through the
  embedding's own async methods.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

try:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import VectorStore
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "strata.integrations.langchain needs langchain-core: pip install 'strata[langchain]'"
    ) from exc

from strata._collection import Collection, QueryResult
from strata._index import METRICS
from strata.integrations._store import StoreCollection

__all__ = ["StrataVectorStore"]

_MODES = ("dense", "text", "hybrid")


def _translate(condition: Any) -> Any:
    """A field's condition with the other stores' spellings turned into strata's."""
    if isinstance(condition, list):
        return {"$in": condition}
    if isinstance(condition, dict) and "$between" in condition:
        bounds = condition["$between"]
        if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
            raise ValueError(f"$between takes [low, high], got {bounds!r}")
        rest = {op: v for op, v in condition.items() if op != "$between"}
        return {**rest, "$gte": bounds[0], "$lte": bounds[1]}
    return condition


def translate_filter(filter: dict[str, Any] | None) -> dict[str, Any] | None:
    """A LangChain filter as a strata where: Mongo-style filters pass unchanged, but for a
    list as a field's value ($in) and $between (see the module documentation)."""
    if filter is None:
        return None
    if callable(filter) and not isinstance(filter, dict):
        raise TypeError(
            "filter must be a dict (strata's Mongo-style filter); a callable cannot run in "
            "the engine"
        )
    if not isinstance(filter, dict):
        raise TypeError(f"filter must be a dict, got {type(filter).__name__}")
    out: dict[str, Any] = {}
    for key, value in filter.items():
        if key in ("$and", "$or", "$nor"):
            if not isinstance(value, list):
                raise ValueError(f"{key} takes a list of filters, got {value!r}")
            out[key] = [translate_filter(q) for q in value]
        elif key == "$not":
            out[key] = translate_filter(value)
        elif isinstance(key, str) and key.startswith("$"):
            out[key] = value  # the engine names what it does not know
        else:
            out[key] = _translate(value)
    return out


class StrataVectorStore(VectorStore):
    """A LangChain VectorStore over a strata.Collection (see the module documentation)."""

    def __init__(
        self,
        embedding: Embeddings,
        *,
        path: str | os.PathLike[str] | None = None,
        collection: Collection | None = None,
        metric: str = "cosine",
        text_key: str = "page_content",
        text_index: bool = True,
        retrieval_mode: str = "dense",
        fusion: str | dict[str, float] = "rrf",
        collection_options: dict[str, Any] | None = None,
    ) -> None:
        store = StoreCollection(path, collection)
        if not isinstance(text_key, str) or not text_key or "." in text_key:
            raise ValueError(f"text_key must be a non-empty str without '.', got {text_key!r}")
        _check_mode(retrieval_mode)
        if collection is None and metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
        self.embedding = embedding
        self.text_key = text_key
        self.retrieval_mode = retrieval_mode
        self.fusion = fusion
        self._metric = metric
        self._store = store
        fields = [text_key] if text_index else None
        opened = store.open(metric=metric, text_fields=fields, **(collection_options or {}))
        if opened is not None:
            self._metric = opened.metric

    # --- the collection -----------------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        return self.embedding

    @property
    def collection(self) -> Collection | None:
        """The strata.Collection (None until the first add creates it at path)."""
        return self._store.collection

    def close(self) -> None:
        """Closes the collection if the store opened it (path=); one passed in stays open."""
        self._store.close()

    def __enter__(self) -> StrataVectorStore:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- writes -------------------------------------------------------------

    def _prepare(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None,
        ids: Sequence[str | None] | None,
    ) -> tuple[list[str], list[str], list[dict[str, Any]]]:
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"got {len(metadatas)} metadatas for {len(texts)} texts")
        if ids is not None and len(ids) != len(texts):
            raise ValueError(f"got {len(ids)} ids for {len(texts)} texts")
        out_ids = [str(uuid.uuid4()) if i is None else i for i in (ids or [None] * len(texts))]
        for i, id_ in enumerate(out_ids):
            if not isinstance(id_, str):
                raise TypeError(f"ids[{i}] must be a str, got {type(id_).__name__}")
        docs = []
        for i, text in enumerate(texts):
            meta = {} if metadatas is None or metadatas[i] is None else metadatas[i]
            if not isinstance(meta, dict):
                raise TypeError(f"metadatas[{i}] must be a dict, got {type(meta).__name__}")
            if self.text_key in meta:
                raise ValueError(
                    f"metadatas[{i}] has the key {self.text_key!r}, which holds the text; "
                    "pass another text_key= to the store"
                )
            docs.append({**meta, self.text_key: text})
        return texts, out_ids, docs

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Embeds texts and upserts them (an existing id is replaced); returns their ids."""
        _no_kwargs("add_texts", kwargs)
        texts, out_ids, docs = self._prepare(texts, metadatas, ids)
        if not texts:
            return []
        vectors = _rows(self.embedding.embed_documents(texts))
        self._store.created(vectors.shape[1]).upsert(out_ids, vectors, docs)
        return out_ids

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """add_texts through strata.AsyncCollection."""
        _no_kwargs("aadd_texts", kwargs)
        texts, out_ids, docs = self._prepare(texts, metadatas, ids)
        if not texts:
            return []
        vectors = _rows(await self.embedding.aembed_documents(texts))
        acol = await self._store.acreated(vectors.shape[1])
        await acol.upsert(out_ids, vectors, docs)
        return out_ids

    def delete(
        self, ids: list[str] | None = None, *, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> bool:
        """Deletes ids (unknown ones are ignored), or the entries matching filter; with
        neither, every entry (LangChain's "None deletes all")."""
        _no_kwargs("delete", kwargs)
        col = self._store.collection
        if col is None:
            return True
        ids_arg, where = _delete_args(ids, filter)
        col.delete(ids_arg, where)
        return True

    async def adelete(
        self, ids: list[str] | None = None, *, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> bool:
        """delete through strata.AsyncCollection."""
        _no_kwargs("adelete", kwargs)
        acol = self._store.async_collection()
        if acol is None:
            return True
        ids_arg, where = _delete_args(ids, filter)
        await acol.delete(ids_arg, where)
        return True

    # --- reads --------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The documents of the ids that exist, in the order of ids."""
        col = self._store.collection
        if col is None or not ids:
            return []
        result = col.get(_id_list(ids))
        return [self._document(i, m) for i, m in zip(result.ids, result.metadata, strict=True)]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """get_by_ids through strata.AsyncCollection."""
        acol = self._store.async_collection()
        if acol is None or not ids:
            return []
        result = await acol.get(_id_list(ids))
        return [self._document(i, m) for i, m in zip(result.ids, result.metadata, strict=True)]

    def _document(self, id_: Any, meta: dict[str, Any] | None) -> Document:
        meta = dict(meta or {})
        text = meta.pop(self.text_key, "")
        return Document(page_content=text, metadata=meta, id=str(id_))

    def _scored(self, result: QueryResult, mode: str) -> list[tuple[Document, float]]:
        """(document, score) of a one-row result, padding dropped."""
        out = []
        scores = result.distances[0] if mode == "dense" else result.scores[0]  # type: ignore[index]
        for id_, meta, score in zip(result.ids[0], result.metadata[0], scores, strict=True):
            if meta is None:  # padding (or an entry deleted since the search found it)
                continue
            out.append((self._document(id_, meta), float(score)))
        return out

    def _plan(
        self,
        query: str | None,
        vector: Any,
        k: int,
        kwargs: dict[str, Any],
        mmr: tuple[int, float] | None = None,
    ) -> tuple[str, str, dict[str, Any]]:
        """The Collection method, retrieval mode and arguments of a search call: every
        search's filter=/where=, ef= and retrieval mode, and with mmr=(fetch_k,
        lambda_mult) a maximal marginal relevance search (dense only)."""
        options = dict(kwargs)
        filter_ = options.pop("filter", None)
        if "where" in options:
            if filter_ is not None:
                raise ValueError("pass filter= or where=, not both")
            filter_ = options.pop("where")
        args: dict[str, Any] = {"k": k, "where": translate_filter(filter_),
                                "ef": options.pop("ef", None)}  # fmt: skip
        if mmr is not None:
            _no_kwargs("max_marginal_relevance_search", options)
            fetch_k, lambda_mult = mmr
            # LangChain's own MMR takes min(k, fetch_k) candidates; strata needs fetch_k >= k.
            args.update(vector=np.asarray(vector, dtype=np.float32), fetch_k=max(fetch_k, k),
                        lambda_mult=lambda_mult)  # fmt: skip
            return "query_mmr", "dense", args
        mode = options.pop("retrieval_mode", self.retrieval_mode)
        _check_mode(mode)
        fusion = options.pop("fusion", self.fusion)
        _no_kwargs("a search", options)
        if mode != "dense":
            if query is None:
                raise ValueError(f'retrieval_mode="{mode}" needs the query text, not a vector')
            args.update(text=query, text_field=self.text_key)
        if mode == "hybrid":
            args["fusion"] = fusion
        if mode != "text":
            args["vector"] = np.asarray(vector, dtype=np.float32)
        return "query", mode, args

    def _needs_vector(self, kwargs: dict[str, Any]) -> bool:
        return kwargs.get("retrieval_mode", self.retrieval_mode) != "text"

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The k documents nearest to query with their distance (dense) or score (text,
        hybrid). kwargs: filter=, retrieval_mode=, fusion=, ef=."""
        col = self._store.collection
        if col is None:
            return []
        vector = self.embedding.embed_query(query) if self._needs_vector(kwargs) else None
        method, mode, args = self._plan(query, vector, k, kwargs)
        return self._scored(getattr(col, method)(**args), mode)

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """similarity_search_with_score through strata.AsyncCollection."""
        acol = self._store.async_collection()
        if acol is None:
            return []
        vector = await self.embedding.aembed_query(query) if self._needs_vector(kwargs) else None
        method, mode, args = self._plan(query, vector, k, kwargs)
        return self._scored(await getattr(acol, method)(**args), mode)

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """The k documents nearest to query (kwargs as similarity_search_with_score)."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """similarity_search through strata.AsyncCollection."""
        pairs = await self.asimilarity_search_with_score(query, k, **kwargs)
        return [doc for doc, _ in pairs]

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The k documents nearest to embedding with their distances (kwargs: filter=, ef=)."""
        col = self._store.collection
        if col is None:
            return []
        method, mode, args = self._plan(None, embedding, k, kwargs)
        return self._scored(getattr(col, method)(**args), mode)

    async def asimilarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """similarity_search_with_score_by_vector through strata.AsyncCollection."""
        acol = self._store.async_collection()
        if acol is None:
            return []
        method, mode, args = self._plan(None, embedding, k, kwargs)
        return self._scored(await getattr(acol, method)(**args), mode)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        """The k documents nearest to embedding (kwargs: filter=, ef=)."""
        pairs = self.similarity_search_with_score_by_vector(embedding, k, **kwargs)
        return [doc for doc, _ in pairs]

    async def asimilarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        """similarity_search_by_vector through strata.AsyncCollection."""
        pairs = await self.asimilarity_search_with_score_by_vector(embedding, k, **kwargs)
        return [doc for doc, _ in pairs]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """LangChain's relevance function for the collection's distance (see the module
        documentation); text and hybrid scores are not distances and have none."""
        if self._metric == "l2":
            return lambda d: self._euclidean_relevance_score_fn(float(np.sqrt(max(d, 0.0))))
        if self._metric == "ip":
            return lambda d: 1.0 - d
        return self._cosine_relevance_score_fn

    def _similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        self._dense_only(kwargs)
        return super()._similarity_search_with_relevance_scores(query, k, **kwargs)

    async def _asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        self._dense_only(kwargs)
        return await super()._asimilarity_search_with_relevance_scores(query, k, **kwargs)

    def _dense_only(self, kwargs: dict[str, Any]) -> None:
        mode = kwargs.get("retrieval_mode", self.retrieval_mode)
        if mode != "dense":
            raise ValueError(
                f'relevance scores are defined for retrieval_mode="dense", got {mode!r}'
            )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """k documents near embedding and diverse, picked by maximal marginal relevance
        among its fetch_k nearest, in the engine (Collection.query_mmr)."""
        col = self._store.collection
        if col is None:
            return []
        method, mode, args = self._plan(None, embedding, k, kwargs, (fetch_k, lambda_mult))
        return [doc for doc, _ in self._scored(getattr(col, method)(**args), mode)]

    async def amax_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """max_marginal_relevance_search_by_vector through strata.AsyncCollection."""
        acol = self._store.async_collection()
        if acol is None:
            return []
        method, mode, args = self._plan(None, embedding, k, kwargs, (fetch_k, lambda_mult))
        return [doc for doc, _ in self._scored(await getattr(acol, method)(**args), mode)]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """max_marginal_relevance_search_by_vector of the query's embedding."""
        if self._store.collection is None:
            return []
        vector = self.embedding.embed_query(query)
        return self.max_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, **kwargs
        )

    async def amax_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """max_marginal_relevance_search through strata.AsyncCollection."""
        if self._store.collection is None:
            return []
        vector = await self.embedding.aembed_query(query)
        return await self.amax_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, **kwargs
        )

    # --- construction -------------------------------------------------------

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> StrataVectorStore:
        """A store (kwargs: path= or collection=, and the constructor's options) holding
        texts."""
        store = cls(embedding=embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    @classmethod
    async def afrom_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> StrataVectorStore:
        """from_texts, adding through strata.AsyncCollection."""
        store = cls(embedding=embedding, **kwargs)
        await store.aadd_texts(texts, metadatas, ids=ids)
        return store


def _check_mode(mode: object) -> None:
    if mode not in _MODES:
        raise ValueError(f"retrieval_mode must be one of {list(_MODES)}, got {mode!r}")


def _no_kwargs(what: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{what} got unexpected keyword arguments {sorted(kwargs)}")


def _rows(vectors: Any) -> np.ndarray:
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] == 0:
        raise ValueError(f"the embedding returned vectors of shape {rows.shape}, want [n, dim]")
    return rows


def _id_list(ids: Sequence[str]) -> list[str]:
    if isinstance(ids, str):
        raise TypeError("ids must be a list of str, got a str")
    out = list(ids)
    for i, id_ in enumerate(out):
        if not isinstance(id_, str):
            raise TypeError(f"ids[{i}] must be a str, got {type(id_).__name__}")
    return out


def _delete_args(
    ids: list[str] | None, filter_: dict[str, Any] | None
) -> tuple[list[str] | None, dict[str, Any] | None]:
    if ids is not None and filter_ is not None:
        raise ValueError("delete takes ids or filter=, not both")
    if ids is not None:
        return _id_list(ids), None
    return None, translate_filter(filter_) or {}
