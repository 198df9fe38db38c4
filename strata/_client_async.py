"""strata.client.AsyncClient: strata.client for asyncio, over httpx.AsyncClient.

    >>> from strata.client import AsyncClient
    >>> async with AsyncClient("http://127.0.0.1:8080") as client:
    ...     col = await client.create_collection("docs", dim=384)  # or await client.collection(...)
    ...     await col.upsert([1, 2], vectors, metadata=[{"lang": "en"}, {"lang": "fr"}])
    ...     (await col.query(vectors[0], k=5, where={"lang": "en"})).ids

Client's methods, each a coroutine; ``await client.collection(name)`` is an
AsyncRemoteCollection, which implements strata.AsyncCollectionLike with
RemoteCollection's request bodies and results. The errors are the sync
client's (the table in strata.client): the same status codes raise the same
exceptions with the server's message; a refused or dropped connection raises
ConnectionError and a timeout TimeoutError, both OSErrors as with the sync
client.

Why httpx: the sync client uses only the standard library, which has no
asynchronous HTTP client; httpx.AsyncClient is the maintained one with a
connection pool and keep-alive that qdrant-client's AsyncQdrantClient also
uses. It is the extra ``strata[async]``; strata.AsyncCollection (embedded)
needs nothing extra. One AsyncClient holds one connection pool: share it
between tasks rather than opening one per request.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "strata.client.AsyncClient needs httpx: pip install 'strata[async]'"
    ) from exc

from strata._collection import (
    GetResult,
    QueryResult,
    _json_arg,
    check_metadata,
    check_where,
)
from strata._fields import (
    check_names,
    check_vectors_arg,
    field_spec,
    named_from_points,
    named_json,
    query_json,
    schema_of,
)
from strata._ids import id_array, id_values
from strata._index import _as_rows, _i64, _int, _set
from strata._lib import IntegrityError
from strata.client import _create_body, _quote, _raise

__all__ = ["AsyncClient", "AsyncRemoteCollection"]


class AsyncClient:
    """A connection pool to a strata-server at url (``http://host:port``), for asyncio.

    timeout (seconds) bounds each request; api_key is sent as a bearer token
    (STRATA_API_KEY when not given), as with strata.client.Client."""

    def __init__(self, url: str = "http://127.0.0.1:8080", api_key: str | None = None,
                 timeout: float = 30.0) -> None:  # fmt: skip
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"url must be http://host:port or https://host:port, got {url!r}")
        self.url = url.rstrip("/")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key is None:
            api_key = os.environ.get("STRATA_API_KEY") or None
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=timeout)

    def __repr__(self) -> str:
        return f"strata.client.AsyncClient({self.url!r})"

    async def close(self) -> None:
        """Closes the connection pool; later requests raise RuntimeError."""
        await self._http.aclose()

    aclose = close  # the name contextlib.aclosing and httpx use

    async def __aenter__(self) -> AsyncClient:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def request(self, method: str, path: str, body: object = None) -> Any:
        """Sends one request and returns the decoded JSON answer, raising on errors."""
        payload = (
            None if body is None else (body if isinstance(body, bytes) else _json_arg(body, "body"))
        )
        try:
            response = await self._http.request(method, path, content=payload)
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"{method} {path}: {exc}") from exc
        except httpx.NetworkError as exc:
            raise ConnectionError(f"{method} {path}: {exc}") from exc
        except httpx.TransportError as exc:
            raise OSError(f"{method} {path}: {exc}") from exc
        if response.status_code >= 400:
            _raise(response.status_code, response.content)
        if response.headers.get("Content-Type", "").startswith("application/json"):
            return json.loads(response.content)
        return response.text

    # --- collections ----------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("GET", "/health")
        return result

    async def list_collections(self) -> list[dict[str, Any]]:
        """Every collection's info (name, dim, metric, count, ...)."""
        result: list[dict[str, Any]] = (await self.request("GET", "/collections"))["collections"]
        return result

    async def create_collection(
        self,
        name: str,
        dim: int | None = None,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        fsync: str = "always",
        seed: int | None = None,
        *,
        vectors: dict[str, dict[str, Any]] | None = None,
        text_fields: Sequence[str] | None = None,
        text_analyzer: str = "english",
    ) -> AsyncRemoteCollection:
        """strata.client.Client.create_collection; FileExistsError if the name is taken."""
        body = _create_body(name, dim, metric, M, ef_construction, quantization, fsync, seed,
                            vectors, text_fields, text_analyzer)  # fmt: skip
        return AsyncRemoteCollection(self, await self.request("POST", "/collections", body))

    async def collection(self, name: str) -> AsyncRemoteCollection:
        """The collection called name; FileNotFoundError if there is none."""
        info = await self.request("GET", f"/collections/{_quote(name)}")
        return AsyncRemoteCollection(self, info)

    async def drop_collection(self, name: str) -> None:
        """Deletes the collection and its files."""
        await self.request("DELETE", f"/collections/{_quote(name)}")

    async def reopen_collection(self, name: str) -> dict[str, Any]:
        """strata.client.Client.reopen_collection."""
        result: dict[str, Any] = await self.request(
            "POST", f"/collections/{_quote(name)}/reopen", {}
        )
        return result


class AsyncRemoteCollection:
    """A collection on a strata-server, with strata.AsyncCollection's methods.

    close() marks this handle closed (the server keeps the collection open for
    others); it does not close the AsyncClient's pool, which other handles share."""

    def __init__(self, client: AsyncClient, info: dict[str, Any]) -> None:
        self._client = client
        self._name = str(info["name"])
        self._dim = int(info["dim"])
        self._metric = str(info["metric"])
        self._schema = schema_of(info)
        self._base = f"/collections/{_quote(self._name)}"
        self._closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def metric(self) -> str:
        return self._metric

    @property
    def path(self) -> str:
        """The collection's URL (where strata.Collection has a directory)."""
        return self._client.url + self._base

    def __repr__(self) -> str:
        return (
            f"strata.client.AsyncRemoteCollection({self.path!r}, dim={self._dim}, "
            f"metric={self._metric!r})"
        )

    async def _post(self, op: str, body: object) -> Any:
        if self._closed:
            raise ValueError("collection is closed")
        return await self._client.request("POST", f"{self._base}/{op}", body)

    async def close(self) -> None:
        self._closed = True

    async def __aenter__(self) -> AsyncRemoteCollection:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- writes -------------------------------------------------------------

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.schema, as of the last read (refreshed when a call names a
        field it does not list)."""
        return {name: dict(spec) for name, spec in self._schema.items()}

    async def _fresh_schema(self, names: Any) -> dict[str, dict[str, Any]]:
        """The schema, read again if it lacks one of names (changed by another client)."""
        if any(name not in self._schema for name in names if isinstance(name, str)):
            self._schema = schema_of(await self._client.request("GET", self._base))
        return self._schema

    async def update_vectors(self, ids: object, vectors: dict[str, Any]) -> int:
        """strata.Collection.update_vectors."""
        id_vals = id_values(ids, "ids")
        schema = await self._fresh_schema(check_vectors_arg(vectors))
        body = {"ids": id_vals, "vectors": named_json(schema, vectors, len(id_vals))}
        return int((await self._post("update_vectors", body))["updated"])

    async def delete_vectors(self, ids: object, vectors: Sequence[str]) -> int:
        """strata.Collection.delete_vectors."""
        body = {"ids": id_values(ids, "ids"), "vectors": check_names(vectors)}
        return int((await self._post("delete_vectors", body))["updated"])

    async def add_vector_field(
        self,
        name: str,
        dim: int,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        multivector: str | None = None,
    ) -> None:
        """strata.Collection.add_vector_field."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        spec = field_spec(dim, metric, M, ef_construction, quantization, multivector)
        await self._post("add_vector_field", {"name": name, "spec": spec})
        self._schema = schema_of(await self._client.request("GET", self._base))

    async def remove_vector_field(self, name: str) -> None:
        """strata.Collection.remove_vector_field."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        await self._post("remove_vector_field", {"name": name})
        self._schema = schema_of(await self._client.request("GET", self._base))

    async def upsert(self, ids: object, vectors: Any, metadata: object = None) -> None:
        """strata.client.RemoteCollection.upsert (integer and string ids)."""
        if isinstance(vectors, dict):
            id_vals = id_values(ids, "ids")
            named = named_json(await self._fresh_schema(vectors), vectors, len(id_vals))
            body_named: dict[str, Any] = {"ids": id_vals, "vectors": named}
            docs_named = check_metadata(metadata, len(id_vals))
            if docs_named is not None:
                body_named["metadata"] = docs_named
            await self._post("upsert", body_named)
            return
        vecs, n = _as_rows(vectors, self._dim, "vectors", "collection")
        id_vals = id_values(ids, "ids")
        if len(id_vals) != n:
            raise ValueError(f"got {len(id_vals)} ids for {n} vectors")
        body: dict[str, Any] = {
            "ids": id_vals,
            "vectors": vecs.reshape(n, self._dim).tolist(),
        }
        docs = check_metadata(metadata, n)
        if docs is not None:
            body["metadata"] = docs
        await self._post("upsert", body)

    async def update_metadata(self, ids: object, metadata: object) -> int:
        """Replaces the metadata of existing ids; KeyError if one does not exist."""
        id_vals = id_values(ids, "ids")
        docs = check_metadata(metadata, len(id_vals))
        if docs is None:
            raise TypeError("metadata must be a list of dicts, got None")
        answer = await self._post("metadata", {"ids": id_vals, "metadata": docs})
        return int(answer["updated"])

    async def delete(self, ids: object = None, where: dict[str, Any] | None = None) -> int:
        """Deletes the given ids (unknown ones are ignored) or every entry matching where."""
        if (ids is None) == (where is None):
            raise ValueError("delete needs exactly one of ids= or where=")
        if ids is not None:
            body: dict[str, Any] = {"ids": id_values(ids, "ids")}
        else:
            body = {"filter": check_where(where)}
        return int((await self._post("delete", body))["deleted"])

    async def checkpoint(self) -> None:
        """Asks the server to write a snapshot and trim the log."""
        await self._post("checkpoint", {})

    async def create_text_index(self, field: str, analyzer: str = "english") -> None:
        """strata.client.RemoteCollection.create_text_index."""
        if not isinstance(field, str) or not field:
            raise TypeError(f"field must be a non-empty str, got {field!r}")
        if not isinstance(analyzer, str):
            raise TypeError(f"analyzer must be a str, got {type(analyzer).__name__}")
        await self._post("text_index", {"field": field, "analyzer": analyzer})

    # --- reads --------------------------------------------------------------

    async def query(
        self,
        queries: npt.ArrayLike | None = None,
        k: int = 10,
        where: dict[str, Any] | None = None,
        ef: int | None = None,
        *,
        vector: npt.ArrayLike | None = None,
        text: str | None = None,
        fusion: str | dict[str, float] = "rrf",
        text_field: str | None = None,
        k1: float | None = None,
        b: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
        return_stats: bool = False,
        exact: bool = False,
        using: str | None = None,
    ) -> QueryResult:
        """strata.client.RemoteCollection.query."""
        del num_threads
        if vector is not None:
            if queries is not None:
                raise ValueError("pass the query vector as queries or as vector=, not both")
            queries = vector
        k = _i64(k, "k")
        include = ["distances", "metadata"] if include_metadata else ["distances"]
        body: dict[str, Any] = {"k": k, "include": include}
        if ef is not None:
            body["ef"] = _set(ef, "ef")
        if where is not None:
            body["filter"] = check_where(where)
        if exact:
            body["exact"] = True
        if text is not None and using is not None:
            raise ValueError("using= names a vector field: a text query takes text_field=")
        if text is not None:
            return await self._query_text(queries, text, body, fusion, text_field, k1, b)
        if queries is None:
            raise ValueError("query needs a query vector (queries or vector=), text=, or both")
        if using is not None:
            body["using"] = using
            body["vectors"], nq = query_json(await self._fresh_schema([using]), using, queries)
        else:
            qs, nq = _as_rows(queries, self._dim, "queries", "collection")
            body["vectors"] = qs.reshape(nq, self._dim).tolist()
        answer = await self._post("query", body)
        found: list[Any] = [-1] * (nq * k)
        dists = np.full((nq, k), np.inf, dtype=np.float32)
        rows: list[list[dict[str, Any] | None]] = []
        for q, hits in enumerate(answer["results"]):
            row: list[dict[str, Any] | None] = [None] * k
            for j, hit in enumerate(hits):
                found[q * k + j] = hit["id"]
                distance = hit.get("distance")
                dists[q, j] = np.inf if distance is None else distance
                row[j] = hit.get("metadata") if include_metadata else None
            rows.append(row)
        ids = id_array(found, (nq, k))
        if ids.dtype == object:
            ids[ids == -1] = None  # padding, in an answer holding string ids
        stats = None
        if return_stats:
            st = answer["stats"]
            stats = {"plan": st["plan"], "ndis": int(st["distance_computations"]),
                     "allowed": int(st["allowed"]), "ef": int(st["ef"])}  # fmt: skip
        return QueryResult(ids, dists, rows, stats)

    async def _query_text(
        self,
        queries: npt.ArrayLike | None,
        text: object,
        body: dict[str, Any],
        fusion: object,
        text_field: object,
        k1: float | None,
        b: float | None,
    ) -> QueryResult:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if text_field is not None and not isinstance(text_field, str):
            raise TypeError(f"text_field must be a str, got {type(text_field).__name__}")
        body["text"], body["fusion"] = text, fusion
        if text_field is not None:
            body["text_field"] = text_field
        for name, value in (("k1", k1), ("b", b)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
            body[name] = float(value)
        if queries is not None:
            qs, nq = _as_rows(queries, self._dim, "queries", "collection")
            if nq != 1:
                raise ValueError(f"a hybrid query takes one query vector, got {nq}")
            body["vector"] = qs.reshape(self._dim).tolist()
        k, include_metadata = body["k"], "metadata" in body["include"]
        hits = (await self._post("query", body))["results"]
        found: list[Any] = []
        scores = np.full((1, k), np.nan, dtype=np.float32)
        dists = np.full((1, k), np.inf, dtype=np.float32)
        docs: list[dict[str, Any] | None] = [None] * k
        sources: list[str | None] = [None] * k
        for j, hit in enumerate(hits):
            scores[0, j] = hit["score"]
            found.append(hit["id"])
            distance = hit.get("distance")
            dists[0, j] = np.nan if distance is None else distance
            sources[j] = hit["sources"]
            docs[j] = hit.get("metadata") if include_metadata else None
        return QueryResult(id_array(found, (1, k)), dists, [docs], None, scores, [sources])

    def _points(self, points: list[dict[str, Any]], include_vectors: bool) -> GetResult:
        ids = id_array([p["id"] for p in points])
        docs = [p.get("metadata") or {} for p in points]
        vectors = None
        if include_vectors:
            vectors = np.array([p["vector"] for p in points], dtype=np.float32).reshape(
                len(points), self._dim
            )
        return GetResult(ids, docs, vectors)

    async def get(
        self, ids: object, include_vectors: bool = False, *, vectors: Sequence[str] | None = None
    ) -> GetResult:
        """Looks up ids; those that do not exist are left out of the result (vectors=:
        see strata.Collection.get)."""
        include = ["metadata", "vectors"] if include_vectors else ["metadata"]
        body: dict[str, Any] = {"ids": id_values(ids, "ids"), "include": include}
        names = None if vectors is None else check_names(vectors)
        if names is not None:
            body["vectors"] = names
        answer = await self._post("get", body)
        result = self._points(answer["points"], include_vectors)
        if names is None:
            return result
        named = named_from_points(await self._fresh_schema(names), answer["points"], names)
        return GetResult(result.ids, result.metadata, result.vectors, named)

    async def count(self, where: dict[str, Any] | None = None) -> int:
        """How many entries match where (all of them without it)."""
        return int((await self._post("count", {"filter": check_where(where)}))["count"])

    async def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
    ) -> AsyncIterator[GetResult]:
        """strata.client.RemoteCollection.scan as an async iterator, one request per page."""
        batch_size = _int(batch_size, "batch_size", 1, 1 << 24)
        include = ["metadata", "vectors"] if include_vectors else ["metadata"]
        body: dict[str, Any] = {
            "filter": check_where(where),
            "limit": batch_size,
            "include": include,
        }
        if isinstance(after, str):
            body["after"] = after
        elif after is not None:
            body["after"] = _int(after, "after", 0, 2**63 - 1)
        while True:
            answer = await self._post("scan", body)
            if answer["points"]:
                yield self._points(answer["points"], include_vectors)
            if answer["next_after"] is None:
                return
            body["after"] = answer["next_after"]

    async def check_integrity(self) -> None:
        """Raises strata.IntegrityError if the server finds the collection inconsistent."""
        answer = await self._post("check_integrity", {})
        if not answer.get("ok"):
            raise IntegrityError(str(answer.get("problem", "integrity check failed")))

    async def info(self) -> dict[str, Any]:
        """The server's description of the collection (count, seq, wal_bytes, ...)."""
        if self._closed:
            raise ValueError("collection is closed")
        result: dict[str, Any] = await self._client.request("GET", self._base)
        return result
