"""strata.Collection: the durable collection through the C ABI."""

from __future__ import annotations

import io
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from helpers import clustered, recall, reference_distances

import strata

DIM = 16


def _docs(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    sources = ["wiki", "news", "blog", "code"]
    return [
        {
            "source": sources[int(rng.integers(4))],
            "year": int(2015 + rng.integers(10)),
            "tags": [f"t{int(rng.integers(5))}"],
            "meta": {"score": float(rng.random())},
        }
        for _ in range(n)
    ]


@pytest.fixture
def col(tmp_path):
    c = strata.Collection.create(tmp_path / "c", dim=DIM, metric="cosine", seed=1)
    yield c
    c.close()


def test_upsert_query_get_roundtrip(col):
    x, _ = clustered(500, DIM, seed=1)
    docs = _docs(500)
    col.upsert(np.arange(500), x, docs)
    assert len(col) == 500
    res = col.query(x[:3], k=5)
    assert res.ids.shape == (3, 5) and res.ids.dtype == np.int64
    assert res.distances.dtype == np.float32
    assert res.ids[:, 0].tolist() == [0, 1, 2]
    assert res.metadata[1][0] == docs[1]
    one = col.query(x[7], k=2)
    assert one.ids.shape == (1, 2) and one.ids[0, 0] == 7
    got = col.get([3, 99999, 5], include_vectors=True)
    assert got.ids.tolist() == [3, 5]
    assert got.metadata == [docs[3], docs[5]]
    norm = x[[3, 5]] / np.linalg.norm(x[[3, 5]], axis=1, keepdims=True)
    np.testing.assert_allclose(got.vectors, norm, rtol=1e-6, atol=1e-6)
    assert col.get([1]).vectors is None


def test_padding_when_fewer_than_k(col):
    col.upsert([1, 2], np.eye(DIM, dtype=np.float32)[:2], [{"a": 1}, None])
    res = col.query(np.eye(DIM)[0], k=4)
    assert res.ids[0].tolist()[:2] == [1, 2] and res.ids[0, 2:].tolist() == [-1, -1]
    assert np.isinf(res.distances[0, 2:]).all()
    assert res.metadata[0] == [{"a": 1}, {}, None, None]


def test_filters_match_mongo_semantics_and_python_reference(col):
    x, _ = clustered(1000, DIM, seed=2)
    docs = _docs(1000, seed=2)
    col.upsert(np.arange(1000), x, docs)
    cases = {
        json.dumps({"source": "news"}): lambda d: d["source"] == "news",
        json.dumps({"year": {"$in": [2016, 2020]}}): lambda d: d["year"] in (2016, 2020),
        json.dumps({"year": {"$gte": 2020}, "source": {"$ne": "wiki"}}): lambda d: (
            d["year"] >= 2020 and d["source"] != "wiki"
        ),
        json.dumps({"$or": [{"tags": "t1"}, {"meta.score": {"$lt": 0.1}}]}): lambda d: (
            "t1" in d["tags"] or d["meta"]["score"] < 0.1
        ),
        json.dumps({"missing": {"$exists": False}}): lambda d: True,
        json.dumps({"source": {"$nin": ["news", "blog"]}}): lambda d: (
            d["source"] not in ("news", "blog")
        ),
    }
    for raw, pred in cases.items():
        where = json.loads(raw)
        expect = [i for i, d in enumerate(docs) if pred(d)]
        assert col.count(where) == len(expect), raw
        res = col.query(x[:20], k=10, where=where)
        allowed = set(expect)
        for row in res.ids:
            assert all(int(i) in allowed for i in row if i >= 0), raw
        scanned = [int(i) for batch in col.scan(where, batch_size=97) for i in batch.ids]
        assert scanned == expect, raw


def test_filtered_recall_at_every_selectivity(tmp_path):
    n, nq, k = 4000, 50, 10
    x, q = clustered(n, DIM, queries=nq, seed=3)
    rng = np.random.default_rng(3)
    bucket = rng.integers(0, 1000, size=n)
    with strata.Collection.create(tmp_path / "r", dim=DIM, metric="l2", seed=3) as col:
        col.upsert(np.arange(n), x, [{"b": int(b)} for b in bucket])
        for cut in (500, 100, 10, 1):  # 50%, 10%, 1%, 0.1%
            where = {"b": {"$lt": cut}}
            allowed = np.flatnonzero(bucket < cut)
            d = reference_distances("l2", q, x[allowed])
            truth = allowed[np.argsort(d, axis=1)[:, :k]]
            kk = min(k, allowed.size)
            res = col.query(q, k=k, where=where)
            assert recall(res.ids[:, :kk], truth[:, :kk]) >= 0.99, cut


def test_delete_update_and_where(col):
    x, _ = clustered(100, DIM, seed=4)
    col.upsert(np.arange(100), x, [{"i": i, "even": i % 2 == 0} for i in range(100)])
    assert col.delete(ids=[0, 1, 500]) == 2
    assert col.delete(where={"even": True, "i": {"$lt": 10}}) == 4  # 2, 4, 6, 8
    assert col.count() == 94
    assert col.update_metadata([3], [{"i": 3, "note": "x"}]) == 1
    assert col.get([3]).metadata == [{"i": 3, "note": "x"}]
    with pytest.raises(KeyError, match="1"):
        col.update_metadata([3, 1], [{}, {}])
    with pytest.raises(ValueError, match="exactly one"):
        col.delete()


def test_bad_input_raises_and_changes_nothing(col):
    col.upsert([1], np.ones(DIM), [{"a": 1}])
    bad = [
        (ValueError, lambda: col.upsert([2], np.ones(DIM + 1))),
        (ValueError, lambda: col.upsert([2, 2], np.ones((2, DIM)))),
        (ValueError, lambda: col.upsert([-1], np.ones(DIM))),
        (ValueError, lambda: col.upsert([2], np.full(DIM, np.nan))),
        (ValueError, lambda: col.upsert([2], np.ones(DIM), [{"x": float("nan")}])),
        (TypeError, lambda: col.upsert([2], np.ones(DIM), [{"x": object()}])),
        (TypeError, lambda: col.upsert([2], np.ones(DIM), ["not a dict"])),
        (ValueError, lambda: col.upsert([2], np.ones(DIM), [{"a.b": 1}])),
        (ValueError, lambda: col.upsert([2], np.ones(DIM), [{"l": [{"nested.key": 1}]}])),
        (ValueError, lambda: col.upsert([2, 3], np.ones((2, DIM)), [{}])),
        (ValueError, lambda: col.query(np.ones(DIM), where={"a": {"$gtx": 1}})),
        (ValueError, lambda: col.query(np.ones(DIM), where={"a": {"$in": 3}})),
        (ValueError, lambda: col.query(np.ones(DIM), where={"a": {"$gt": [1]}})),
        (TypeError, lambda: col.query(np.ones(DIM), where="a == 1")),
        (ValueError, lambda: col.query(np.ones(DIM), k=0)),
        (TypeError, lambda: col.query(np.ones(DIM), k=1.5)),
    ]
    for exc, fn in bad:
        with pytest.raises(exc):
            fn()
    assert len(col) == 1 and col.get([1]).metadata == [{"a": 1}]
    assert col.info()["seq"] == 1


def test_error_names_the_offending_part(col):
    with pytest.raises(ValueError, match=r"\$gtx"):
        col.count({"year": {"$gtx": 1}})
    with pytest.raises(ValueError, match=r"metadata\[1\]"):
        col.upsert([1, 2], np.ones((2, DIM)), [{}, {"$bad": 1}])


def test_lists_of_objects_filter_with_elemmatch_and_survive_reopen(tmp_path):
    """Metadata holding lists of objects and lists of lists round-trip through the log and
    a checkpoint, and filters reach into them as MongoDB's do (the rules and their index
    evaluation are tested in go/collection/meta)."""
    path = tmp_path / "lists"
    rng = np.random.default_rng(7)
    x = rng.standard_normal((60, DIM)).astype(np.float32)
    docs = [
        {
            "reviews": [
                {"by": str(rng.choice(["ann", "bo", "cy"])), "stars": int(rng.integers(1, 6))}
                for _ in range(rng.integers(0, 4))
            ],
            "grid": [[int(v) for v in rng.integers(0, 3, size=2)]],
        }
        for _ in range(60)
    ]
    cases = {
        json.dumps({"reviews.stars": {"$gte": 5}}): lambda d: any(
            r["stars"] >= 5 for r in d["reviews"]
        ),
        json.dumps({"reviews": {"$elemMatch": {"by": "ann", "stars": {"$lt": 3}}}}): lambda d: any(
            r["by"] == "ann" and r["stars"] < 3 for r in d["reviews"]
        ),
        json.dumps({"reviews": {"$size": 2}}): lambda d: len(d["reviews"]) == 2,
        json.dumps({"reviews.0.by": "bo"}): lambda d: (
            bool(d["reviews"]) and d["reviews"][0]["by"] == "bo"
        ),
        json.dumps({"grid": [0, 1]}): lambda d: d["grid"] == [[0, 1]],
        json.dumps({"reviews.by": {"$all": ["ann", "cy"]}}): lambda d: (
            {"ann", "cy"} <= {r["by"] for r in d["reviews"]}
        ),
    }
    with strata.Collection.create(path, dim=DIM, metric="l2", seed=5) as col:
        col.upsert(np.arange(30), x[:30], docs[:30])
        col.checkpoint()
        col.upsert(np.arange(30, 60), x[30:], docs[30:])
    with strata.Collection.open(path) as col:
        assert col.get([3, 45]).metadata == [docs[3], docs[45]]
        for raw, pred in cases.items():
            expect = [i for i, d in enumerate(docs) if pred(d)]
            scanned = [int(i) for batch in col.scan(json.loads(raw)) for i in batch.ids]
            assert scanned == expect, raw
        with pytest.raises(ValueError, match=r"needs a non-negative integer"):
            col.count({"reviews": {"$size": -1}})


def test_reopen_recovers_checkpoint_and_log(tmp_path):
    path = tmp_path / "p"
    x, _ = clustered(300, DIM, seed=5)
    docs = _docs(300, seed=5)
    with strata.Collection.create(path, dim=DIM, metric="l2", seed=5) as col:
        col.upsert(np.arange(200), x[:200], docs[:200])
        col.checkpoint()
        col.upsert(np.arange(200, 300), x[200:], docs[200:])
        col.delete(ids=[5])
        info = col.info()
        assert info["last_checkpoint_seq"] == 1 and info["seq"] == 3
    assert strata.Collection.exists(path)
    with strata.Collection.open(path) as col:
        assert len(col) == 299
        assert col.get([250]).metadata == [docs[250]]
        assert col.query(x[250], k=1).ids[0, 0] == 250
        col.check_integrity()


def test_second_open_is_locked_and_drop(tmp_path):
    path = tmp_path / "l"
    col = strata.Collection.create(path, dim=DIM)
    with pytest.raises(strata.LockedError):
        strata.Collection.open(path)
    with pytest.raises(strata.LockedError):
        strata.Collection.drop(path)
    with pytest.raises(FileExistsError):
        strata.Collection.create(path, dim=DIM)
    col.close()
    with pytest.raises(ValueError, match="closed"):
        col.count()
    strata.Collection.drop(path)
    assert not strata.Collection.exists(path)
    with pytest.raises(FileNotFoundError):
        strata.Collection.open(path)


def test_lock_holds_across_processes(tmp_path):
    path = tmp_path / "x"
    with strata.Collection.create(path, dim=DIM):
        code = textwrap.dedent(
            f"""
            import strata
            try:
                strata.Collection.open({str(path)!r})
            except strata.LockedError as e:
                print("locked", e)
            """
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.stdout.startswith("locked"), out.stderr


WRITER = textwrap.dedent(
    """
    import sys, numpy as np, strata
    path, start = sys.argv[1], int(sys.argv[2])
    col = strata.Collection.open(path) if start else strata.Collection.create(path, dim=16, seed=1)
    rng = np.random.default_rng(start)
    i = start
    while True:
        v = rng.normal(size=(4, 16)).astype(np.float32)
        ids = np.arange(i, i + 4)
        col.upsert(ids, v, [{"i": int(j)} for j in ids])
        np.save(sys.stdout.buffer, v)
        sys.stdout.buffer.write(b"ACK %d\\n" % i)
        sys.stdout.flush()
        i += 4
    """
)


def test_sigkill_loses_no_acknowledged_write(tmp_path):
    """A writer killed with SIGKILL mid-stream: every batch it acknowledged is there."""
    path = str(tmp_path / "k")
    acked: dict[int, np.ndarray] = {}
    start = 0
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, path, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # Kill once it has acknowledged a few batches (not after a fixed time, which a
        # loaded machine may spend starting Python): mid-stream either way.
        head = bytearray()
        deadline = time.monotonic() + 300
        while head.count(b"ACK ") < 3 and time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1)[0]:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break  # the writer died by itself: its stderr says why below
                head += chunk
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        assert proc.returncode == -signal.SIGKILL, err.decode(errors="replace")
        out = bytes(head) + out
        stream = io.BytesIO(out)
        while True:
            try:
                v = np.load(stream)
            except (ValueError, EOFError, OSError):
                break
            line = stream.readline()
            if not line.startswith(b"ACK "):
                break
            first = int(line.split()[1])
            for j in range(4):
                acked[first + j] = v[j]
        assert acked, "the writer acknowledged nothing"
        with strata.Collection.open(path) as col:
            ids = np.array(sorted(acked))
            got = col.get(ids, include_vectors=True)
            assert got.ids.tolist() == ids.tolist()
            want = np.stack([acked[int(i)] for i in ids])
            want /= np.linalg.norm(want, axis=1, keepdims=True)
            np.testing.assert_allclose(got.vectors, want, rtol=1e-6, atol=1e-6)
            assert got.metadata == [{"i": int(i)} for i in ids]
            col.check_integrity()
            start = int(col.scan(batch_size=1 << 20).__next__().ids.max()) + 1


def test_fork_before_first_use_works(tmp_path):
    code = textwrap.dedent(
        f"""
        import os, numpy as np, strata
        pid = os.fork()
        if pid == 0:
            with strata.Collection.create({str(tmp_path / "f")!r}, dim=4) as c:
                c.upsert([1], np.ones(4))
                os._exit(0 if len(c) == 1 else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "0", out.stderr


def test_group_commit_threads_share_fsyncs(col):
    import threading

    def writer(w: int) -> None:
        rng = np.random.default_rng(w)
        for i in range(50):
            col.upsert([w * 1000 + i], rng.normal(size=DIM))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    info = col.info()
    assert info["count"] == 400 and info["writes_logged"] == 400
    assert info["fsyncs"] < 400


def test_open_cuts_torn_tail_and_reports_it(tmp_path):
    """A crash that tore the last log record: open drops it and says so in info()."""
    path = tmp_path / "t"
    code = textwrap.dedent(
        f"""
        import os, signal, numpy as np, strata
        c = strata.Collection.create({str(path)!r}, dim={DIM})
        c.upsert([1], np.ones({DIM}))
        c.upsert([2], np.ones({DIM}))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert out.returncode == -signal.SIGKILL, out.stderr
    last = path / "wal" / sorted(n for n in os.listdir(path / "wal") if n.endswith(".wal"))[-1]
    os.truncate(last, _wal_records_end(last.read_bytes()) - 3)
    with strata.Collection.open(path) as col:
        assert col.get([1, 2]).ids.tolist() == [1]
        torn = col.info()["recovery"]["torn_tail"]
        assert torn["bytes"] > 0 and torn["file"].endswith(last.name)
    with strata.Collection.open(path) as col:  # the cut was durable and is not reported again
        assert col.info()["recovery"]["torn_tail"]["bytes"] == 0


def _wal_records_end(data: bytes) -> int:
    """Where the records of a log segment end: a segment the writer had not finished is
    preallocated, zeros after its records (go/collection/wal/doc.go, format 2)."""
    off = 16
    while off + 16 <= len(data):
        length = int.from_bytes(data[off:off + 4], "little")
        if int.from_bytes(data[off + 8:off + 16], "little") == 0 or off + 16 + length > len(data):
            break
        off += 16 + length
    return off


def test_open_refuses_corruption_before_valid_records(tmp_path):
    path = tmp_path / "m"
    code = textwrap.dedent(
        f"""
        import os, signal, numpy as np, strata
        c = strata.Collection.create({str(path)!r}, dim={DIM})
        for i in range(5):
            c.upsert([i], np.full({DIM}, i + 1.0))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    subprocess.run([sys.executable, "-c", code], capture_output=True)
    last = path / "wal" / sorted(n for n in os.listdir(path / "wal") if n.endswith(".wal"))[-1]
    data = bytearray(last.read_bytes())
    data[40] ^= 0xFF  # inside the first record; four valid records follow
    last.write_bytes(bytes(data))
    with pytest.raises(strata.IntegrityError, match="offset"):
        strata.Collection.open(path)
    with strata.Collection.open(path, repair=True) as col:
        info = col.info()["recovery"]["repaired"]
        # Only the damaged record is lost; the four behind it are salvaged,
        # and the damaged segment is kept as evidence.
        assert info["lost_seqs"] == [[1, 1]] and info["dropped_records"] == 1
        assert info["salvaged_records"] == 4
        assert info["broken_files"] == [str(last) + ".broken"]
        assert (path / "wal" / (last.name + ".broken")).read_bytes() == bytes(data)
        assert sorted(col.get([0, 1, 2, 3, 4]).ids.tolist()) == [1, 2, 3, 4]
    with strata.Collection.open(path) as col:  # the repair's checkpoint made it durable
        assert len(col) == 4



def test_integers_beyond_2_53_are_refused_not_rounded(col):
    """2**53 + 1 used to come back as 2**53, and 2**70 as a float."""
    one = np.ones((1, DIM), dtype=np.float32)
    for bad in (2**53 + 1, -(2**53) - 1, 2**70):
        with pytest.raises(ValueError, match=r"2\^53"):
            col.upsert([1], one, metadata=[{"n": bad}])
        with pytest.raises(ValueError, match=r"2\^53"):
            col.count({"n": bad})
    assert len(col) == 0
    exact = {"n": 2**53, "m": -(2**53), "f": 1.5e18, "g": 0.1}
    col.upsert([1], one, metadata=[exact])
    got = col.get([1]).metadata[0]
    assert got == exact
    assert type(got["n"]) is int and type(got["f"]) is float
    assert col.count({"n": 2**53}) == 1 and col.count({"f": {"$gt": 2**53}}) == 1


def test_lone_surrogates_are_refused_not_replaced(col):
    """A str holding half a surrogate pair used to be stored as U+FFFD."""
    one = np.ones((1, DIM), dtype=np.float32)
    with pytest.raises(ValueError, match="surrogate"):
        col.upsert([1], one, metadata=[{"s": "a\ud800"}])
    col.upsert([1], one, metadata=[{"s": "café 😀"}])
    with pytest.raises(ValueError, match="surrogate"):
        col.update_metadata([1], [{"\udc00": 1}])
    with pytest.raises(ValueError, match="surrogate"):
        col.count({"s": "\ud800"})
    assert col.get([1]).metadata[0] == {"s": "café 😀"}


def test_open_falls_back_to_the_previous_snapshot(tmp_path):
    # One flipped bit in the live snapshot's index made the collection
    # unopenable; the previous snapshot and the log since it hold every point.
    # The index is in graph segments: the one the live checkpoint wrote
    # (the last its manifest lists) is the live snapshot's alone.
    path = tmp_path / "fb"
    with strata.Collection.create(path, dim=DIM) as col:
        col.upsert([1], np.ones(DIM))
        col.checkpoint()
        col.upsert([2], np.full(DIM, 2.0))
        col.checkpoint()
        live = col.info()["last_checkpoint_seq"]
    manifest_file = path / "snapshots" / f"{live:016x}" / "MANIFEST"
    manifest = json.loads(manifest_file.read_text().split("\n")[0])
    index = path / "segments" / manifest["vectors"][0]["segments"][-1]["file"]
    data = bytearray(index.read_bytes())
    data[30] ^= 0x10
    index.write_bytes(bytes(data))
    with strata.Collection.open(path) as col:
        fallback = col.info()["recovery"]["fallback"]
        assert fallback["from_snapshot_seq"] == live and fallback["to_snapshot_seq"] < live
        assert "crc" in fallback["reason"]
        assert sorted(col.get([1, 2]).ids.tolist()) == [1, 2]
    assert (path / "snapshots" / f"{live:016x}.broken").is_dir()


def _vectors_section(index):
    """(offset, length) of the VECS section of an index file (go/indexfile format)."""
    data = index.read_bytes()
    count = int.from_bytes(data[20:24], "little")
    for i in range(count):
        e = data[32 + 32 * i : 64 + 32 * i]
        if e[:4] == b"VECS":
            return int.from_bytes(e[8:16], "little"), int.from_bytes(e[16:24], "little")
    raise AssertionError(f"{index} has no VECS section")


def _wait_verification(col, timeout=120.0):
    deadline = time.monotonic() + timeout
    while (state := col.info()["verification"]["state"]) == "pending":
        assert time.monotonic() < deadline, "verification still pending"
        time.sleep(0.01)
    return state


@pytest.mark.parametrize("memory", ["ram", "mmap"])
def test_open_verifies_segments_in_the_background(tmp_path, memory):
    # A flipped byte in a segment's vectors: open() returns (their CRCs are
    # checked after it), the background check finds it, and every call then
    # raises IntegrityError naming the segment and section; verify="open"
    # finds it before returning and falls back on the previous snapshot.
    path = tmp_path / "bg"
    rows = np.random.default_rng(3).standard_normal((600, DIM)).astype(np.float32)
    with strata.Collection.create(path, dim=DIM, memory=memory) as col:
        col.upsert(list(range(300)), rows[:300])
        col.checkpoint()
        col.upsert(list(range(300, 600)), rows[300:])
        col.checkpoint()
        live = col.info()["last_checkpoint_seq"]
    with strata.Collection.open(path) as col:
        assert _wait_verification(col) == "verified"
        assert col.info()["verification"]["unverified_bytes"] == 0
    manifest_file = path / "snapshots" / f"{live:016x}" / "MANIFEST"
    manifest = json.loads(manifest_file.read_text().split("\n")[0])
    index = path / "segments" / manifest["vectors"][0]["segments"][-1]["file"]
    off, length = _vectors_section(index)
    data = bytearray(index.read_bytes())
    data[off + length // 2] ^= 0x10
    index.write_bytes(bytes(data))
    files = sorted(p.name for p in path.rglob("*"))
    col = strata.Collection.open(path)
    try:
        assert _wait_verification(col) == "failed"
        message = col.info()["verification"]["error"]
        assert index.name in message and "VECS" in message
        with pytest.raises(strata.IntegrityError, match="VECS"):
            col.query(rows[0], k=3)
        with pytest.raises(strata.IntegrityError):
            col.upsert([1], rows[0])
    finally:
        col.close()
    assert sorted(p.name for p in path.rglob("*")) == files  # nothing deleted
    with pytest.raises(ValueError, match="verify"):
        strata.Collection.open(path, verify="lazy")
    with strata.Collection.open(path, verify="open") as col:
        assert col.info()["recovery"]["fallback"]["from_snapshot_seq"] == live
        assert col.info()["verification"]["state"] == "verified"
        assert col.get(list(range(600))).ids.size == 600
