"""strata-server and strata.client: the real binary on a loopback port."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.request

import numpy as np
import pytest
from helpers import clustered
from server_process import BINARY, ServerProcess, free_port, running_server

import strata
from strata.client import Client, RemoteCollection

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

DIM = 16


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("srv") / "data") as srv:
        yield srv


@pytest.fixture
def client(server):
    with Client(server.url, timeout=30) as c:
        yield c


def _fill(col, n=500, seed=0):
    data, queries = clustered(n, DIM, centres=20, queries=5, seed=seed)
    docs = [{"i": i, "even": i % 2 == 0, "text": f"doc {i}"} for i in range(n)]
    col.upsert(np.arange(n), data, metadata=docs)
    return data, queries


def _workload(col):
    """The same calls on an embedded or a remote collection."""
    _, queries = _fill(col)
    exact = col.query(queries, k=5, ef=600)
    filtered = col.query(queries, k=5, where={"even": True}, ef=600)
    got = col.get([3, 99999, 7], include_vectors=True)
    col.update_metadata([3], [{"i": 3, "text": "changed"}])
    deleted = col.delete(where={"i": {"$gte": 490}})
    pages = list(col.scan(where={"even": False}, batch_size=64))
    return {
        "ids": exact.ids, "dists": exact.distances, "meta": exact.metadata,
        "filtered": filtered.ids, "get_ids": got.ids, "get_vecs": got.vectors,
        "get_meta": got.metadata,
        "after_update": col.get([3]).metadata, "deleted": deleted, "count": col.count(),
        "count_even": col.count(where={"even": True}), "len": len(col),
        "scan": np.concatenate([p.ids for p in pages]), "pages": [len(p) for p in pages],
    }  # fmt: skip


def test_remote_collection_answers_like_the_embedded_one(client, tmp_path):
    embedded = strata.Collection.create(tmp_path / "emb", dim=DIM, metric="l2", seed=1)
    remote = client.create_collection("same", dim=DIM, metric="l2", seed=1)
    assert isinstance(remote, RemoteCollection)
    a, b = _workload(embedded), _workload(remote)
    embedded.close()
    for key in a:
        if key in ("dists", "get_vecs"):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-5, err_msg=key)
        elif isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert a[key] == b[key], key
    assert isinstance(remote.query(np.zeros(DIM) + 1, k=3), strata.QueryResult)
    stats = remote.query(np.ones(DIM), k=3, exact=True, return_stats=True).stats
    assert stats is not None and stats["plan"] == "exact"


def test_server_errors_raise_the_embedded_exception_types(client):
    col = client.create_collection("errs", dim=4, metric="l2")
    col.upsert([1], np.ones((1, 4)))
    with pytest.raises(FileExistsError, match=r"already|exists"):
        client.create_collection("errs", dim=4)
    with pytest.raises(FileNotFoundError):
        client.collection("nope")
    with pytest.raises(ValueError, match="collection names"):
        client.create_collection("../up", dim=4)
    with pytest.raises(KeyError):
        col.update_metadata([42], [{"a": 1}])
    with pytest.raises(ValueError, match=r"NaN|finite"):
        col.upsert([2], np.array([[np.nan, 1, 1, 1]]))
    with pytest.raises(ValueError):
        col.query(np.ones(4), where={"a": {"$bogus": 1}})
    with pytest.raises(ValueError):
        col.upsert([-1], np.ones((1, 4)))
    assert col.count() == 1
    client.drop_collection("errs")
    with pytest.raises(FileNotFoundError):
        col.count()


def test_api_key_is_required_and_checked(tmp_path):
    with running_server(tmp_path / "data", env={"STRATA_API_KEY": "k3y"}) as srv:
        with pytest.raises(PermissionError):
            Client(srv.url, api_key="wrong").list_collections()
        with pytest.raises(PermissionError):
            Client(srv.url, api_key="").list_collections()
        assert Client(srv.url, api_key="").health()["status"] == "ok"
        Client(srv.url, api_key="k3y").create_collection("a", dim=3)
        assert [c["name"] for c in Client(srv.url, api_key="k3y").list_collections()] == ["a"]


def test_sigterm_finishes_in_flight_requests_checkpoints_and_exits_0(tmp_path):
    data_dir = tmp_path / "data"
    srv = ServerProcess(data_dir)
    client = Client(srv.url)
    col = client.create_collection("c", dim=DIM, metric="l2", fsync="never")
    errors: list[BaseException] = []
    acked: list[int] = []

    def writer(base: int) -> None:
        c = Client(srv.url)
        try:
            for i in range(10_000):
                rng = np.random.default_rng(base + i)
                c.collection("c").upsert([base + i], rng.normal(size=(1, DIM)))
                acked.append(base + i)
        except (ConnectionError, OSError, RuntimeError) as exc:  # refused after shutdown began
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(b,)) for b in (0, 100_000)]
    for t in threads:
        t.start()
    while len(acked) < 200:
        threads[0].join(0.01)
    assert srv.stop(signal.SIGTERM) == 0
    for t in threads:
        t.join()
    log = srv.log.read_text()
    assert "stopped: collections checkpointed and closed" in log, log
    reopened = strata.Collection.open(data_dir / "c")
    info = reopened.info()
    assert info["seq"] == info["last_checkpoint_seq"], info
    assert info["recovery"]["replayed_records"] == 0, info
    stored = set(np.concatenate([p.ids for p in reopened.scan(batch_size=100_000)]).tolist())
    assert set(acked) <= stored
    reopened.close()
    del col


def test_import_of_the_client_does_not_start_the_engine():
    code = "import strata.client, strata._lib; assert not strata._lib.loaded(); print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_playground_and_metrics_are_served(server, client):
    with urllib.request.urlopen(server.url + "/") as r:
        page = r.read().decode()
    assert "<html" in page and "strata" in page
    client.create_collection("m", dim=3).upsert([1, 2], np.eye(2, 3))
    metrics = client.request("GET", "/metrics")
    assert 'strata_collection_points{collection="m"} 2' in metrics
    assert "strata_http_request_duration_seconds_bucket" in metrics


def test_remote_text_and_hybrid_queries_answer_like_the_embedded_ones(client, tmp_path):
    words = ["red", "green", "blue", "cats", "dogs", "running", "quick", "brown"]
    n = 300
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    docs = [{"i": i, "body": f"{words[i % 8]} {words[(i // 8) % 8]} {words[(i * 7) % 8]}"}
            for i in range(n)]  # fmt: skip
    embedded = strata.Collection.create(tmp_path / "emb", dim=DIM, metric="cosine", seed=2,
                                        text_fields=["body"], text_analyzer="stop")  # fmt: skip
    remote = client.create_collection("texts", dim=DIM, metric="cosine", seed=2,
                                      text_fields=["body"], text_analyzer="stop")  # fmt: skip
    for col in (embedded, remote):
        col.upsert(np.arange(n), vecs, metadata=docs)
    assert remote.info()["text_fields"][0]["field"] == "body"
    calls = [
        {"text": "quick brown dogs"},
        {"text": "cats", "k1": 0.4, "b": 0.2, "where": {"i": {"$lt": 150}}},
        {"text": "blue running", "vector": vecs[3]},
        {"text": "red", "vector": vecs[7], "fusion": {"alpha": 0.7}, "text_field": "body"},
        {"text": "zebra", "vector": vecs[9], "include_metadata": False},
        {"text": "zebra"},
    ]
    for call in calls:
        a, b = embedded.query(k=12, ef=400, **call), remote.query(k=12, ef=400, **call)
        np.testing.assert_array_equal(a.ids, b.ids, err_msg=str(call))
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-6, err_msg=str(call))
        np.testing.assert_allclose(a.distances, b.distances, rtol=1e-5, err_msg=str(call))
        assert a.sources == b.sources, call
        assert a.metadata == b.metadata, call
    assert remote.query(text="zebra").sources == [[None] * 10]
    with pytest.raises(ValueError, match="alpha"):
        remote.query(text="red", vector=vecs[0], fusion={"alpha": 3})
    with pytest.raises(ValueError, match="one query vector"):
        remote.query(vecs[:2], text="red")
    embedded.close()


def _raw(url, method, path, body, headers):
    """(status, decoded JSON) of a request sent as a browser or curl would."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_cross_site_no_cors_post_deletes_nothing(client, server):
    """Issue 20 item 2: a web page's fetch(url, {mode: "no-cors"}) deleted every point."""
    col = client.create_collection("csrf", dim=DIM, metric="l2")
    _fill(col, n=50)
    browser = {"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://evil.example",
               "Sec-Fetch-Site": "cross-site"}  # fmt: skip
    status, out = _raw(server.url, "POST", "/collections/csrf/delete", {"filter": {}}, browser)
    assert status == 403 and out["error"]["code"] == "forbidden"
    assert "--allow-origin" in out["error"]["message"]
    status, out = _raw(server.url, "POST", "/collections/csrf/delete", {"filter": {}},
                       {"Content-Type": "text/plain"})  # fmt: skip
    assert status == 415 and out["error"]["code"] == "unsupported_media_type"
    status, out = _raw(server.url, "POST", "/collections/csrf/delete", {"filter": {}},
                       {"Content-Type": "application/json", "Host": "evil.example:80"})  # fmt: skip
    assert status == 403 and "--allow-host" in out["error"]["message"]  # DNS rebinding
    assert col.count() == 50


def test_huge_batch_query_is_refused_naming_the_limit(client, server):
    """Issue 20 item 3: 100 queries x k=10,000 with vectors at dim 64 took 1.8 GB."""
    client.create_collection("huge", dim=64, metric="l2").upsert(
        np.arange(10), np.ones((10, 64), dtype=np.float32)
    )
    body = {"vectors": np.ones((100, 64)).tolist(), "k": 10_000, "include": ["vectors"]}
    status, out = _raw(server.url, "POST", "/collections/huge/query", body,
                       {"Content-Type": "application/json"})  # fmt: skip
    assert status == 422 and out["error"]["code"] == "limit_exceeded"
    assert "--max-answer-bytes" in out["error"]["message"]
    from strata.client import _raise

    with pytest.raises(ValueError, match="--max-answer-bytes"):
        _raise(status, json.dumps({"error": out["error"]}).encode())
    with pytest.raises(PermissionError):
        _raise(403, b'{"error": {"code": "forbidden", "message": "cross-origin"}}')


def test_api_key_file_and_no_command_line_on_debug_addr(tmp_path):
    """Issue 20 item 9: /debug/pprof/cmdline showed --api-key."""
    key_file = tmp_path / "key"
    key_file.write_text("s3cret\n")
    debug = f"127.0.0.1:{free_port()}"
    args = ("--api-key-file", str(key_file), "--debug-addr", debug)
    with running_server(tmp_path / "d", *args) as srv:
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://{debug}/debug/pprof/cmdline", timeout=10)
        assert info.value.code == 404
        with urllib.request.urlopen(f"http://{debug}/debug/pprof/", timeout=10) as r:
            assert r.status == 200
        status, _ = _raw(srv.url, "GET", "/collections", None, {})
        assert status == 401
        with Client(srv.url, api_key="s3cret", timeout=30) as c:
            assert c.list_collections() == []


def test_remote_metadata_refuses_what_it_would_change(client):
    """Through the native REST door: integers beyond 2**53 and lone surrogates raise
    ValueError instead of being stored rounded or as U+FFFD."""
    col = client.create_collection("exact", dim=4, metric="l2")
    one = np.ones((1, 4), dtype=np.float32)
    for bad in ({"n": 2**53 + 1}, {"n": 2**70}, {"s": "a\ud800"}):
        with pytest.raises(ValueError):
            col.upsert([1], one, metadata=[bad])
    col.upsert([1], one, metadata=[{"n": 2**53, "f": 1.5e18}])
    with pytest.raises(ValueError):
        col.update_metadata([1], [{"n": -(2**53) - 1}])
    with pytest.raises(ValueError):
        col.count({"n": 2**53 + 1})
    got = col.get([1]).metadata[0]
    assert got == {"n": 2**53, "f": 1.5e18} and type(got["n"]) is int
    client.drop_collection("exact")


def test_a_collection_that_will_not_open_fails_alone(tmp_path):
    # A corrupt collection, or one the embedded library holds open, used to
    # stop the whole server from starting.
    data_dir = tmp_path / "data"
    with running_server(data_dir) as srv:
        client = Client(srv.url)
        for name in ("good", "bad", "held"):
            client.create_collection(name, dim=DIM).upsert([1, 2], np.ones((2, DIM)))
    for f in (data_dir / "bad" / "snapshots").glob("*/*"):  # nothing left to fall back on
        f.write_bytes(b"garbage")
    held = strata.Collection.open(data_dir / "held")
    try:
        with running_server(data_dir) as srv:
            client = Client(srv.url)
            health = client.health()
            assert health["status"] == "degraded" and health["failed"] == 2, health
            assert client.collection("good").count() == 2
            with pytest.raises(strata.CollectionFailedError, match="corrupt"):
                client.collection("bad")
            states = {c["name"]: c["state"] for c in client.list_collections()}
            assert states == {"bad": "failed", "good": "ready", "held": "failed"}, states
            held.close()
            info = client.reopen_collection("held")
            assert info["state"] == "ready" and info["count"] == 2, info
            client.drop_collection("bad")
            client.create_collection("bad", dim=DIM)
            assert client.health()["status"] == "ok"
    finally:
        held.close()


def test_remote_string_ids_come_back_as_written(client):
    """strata.client takes ints, strs, mixed lists and NumPy integer arrays; answers of
    integer ids stay int64 arrays, answers holding a string id are object arrays."""
    col = client.create_collection("strids", dim=2, metric="l2")
    col.upsert(np.arange(3), [[0, 0], [1, 1], [2, 2]])
    assert col.query([0, 0], k=2).ids.dtype == np.int64
    col.upsert(["doc-a", 7, "é"], [[0.1, 0.1], [3, 3], [4, 4]], metadata=[{"k": 1}, {}, {}])
    hits = col.query([0, 0], k=3)
    assert hits.ids.dtype == object and hits.ids.tolist() == [[0, "doc-a", 1]]
    got = col.get(["é", 2, "nope"])
    assert got.ids.tolist() == ["é", 2] and got.metadata == [{}, {}]
    pages = [p.ids.tolist() for p in col.scan(batch_size=2)]
    assert pages == [[0, 1], [2, 7], ["doc-a", "é"]]
    assert [p.ids.tolist() for p in col.scan(after="doc-a")] == [["é"]]
    assert col.update_metadata(["doc-a"], [{"k": 2}]) == 1
    with pytest.raises(TypeError, match=r"ids\[1\] must be an int or a str"):
        col.get([1, 2.5])
    with pytest.raises(ValueError, match="string id must be 1 to 512 bytes"):
        col.upsert([""], [[0, 0]])
    assert col.delete(["doc-a", 0, "missing"]) == 2
    assert len(col) == 4
    client.drop_collection("strids")
