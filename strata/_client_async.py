"""strata.client.AsyncClient: strata.client for asyncio, over httpx.AsyncClient.

    >>> from strata.client import AsyncClient
    >>> async with AsyncClient("http://127.0.0.1:8080") as client:
    ...     col = await client.create_collection("docs", dim=384)  # or await client.collection(...)
    ...     await col.upsert([1, 2], vectors, metadata=[{"lang": "en"}, {"lang": "fr"}])
    ...     (await col.query(vectors[0], k=5, where={"lang": "en"})).ids

Client's methods, each a coroutine; ``await client.collection(name)`` is an
AsyncRemoteCollection, which implements strata.AsyncCollectionLike with
RemoteCollection's request bodies and results: both clients run the calls of
strata._remote, and differ only in the transport. The errors are the sync
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

from collections.abc import AsyncIterator, Sequence
from typing import Any

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "strata.client.AsyncClient needs httpx: pip install 'strata[async]'"
    ) from exc

from strata._collection import GetResult
from strata._remote import Call, ClientCalls, CollectionCalls, Endpoint, answer, awaited, payload

__all__ = ["AsyncClient", "AsyncRemoteCollection"]


class AsyncClient(ClientCalls):
    """A connection pool to a strata-server at url (``http://host:port``), for asyncio.

    timeout (seconds) bounds each request; api_key is sent as a bearer token
    (STRATA_API_KEY when not given), as with strata.client.Client."""

    def __init__(self, url: str = "http://127.0.0.1:8080", api_key: str | None = None,
                 timeout: float = 30.0) -> None:  # fmt: skip
        end = Endpoint(url, api_key)
        self.url = end.url
        self._http = httpx.AsyncClient(base_url=self.url, headers=end.headers, timeout=timeout)

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
        data = payload(body)
        try:
            response = await self._http.request(method, path, content=data)
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"{method} {path}: {exc}") from exc
        except httpx.NetworkError as exc:
            raise ConnectionError(f"{method} {path}: {exc}") from exc
        except httpx.TransportError as exc:
            raise OSError(f"{method} {path}: {exc}") from exc
        content_type = response.headers.get("Content-Type", "")
        return answer(response.status_code, content_type, response.content)

    async def _run(self, call: Call[Any]) -> Any:
        """Awaits each request of call (see strata._remote) and returns its result."""
        found = None
        try:
            while True:
                found = await self.request(*call.send(found))
        except StopIteration as done:
            return done.value

    # --- collections ----------------------------------------------------------

    def _collection(self, info: dict[str, Any]) -> AsyncRemoteCollection:
        return AsyncRemoteCollection(self, info)

    health = awaited(ClientCalls.health)
    list_collections = awaited(ClientCalls.list_collections)
    create_collection = awaited(ClientCalls.create_collection, returns="AsyncRemoteCollection")
    collection = awaited(ClientCalls.collection, returns="AsyncRemoteCollection")
    drop_collection = awaited(ClientCalls.drop_collection)
    reopen_collection = awaited(ClientCalls.reopen_collection)


class AsyncRemoteCollection(CollectionCalls):
    """A collection on a strata-server, with strata.AsyncCollection's methods.

    close() marks this handle closed (the server keeps the collection open for
    others); it does not close the AsyncClient's pool, which other handles share."""

    _door = "AsyncRemoteCollection"
    _client: AsyncClient

    async def _run(self, call: Call[Any]) -> Any:
        return await self._client._run(call)

    async def close(self) -> None:
        self._closed = True

    async def __aenter__(self) -> AsyncRemoteCollection:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # Each call's arguments, request and answer are strata._remote.CollectionCalls'.
    update_vectors = awaited(CollectionCalls.update_vectors)
    delete_vectors = awaited(CollectionCalls.delete_vectors)
    add_vector_field = awaited(CollectionCalls.add_vector_field)
    add_sparse_field = awaited(CollectionCalls.add_sparse_field)
    remove_vector_field = awaited(CollectionCalls.remove_vector_field)
    upsert = awaited(CollectionCalls.upsert)
    update_metadata = awaited(CollectionCalls.update_metadata)
    delete = awaited(CollectionCalls.delete)
    checkpoint = awaited(CollectionCalls.checkpoint)
    create_text_index = awaited(CollectionCalls.create_text_index)
    query = awaited(CollectionCalls.query)
    search = awaited(CollectionCalls.search)
    get = awaited(CollectionCalls.get)
    count = awaited(CollectionCalls.count)
    check_integrity = awaited(CollectionCalls.check_integrity)
    info = awaited(CollectionCalls.info)

    async def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> AsyncIterator[GetResult]:
        """strata.client.RemoteCollection.scan as an async iterator, one request per page."""
        body: dict[str, Any] | None = self._scan_body(where, batch_size, include_vectors, after)
        while body is not None:
            found = await self._client.request(*self._post("scan", body))
            page, body = self._scan_page(found, body)
            if page is not None and vectors is not None:
                page = await self.get(list(page.ids), include_vectors, vectors=vectors)
            if page is not None:
                yield page
