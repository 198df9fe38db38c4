"""strata.ray on a local Ray cluster of 2 CPUs: sharded index and collection.

Skipped when Ray is not installed (pip install 'strata[ray]'). One cluster
serves the whole module; shards are num_cpus=0 actors, so 4 fit on 2 CPUs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import clustered, recall, reference_distances, start_ray

ray = pytest.importorskip("ray")

import strata  # noqa: E402 (after the skip)
import strata.ray as sray  # noqa: E402
from strata.ray._routing import group, merge_topk, shard_of, string_key  # noqa: E402

DATA = Path(os.environ.get("STRATA_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared"
                           / "data")) / "pypi-use512"


@pytest.fixture(scope="module", autouse=True)
def cluster():
    start_ray(ray, num_cpus=2, include_dashboard=False, log_to_driver=False,
              configure_logging=False)
    yield
    ray.shutdown()


def kill_shard(obj, shard: int) -> None:
    pid = obj._pool.pids()[shard]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until Ray has noticed
        if shard in obj._pool.dead():
            return
        time.sleep(0.1)
    raise AssertionError(f"shard {shard} (pid {pid}) still answers after SIGKILL")


# --- routing and merging (no cluster needed, but part of the format) ----------


def _splitmix_reference(x: int) -> int:
    mask = 2**64 - 1
    z = (x + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def test_routing_matches_splitmix64_and_never_changes():
    # The manifest promises "splitmix64-mod": a change would send ids to the wrong shard
    # of every saved index.
    ids = [0, 1, 2, 3, 2**63 - 1, 2**64 - 1, 12345678901234]
    want = [_splitmix_reference(i) % 1000 for i in ids]
    assert shard_of(np.array(ids, dtype=np.uint64), 1000).tolist() == want
    assert shard_of(np.arange(6, dtype=np.uint64), 4).tolist() == [3, 1, 2, 1, 2, 2]


def test_string_id_routing_is_blake2b_then_splitmix64_and_never_changes():
    # Pinned values: Python's hash() of a str is salted per process, so a routing built
    # on it would send the same id to another shard after a restart.
    mixed = np.array(["doc-1", "ünï", 7, "a"], dtype=object)
    assert shard_of(mixed, 1000).tolist() == [865, 44, 487, 423]
    assert shard_of(mixed, 1000)[2] == shard_of(np.uint64([7]), 1000)[0]
    assert string_key("doc-1") == 4752762565065110614


def test_sequential_ids_spread_evenly_over_shards():
    counts = np.bincount(shard_of(np.arange(40_000, dtype=np.uint64), 4), minlength=4)
    assert counts.min() > 9_600 and counts.max() < 10_400, counts


def test_group_keeps_each_shards_rows_in_order():
    ids = np.array([9, 4, 7, 1, 8, 2, 6], dtype=np.uint64)
    order, spans = group(ids, 3)
    for s, span in enumerate(spans):
        block = ids[order[span]]
        assert (shard_of(block, 3) == s).all()
        assert (np.diff(order[span]) > 0).all()
    assert sorted(order.tolist()) == list(range(ids.size))


def test_merge_breaks_ties_by_id_and_puts_padding_last():
    a_ids = np.array([[7, 3, -1]], dtype=np.int64)
    a_d = np.array([[0.5, 1.0, np.inf]], dtype=np.float32)
    b_ids = np.array([[2, 5, 9]], dtype=np.int64)
    b_d = np.array([[0.5, 1.0, 2.0]], dtype=np.float32)
    ids, dists, _ = merge_topk([a_ids, b_ids], [a_d, b_d], 6)
    assert ids.tolist() == [[2, 7, 3, 5, 9, -1]]
    assert dists.tolist()[0][:5] == [0.5, 0.5, 1.0, 1.0, 2.0]


def test_merge_of_string_and_integer_answers_orders_ties_as_the_engine_and_pads_with_none():
    ints = np.array([[3, -1]], dtype=np.int64)
    strs = np.array([["x", None]], dtype=object)
    dists = [np.array([[0.5, np.inf]], dtype=np.float32)] * 2
    ids, got, picked = merge_topk([strs, ints], dists, 3)
    assert ids.tolist() == [[3, "x", None]] and picked.tolist() == [[2, 0, 1]]
    assert got[0, :2].tolist() == [0.5, 0.5]
    near = [np.array([[d, np.inf]], dtype=np.float32) for d in (0.1, 0.9)]
    only_ints, _, _ = merge_topk([ints, strs], near, 1)  # no string in the answer: int64
    assert only_ints.dtype == np.int64 and only_ints.tolist() == [[3]]


def test_import_strata_does_not_import_ray():
    code = "import strata, sys; print('ray' in sys.modules, 'strata.ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parent)
    assert out.stdout.split() == ["False", "False"]


# --- ShardedIndex ---------------------------------------------------------------


def test_flat_shards_give_the_single_exact_index_results():
    data, queries = clustered(3000, 24, queries=40, seed=3)
    single = strata.FlatIndex(24)
    single.add(data)
    with sray.ShardedIndex(24, shards=3, kind="flat") as sharded:
        assert sharded.add(data).tolist() == list(range(3000))
        ids, dists = sharded.search(queries, k=15)
        want_ids, want_dists = single.search(queries, k=15)
        assert len(sharded) == 3000
        # More than the index holds: padded like strata.FlatIndex.
        many_ids, _ = sharded.search(queries[:2], k=3005)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(dists, want_dists, rtol=1e-6)
    assert (many_ids[:, 3000:] == -1).all() and (many_ids[:, :3000] >= 0).all()


@pytest.mark.skipif(not (DATA / "train.f16.npy").exists(), reason=f"{DATA} not found")
def test_sharded_recall_is_not_below_the_single_index_at_equal_ef():
    train = np.load(DATA / "train.f16.npy", mmap_mode="r")[:5000].astype(np.float32)
    queries = np.load(DATA / "test.f16.npy")[:300].astype(np.float32)
    truth = np.argsort(reference_distances("cosine", queries, train), axis=1)[:, :10]
    single = strata.Index(512, metric="cosine", M=8, ef_construction=64, seed=1)
    single.add(train)
    ef = 12  # low, so that recall is below 1 and the comparison means something
    base = recall(single.search(queries, k=10, ef=ef)[0], truth)
    for shards in (2, 4):
        with sray.ShardedIndex(512, shards=shards, metric="cosine", M=8, ef_construction=64,
                               seed=1) as sharded:
            sharded.add(train)
            got = recall(sharded.search(queries, k=10, ef=ef)[0], truth)
        assert got >= base - 0.01, (shards, got, base)
    assert base < 0.99  # else the test proves nothing


@pytest.fixture(scope="module")
def hnsw_index():
    data, queries = clustered(2000, 16, queries=20, seed=5)
    index = sray.ShardedIndex(16, shards=3, seed=1)
    index.add(data)
    yield index, data, queries
    index.close()


def test_an_upsert_lands_on_the_shard_that_owns_the_id(hnsw_index):
    index, data, _ = hnsw_index
    per_shard = index._pool.run("__len__")
    assert per_shard == np.bincount(shard_of(np.arange(2000, dtype=np.uint64), 3)).tolist()
    new = np.full(16, 7.0, dtype=np.float32)
    index.add(new[None], ids=[5])
    assert len(index) == 2000 and index._pool.run("__len__") == per_shard
    np.testing.assert_array_equal(index.get_vectors([5, 6]), np.stack([new, data[6]]))
    assert index.search(new, k=1)[0].tolist() == [[5]]
    index.add(data[5], ids=[5])


def test_a_bad_batch_changes_no_shard(hnsw_index):
    index, data, _ = hnsw_index
    bad = data[:10].copy()
    bad[7, 3] = np.nan
    with pytest.raises(ValueError, match=r"vectors\[7\]\[3\] is NaN"):
        index.add(bad, ids=np.arange(5000, 5010))
    with pytest.raises(ValueError, match="duplicate id 5001"):
        index.add(data[:3], ids=[5000, 5001, 5001])
    with pytest.raises(ValueError, match="dimension 15"):
        index.add(data[:3, :15])
    with pytest.raises(ValueError, match="non-negative"):
        index.add(data[:2], ids=[1, -1])
    with pytest.raises(KeyError, match="ids\\[1\\] = 99999"):
        index.remove([3, 99999])
    assert len(index) == 2000 and 3 in index


def test_filters_are_split_by_shard_and_merged(hnsw_index):
    index, data, queries = hnsw_index
    allowed = np.arange(0, 2000, 7)
    ids, _, stats = index.search(queries, k=10, filter_ids=allowed, exclude_ids=[0, 7],
                                 return_stats=True)
    assert np.isin(ids, allowed).all() and not np.isin(ids, [0, 7]).any()
    assert stats["allowed"] == allowed.size - 2 and len(stats["shards"]) == 3
    d = reference_distances("l2", queries, data[allowed[2:]])
    truth = allowed[2:][np.argsort(d, axis=1)[:, :10]]
    assert recall(ids, truth) >= 0.95
    empty, _ = index.search(queries[0], k=3, filter_ids=[])
    assert empty.tolist() == [[-1, -1, -1]]


def test_remove_contains_and_next_id():
    data, _ = clustered(300, 8, seed=2)
    with sray.ShardedIndex(8, shards=2) as index:
        index.add(data[:200], ids=np.arange(100, 300))
        assert index.add(data[200:210]).tolist() == list(range(300, 310))
        assert index.remove([100, 101, 5], missing_ok=True) == 2
        assert len(index) == 208 and 100 not in index and 102 in index and "x" not in index
        assert sorted(index.ids().tolist()) == list(range(102, 310))


def test_sq8_shards_train_alike_compact_and_stay_intact():
    data, queries = clustered(800, 16, queries=10, seed=9)
    with sray.ShardedIndex(16, shards=2, quantization="sq8", seed=1) as index:
        index.train(data)
        assert all(info["trained"] for info in index.info())
        index.add(data)
        index.remove(np.arange(0, 800, 2))
        assert sum(info["tombstones"] for info in index.info()) == 400
        index.compact()
        assert sum(info["tombstones"] for info in index.info()) == 0
        index.check_integrity()
        ids, _ = index.search(queries, k=5, ef=100)
        assert (ids % 2 == 1).all() and len(index) == 400


def test_save_then_load_gives_the_same_answers_and_drops_old_generations(tmp_path, hnsw_index):
    index, _, queries = hnsw_index
    index.save(tmp_path)
    index.save(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["generation"] == 2 and manifest["shards"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["manifest.json", *manifest["files"]])
    want = index.search(queries, k=10, ef=50)
    with sray.ShardedIndex.load(tmp_path) as loaded:
        assert (loaded.dim, loaded.metric, loaded.shards, len(loaded)) == (16, "l2", 3, 2000)
        got = loaded.search(queries, k=10, ef=50)
        assert loaded.add(np.ones(16, dtype=np.float32)).tolist() == [2000]
    np.testing.assert_array_equal(got[0], want[0])


def test_load_refuses_a_manifest_of_something_else(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "strata-sharded-collection"}))
    with pytest.raises(sray.ManifestError, match="expected format 'strata-sharded-index'"):
        sray.ShardedIndex.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="no manifest"):
        sray.ShardedIndex.load(tmp_path / "nothing")


def test_a_killed_index_shard_is_named_and_reloaded_from_its_save(tmp_path):
    data, queries = clustered(600, 8, queries=5, seed=4)
    with sray.ShardedIndex(8, shards=3, seed=1) as index:
        index.add(data)
        want = index.search(queries, k=5, ef=100)
        index.save(tmp_path)
        kill_shard(index, 1)
        with pytest.raises(sray.ShardDiedError, match=r"shard 1 of 3 \(.*shard-0001\.g1\.strata\)"
                           r" died.*restart_shards\(\)") as info:
            index.search(queries, k=5)
        assert info.value.shard == 1
        with pytest.raises(sray.ShardDiedError, match="shard 1 of 3"):
            len(index)
        assert index.restart_shards() == [1]
        assert index.restart_shards() == []
        assert len(index) == 600
        np.testing.assert_array_equal(index.search(queries, k=5, ef=100)[0], want[0])


def test_an_unsaved_killed_shard_says_its_data_is_lost():
    with sray.ShardedIndex(4, shards=2) as index:
        index.add(np.eye(4, dtype=np.float32))
        kill_shard(index, 0)
        with pytest.raises(sray.ShardDiedError, match=r"shard 0 of 2 died.*never saved"):
            index.restart_shards()


# --- ShardedCollection ----------------------------------------------------------


def _docs(n: int) -> list[dict]:
    return [{"colour": ["red", "green", "blue"][i % 3], "n": i} for i in range(n)]


def test_collection_filters_run_on_every_shard_before_the_merge(tmp_path):
    data, queries = clustered(1500, 16, queries=10, seed=6)
    with sray.ShardedCollection(tmp_path / "c", shards=3, dim=16, metric="l2",
                                fsync="never") as col:
        col.upsert(np.arange(1500), data, _docs(1500))
        assert len(col) == 1500 and col.count({"colour": "red"}) == 500
        result = col.query(queries, k=10, where={"colour": "blue"}, ef=200, return_stats=True)
        assert all(doc["colour"] == "blue" for row in result.metadata for doc in row)
        assert [doc["n"] for doc in result.metadata[0]] == result.ids[0].tolist()
        blue = np.arange(2, 1500, 3)
        truth = blue[np.argsort(reference_distances("l2", queries, data[blue]), axis=1)[:, :10]]
        assert recall(result.ids, truth) >= 0.99
        assert result.stats["allowed"] == 500
        # Selective enough that some shards match nothing: rows are padded, not short.
        few = col.query(queries[:1], k=3, where={"n": {"$in": [4, 5]}})
        assert sorted(few.ids[0, :2].tolist()) == [4, 5] and few.ids[0, 2] == -1
        assert few.metadata[0][2] is None


def test_collection_get_delete_and_update_keep_request_order(tmp_path):
    data, _ = clustered(300, 8, seed=7)
    with sray.ShardedCollection.create(tmp_path / "c", dim=8, shards=3, fsync="never") as col:
        col.upsert(np.arange(300), data, _docs(300))
        got = col.get([250, 3, 9999, 17], include_vectors=True)
        assert got.ids.tolist() == [250, 3, 17]
        assert [d["n"] for d in got.metadata] == [250, 3, 17]
        np.testing.assert_allclose(got.vectors[1], data[3] / np.linalg.norm(data[3]), rtol=1e-5)
        with pytest.raises(KeyError, match=r"ids\[1\] = 7777"):
            col.update_metadata([1, 7777], [{"a": 1}, {"a": 2}])
        assert col.get([1]).metadata == [{"colour": "green", "n": 1}]
        assert col.update_metadata([1, 2], [{"a": 1}, {"a": 2}]) == 2
        assert col.delete(ids=[1, 2, 9999]) == 2
        assert col.delete(where={"colour": "red"}) == 100
        assert len(col) == 198
        with pytest.raises(ValueError, match="exactly one"):
            col.delete()
        with pytest.raises(ValueError, match=r"vectors\[0\]\[0\] is NaN"):
            col.upsert([1000], np.full(8, np.nan))
        with pytest.raises(ValueError, match="got 2 metadata documents for 1 ids"):
            col.upsert([1000], data[0], [{}, {}])
        assert len(col) == 198
        col.check_integrity()
    with pytest.raises(FileExistsError):
        sray.ShardedCollection.create(tmp_path / "c", dim=8)


def test_a_killed_collection_shard_is_named_and_recovered_from_its_wal(tmp_path):
    data, queries = clustered(900, 8, queries=4, seed=8)
    path = tmp_path / "c"
    col = sray.ShardedCollection(path, shards=3, dim=8, fsync="always")
    col.upsert(np.arange(900), data, _docs(900))
    want = col.query(queries, k=5, ef=200)
    kill_shard(col, 2)
    with pytest.raises(sray.ShardDiedError, match=r"shard 2 of 3 \(.*shard-0002\) died") as info:
        col.query(queries, k=5)
    assert info.value.where == str(path.resolve() / "shard-0002")
    owned_by_2 = next(i for i in range(5000, 5100) if shard_of(np.uint64([i]), 3)[0] == 2)
    with pytest.raises(sray.ShardDiedError, match="shard 2 of 3"):
        col.upsert([owned_by_2], data[0])
    assert col.restart_shards() == [2]
    assert len(col) == 900  # every acknowledged upsert, none lost with the process
    np.testing.assert_array_equal(col.query(queries, k=5, ef=200).ids, want.ids)
    col.close()
    with sray.ShardedCollection.open(path) as reopened:
        assert reopened.shards == 3 and len(reopened) == 900
        assert reopened.get([899]).metadata == [{"colour": "blue", "n": 899}]
    with pytest.raises(ValueError, match="has 3 shards, not 4"):
        sray.ShardedCollection(path, shards=4)
    with pytest.raises(FileNotFoundError, match="pass dim="):
        sray.ShardedCollection(tmp_path / "none")


@pytest.mark.parametrize("dim", [0, 1 << 20])
def test_a_collection_dim_out_of_range_raises_the_engines_message_and_leaves_nothing(
        tmp_path, dim):
    with pytest.raises(ValueError) as embedded:
        strata.Collection.create(tmp_path / "embedded", dim)
    path = tmp_path / "sharded"
    with pytest.raises(ValueError) as sharded:
        sray.ShardedCollection(path, shards=2, dim=dim, metric="l2")
    assert str(sharded.value) == str(embedded.value)  # one limit, one message
    assert not path.exists()
    with pytest.raises(TypeError, match="dim must be an integer"):
        sray.ShardedCollection(path, shards=2, dim=8.0)
    with pytest.raises(ValueError, match=r"shards must be in \[1, 65536\], got 0"):
        sray.ShardedCollection(path, shards=0, dim=8)


def test_import_strata_ray_without_ray_says_what_to_install():
    code = ("import sys; sys.modules['ray'] = None\n"
            "try:\n    import strata.ray\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parent)
    assert "pip install 'strata[ray]'" in out.stdout


def test_sharded_ttl_routes_each_entrys_expiry_with_it(tmp_path):
    past, later = time.time() - 1, time.time() + 3600
    ids: list[int | str] = [*range(10), "s-a", "s-b"]
    ttl_rows = [None if i % 3 else 3600 for i in range(12)]
    with sray.ShardedCollection.create(tmp_path / "t", dim=4, shards=2) as col:
        col.upsert(ids, np.ones((12, 4), dtype=np.float32), ttl=ttl_rows)
        got = col.get(ids, include_expiry=True)
        for i, at in zip(got.ids.tolist(), got.expires_at.tolist(), strict=True):
            if ttl_rows[ids.index(i)] is None:
                assert np.isnan(at), i
            else:
                assert later - 5 < at < later + 60, i
        expires = [past if i % 2 else None for i in range(12)]
        col.upsert(ids, np.ones((12, 4), dtype=np.float32), expires_at=expires)
        assert col.count() == 6
        assert sorted(map(str, col.get(ids).ids.tolist())) == sorted(
            str(i) for i, e in zip(ids, expires, strict=True) if e is None
        )
        # A bad value is refused before any shard writes.
        with pytest.raises(ValueError, match=r"ttl\[11\]"):
            col.upsert(ids, np.zeros((12, 4), dtype=np.float32), ttl=[1] * 11 + [-1])
        assert col.count() == 6


def _sparse_rows(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray] | None]:
    rng = np.random.default_rng(seed)
    rows: list[tuple[np.ndarray, np.ndarray] | None] = []
    for i in range(n):
        if i % 7 == 3:
            rows.append(None)  # some points lack the sparse field
            continue
        idx = rng.choice(40, size=int(rng.integers(1, 6)), replace=False)
        rows.append((idx.astype(np.uint32), rng.random(len(idx)).astype(np.float32) + 0.1))
    return rows


def test_sharded_sparse_and_fused_search_equal_one_collections(tmp_path):
    # The sharded door merges each sub-query's shard lists by score into the global list,
    # then fuses the global lists once (collection.Fuse): one collection's answer, where
    # fusing each shard's fused list would rank a shard's local top first.
    n, dim = 120, 4
    data, _ = clustered(n, dim, seed=8)
    sparse = _sparse_rows(n, 9)
    docs = [{"n": i, "even": i % 2 == 0} for i in range(n)]
    ids = [f"p{i}" if i % 5 == 0 else i for i in range(n)]
    schema = {"d": {"dim": dim, "metric": "l2"}}
    with strata.Collection.create(tmp_path / "one", vectors=schema, sparse_vectors=["kw"],
                                  fsync="never") as one, \
            sray.ShardedCollection.create(tmp_path / "many", shards=3, vectors=schema,
                                          sparse_vectors=["kw"], fsync="never") as many:
        for col in (one, many):
            col.upsert(ids, {"d": data}, docs, sparse_vectors={"kw": sparse})
        assert many.sparse_schema == {"kw": {"modifier": "none"}}
        q_sparse = (np.array([1, 5, 9, 30]), np.array([1.0, 0.5, 2.0, 1.0]))
        for where in (None, {"even": True}):
            a = one.query(sparse=q_sparse, using="kw", k=10, where=where)
            b = many.query(sparse=q_sparse, using="kw", k=10, where=where)
            assert a.ids.tolist() == b.ids.tolist() and a.metadata == b.metadata
            np.testing.assert_allclose(a.scores, b.scores, rtol=1e-6)
            subs = [{"using": "d", "vector": data[4], "ef": 500, "limit": 30},
                    {"using": "kw", "sparse": q_sparse, "limit": 30}]
            for fusion in ("rrf", "dbsf"):
                a = one.search(subs, k=10, fusion=fusion, where=where)
                b = many.search(subs, k=10, fusion=fusion, where=where)
                assert a.ids.tolist() == b.ids.tolist(), (fusion, where)
                np.testing.assert_allclose(a.scores, b.scores, rtol=1e-9)
        got = many.get([ids[3], ids[5], ids[11]], vectors=["kw"]).sparse_vectors["kw"]
        assert got.value(0) is None
        for row, i in ((1, 5), (2, 11)):
            idx, val = got.value(row)
            order = np.argsort(sparse[i][0])
            assert idx.tolist() == sparse[i][0][order].tolist()
            np.testing.assert_allclose(val, sparse[i][1][order])
        pages = list(many.scan(batch_size=50, vectors=["kw"]))
        assert sum(len(p) for p in pages) == n and all(p.sparse_vectors for p in pages)
        many.add_sparse_field("tags", "idf")
        assert set(many.sparse_schema) == {"kw", "tags"}
        assert many.update_vectors([ids[1]], sparse_vectors={"tags": [([2], [1.0])]}) == 1
        assert many.query(sparse=([2], [1.0]), using="tags", k=2).ids[0].tolist() == [1, -1]
