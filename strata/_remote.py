"""The HTTP clients' one definition of each call, without the I/O (sans-I/O).

strata.client.Client/RemoteCollection (standard library, blocking) and
strata.client.AsyncClient/AsyncRemoteCollection (httpx, asyncio) differ only
in how a request reaches the server. Everything else lives here once: the
URL and headers, the route and body of each call, the argument checks, the
parsing of an answer into a QueryResult or GetResult, and the mapping of an
error answer to the exception the embedded library raises.

Each call of a collection is a generator (a ``Call``): it checks its
arguments, yields the requests it needs as ``(method, path, body)`` (usually
one; two when the schema must be read again first) and is sent each decoded
answer; its return value is the call's result. A client runs it with its own
transport: ``Client._run`` in a loop, ``AsyncClient._run`` awaiting each
request. ``blocking`` and ``awaited`` turn a Call into the public method of
each door, with the Call's signature and documentation.

Only the standard library and NumPy are imported here: ``import strata.client``
must not need httpx.
"""

from __future__ import annotations

import errno
import functools
import inspect
import json
import os
import urllib.parse
from collections.abc import Callable, Coroutine, Generator, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from strata._collection import (
    GetResult,
    QueryResult,
    _expiry_arg,
    _json_arg,
    _text_fields_arg,
    check_metadata,
    check_where,
)
from strata._fields import (
    check_fusion,
    check_names,
    check_schema,
    check_sparse_schema,
    check_vectors_arg,
    field_spec,
    named_from_points,
    named_json,
    query_json,
    schema_of,
    search_json,
    sparse_from_points,
    sparse_json,
    sparse_schema_of,
    split_fields,
)
from strata._ids import id_array, id_values
from strata._index import _as_rows, _i64, _int, _set
from strata._lib import CollectionFailedError, IntegrityError

_P = ParamSpec("_P")
_T = TypeVar("_T")

Request = tuple[str, str, object]  # (method, path below the server's URL, body or None)
Call = Generator[Request, Any, _T]  # yields requests, is sent their answers, returns the result


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


def raise_for_error(status: int, data: bytes) -> None:
    """Raises what the embedded library raises for the error answer (status, data)."""
    try:
        error = json.loads(data)["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "", data[:500].decode("utf-8", "replace")
    if code in _ERRNO_BY_CODE:
        raise OSError(_ERRNO_BY_CODE[code], f"{message} (HTTP {status})")
    exc = _BY_CODE.get(code, ServerError)
    raise exc(f"{message} (HTTP {status})")


def answer(status: int, content_type: str, data: bytes) -> Any:
    """The decoded answer of a request (JSON, else text), raising on an error status."""
    if status >= 400:
        raise_for_error(status, data)
    if content_type.startswith("application/json"):
        return json.loads(data)
    return data.decode("utf-8", "replace")


def payload(body: object) -> bytes | None:
    """A request's body as sent: JSON (checked as the embedded library checks it), or bytes."""
    if body is None or isinstance(body, bytes):
        return body
    return _json_arg(body, "body")


class Endpoint:
    """Where a client sends its requests: the server's URL, checked, and the headers
    (the bearer token from api_key, else STRATA_API_KEY)."""

    def __init__(self, url: str, api_key: str | None) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"url must be http://host:port or https://host:port, got {url!r}")
        self.url = url.rstrip("/")
        self.https = parsed.scheme == "https"
        self.host = parsed.hostname
        self.port = parsed.port
        self.prefix = parsed.path.rstrip("/")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key is None:
            api_key = os.environ.get("STRATA_API_KEY") or None
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"


def quote(name: str) -> str:
    """A collection name as one segment of a route."""
    if not isinstance(name, str):
        raise TypeError(f"a collection name is a str, got {type(name).__name__}")
    return urllib.parse.quote(name, safe="")


def collection_route(name: str) -> str:
    return f"/collections/{quote(name)}"


def create_body(
    name: str, dim: int | None, metric: str, M: int, ef_construction: int,  # noqa: N803
    quantization: str | None, fsync: str, seed: int | None, vectors: object,
    text_fields: Sequence[str] | None, text_analyzer: str, sparse_vectors: object = None,
    memory: str = "ram",
) -> dict[str, Any]:  # fmt: skip
    """The body of POST /collections."""
    fields = _text_fields_arg(text_fields)
    # Every range (dim, M, ef_construction, the analyzer) is the engine's to
    # check: the server answers 422 with its message, raised as ValueError.
    body: dict[str, Any] = {"name": name, "fsync": fsync, "text_analyzer": text_analyzer}
    if vectors is not None:
        if dim is not None:
            raise ValueError("give dim (one unnamed field) or vectors= (named fields), not both")
        if memory != "ram":
            raise ValueError("with vectors=, give each field its own 'memory' in its spec")
        body["vectors"] = check_schema(vectors)
    elif dim is None and sparse_vectors is not None:
        body["vectors"] = {}  # sparse fields only
    elif dim is None:
        raise TypeError(
            "create_collection needs dim (one unnamed field), vectors= (named) or sparse_vectors="
        )
    else:
        body.update({"dim": dim, "metric": metric, "M": M, "ef_construction": ef_construction,
                     "quantization": quantization, "memory": memory})  # fmt: skip
    if sparse_vectors is not None:
        body["sparse_vectors"] = check_sparse_schema(sparse_vectors)
    if seed is not None:
        body["seed"] = seed
    if fields:
        body["text_fields"] = fields
    return body


# --- a Call as each door's method ---------------------------------------------


def _door_method(call: Callable[..., Any], fn: Callable[..., Any], returns: str | None) -> None:
    """Gives fn (a door's method running call) call's name, documentation and
    signature, with the Call's result (or returns) as its return annotation."""
    functools.update_wrapper(fn, call)
    del fn.__wrapped__  # else inspect.signature would show the generator's
    sig = inspect.signature(call)
    result = sig.return_annotation  # a str ("Call[int]"): annotations are postponed
    if isinstance(result, str) and result.startswith("Call[") and result.endswith("]"):
        result = result[len("Call["):-1]
    if returns is not None:
        result = returns
    fn.__signature__ = sig.replace(return_annotation=result)


def blocking(
    call: Callable[Concatenate[Any, _P], Call[_T]], returns: str | None = None
) -> Callable[Concatenate[Any, _P], _T]:
    """call as a method of a blocking door, whose _run sends each request."""

    def method(self: Any, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return self._run(call(self, *args, **kwargs))

    _door_method(call, method, returns)
    return method


def awaited(
    call: Callable[Concatenate[Any, _P], Call[_T]], returns: str | None = None
) -> Callable[Concatenate[Any, _P], Coroutine[Any, Any, _T]]:
    """call as a coroutine method of an asyncio door, whose _run awaits each request."""

    async def method(self: Any, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return await self._run(call(self, *args, **kwargs))

    _door_method(call, method, returns)
    return method


# --- a collection's calls -------------------------------------------------------


class CollectionCalls:
    """A collection on a strata-server: its state, and each call as a Call.

    strata.client.RemoteCollection and AsyncRemoteCollection are this with a
    transport (their _run sends a Call's requests through their client); see
    strata.Collection for what each call does."""

    _door = "RemoteCollection"  # the class name, for repr

    def __init__(self, client: Any, info: dict[str, Any]) -> None:
        self._client = client
        self._name = str(info["name"])
        self._dim = int(info["dim"])
        self._metric = str(info["metric"])
        self._schema = schema_of(info)
        self._sparse = sparse_schema_of(info)
        self._base = collection_route(self._name)
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
        return str(self._client.url) + self._base

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.schema, as of the last read (refreshed when a call names a
        field it does not list)."""
        return {name: dict(spec) for name, spec in self._schema.items()}

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.sparse_schema, as of the last read."""
        return {name: dict(spec) for name, spec in self._sparse.items()}

    def __repr__(self) -> str:
        return (
            f"strata.client.{self._door}({self.path!r}, dim={self._dim}, "
            f"metric={self._metric!r})"
        )

    # --- requests -----------------------------------------------------------

    def _post(self, op: str, body: object) -> Request:
        if self._closed:
            raise ValueError("collection is closed")
        return ("POST", f"{self._base}/{op}", body)

    def _fresh_schema(self, names: Any) -> Call[dict[str, dict[str, Any]]]:
        """The schema, read again if it lacks one of names (changed by another client)."""
        if any(name not in self._schema and name not in self._sparse for name in names
               if isinstance(name, str)):  # fmt: skip
            yield from self._reread_schema()
        return self._schema

    def _reread_schema(self) -> Call[None]:
        info = yield ("GET", self._base, None)
        self._schema, self._sparse = schema_of(info), sparse_schema_of(info)

    def _values_json(self, vectors: object, sparse_vectors: object, n: int) -> Call[dict[str, Any]]:
        """A write's "vectors": dense and sparse fields' values by name (sparse fields may
        be named in either argument)."""
        if vectors is not None:
            check_vectors_arg(vectors)
        names = list(vectors or {}) + list(check_vectors_arg(sparse_vectors or {}))
        schema = yield from self._fresh_schema(names)
        dense, sparse = split_fields(vectors, sparse_vectors, list(self._sparse))
        out = named_json(schema, dense, n)
        for name, value in sparse.items():
            out[name] = sparse_json(name, value, n)
        return out

    # --- writes -------------------------------------------------------------

    def update_vectors(
        self, ids: object, vectors: dict[str, Any] | None = None, *,
        sparse_vectors: dict[str, Any] | None = None,
    ) -> Call[int]:  # fmt: skip
        """strata.Collection.update_vectors."""
        id_vals = id_values(ids, "ids")
        values = yield from self._values_json(vectors, sparse_vectors, len(id_vals))
        body = {"ids": id_vals, "vectors": values}
        return int((yield self._post("update_vectors", body))["updated"])

    def delete_vectors(self, ids: object, vectors: Sequence[str]) -> Call[int]:
        """strata.Collection.delete_vectors."""
        body = {"ids": id_values(ids, "ids"), "vectors": check_names(vectors)}
        return int((yield self._post("delete_vectors", body))["updated"])

    def add_vector_field(
        self,
        name: str,
        dim: int,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        multivector: str | None = None,
    ) -> Call[None]:
        """strata.Collection.add_vector_field."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        spec = field_spec(dim, metric, M, ef_construction, quantization, multivector)
        yield self._post("add_vector_field", {"name": name, "spec": spec})
        yield from self._reread_schema()

    def add_sparse_field(self, name: str, modifier: str = "none") -> Call[None]:
        """strata.Collection.add_sparse_field."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if not isinstance(modifier, str):
            raise TypeError(f"modifier must be a str, got {type(modifier).__name__}")
        yield self._post("add_sparse_field", {"name": name, "modifier": modifier})
        yield from self._reread_schema()

    def remove_vector_field(self, name: str) -> Call[None]:
        """strata.Collection.remove_vector_field."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        yield self._post("remove_vector_field", {"name": name})
        yield from self._reread_schema()

    def upsert(
        self, ids: object, vectors: Any = None, metadata: object = None, *,
        sparse_vectors: dict[str, Any] | None = None, ttl: object = None,
        expires_at: object = None,
    ) -> Call[None]:  # fmt: skip
        """Inserts or replaces entries: ids (n ids: integers below 2**63 or strs of 1-512
        bytes, mixed as you like), vectors [n, dim] (or one [dim] vector), metadata a
        list of n dicts (or None); with named vector fields, vectors is a dict, and
        sparse_vectors= gives sparse fields' values; ttl= or expires_at= give the
        entries a time to live (see strata.Collection.upsert)."""
        expiry = _expiry_arg(ttl, expires_at)
        if isinstance(vectors, dict) or sparse_vectors is not None:
            if vectors is not None and not isinstance(vectors, dict):
                vectors = {"": vectors}
            id_vals = id_values(ids, "ids")
            n = len(id_vals)
            values = yield from self._values_json(vectors, sparse_vectors, n)
            body: dict[str, Any] = {"ids": id_vals, "vectors": values}
        else:
            vecs, n = _as_rows(vectors, self._dim, "vectors", "collection")
            id_vals = id_values(ids, "ids")
            if len(id_vals) != n:
                raise ValueError(f"got {len(id_vals)} ids for {n} vectors")
            body = {"ids": id_vals, "vectors": vecs.reshape(n, self._dim).tolist()}
        docs = check_metadata(metadata, n)
        if docs is not None:
            body["metadata"] = docs
        if expiry is not None:  # the values as given (null: never); the server checks them
            given = [None if np.isnan(v) else v for v in expiry.values.tolist()]
            body["ttl" if expiry.is_ttl else "expires_at"] = given
        yield self._post("upsert", body)

    def update_metadata(self, ids: object, metadata: object) -> Call[int]:
        """Replaces the metadata of existing ids; KeyError if one does not exist."""
        id_vals = id_values(ids, "ids")
        docs = check_metadata(metadata, len(id_vals))
        if docs is None:
            raise TypeError("metadata must be a list of dicts, got None")
        return int((yield self._post("metadata", {"ids": id_vals, "metadata": docs}))["updated"])

    def delete(self, ids: object = None, where: dict[str, Any] | None = None) -> Call[int]:
        """Deletes the given ids (unknown ones are ignored) or every entry matching where."""
        if (ids is None) == (where is None):
            raise ValueError("delete needs exactly one of ids= or where=")
        if ids is not None:
            body: dict[str, Any] = {"ids": id_values(ids, "ids")}
        else:
            body = {"filter": check_where(where)}
        return int((yield self._post("delete", body))["deleted"])

    def checkpoint(self) -> Call[None]:
        """Asks the server to write a snapshot and trim the log."""
        yield self._post("checkpoint", {})

    def create_text_index(self, field: str, analyzer: str = "english") -> Call[None]:
        """Has the server keep a BM25 index over the string metadata field of every
        existing and future entry; see strata.Collection.create_text_index."""
        if not isinstance(field, str) or not field:
            raise TypeError(f"field must be a non-empty str, got {field!r}")
        if not isinstance(analyzer, str):
            raise TypeError(f"analyzer must be a str, got {type(analyzer).__name__}")
        yield self._post("text_index", {"field": field, "analyzer": analyzer})

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
        sparse: tuple[Any, Any] | None = None,
    ) -> Call[QueryResult]:
        """The k nearest entries to each query among those matching where.

        text=, vector=, fusion, text_field, k1 and b are strata.Collection.query's: a
        BM25 or hybrid query, answered with scores and sources (see QueryResult).
        num_threads is accepted for compatibility; the server picks its own.
        exact=True scans every allowed vector instead of walking the graph. sparse= and
        text= with using=: see strata.Collection.query."""
        del num_threads
        if vector is not None:
            if queries is not None:
                raise ValueError("pass the query vector as queries or as vector=, not both")
            queries = vector
        if sparse is not None:
            if queries is not None or text is not None:
                raise ValueError("a sparse query takes sparse= alone (no query vector or text)")
            if using is None:
                raise ValueError("a sparse query needs using= (the sparse field's name)")
            sub = {"using": using, "sparse": sparse, "limit": k}
            return (yield from CollectionCalls.search(self, [sub], k=k, fusion=None, where=where,
                                           include_metadata=include_metadata))  # fmt: skip
        if text is not None and using is not None and queries is not None:
            if fusion not in ("rrf", "dbsf"):
                raise ValueError(
                    f"a hybrid query with using= fuses by 'rrf' or 'dbsf', got {fusion!r}"
                )
            subs = [{"using": using, "vector": queries, "ef": ef},
                    {"text": text, "text_field": text_field}]  # fmt: skip
            return (yield from CollectionCalls.search(self, subs, k=k, fusion=fusion, where=where,
                                           rrf_k=60.0 if fusion == "rrf" else None,
                                           include_metadata=include_metadata))  # fmt: skip
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
            raise ValueError("a text query of a field takes text_field=, not using=")
        if text is not None:
            self._text_query_body(body, queries, text, fusion, text_field, k1, b)
            return _text_result((yield self._post("query", body))["results"], k, include_metadata)
        if queries is None:
            raise ValueError("query needs a query vector (queries or vector=), text=, or both")
        if using is not None:
            body["using"] = using
            schema = yield from self._fresh_schema([using])
            body["vectors"], nq = query_json(schema, using, queries)
        else:
            qs, nq = _as_rows(queries, self._dim, "queries", "collection")
            body["vectors"] = qs.reshape(nq, self._dim).tolist()
        found = yield self._post("query", body)
        return _vector_result(found, nq, k, include_metadata, return_stats)

    def search(
        self,
        queries: Sequence[dict[str, Any]],
        k: int = 10,
        *,
        fusion: str | None = "rrf",
        where: dict[str, Any] | None = None,
        rrf_k: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
    ) -> Call[QueryResult]:
        """strata.Collection.search, on the server (POST search: the engine's fusion)."""
        del num_threads
        fusion = check_fusion(fusion)
        k = _i64(k, "k")
        if rrf_k is not None and (isinstance(rrf_k, bool) or not isinstance(rrf_k, (int, float))):
            raise TypeError(f"rrf_k must be a number, got {type(rrf_k).__name__}")
        names = [q.get("using", "") for q in queries if isinstance(q, dict)]
        schema = yield from self._fresh_schema(names)
        body: dict[str, Any] = {
            "queries": search_json(queries, schema, list(self._sparse)), "fusion": fusion,
            "k": k, "include": ["metadata"] if include_metadata else [],
        }  # fmt: skip
        if rrf_k is not None:
            body["rrf_k"] = float(rrf_k)
        if where is not None:
            body["filter"] = check_where(where)
        return _scored_result((yield self._post("search", body))["results"], k, include_metadata)

    def _text_query_body(
        self,
        body: dict[str, Any],
        queries: npt.ArrayLike | None,
        text: object,
        fusion: object,
        text_field: object,
        k1: float | None,
        b: float | None,
    ) -> None:
        """Adds a BM25 or hybrid query's fields to body."""
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

    def _points(
        self, points: list[dict[str, Any]], include_vectors: bool, include_expiry: bool = False
    ) -> GetResult:
        ids = id_array([p["id"] for p in points])
        docs = [p.get("metadata") or {} for p in points]
        vectors = None
        if include_vectors:
            vectors = np.array([p["vector"] for p in points], dtype=np.float32).reshape(
                len(points), self._dim
            )
        expires = None
        if include_expiry:
            at = [p.get("expires_at") for p in points]
            expires = np.array([np.nan if a is None else a for a in at], dtype=np.float64)
        return GetResult(ids, docs, vectors, None, expires)

    def get(
        self, ids: object, include_vectors: bool = False, *, vectors: Sequence[str] | None = None,
        include_expiry: bool = False,
    ) -> Call[GetResult]:  # fmt: skip
        """Looks up ids; those that do not exist (or have expired) are left out of the
        result (vectors=, include_expiry=: see strata.Collection.get)."""
        include = ["metadata", "vectors"] if include_vectors else ["metadata"]
        if include_expiry:
            include.append("expires_at")
        body: dict[str, Any] = {"ids": id_values(ids, "ids"), "include": include}
        names = None if vectors is None else check_names(vectors)
        if names is not None:
            body["vectors"] = names
        points = (yield self._post("get", body))["points"]
        result = self._points(points, include_vectors, include_expiry)
        if names is None:
            return result
        schema = yield from self._fresh_schema(names)
        dense = [name for name in names if name not in self._sparse]
        named = named_from_points(schema, points, dense)
        sparse = {name: sparse_from_points(points, name) for name in names if name not in dense}
        return GetResult(result.ids, result.metadata, result.vectors, named,
                         expires_at=result.expires_at, sparse_vectors=sparse or None)  # fmt: skip

    def count(self, where: dict[str, Any] | None = None) -> Call[int]:
        """How many entries match where (all of them without it)."""
        return int((yield self._post("count", {"filter": check_where(where)}))["count"])

    def _scan_body(
        self, where: dict[str, Any] | None, batch_size: int, include_vectors: bool,
        after: int | str | None,
    ) -> dict[str, Any]:  # fmt: skip
        """The body of a scan's first page; _scan_page gives the next ones."""
        batch_size = _int(batch_size, "batch_size", 1, 1 << 24)
        include = ["metadata", "vectors"] if include_vectors else ["metadata"]
        body: dict[str, Any] = {"filter": check_where(where), "limit": batch_size,
                                "include": include}  # fmt: skip
        if isinstance(after, str):
            body["after"] = after
        elif after is not None:
            body["after"] = _int(after, "after", 0, 2**63 - 1)
        return body

    def _scan_page(
        self, found: dict[str, Any], body: dict[str, Any]
    ) -> tuple[GetResult | None, dict[str, Any] | None]:
        """A scan page's entries (None if it has none) and the next page's body (None at
        the end)."""
        points = found["points"]
        page = self._points(points, "vectors" in body["include"]) if points else None
        if found["next_after"] is None:
            return page, None
        return page, {**body, "after": found["next_after"]}

    def check_integrity(self) -> Call[None]:
        """Raises strata.IntegrityError if the server finds the collection's index or
        metadata inconsistent."""
        found = yield self._post("check_integrity", {})
        if not found.get("ok"):
            raise IntegrityError(str(found.get("problem", "integrity check failed")))

    def info(self) -> Call[dict[str, Any]]:
        """The server's description of the collection (count, seq, wal_bytes, ...)."""
        if self._closed:
            raise ValueError("collection is closed")
        result: dict[str, Any] = yield ("GET", self._base, None)
        return result


def _vector_result(
    found: dict[str, Any], nq: int, k: int, include_metadata: bool, return_stats: bool
) -> QueryResult:
    """A vector query's answer as a QueryResult padded to [nq, k]."""
    ids_found: list[Any] = [-1] * (nq * k)
    dists = np.full((nq, k), np.inf, dtype=np.float32)
    rows: list[list[dict[str, Any] | None]] = []
    for q, hits in enumerate(found["results"]):
        row: list[dict[str, Any] | None] = [None] * k
        for j, hit in enumerate(hits):
            ids_found[q * k + j] = hit["id"]
            distance = hit.get("distance")
            dists[q, j] = np.inf if distance is None else distance
            row[j] = hit.get("metadata") if include_metadata else None
        rows.append(row)
    ids = id_array(ids_found, (nq, k))
    if ids.dtype == object:
        ids[ids == -1] = None  # padding, in an answer holding string ids
    stats = None
    if return_stats:
        st = found["stats"]
        stats = {"plan": st["plan"], "ndis": int(st["distance_computations"]),
                 "allowed": int(st["allowed"]), "ef": int(st["ef"])}  # fmt: skip
    return QueryResult(ids, dists, rows, stats)


def _text_result(hits: list[dict[str, Any]], k: int, include_metadata: bool) -> QueryResult:
    """A BM25 or hybrid query's hits as a QueryResult with scores and sources."""
    ids_found: list[Any] = []
    scores = np.full((1, k), np.nan, dtype=np.float32)
    dists = np.full((1, k), np.inf, dtype=np.float32)
    docs: list[dict[str, Any] | None] = [None] * k
    sources: list[str | None] = [None] * k
    for j, hit in enumerate(hits):
        scores[0, j] = hit["score"]
        ids_found.append(hit["id"])
        distance = hit.get("distance")
        dists[0, j] = np.nan if distance is None else distance
        sources[j] = hit["sources"]
        docs[j] = hit.get("metadata") if include_metadata else None
    return QueryResult(id_array(ids_found, (1, k)), dists, [docs], None, scores, [sources])


def _scored_result(hits: list[dict[str, Any]], k: int, include_metadata: bool) -> QueryResult:
    """A sparse query's or a search's hits as a QueryResult with float64 scores."""
    scores = np.full((1, k), np.nan, dtype=np.float64)
    docs: list[dict[str, Any] | None] = [None] * k
    for j, hit in enumerate(hits):
        scores[0, j] = hit["score"]
        docs[j] = hit.get("metadata") if include_metadata else None
    ids = id_array([hit["id"] for hit in hits], (1, k))
    return QueryResult(ids, np.full((1, k), np.nan, dtype=np.float32), [docs], None, scores)


# --- a client's calls -----------------------------------------------------------


class ClientCalls:
    """The calls of strata.client.Client and AsyncClient, as Calls (the client's _run
    sends their requests)."""

    url: str

    def health(self) -> Call[dict[str, Any]]:
        result: dict[str, Any] = yield ("GET", "/health", None)
        return result

    def list_collections(self) -> Call[list[dict[str, Any]]]:
        """Every collection's info (name, dim, metric, count, ...)."""
        result: list[dict[str, Any]] = (yield ("GET", "/collections", None))["collections"]
        return result

    def _collection(self, info: dict[str, Any]) -> Any:
        """The door's collection handle for the collection described by info."""
        raise NotImplementedError

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
        sparse_vectors: Sequence[str] | dict[str, dict[str, Any]] | None = None,
        text_fields: Sequence[str] | None = None,
        text_analyzer: str = "english",
        memory: str = "ram",
    ) -> Call[Any]:
        """Creates a collection on the server; FileExistsError if the name is taken.

        vectors=, sparse_vectors=, text_fields, text_analyzer and memory are
        strata.Collection.create's: named vector fields instead of dim, sparse fields,
        BM25 indexes over those metadata fields, and where the unnamed field's float
        vectors live ("ram" or "mmap")."""
        body = create_body(name, dim, metric, M, ef_construction, quantization, fsync, seed,
                           vectors, text_fields, text_analyzer, sparse_vectors,
                           memory)  # fmt: skip
        return self._collection((yield ("POST", "/collections", body)))

    def collection(self, name: str) -> Call[Any]:
        """The collection called name; FileNotFoundError if there is none."""
        return self._collection((yield ("GET", collection_route(name), None)))

    def drop_collection(self, name: str) -> Call[None]:
        """Deletes the collection and its files."""
        yield ("DELETE", collection_route(name), None)

    def reopen_collection(self, name: str) -> Call[dict[str, Any]]:
        """Closes the collection on the server and opens it again, which recovers one that
        failed (the server also does this by itself, with backoff); returns its info.
        CollectionFailedError if it still will not open."""
        result: dict[str, Any] = yield ("POST", collection_route(name) + "/reopen", {})
        return result
