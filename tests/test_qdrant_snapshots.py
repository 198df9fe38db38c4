"""Collection snapshots: strata.Collection.snapshot/restore, and qdrant-client's snapshot calls
against strata-server's Qdrant door (REST and prefer_grpc=True): create, list, download, delete,
recover from a file, from this server's own URL and from an upload, bad archives refused; and
the full-storage snapshots (create_full_snapshot, list, download, delete)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.request
import warnings

import grpc
import numpy as np
import pytest
from server_process import BINARY, free_port, running_server

import strata

qdrant_client = pytest.importorskip("qdrant_client")
from qdrant_client import QdrantClient  # noqa: E402
from qdrant_client import models as m  # noqa: E402
from qdrant_client.http.exceptions import UnexpectedResponse  # noqa: E402

DIM = 6


def test_collection_snapshot_and_restore_give_back_every_point(tmp_path):
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, DIM)).astype(np.float32)
    ids = list(range(150)) + [f"doc-{i}" for i in range(150)]
    meta = [{"i": i, "tag": ["a", "b"][i % 2]} for i in range(300)]
    with strata.Collection.create(tmp_path / "src", DIM, metric="l2") as col:
        col.upsert(ids[:200], vectors[:200], meta[:200])
        col.checkpoint()
        col.upsert(ids[200:], vectors[200:], meta[200:])
        col.delete(ids[:5])
        archive = tmp_path / "c.snapshot"
        col.snapshot(archive)
        want = col.get(ids, include_vectors=True)
        col.upsert([10_000], vectors[:1])  # after the snapshot: not in it
    with strata.Collection.restore(archive, tmp_path / "dst") as got:
        assert len(got) == 295
        have = got.get(ids, include_vectors=True)
        assert list(have.ids) == list(want.ids)
        assert have.metadata == want.metadata
        assert have.vectors.tobytes() == want.vectors.tobytes()
        res = got.query(vectors[100], k=1)
        assert res.ids[0][0] == 100
    with pytest.raises(FileExistsError):
        strata.Collection.restore(archive, tmp_path / "dst")
    bad = tmp_path / "bad.snapshot"
    data = bytearray(archive.read_bytes())
    bad.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(ValueError, match="snapshot archive"):
        strata.Collection.restore(bad, tmp_path / "dst2")
    assert not (tmp_path / "dst2").exists()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["bad.snapshot", "c.snapshot", "dst", "src"]


pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)


@pytest.fixture(scope="module", params=["rest", "grpc"])
def server(request, tmp_path_factory):
    port, grpc_port = free_port(), free_port()
    data = tmp_path_factory.mktemp("qdrant") / "data"
    args = ("--qdrant-addr", f"127.0.0.1:{port}", "--qdrant-grpc-addr", f"127.0.0.1:{grpc_port}")
    with running_server(data, *args) as srv:
        srv.qdrant_url = f"http://127.0.0.1:{port}"
        srv.qdrant_grpc_port = grpc_port
        srv.door = request.param
        srv.snapshots = data / "qdrant.snapshots"
        yield srv


@pytest.fixture
def client(server):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = QdrantClient(
            url=server.qdrant_url,
            grpc_port=server.qdrant_grpc_port,
            prefer_grpc=server.door == "grpc",
            timeout=60,
        )
    yield c
    c.close()


def _fill(client, name):
    client.create_collection(
        name,
        vectors_config={"d": m.VectorParams(size=DIM, distance=m.Distance.COSINE)},
        sparse_vectors_config={"s": m.SparseVectorParams()},
    )
    rng = np.random.default_rng(5)
    points = [
        m.PointStruct(
            id=i if i % 2 else f"00000000-0000-0000-0000-{i:012d}",
            vector={
                "d": rng.standard_normal(DIM).astype(np.float32).tolist(),
                "s": m.SparseVector(indices=[i, i + 7], values=[0.5, float(i)]),
            },
            payload={"i": i, "nested": {"tags": ["x", str(i)]}},
        )
        for i in range(60)
    ]
    client.upsert(name, points)


def _state(client, name):
    """Every point with its payload and vectors, vectors as float32 bytes."""
    records, _ = client.scroll(name, limit=1000, with_payload=True, with_vectors=True)
    out = []
    for r in sorted(records, key=lambda r: str(r.id)):
        dense = np.asarray(r.vector["d"], dtype=np.float32).tobytes()
        sparse = r.vector["s"]
        values = np.asarray(sparse.values, np.float32).tobytes()
        payload = json.dumps(r.payload, sort_keys=True)
        out.append((str(r.id), payload, dense, list(sparse.indices), values))
    return out


def _download(server, name, file):
    url = f"{server.qdrant_url}/collections/{name}/snapshots/{file}"
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def _upload(server, name, data):
    """POST /collections/{name}/snapshots/upload as qdrant-client's REST API sends it."""
    rest = QdrantClient(url=server.qdrant_url, timeout=60, check_compatibility=False)
    try:
        return rest.http.snapshots_api.recover_from_uploaded_snapshot(
            collection_name=name, wait=True, snapshot=("x.snapshot", data)
        )
    finally:
        rest.close()


def test_snapshot_calls_round_trip(client, server):
    name = f"snap_{server.door}"
    _fill(client, name)
    want = _state(client, name)

    desc = client.create_snapshot(name, wait=True)
    assert desc.name.startswith(name + "-") and desc.name.endswith(".snapshot")
    listed = client.list_snapshots(name)
    assert [s.name for s in listed] == [desc.name]
    assert listed[0].size == desc.size and listed[0].checksum == desc.checksum
    data = _download(server, name, desc.name)
    assert len(data) == desc.size
    assert hashlib.sha256(data).hexdigest() == desc.checksum

    # A write after the snapshot is undone by recovering it, from the file.
    client.delete(name, m.PointIdsList(points=[1, 3]))
    path = server.snapshots / name / desc.name
    assert client.recover_snapshot(name, f"file://{path}", checksum=desc.checksum, wait=True)
    assert _state(client, name) == want
    # From this server's own URL, into a new collection.
    own = f"{server.qdrant_url}/collections/{name}/snapshots/{desc.name}"
    assert client.recover_snapshot(f"{name}_url", own, wait=True)
    assert _state(client, f"{name}_url") == want
    # From an upload.
    assert _upload(server, f"{name}_up", data).result is True
    assert _state(client, f"{name}_up") == want
    query = np.frombuffer(want[0][2], np.float32).tolist()
    hits = client.query_points(f"{name}_up", query=query, using="d", limit=1).points
    assert str(hits[0].id) == want[0][0]

    client.delete_snapshot(name, desc.name, wait=True)
    assert client.list_snapshots(name) == []


def test_bad_snapshots_are_refused_and_change_nothing(client, server):
    name = f"bad_{server.door}"
    _fill(client, name)
    want = _state(client, name)
    desc = client.create_snapshot(name, wait=True)
    data = _download(server, name, desc.name)

    outside = [
        "http://example.com/collections/x/snapshots/y.snapshot",
        "file:///etc/passwd",
        f"file://{server.snapshots}/../../x.snapshot",
        "s3://bucket/x.snapshot",
    ]
    for location in outside:
        with pytest.raises(UnexpectedResponse) as info:
            client.recover_snapshot(name, location, wait=True)
        assert info.value.status_code == 400, location
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x40
    for bad in [b"not an archive", data[: len(data) // 3], bytes(flipped)]:
        with pytest.raises(UnexpectedResponse) as info:
            _upload(server, name, bad)
        assert info.value.status_code == 400
        assert "snapshot archive" in json.loads(info.value.content)["status"]["error"]
    assert _state(client, name) == want
    with pytest.raises((UnexpectedResponse, grpc.RpcError)):
        client.delete_snapshot(name, "missing.snapshot", wait=True)
    with pytest.raises((UnexpectedResponse, grpc.RpcError)):
        client.create_snapshot("no_such_collection", wait=True)


def test_full_snapshot_calls_round_trip(client, server):
    """create_full_snapshot / list_full_snapshots / delete_full_snapshot and the download:
    a tar of every collection's archive, each of which recovers its collection."""
    name = f"full_{server.door}"
    _fill(client, name)
    want = _state(client, name)
    before = {s.name for s in client.list_full_snapshots()}
    desc = client.create_full_snapshot(wait=True)
    assert desc.name.startswith("full-snapshot-") and desc.name.endswith(".snapshot")
    listed = {s.name: s for s in client.list_full_snapshots()}
    assert set(listed) == before | {desc.name}
    assert listed[desc.name].checksum == desc.checksum
    with urllib.request.urlopen(f"{server.qdrant_url}/snapshots/{desc.name}", timeout=60) as r:
        data = r.read()
    assert len(data) == desc.size and hashlib.sha256(data).hexdigest() == desc.checksum
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        entries = tar.getnames()
        assert entries == sorted(entries) and f"{name}.snapshot" in entries
        archive = tar.extractfile(f"{name}.snapshot").read()
    assert _upload(server, f"{name}_back", archive).result is True
    assert _state(client, f"{name}_back") == want
    client.delete_full_snapshot(desc.name, wait=True)
    assert {s.name for s in client.list_full_snapshots()} == before
