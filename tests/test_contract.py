"""One behavioural suite for strata.CollectionLike, run unchanged against every door.

The doors: strata.Collection (embedded), strata.client.RemoteCollection (a real
strata-server binary on a loopback port), strata.ray.ShardedCollection (two
shards on a local Ray cluster), and the asyncio doors of strata.AsyncCollectionLike:
strata.AsyncCollection and strata.client.AsyncRemoteCollection, driven through
SyncOverAsync (each call run to completion on one event loop in a thread), so
the one suite states both contracts. A test here states what a user of the contract
may rely on; where a door documents that it cannot do something (the sharded
hybrid query), the test asserts the documented NotImplementedError instead.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import numpy as np
import pytest
from helpers import clustered, reference_distances, start_ray
from server_process import running_server

import strata
from strata.client import Client, RemoteCollection

DOORS = ["embedded", "remote", "ray", "async-embedded", "async-remote"]
DIM = 8
N = 300
_names = itertools.count()

Factory = Callable[..., strata.CollectionLike]
_T = TypeVar("_T")


class EventLoopThread:
    """One asyncio event loop running in a thread, for driving async doors from sync tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class SyncOverAsync:
    """A strata.AsyncCollectionLike seen as a strata.CollectionLike: every coroutine run to
    its end on the loop, scan's async iterator read one page at a time."""

    def __init__(self, inner: strata.AsyncCollectionLike, loop: EventLoopThread) -> None:
        assert isinstance(inner, strata.AsyncCollectionLike)
        self.inner, self._loop = inner, loop

    @property
    def path(self) -> str:
        return self.inner.path

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def metric(self) -> str:
        return self.inner.metric

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        return self.inner.schema

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]:
        return self.inner.sparse_schema

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if inspect.isasyncgenfunction(method):
            return lambda *args, **kwargs: self._pages(method(*args, **kwargs))
        assert inspect.iscoroutinefunction(method), f"{name} of an async door is not a coroutine"
        return lambda *args, **kwargs: self._loop.run(method(*args, **kwargs))

    def _pages(self, pages: Any) -> Iterator[Any]:
        async def step() -> Any:
            return await anext(pages, None)

        while (page := self._loop.run(step())) is not None:
            yield page

    def __len__(self) -> int:
        return int(self._loop.run(self.inner.count()))

    def __enter__(self) -> SyncOverAsync:  # noqa: PYI034 (Self needs 3.11 typing)
        self._loop.run(self.inner.__aenter__())
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._loop.run(self.inner.__aexit__(*exc_info))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("contract") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    start_ray(ray, num_cpus=2, include_dashboard=False, log_to_driver=False,
              configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def event_loop_thread():
    loop = EventLoopThread()
    yield loop
    loop.stop()


@pytest.fixture(params=DOORS)
def door(request) -> str:
    return str(request.param)


@pytest.fixture
def make(door, request, tmp_path) -> Iterator[Factory]:
    """make(metric="l2", vectors=None, sparse_vectors=None) -> a new, empty collection
    behind the door: one unnamed field of DIM, or with vectors= that schema of named
    fields; sparse_vectors= adds sparse fields."""
    opened: list[strata.CollectionLike] = []
    clients: list[Any] = []

    def factory(metric: str = "l2", vectors: dict[str, Any] | None = None,
                sparse_vectors: Any = None) -> strata.CollectionLike:
        name = f"c{next(_names)}"
        col: strata.CollectionLike
        dim = DIM if vectors is None else None
        shape: dict[str, Any] = {"metric": metric, "seed": 1, "vectors": vectors}
        if sparse_vectors is not None:
            shape["sparse_vectors"] = sparse_vectors
        if door == "embedded":
            col = strata.Collection.create(tmp_path / name, dim, **shape)
        elif door == "remote":
            srv = request.getfixturevalue("server")
            client = Client(srv.url, timeout=60)
            col = client.create_collection(name, dim, **shape)
        elif door == "async-embedded":
            loop = request.getfixturevalue("event_loop_thread")
            inner = loop.run(strata.AsyncCollection.create(tmp_path / name, dim, **shape))
            col = SyncOverAsync(inner, loop)
        elif door == "async-remote":
            pytest.importorskip("httpx")
            from strata.client import AsyncClient

            srv = request.getfixturevalue("server")
            loop = request.getfixturevalue("event_loop_thread")

            async def remote() -> strata.AsyncCollectionLike:
                client = AsyncClient(srv.url, timeout=60)
                clients.append(client)
                return await client.create_collection(name, dim, **shape)

            col = SyncOverAsync(loop.run(remote()), loop)
        else:
            request.getfixturevalue("ray_cluster")
            import strata.ray as sray

            col = sray.ShardedCollection(tmp_path / name, shards=2, dim=dim, **shape)
        opened.append(col)
        return col

    yield factory
    for col in opened:
        col.close()
    for client in clients:
        request.getfixturevalue("event_loop_thread").run(client.close())


def fill(col: strata.CollectionLike, n: int = N) -> np.ndarray:
    data, _ = clustered(n, DIM, centres=10, seed=3)
    docs = [{"i": i, "even": i % 2 == 0, "text": f"entry number{i} common"} for i in range(n)]
    col.upsert(np.arange(n), data, metadata=docs)
    return data


# --- the contract itself ----------------------------------------------------


def _public(cls: type, protocol: type = strata.CollectionLike) -> dict[str, inspect.Signature]:
    names = [n for n in dir(protocol) if not n.startswith("_") or n in
             ("__len__", "__enter__", "__exit__", "__aenter__", "__aexit__")]
    out = {}
    for name in names:
        attr = inspect.getattr_static(cls, name, None)
        assert attr is not None, f"{cls.__qualname__} lacks {name}"
        if isinstance(attr, property):
            continue
        out[name] = inspect.signature(getattr(cls, name))
    return out


@pytest.mark.parametrize("cls_name", ["Collection", "RemoteCollection", "ShardedCollection",
                                      "AsyncCollection", "AsyncRemoteCollection"])
def test_every_door_implements_every_method_with_the_protocols_parameters(cls_name):
    protocol: type = strata.CollectionLike
    if cls_name == "ShardedCollection":
        pytest.importorskip("ray")
        cls = importlib.import_module("strata.ray").ShardedCollection
    elif cls_name == "AsyncCollection":
        cls, protocol = strata.AsyncCollection, strata.AsyncCollectionLike
    elif cls_name == "AsyncRemoteCollection":
        pytest.importorskip("httpx")
        cls = importlib.import_module("strata.client").AsyncRemoteCollection
        protocol = strata.AsyncCollectionLike
    else:
        cls = strata.Collection if cls_name == "Collection" else RemoteCollection
    want = _public(protocol, protocol)
    got = _public(cls, protocol)
    for name, sig in want.items():
        params = {p.name: p for p in sig.parameters.values()}
        have = {p.name: p for p in got[name].parameters.values()}
        missing = [p for p in params if p not in have]
        assert not missing, f"{cls_name}.{name} lacks parameters {missing}"
        for p in params.values():
            if p.default is not inspect.Parameter.empty:
                assert have[p.name].default == p.default, (
                    f"{cls_name}.{name}({p.name}=...) defaults to {have[p.name].default!r}, "
                    f"the protocol to {p.default!r}")
        if protocol is strata.AsyncCollectionLike:
            want_kind = _call_kind(getattr(protocol, name))
            assert _call_kind(getattr(cls, name)) == want_kind, (
                f"{cls_name}.{name} is not {want_kind}: it would block the event loop")


def _call_kind(fn: Any) -> str:
    # A protocol declares an async generator method as a plain def returning AsyncIterator.
    if inspect.isasyncgenfunction(fn) or str(inspect.signature(fn).return_annotation).startswith(
            "AsyncIterator"):
        return "an async iterator"
    if inspect.iscoroutinefunction(fn):
        return "a coroutine"
    return "a plain function"


def test_an_open_collection_is_collection_like(make):
    col = make()
    assert isinstance(col, strata.CollectionLike)
    assert (col.dim, col.metric) == (DIM, "l2")
    assert isinstance(col.path, str) and col.path


# --- writes and reads -------------------------------------------------------


def test_upsert_then_get_round_trips_vectors_and_metadata(make):
    col = make()
    data = fill(col)
    assert len(col) == N and col.count() == N
    got = col.get([5, 10**12, 2], include_vectors=True)
    assert got.ids.tolist() == [5, 2]
    assert got.metadata == [{"i": 5, "even": False, "text": "entry number5 common"},
                            {"i": 2, "even": True, "text": "entry number2 common"}]
    np.testing.assert_array_equal(got.vectors, data[[5, 2]])


def test_upsert_replaces_an_existing_id(make):
    col = make()
    fill(col, 20)
    col.upsert([3], np.full(DIM, 9, dtype=np.float32), metadata=[{"new": True}])
    got = col.get([3], include_vectors=True)
    assert got.metadata == [{"new": True}]
    np.testing.assert_array_equal(got.vectors, np.full((1, DIM), 9, dtype=np.float32))
    assert len(col) == 20


def test_query_finds_the_exact_neighbours(make):
    col = make()
    data = fill(col)
    queries = data[:7] + 0.01
    result = col.query(queries, k=5, ef=N)
    truth = np.argsort(reference_distances("l2", queries, data), axis=1, kind="stable")[:, :5]
    assert result.ids.shape == (7, 5) and result.distances.shape == (7, 5)
    assert (result.ids == truth).mean() >= 0.95
    assert np.all(np.diff(result.distances, axis=1) >= 0)
    assert result.metadata[0][0] == {"i": int(result.ids[0, 0]),
                                      "even": int(result.ids[0, 0]) % 2 == 0,
                                      "text": f"entry number{int(result.ids[0, 0])} common"}


def test_query_with_fewer_matches_than_k_pads(make):
    col = make()
    fill(col, 10)
    result = col.query(np.zeros(DIM, dtype=np.float32), k=8, where={"i": {"$lt": 3}})
    assert sorted(result.ids[0, :3].tolist()) == [0, 1, 2]
    assert result.ids[0, 3:].tolist() == [-1] * 5
    assert np.all(np.isinf(result.distances[0, 3:]))
    assert result.metadata[0][3:] == [None] * 5


def test_where_filters_query_count_and_delete(make):
    col = make()
    data = fill(col)
    result = col.query(data[:4], k=10, where={"even": True})
    assert np.all(result.ids % 2 == 0)
    assert col.count(where={"even": True}) == N // 2
    assert col.count(where={"i": {"$gte": 290}}) == 10
    assert col.delete(where={"i": {"$gte": 290}}) == 10
    assert len(col) == N - 10
    assert col.get(list(range(285, 300))).ids.tolist() == list(range(285, 290))


def test_delete_by_ids_ignores_unknown_ids(make):
    col = make()
    fill(col, 20)
    assert col.delete(ids=[1, 2, 10**9]) == 2
    assert len(col) == 18
    with pytest.raises(ValueError, match="exactly one"):
        col.delete()


def test_update_metadata_keeps_the_vector_and_refuses_missing_ids(make):
    col = make()
    data = fill(col, 20)
    assert col.update_metadata([4], [{"x": 1}]) == 1
    got = col.get([4], include_vectors=True)
    assert got.metadata == [{"x": 1}]
    np.testing.assert_array_equal(got.vectors[0], data[4])
    with pytest.raises(KeyError):
        col.update_metadata([4, 999], [{"x": 2}, {"x": 3}])
    assert col.get([4]).metadata == [{"x": 1}]


def test_scan_yields_every_match_in_id_order_and_resumes_after_an_id(make):
    col = make()
    fill(col, 50)
    pages = list(col.scan(where={"even": False}, batch_size=7))
    ids = np.concatenate([p.ids for p in pages]).tolist()
    assert ids == list(range(1, 50, 2))
    assert all(len(p) <= 7 for p in pages)
    assert pages[0].metadata[0] == {"i": 1, "even": False, "text": "entry number1 common"}
    resumed = np.concatenate([p.ids for p in col.scan(batch_size=10, after=39)]).tolist()
    assert resumed == list(range(40, 50))
    with_vectors = next(col.scan(batch_size=3, include_vectors=True))
    assert with_vectors.vectors.shape == (3, DIM)


# --- text and hybrid --------------------------------------------------------


def test_text_index_made_after_writes_answers_bm25(make):
    col = make()
    fill(col, 40)
    col.create_text_index("text", analyzer="simple")
    result = col.query(text="number17", k=5)
    assert result.ids[0, 0] == 17
    assert result.sources[0][0] == "text"
    assert result.scores[0, 0] > 0
    broad = col.query(text="common", k=40)
    scores = broad.scores[0]
    assert np.all(np.diff(scores[~np.isnan(scores)]) <= 1e-6)
    assert sorted(broad.ids[0].tolist()) == list(range(40))


def test_hybrid_query_fuses_or_says_what_to_do_instead(make, door):
    col = make()
    data = fill(col, 40)
    col.create_text_index("text", analyzer="simple")
    if door == "ray":
        with pytest.raises(NotImplementedError, match="separately"):
            col.query(data[17], text="number17", k=5)
        return
    result = col.query(data[17], text="number17", k=5)
    assert result.ids[0, 0] == 17 and result.sources[0][0] == "both"


# --- maintenance and errors -------------------------------------------------


def test_checkpoint_keeps_every_entry_and_integrity_holds(make):
    col = make()
    fill(col, 60)
    col.checkpoint()
    col.check_integrity()
    assert len(col) == 60
    assert isinstance(col.info(), dict)


def test_wrong_shapes_and_arguments_raise_value_or_type_errors(make):
    col = make()
    fill(col, 10)
    with pytest.raises(ValueError):
        col.upsert([1], np.zeros(DIM + 1, dtype=np.float32))
    with pytest.raises(ValueError):
        col.upsert([1, 2], np.zeros((1, DIM), dtype=np.float32))
    with pytest.raises(ValueError):
        col.query(np.zeros(DIM - 1, dtype=np.float32))
    with pytest.raises((ValueError, TypeError)):
        col.query(np.zeros(DIM, dtype=np.float32), k=0)
    with pytest.raises(ValueError):
        col.count(where={"i": {"$frobnicate": 1}})
    assert len(col) == 10


def test_a_closed_collection_refuses_every_call(make):
    col = make()
    fill(col, 5)
    with col:
        pass
    for call in (lambda: col.upsert([1], np.zeros(DIM, dtype=np.float32)),
                 lambda: col.query(np.zeros(DIM, dtype=np.float32)),
                 lambda: col.get([1]), lambda: col.count(), lambda: col.info()):
        with pytest.raises(ValueError, match="closed"):
            call()


# --- string ids -------------------------------------------------------------

_STRING_IDS = ["doc-b", "doc-a", "ünï-cödé", "z" * 512, "2"]


def fill_mixed(col: strata.CollectionLike) -> tuple[list[int | str], np.ndarray]:
    """Ten entries: five string ids and five integer ids, interleaved."""
    ids: list[int | str] = [v for pair in zip(_STRING_IDS, [9, 3, 40, 0, 7], strict=True)
                            for v in pair]
    data, _ = clustered(len(ids), DIM, centres=3, seed=5)
    col.upsert(ids, data, metadata=[{"n": i, "text": f"word{i} common"} for i in range(len(ids))])
    return ids, data


def test_string_ids_come_back_as_written_and_integer_answers_stay_int64(make):
    col = make()
    ids, data = fill_mixed(col)
    got = col.get(["doc-a", 3, "missing", "ünï-cödé"], include_vectors=True)
    assert got.ids.dtype == object and got.ids.tolist() == ["doc-a", 3, "ünï-cödé"]
    assert [d["n"] for d in got.metadata] == [ids.index(v) for v in got.ids.tolist()]
    np.testing.assert_allclose(got.vectors[0], data[ids.index("doc-a")], rtol=1e-6)
    only_ints = col.get(np.array([9, 7], dtype=np.int64))
    assert only_ints.ids.dtype == np.int64 and only_ints.ids.tolist() == [9, 7]
    for row, id_ in enumerate(ids):
        found = col.query(data[row], k=1)
        assert found.ids[0, 0] == id_
        assert found.ids.dtype == (object if isinstance(id_, str) else np.int64)
    padded = col.query(data[0], k=len(ids) + 3)
    assert padded.ids.dtype == object
    assert sorted(map(str, padded.ids[0, : len(ids)].tolist())) == sorted(map(str, ids))
    assert padded.ids[0, len(ids):].tolist() == [None] * 3
    ints_only = col.query(data[1], k=2, where={"n": {"$in": [1, 3]}})
    assert ints_only.ids.dtype == np.int64 and set(ints_only.ids[0].tolist()) == {9, 3}
    assert len(col) == len(ids)


def test_scan_gives_integers_ascending_then_strings_by_bytes_and_resumes_after_either(make):
    col = make()
    ids, _ = fill_mixed(col)
    order = sorted(i for i in ids if isinstance(i, int)) + sorted(
        (s for s in ids if isinstance(s, str)), key=str.encode)
    pages = list(col.scan(batch_size=3))
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert [v for p in pages for v in p.ids.tolist()] == order
    assert pages[0].ids.dtype == np.int64  # a page of integers is an int64 array
    assert [v for p in col.scan(batch_size=4, after="doc-a") for v in p.ids.tolist()] == \
        order[order.index("doc-a") + 1:]
    assert [v for p in col.scan(batch_size=4, after=9) for v in p.ids.tolist()] == \
        order[order.index(9) + 1:]


def test_string_ids_update_delete_and_text_queries_like_integers(make):
    col = make()
    ids, _ = fill_mixed(col)
    assert col.update_metadata(["doc-b", 9], [{"n": 100}, {"n": 101}]) == 2
    assert col.get(["doc-b"]).metadata == [{"n": 100}]
    with pytest.raises(KeyError):
        col.update_metadata(["doc-b", "nope"], [{"n": 1}, {"n": 2}])
    col.create_text_index("text", analyzer="simple")
    hit = col.query(text="word4", k=3)
    assert hit.ids[0, 0] == ids[4] and hit.ids.dtype == object
    assert hit.ids[0, 1:].tolist() == [None, None]
    assert col.delete(["doc-a", "nope", 3]) == 2
    assert col.get(["doc-a", 3]).ids.tolist() == []
    assert len(col) == len(ids) - 2


@pytest.mark.parametrize(("bad", "error"), [
    ("", ValueError), ("x" * 513, ValueError), ("lone \ud800", ValueError),
    (-1, ValueError), (2**63, ValueError), (2**64, ValueError),
    (1.5, TypeError), (True, TypeError), (None, TypeError),
])
def test_bad_ids_raise_the_same_error_on_every_door(make, bad, error):
    col = make()
    fill_mixed(col)
    with pytest.raises(error):
        col.upsert(["ok", bad], np.zeros((2, DIM), dtype=np.float32))
    assert col.get(["ok"]).ids.tolist() == []
    assert len(col) == 10


# --- expiring points ---------------------------------------------------------
# No test waits for time to pass: an entry expires here because its expires_at is
# already past when it is written; one that must stay has an hour or more to live.


def test_an_expired_entry_is_gone_for_every_read_on_every_door(make):
    col = make()
    data = fill(col, 20)
    past = time.time() - 60
    col.upsert([3, 4, "s"], data[[3, 4, 5]], metadata=[{"i": 3}, {"i": 4}, {"i": 5}],
               expires_at=[past, None, past])
    assert len(col) == 19 and col.count() == 19 and col.count({"i": {"$lt": 5}}) == 4
    assert col.get([3, 4, "s"]).ids.tolist() == [4]
    found = col.query(data[3], k=20).ids.ravel().tolist()
    assert 3 not in found and "s" not in found and 4 in found
    scanned = [i for page in col.scan(batch_size=7) for i in page.ids.tolist()]
    assert 3 not in scanned and len(scanned) == 19
    col.upsert([3], data[3])  # a new version, without an expiry
    assert col.get([3]).ids.tolist() == [3]


def test_ttl_and_expires_at_read_back_on_every_door(make):
    col = make()
    before = time.time()
    vecs = np.zeros((3, DIM), dtype=np.float32)
    col.upsert([1, 2, "c"], vecs, ttl=[3600, None, 7200])
    got = col.get([1, 2, "c"], include_expiry=True)
    assert got.ids.tolist() == [1, 2, "c"]
    assert before + 3600 <= got.expires_at[0] <= time.time() + 3600
    assert np.isnan(got.expires_at[1])
    assert got.expires_at[2] - got.expires_at[0] == pytest.approx(3600, abs=5)
    col.upsert([1], vecs[:1], expires_at=before + 86400)
    assert col.get([1], include_expiry=True).expires_at[0] == pytest.approx(before + 86400)
    assert col.get([1]).expires_at is None


@pytest.mark.parametrize("kwargs", [
    {"ttl": -1}, {"ttl": float("inf")}, {"ttl": float("nan")}, {"expires_at": [1.0, -2.0]},
    {"ttl": [1, 2, 3]}, {"ttl": 1, "expires_at": 1},
])
def test_a_bad_expiry_raises_value_error_and_writes_nothing_on_every_door(make, kwargs):
    col = make()
    with pytest.raises(ValueError):
        col.upsert([1, 2], np.zeros((2, DIM), dtype=np.float32), **kwargs)
    assert len(col) == 0


# --- named vector fields and multivectors -----------------------------------

SCHEMA = {"text": {"dim": 4, "metric": "l2"}, "image": {"dim": 3, "metric": "ip"},
          "tokens": {"dim": 2, "metric": "ip", "multivector": "max_sim"}}


def fill_named(col: strata.CollectionLike, n: int = 40) -> dict[str, Any]:
    """n points with ids 0..n-1 (odd ones as strs), every one with "text", the even ones
    with "image", every third with 1-3 "tokens" rows."""
    rng = np.random.default_rng(5)
    ids: list[int | str] = [i if i % 2 == 0 else f"p{i}" for i in range(n)]
    text = rng.random((n, 4), dtype=np.float32)
    image: list[Any] = [rng.random(3, dtype=np.float32) if i % 2 == 0 else None for i in range(n)]
    tokens: list[Any] = [rng.random((1 + i % 3, 2), dtype=np.float32) if i % 3 == 0 else None
                         for i in range(n)]
    col.upsert(ids, {"text": text, "image": image, "tokens": tokens},
               metadata=[{"i": i} for i in range(n)])
    return {"ids": ids, "text": text, "image": image, "tokens": tokens}


def _maxsim(query: np.ndarray, rows: np.ndarray) -> float:
    return float((query @ rows.T).max(axis=1).sum())


def test_named_fields_show_in_schema_and_info(make):
    col = make(vectors=SCHEMA)
    schema = col.schema
    assert sorted(schema) == ["image", "text", "tokens"]
    assert schema["text"]["dim"] == 4 and schema["text"]["metric"] == "l2"
    assert schema["tokens"]["multivector"] == "max_sim" and schema["image"]["multivector"] == "none"


def test_query_using_a_named_field_finds_its_exact_neighbours_among_those_that_have_it(make):
    col = make(vectors=SCHEMA)
    data = fill_named(col)
    q = np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
    got = col.query(q, k=5, using="text", ef=200)
    want = np.argsort(((data["text"] - q) ** 2).sum(axis=1), kind="stable")[:5]
    assert list(got.ids[0]) == [data["ids"][i] for i in want]
    qi = np.array([1.0, 0.0, 0.5], dtype=np.float32)
    got = col.query(qi, k=40, using="image", where={"i": {"$lt": 20}})
    have = [i for i in range(20) if data["image"][i] is not None]
    assert sorted(str(x) for x in got.ids[0] if x is not None and x != -1) == sorted(
        str(data["ids"][i]) for i in have)
    best = max(have, key=lambda i: float(data["image"][i] @ qi))
    assert got.ids[0][0] == data["ids"][best]


def test_a_multivector_query_is_scored_by_max_sim_over_the_points_that_have_the_field(make):
    col = make(vectors=SCHEMA)
    data = fill_named(col)
    query = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    got = col.query(query, k=3, using="tokens", ef=100)
    have = [i for i, t in enumerate(data["tokens"]) if t is not None]
    want = sorted(have, key=lambda i: -_maxsim(query, data["tokens"][i]))[:3]
    assert list(got.ids[0]) == [data["ids"][i] for i in want]
    batch = col.query([query, query[:1]], k=2, using="tokens", ef=100)
    assert batch.ids.shape == (2, 2) and list(batch.ids[0]) == list(got.ids[0][:2])


def test_get_named_vectors_masks_the_points_that_lack_a_field(make):
    col = make(vectors=SCHEMA)
    data = fill_named(col, n=7)
    got = col.get([0, "p1", 3, "missing", 6], vectors=["image", "tokens"])
    assert list(got.ids) == [0, "p1", 6]
    image, tokens = got.named_vectors["image"], got.named_vectors["tokens"]
    assert list(image.mask) == [True, False, True]
    np.testing.assert_allclose(image.value(2), data["image"][6], rtol=1e-6)
    assert image.value(1) is None
    assert list(tokens.mask) == [True, False, True] and list(tokens.counts) == [1, 1]
    np.testing.assert_allclose(tokens.value(0), data["tokens"][0], rtol=1e-6)


def test_update_and_delete_vectors_change_one_field_and_refuse_missing_points(make):
    col = make(vectors=SCHEMA)
    fill_named(col, n=6)
    rows = np.array([[2.0, 2.0], [3.0, 3.0]], dtype=np.float32)
    assert col.update_vectors(["p1"], {"tokens": [rows]}) == 1
    assert col.delete_vectors([0], ["text", "image"]) == 1
    got = col.get([0, "p1"], vectors=["text", "tokens", "image"])
    assert list(got.named_vectors["text"].mask) == [False, True]
    assert list(got.named_vectors["image"].mask) == [False, False]
    np.testing.assert_allclose(got.named_vectors["tokens"].value(1), rows)
    assert got.metadata == [{"i": 0}, {"i": 1}]  # the documents stay
    with pytest.raises(KeyError, match="nope"):
        col.update_vectors(["nope"], {"tokens": [rows]})
    with pytest.raises(KeyError):
        col.delete_vectors(["nope"], ["text"])
    with pytest.raises(ValueError, match="wrong"):
        col.delete_vectors([0], ["wrong"])


def test_fields_are_added_and_removed_and_points_keep_the_others(make):
    col = make(vectors=SCHEMA)
    fill_named(col, n=4)
    col.add_vector_field("extra", 2, metric="l2")
    assert col.schema["extra"]["dim"] == 2
    col.update_vectors([0], {"extra": np.array([[1.0, 1.0]], dtype=np.float32)})
    got = col.query(np.array([1.0, 1.0], dtype=np.float32), k=4, using="extra")
    assert got.ids[0][0] == 0
    with pytest.raises(FileExistsError, match="extra"):
        col.add_vector_field("extra", 2)
    col.remove_vector_field("text")
    assert "text" not in col.schema
    with pytest.raises(KeyError, match="text"):
        col.remove_vector_field("text")
    with pytest.raises(ValueError, match="text"):
        col.query(np.zeros(4, dtype=np.float32), using="text")
    assert len(col) == 4


def test_named_vector_errors_name_the_field_on_every_door(make):
    col = make(vectors=SCHEMA)
    one = np.ones((1, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="nope"):
        col.upsert([1], {"nope": one})
    with pytest.raises(ValueError, match="text"):
        col.upsert([1], {"text": np.ones((1, 5), dtype=np.float32)})
    with pytest.raises(ValueError, match="text"):
        col.upsert([1, 2], {"text": one})
    with pytest.raises(ValueError, match="tokens"):
        col.upsert([1], {"tokens": np.ones((1, 2), dtype=np.float32)})
    with pytest.raises(ValueError, match="text"):
        col.upsert([1], {"text": np.array([[0, np.nan, 0, 0]], dtype=np.float32)})
    with pytest.raises(ValueError, match="nope"):
        col.query(np.ones(4, dtype=np.float32), using="nope")
    with pytest.raises(TypeError):
        col.upsert([1], {"text": "not vectors"})
    assert len(col) == 0


# --- sparse fields and fused search ------------------------------------------

SPARSE_SCHEMA = {"text": {"dim": 4, "metric": "l2"}}


def fill_sparse(col: strata.CollectionLike, n: int = 30) -> dict[str, Any]:
    """n points (odd ids strs), every one with "text", all but every fourth with "kw":
    1-4 coordinates of indices below 20."""
    rng = np.random.default_rng(11)
    ids: list[int | str] = [i if i % 2 == 0 else f"p{i}" for i in range(n)]
    text = rng.random((n, 4), dtype=np.float32)
    kw: list[Any] = []
    for i in range(n):
        if i % 4 == 3:
            kw.append(None)
            continue
        idx = rng.choice(20, size=1 + i % 4, replace=False)
        kw.append((idx.tolist(), (rng.random(len(idx)) + 0.1).tolist()))
    col.upsert(ids, {"text": text}, metadata=[{"i": i} for i in range(n)],
               sparse_vectors={"kw": kw})
    return {"ids": ids, "text": text, "kw": kw}


def _dot(query: tuple[list[int], list[float]], value: Any) -> float:
    q = dict(zip(*query, strict=True))
    return sum(q.get(i, 0.0) * v for i, v in zip(*value, strict=True))


def test_a_sparse_query_is_exact_by_dot_product_and_takes_the_filter(make):
    col = make(vectors=SPARSE_SCHEMA, sparse_vectors=["kw"])
    data = fill_sparse(col)
    assert col.sparse_schema == {"kw": {"modifier": "none"}}
    query = ([1, 4, 7, 12], [1.0, 0.5, 2.0, 1.0])
    for where in (None, {"i": {"$lt": 15}}):
        got = col.query(sparse=query, using="kw", k=8, where=where)
        limit = 30 if where is None else 15
        scored = [(data["ids"][i], _dot(query, v)) for i, v in enumerate(data["kw"][:limit])
                  if v is not None and set(v[0]) & set(query[0])]
        scored.sort(key=lambda p: -p[1])
        want = scored[:8]
        assert [x for x in got.ids[0] if x is not None and x != -1] == [p for p, _ in want]
        np.testing.assert_allclose(got.scores[0][: len(want)], [s for _, s in want], rtol=1e-5)


def test_get_sparse_vectors_and_update_and_delete_them(make):
    col = make(vectors=SPARSE_SCHEMA, sparse_vectors=["kw"])
    data = fill_sparse(col, n=8)
    got = col.get([0, "p3", "p5", "missing"], vectors=["kw"])
    kw = got.sparse_vectors["kw"]
    assert list(got.ids) == [0, "p3", "p5"]
    assert list(kw.mask) == [True, False, True]
    idx, val = kw.value(2)
    order = np.argsort(data["kw"][5][0])
    assert idx.tolist() == np.asarray(data["kw"][5][0])[order].tolist()
    np.testing.assert_allclose(val, np.asarray(data["kw"][5][1])[order], rtol=1e-6)
    assert col.update_vectors(["p3"], sparse_vectors={"kw": [([19], [3.0])]}) == 1
    assert col.query(sparse=([19], [1.0]), using="kw", k=1).ids[0][0] == "p3"
    assert col.delete_vectors(["p3"], ["kw"]) == 1
    assert "p3" not in list(col.query(sparse=([19], [1.0]), using="kw", k=8).ids[0])
    col.add_sparse_field("tags", modifier="idf")
    assert col.sparse_schema["tags"] == {"modifier": "idf"}
    col.remove_vector_field("tags")
    assert "tags" not in col.sparse_schema


def test_search_fuses_dense_and_sparse_lists_by_rrf_and_dbsf(make):
    col = make(vectors=SPARSE_SCHEMA, sparse_vectors=["kw"])
    data = fill_sparse(col)
    q = np.array([0.2, 0.9, 0.1, 0.5], dtype=np.float32)
    sparse_q = ([1, 4, 7], [1.0, 1.0, 1.0])
    subs = [{"using": "text", "vector": q, "ef": 200, "limit": 10},
            {"using": "kw", "sparse": sparse_q, "limit": 10}]
    dense = list(col.search(subs[:1], k=10, fusion=None).ids[0])
    want_dense = np.argsort(((data["text"] - q) ** 2).sum(axis=1), kind="stable")[:10]
    assert dense == [data["ids"][i] for i in want_dense]
    sparse = [x for x in col.search(subs[1:], k=10, fusion=None).ids[0] if x not in (None, -1)]
    rrf: dict[Any, float] = {}
    for ranking in (dense, sparse):
        for rank, pid in enumerate(ranking):
            rrf[pid] = rrf.get(pid, 0.0) + 1 / (2 + rank)
    got = col.search(subs, k=5, fusion="rrf")
    np.testing.assert_allclose(got.scores[0], sorted(rrf.values(), reverse=True)[:5])
    assert all(rrf[pid] == pytest.approx(s) for pid, s in zip(got.ids[0], got.scores[0],
                                                              strict=True))
    dbsf = col.search(subs, k=5, fusion="dbsf", where={"i": {"$lt": 20}})
    assert all(m["i"] < 20 for m in dbsf.metadata[0])
    assert list(dbsf.scores[0]) == sorted(dbsf.scores[0], reverse=True)


def test_sparse_and_search_errors_name_the_problem_on_every_door(make):
    col = make(vectors=SPARSE_SCHEMA, sparse_vectors=["kw"])
    fill_sparse(col, n=4)
    with pytest.raises(ValueError, match="kw"):
        col.upsert([1], sparse_vectors={"kw": [([1, 1], [1.0, 2.0])]})
    with pytest.raises(ValueError, match="kw"):
        col.upsert([1, 2], sparse_vectors={"kw": [([1], [1.0])]})
    with pytest.raises(ValueError, match="text"):
        col.query(sparse=([1], [1.0]), using="text", k=2)
    with pytest.raises(ValueError, match="exactly one of"):
        col.search([{"using": "text"}], k=2)
    with pytest.raises(ValueError, match="'rrf', 'dbsf' or None"):
        col.search([{"using": "kw", "sparse": ([1], [1.0])}], k=2, fusion="mean")
    assert len(col) == 4


def test_scan_carries_named_and_sparse_vectors_when_asked(make):
    col = make(vectors=SPARSE_SCHEMA, sparse_vectors=["kw"])
    data = fill_sparse(col, n=9)
    pages = list(col.scan(batch_size=4, vectors=["kw", "text"]))
    assert [len(p) for p in pages] == [4, 4, 1]
    for page in pages:
        kw, text = page.sparse_vectors["kw"], page.named_vectors["text"]
        for j, pid in enumerate(page.ids.tolist()):
            i = data["ids"].index(pid)
            assert (kw.value(j) is None) == (data["kw"][i] is None)
            np.testing.assert_allclose(text.value(j), data["text"][i], rtol=1e-6)
