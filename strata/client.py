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
What each call sends and how its answer is read is strata._remote's, shared
with the async client: this module is the blocking transport.

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

import http.client
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from strata._collection import GetResult
from strata._remote import (
    Call,
    ClientCalls,
    CollectionCalls,
    Endpoint,
    ServerError,
    answer,
    blocking,
    payload,
)
from strata._remote import raise_for_error as _raise  # noqa: F401 (strata.client._raise, as before)

# AsyncClient and AsyncRemoteCollection are here too, imported when first named (below).
__all__ = ["Client", "RemoteCollection", "ServerError"]


def __getattr__(name: str) -> Any:
    # The asyncio client (strata._client_async) needs httpx, the extra strata[async]:
    # imported when first named, so the sync client keeps to the standard library.
    if name in ("AsyncClient", "AsyncRemoteCollection"):
        from strata import _client_async

        return getattr(_client_async, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Client(ClientCalls):
    """A connection to a strata-server at url (``http://host:port``).

    timeout (seconds) bounds each request; api_key is sent as a bearer token.
    Safe to share between threads: each thread keeps its own connection."""

    def __init__(self, url: str = "http://127.0.0.1:8080", api_key: str | None = None,
                 timeout: float = 30.0) -> None:  # fmt: skip
        self._endpoint = Endpoint(url, api_key)
        self.url = self._endpoint.url
        self._timeout = timeout
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
        end = self._endpoint
        cls = http.client.HTTPSConnection if end.https else http.client.HTTPConnection
        conn = cls(end.host, end.port, timeout=self._timeout)
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
        data = payload(body)
        end = self._endpoint
        while True:
            conn, reused = self._connection()
            try:
                conn.request(method, end.prefix + path, body=data, headers=end.headers)
                response = conn.getresponse()
                content = response.read()
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
        return answer(response.status, response.getheader("Content-Type", ""), content)

    def _run(self, call: Call[Any]) -> Any:
        """Sends each request of call (see strata._remote) and returns its result."""
        found = None
        try:
            while True:
                found = self.request(*call.send(found))
        except StopIteration as done:
            return done.value

    # --- collections ----------------------------------------------------------

    def _collection(self, info: dict[str, Any]) -> RemoteCollection:
        return RemoteCollection(self, info)

    health = blocking(ClientCalls.health)
    list_collections = blocking(ClientCalls.list_collections)
    create_collection = blocking(ClientCalls.create_collection, returns="RemoteCollection")
    collection = blocking(ClientCalls.collection, returns="RemoteCollection")
    drop_collection = blocking(ClientCalls.drop_collection)
    reopen_collection = blocking(ClientCalls.reopen_collection)


class RemoteCollection(CollectionCalls):
    """A collection on a strata-server, with strata.Collection's methods."""

    _client: Client

    def _run(self, call: Call[Any]) -> Any:
        return self._client._run(call)

    def close(self) -> None:
        """Marks this handle closed (the server keeps the collection open for others)."""
        self._closed = True

    def __enter__(self) -> RemoteCollection:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self.count()

    # Each call's arguments, request and answer are strata._remote.CollectionCalls'.
    update_vectors = blocking(CollectionCalls.update_vectors)
    delete_vectors = blocking(CollectionCalls.delete_vectors)
    add_vector_field = blocking(CollectionCalls.add_vector_field)
    add_sparse_field = blocking(CollectionCalls.add_sparse_field)
    remove_vector_field = blocking(CollectionCalls.remove_vector_field)
    upsert = blocking(CollectionCalls.upsert)
    update_metadata = blocking(CollectionCalls.update_metadata)
    delete = blocking(CollectionCalls.delete)
    checkpoint = blocking(CollectionCalls.checkpoint)
    create_text_index = blocking(CollectionCalls.create_text_index)
    query = blocking(CollectionCalls.query)
    search = blocking(CollectionCalls.search)
    get = blocking(CollectionCalls.get)
    count = blocking(CollectionCalls.count)
    check_integrity = blocking(CollectionCalls.check_integrity)
    info = blocking(CollectionCalls.info)

    def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> Iterator[GetResult]:
        """Yields every entry matching where, in scan order (integer ids ascending, then
        string ids in byte order), batch_size at a time; after= starts past that id.
        vectors= names fields each page carries (read with get(vectors=), one more
        request per page)."""
        body: dict[str, Any] | None = self._scan_body(where, batch_size, include_vectors, after)
        while body is not None:
            page, body = self._scan_page(self._client.request(*self._post("scan", body)), body)
            if page is not None and vectors is not None:
                page = self.get(list(page.ids), include_vectors, vectors=vectors)
            if page is not None:
                yield page
