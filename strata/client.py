"""strata.client: the same Collection API over HTTP, against strata-server.

    >>> from strata.client import Client
    >>> client = Client("http://127.0.0.1:8080")            # api_key=... if the server has one
    >>> col = client.create_collection("docs", dim=384)     # or client.collection("docs")
    >>> col.upsert([1, 2], vectors, metadata=[{"lang": "en"}, {"lang": "fr"}])
    >>> col.query(vectors[0], k=5, where={"lang": "en"}).ids

``strata.client.AsyncClient`` is the same client for asyncio (every call
awaited; it needs httpx, ``pip install 'strata[async]'``): see
strata._client_async.

``client.collection(name)`` implements ``strata.CollectionLike``, the
methods and result types of ``strata.Collection`` (NumPy in,
``QueryResult``/``GetResult`` out), so code moves between embedded and
served mode by changing the line that opens the collection.

Only the standard library talks to the server (http.client, one keep-alive
connection per thread, re-opened after a fork), and nothing here opens the
native engine: ``import strata.client`` is safe in a process that forks.

Errors raise what the embedded library raises for the same mistake:

    400 bad_request, 413, 415, 422              ValueError
    (invalid_argument, limit_exceeded: a server limit, named with its flag)
    401 unauthorized, 403 forbidden             PermissionError
    404 collection_not_found                    FileNotFoundError
    404 point_not_found                         KeyError
    409 collection_exists                       FileExistsError
    503 collection_failed                       strata.CollectionFailedError (an OSError)
    507 insufficient_storage                    OSError, errno ENOSPC
    503 resource_exhausted                      OSError, errno EMFILE
    503 read_only                               OSError, errno EROFS
    503 permission_denied                       PermissionError (errno EACCES)
    anything else (404 route, 405, 500, 503)    RuntimeError
"""

from __future__ import annotations

import errno
import http.client
import json
import os
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from strata._collection import (
    GetResult,
    QueryResult,
    _json_arg,
    _text_fields_arg,
    check_metadata,
    check_where,
)
from strata._fields import (
    check_names,
    check_schema,
    check_vectors_arg,
    field_spec,
    named_from_points,
    named_json,
    query_json,
    schema_of,
)
from strata._ids import id_array, id_values
from strata._index import _as_rows, _i64, _int, _set
from strata._lib import CollectionFailedError, IntegrityError

# AsyncClient and AsyncRemoteCollection are here too, imported when first named (below).
__all__ = ["Client", "RemoteCollection", "ServerError"]


def __getattr__(name: str) -> Any:
    # The asyncio client (strata._client_async) needs httpx, the extra strata[async]:
    # imported when first named, so the sync client keeps to the standard library.
    if name in ("AsyncClient", "AsyncRemoteCollection"):
        from strata import _client_async

        return getattr(_client_async, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ServerError(RuntimeError):
    """A server answer no standard exception describes (a 5xx, an unknown route)."""


_BY_CODE: dict[str, type[Exception]] = {
    "bad_request": ValueError,
    "invalid_argument": ValueError,
    "payload_too_large": ValueError,
    "unsupported_media_type": ValueError,
    "limit_exceeded": ValueError,
    "unauthorized": PermissionError,
    "forbidden": PermissionError,
    "collection_not_found": FileNotFoundError,
    "point_not_found": KeyError,
    "collection_exists": FileExistsError,
    "collection_failed": CollectionFailedError,
}

# The server's environment (go/errkind's resource kinds): OSError with the
# errno, as the embedded library raises them.
_ERRNO_BY_CODE: dict[str, int] = {
    "insufficient_storage": errno.ENOSPC,
    "resource_exhausted": errno.EMFILE,
    "read_only": errno.EROFS,
    "permission_denied": errno.EACCES,
}


class Client:
    """A connection to a strata-server at url (``http://host:port``).

    timeout (seconds) bounds each request; api_key is sent as a bearer token.
    Safe to share between threads: each thread keeps its own connection."""

    def __init__(self, url: str = "http://127.0.0.1:8080", api_key: str | None = None,
                 timeout: float = 30.0) -> None:  # fmt: skip
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"url must be http://host:port or https://host:port, got {url!r}")
        self.url = url.rstrip("/")
        self._https = parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port
        self._prefix = parsed.path.rstrip("/")
        self._timeout = timeout
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key is None:
            api_key = os.environ.get("STRATA_API_KEY") or None
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"strata.client.Client({self.url!r})"

    # --- transport ----------------------------------------------------------

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether it was used before."""
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is not None and local.pid == os.getpid():
            return conn, True
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self._timeout)
        local.conn, local.pid = conn, os.getpid()
        return conn, False

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local.conn = None

    def close(self) -> None:
        """Closes this thread's connection (others close when their threads end)."""
        self._drop_connection()

    def __enter__(self) -> Client:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, method: str, path: str, body: object = None) -> Any:
        """Sends one request and returns the decoded JSON answer, raising on errors."""
        payload = (
            None if body is None else (body if isinstance(body, bytes) else _json_arg(body, "body"))
        )
        while True:
            conn, reused = self._connection()
            try:
                conn.request(method, self._prefix + path, body=payload, headers=self._headers)
                response = conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._drop_connection()
                if reused:
                    continue  # the server closed an idle keep-alive connection: once more, fresh
                raise
            except BaseException:
                self._drop_connection()
                raise
            if response.will_close:
                self._drop_connection()
            break
        if response.status >= 400:
            _raise(response.status, data)
        if response.getheader("Content-Type", "").startswith("application/json"):
            return json.loads(data)
        return data.decode("utf-8", "replace")

    # --- collections ----------------------------------------------------------

    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self.request("GET", "/health")
        return result

    def list_collections(self) -> list[dict[str, Any]]:
        """Every collection's info (name, dim, metric, count, ...)."""
        result: list[dict[str, Any]] = self.request("GET", "/collections")["collections"]
        return result

    def create_collection(
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
    ) -> RemoteCollection:
        """Creates a collection on the server; FileExistsError if the name is taken.

        vectors=, text_fields and text_analyzer are strata.Collection.create's: named
        vector fields instead of dim, and BM25 indexes over those metadata fields."""
        body = _create_body(name, dim, metric, M, ef_construction, quantization, fsync, seed,
                            vectors, text_fields, text_analyzer)  # fmt: skip
        info = self.request("POST", "/collections", body)
        return RemoteCollection(self, info)

    def collection(self, name: str) -> RemoteCollection:
        """The collection called name; FileNotFoundError if there is none."""
        return RemoteCollection(self, self.request("GET", f"/collections/{_quote(name)}"))

    def drop_collection(self, name: str) -> None:
        """Deletes the collection and its files."""
        self.request("DELETE", f"/collections/{_quote(name)}")

    def reopen_collection(self, name: str) -> dict[str, Any]:
        """Closes the collection on the server and opens it again, which recovers one that
        failed (the server also does this by itself, with backoff); returns its info.
        CollectionFailedError if it still will not open."""
        result: dict[str, Any] = self.request("POST", f"/collections/{_quote(name)}/reopen", {})
        return result


def _create_body(
    name: str, dim: int | None, metric: str, M: int, ef_construction: int,  # noqa: N803
    quantization: str | None, fsync: str, seed: int | None, vectors: object,
    text_fields: Sequence[str] | None, text_analyzer: str,
) -> dict[str, Any]:  # fmt: skip
    """The body of POST /collections (shared with the async client)."""
    fields = _text_fields_arg(text_fields)
    # Every range (dim, M, ef_construction, the analyzer) is the engine's to
    # check: the server answers 422 with its message, raised as ValueError.
    body: dict[str, Any] = {"name": name, "fsync": fsync, "text_analyzer": text_analyzer}
    if vectors is not None:
        if dim is not None:
            raise ValueError("give dim (one unnamed field) or vectors= (named fields), not both")
        body["vectors"] = check_schema(vectors)
    elif dim is None:
        raise TypeError("create_collection needs dim (one unnamed field) or vectors= (named)")
    else:
        body.update({"dim": dim, "metric": metric, "M": M, "ef_construction": ef_construction,
                     "quantization": quantization})  # fmt: skip
    if seed is not None:
        body["seed"] = seed
    if fields:
        body["text_fields"] = fields
    return body


def _quote(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a collection name is a str, got {type(name).__name__}")
    return urllib.parse.quote(name, safe="")


def _raise(status: int, data: bytes) -> None:
    try:
        error = json.loads(data)["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "", data[:500].decode("utf-8", "replace")
    if code in _ERRNO_BY_CODE:
        raise OSError(_ERRNO_BY_CODE[code], f"{message} (HTTP {status})")
    exc = _BY_CODE.get(code, ServerError)
    raise exc(f"{message} (HTTP {status})")


class RemoteCollection:
    """A collection on a strata-server, with strata.Collection's methods."""

    def __init__(self, client: Client, info: dict[str, Any]) -> None:
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
            f"strata.client.RemoteCollection({self.path!r}, dim={self._dim}, "
            f"metric={self._metric!r})"
        )

    def _post(self, op: str, body: object) -> Any:
        if self._closed:
            raise ValueError("collection is closed")
        return self._client.request("POST", f"{self._base}/{op}", body)

    def close(self) -> None:
        """Marks this handle closed (the server keeps the collection open for others)."""
        self._closed = True

    def __enter__(self) -> RemoteCollection:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- writes -------------------------------------------------------------

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.schema, as of the last read (refreshed when a call names a
        field it does not list)."""
        return {name: dict(spec) for name, spec in self._schema.items()}

    def _fresh_schema(self, names: Any) -> dict[str, dict[str, Any]]:
        """The schema, read again if it lacks one of names (changed by another client)."""
        if any(name not in self._schema for name in names if isinstance(name, str)):
            self._schema = schema_of(self._client.request("GET", self._base))
        return self._schema

    def update_vectors(self, ids: object, vectors: dict[str, Any]) -> int:
        """strata.Collection.update_vectors."""
        id_vals = id_values(ids, "ids")
        schema = self._fresh_schema(check_vectors_arg(vectors))
        body = {"ids": id_vals, "vectors": named_json(schema, vectors, len(id_vals))}
        return int(self._post("update_vectors", body)["updated"])

    def delete_vectors(self, ids: object, vectors: Sequence[str]) -> int:
        """strata.Collection.delete_vectors."""
        body = {"ids": id_values(ids, "ids"), "vectors": check_names(vectors)}
        return int((self._post("delete_vectors", body))["updated"])

    def add_vector_field(
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
        self._post("add_vector_field", {"name": name, "spec": spec})
        self._schema = schema_of(self._client.request("GET", self._base))

    def remove_vector_field(self, name: str) -> None:
        """strata.Collection.remove_vector_field."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        self._post("remove_vector_field", {"name": name})
        self._schema = schema_of(self._client.request("GET", self._base))

    def upsert(self, ids: object, vectors: Any, metadata: object = None) -> None:
        """Inserts or replaces entries: ids (n ids: integers below 2**63 or strs of 1-512
        bytes, mixed as you like), vectors [n, dim] (or one [dim] vector), metadata a
        list of n dicts (or None); with named vector fields, vectors is a dict (see
        strata.Collection.upsert)."""
        if isinstance(vectors, dict):
            id_vals = id_values(ids, "ids")
            named = named_json(self._fresh_schema(vectors), vectors, len(id_vals))
            body_named: dict[str, Any] = {"ids": id_vals, "vectors": named}
            docs_named = check_metadata(metadata, len(id_vals))
            if docs_named is not None:
                body_named["metadata"] = docs_named
            self._post("upsert", body_named)
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
        self._post("upsert", body)

    def update_metadata(self, ids: object, metadata: object) -> int:
        """Replaces the metadata of existing ids; KeyError if one does not exist."""
        id_vals = id_values(ids, "ids")
        docs = check_metadata(metadata, len(id_vals))
        if docs is None:
            raise TypeError("metadata must be a list of dicts, got None")
        return int(self._post("metadata", {"ids": id_vals, "metadata": docs})["updated"])

    def delete(self, ids: object = None, where: dict[str, Any] | None = None) -> int:
        """Deletes the given ids (unknown ones are ignored) or every entry matching where."""
        if (ids is None) == (where is None):
            raise ValueError("delete needs exactly one of ids= or where=")
        if ids is not None:
            body: dict[str, Any] = {"ids": id_values(ids, "ids")}
        else:
            body = {"filter": check_where(where)}
        return int(self._post("delete", body)["deleted"])

    # --- reads --------------------------------------------------------------

    def query(
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
        """The k nearest entries to each query among those matching where.

        text=, vector=, fusion, text_field, k1 and b are strata.Collection.query's: a
        BM25 or hybrid query, answered with scores and sources (see QueryResult).
        num_threads is accepted for compatibility; the server picks its own.
        exact=True scans every allowed vector instead of walking the graph."""
        del num_threads
        if vector is not None:
            if queries is not None:
                raise ValueError("pass the query vector as queries or as vector=, not both")
            queries = vector
        k = _i64(k, "k")  # the server checks the range before anything is allocated here
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
            return self._query_text(queries, text, body, fusion, text_field, k1, b)
        if queries is None:
            raise ValueError("query needs a query vector (queries or vector=), text=, or both")
        if using is not None:
            body["using"] = using
            body["vectors"], nq = query_json(self._fresh_schema([using]), using, queries)
        else:
            qs, nq = _as_rows(queries, self._dim, "queries", "collection")
            body["vectors"] = qs.reshape(nq, self._dim).tolist()
        answer = self._post("query", body)
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

    def _query_text(
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
            body[name] = float(value)  # the engine checks the range
        if queries is not None:
            qs, nq = _as_rows(queries, self._dim, "queries", "collection")
            if nq != 1:
                raise ValueError(f"a hybrid query takes one query vector, got {nq}")
            body["vector"] = qs.reshape(self._dim).tolist()
        k, include_metadata = body["k"], "metadata" in body["include"]
        hits = self._post("query", body)["results"]
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

    def get(
        self, ids: object, include_vectors: bool = False, *, vectors: Sequence[str] | None = None
    ) -> GetResult:
        """Looks up ids; those that do not exist are left out of the result (vectors=:
        see strata.Collection.get)."""
        include = ["metadata", "vectors"] if include_vectors else ["metadata"]
        body: dict[str, Any] = {"ids": id_values(ids, "ids"), "include": include}
        names = None if vectors is None else check_names(vectors)
        if names is not None:
            body["vectors"] = names
        answer = self._post("get", body)
        result = self._points(answer["points"], include_vectors)
        if names is None:
            return result
        named = named_from_points(self._fresh_schema(names), answer["points"], names)
        return GetResult(result.ids, result.metadata, result.vectors, named)

    def count(self, where: dict[str, Any] | None = None) -> int:
        """How many entries match where (all of them without it)."""
        return int(self._post("count", {"filter": check_where(where)})["count"])

    def __len__(self) -> int:
        return self.count()

    def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
    ) -> Iterator[GetResult]:
        """Yields every entry matching where, in scan order (integer ids ascending, then
        string ids in byte order), batch_size at a time; after= starts past that id."""
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
            answer = self._post("scan", body)
            if answer["points"]:
                yield self._points(answer["points"], include_vectors)
            if answer["next_after"] is None:
                return
            body["after"] = answer["next_after"]

    def checkpoint(self) -> None:
        """Asks the server to write a snapshot and trim the log."""
        self._post("checkpoint", {})

    def create_text_index(self, field: str, analyzer: str = "english") -> None:
        """Has the server keep a BM25 index over the string metadata field of every
        existing and future entry; see strata.Collection.create_text_index."""
        if not isinstance(field, str) or not field:
            raise TypeError(f"field must be a non-empty str, got {field!r}")
        if not isinstance(analyzer, str):
            raise TypeError(f"analyzer must be a str, got {type(analyzer).__name__}")
        self._post("text_index", {"field": field, "analyzer": analyzer})

    def check_integrity(self) -> None:
        """Raises strata.IntegrityError if the server finds the collection's index or
        metadata inconsistent."""
        answer = self._post("check_integrity", {})
        if not answer.get("ok"):
            raise IntegrityError(str(answer.get("problem", "integrity check failed")))

    def info(self) -> dict[str, Any]:
        """The server's description of the collection (count, seq, wal_bytes, ...)."""
        if self._closed:
            raise ValueError("collection is closed")
        result: dict[str, Any] = self._client.request("GET", self._base)
        return result
