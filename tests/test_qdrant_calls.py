"""Qdrant calls beyond points and queries, through the real qdrant-client (and raw HTTP for the
routes qdrant-client 1.20 no longer calls: recommend, discover, search/recommend groups), each
compared with qdrant-client's local mode (QdrantClient(":memory:")): groups, the distance matrix,
the older recommend and discover APIs and their batches, aliases (kept across a restart), and
deleting a missing collection."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import warnings

import numpy as np
import pytest
from server_process import BINARY, free_port, running_server

qdrant_client = pytest.importorskip("qdrant_client")
from qdrant_client import QdrantClient  # noqa: E402
from qdrant_client import models as m  # noqa: E402
from qdrant_client.http.exceptions import UnexpectedResponse  # noqa: E402

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

EXACT = m.SearchParams(exact=True)


def _start(data):
    port = free_port()
    srv = running_server(data, "--qdrant-addr", f"127.0.0.1:{port}")
    proc = srv.__enter__()
    proc.qdrant_url = f"http://127.0.0.1:{port}"
    proc.ctx = srv
    return proc


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("qcalls") / "data"
    proc = _start(data)
    proc.data = data
    yield proc
    proc.ctx.__exit__(None, None, None)


def _client(url):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return QdrantClient(url=url, timeout=30)


@pytest.fixture
def client(server):
    c = _client(server.qdrant_url)
    yield c
    c.close()


def _post(url, path, body):
    req = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


FIELDS = {
    "a": m.VectorParams(size=4, distance=m.Distance.COSINE),
    "b": m.VectorParams(size=3, distance=m.Distance.EUCLID),
    "t": m.VectorParams(
        size=2,
        distance=m.Distance.DOT,
        multivector_config=m.MultiVectorConfig(comparator=m.MultiVectorComparator.MAX_SIM),
    ),
}


def _points(rng, n=60):
    groups = ["x", "y", "z", 1, 2, [3, "x"], 1.5, None, True]
    points = []
    for i in range(n):
        vector = {"a": rng.normal(size=4).round(3).tolist()}
        if i % 3:
            vector["b"] = rng.normal(size=3).round(3).tolist()
        if i % 2:
            vector["t"] = rng.normal(size=(1 + i % 3, 2)).round(3).tolist()
        payload = {"i": i, "g": groups[i % len(groups)]}
        if i % 7 == 0:
            del payload["g"]
        points.append(m.PointStruct(id=i, vector=vector, payload=payload))
    return points


@pytest.fixture
def pair(client):
    """The same collection in strata and in local mode."""
    rng = np.random.default_rng(7)
    reference = QdrantClient(":memory:")
    points = _points(rng)
    for c in (client, reference):
        c.create_collection("calls", vectors_config=FIELDS)
        c.upsert("calls", points=points, wait=True)
        c.create_collection("lookup", vectors_config=m.VectorParams(size=2, distance="Dot"))
        lookup = [m.PointStruct(id=k, vector=[1, k], payload={"name": f"n{k}"}) for k in (1, 2, 3)]
        c.upsert("lookup", points=lookup, wait=True)
    yield client, reference, rng
    client.delete_collection("calls")
    client.delete_collection("lookup")
    reference.close()


class Scored(list):
    """(id, score) pairs, equal to another list of them when the ids are the same and the
    scores within 1e-4 relative."""

    def __eq__(self, other):
        return len(self) == len(other) and all(
            a[0] == b[0] and abs(a[1] - b[1]) <= 1e-4 * max(1.0, abs(a[1]), abs(b[1]))
            for a, b in zip(self, other, strict=True)
        )


def _scored(points):
    return Scored((p.id, p.score) for p in points)


def _scored_json(points):
    return Scored((p["id"], p["score"]) for p in points)


def test_recommend_and_discover_routes_answer_as_query_in_local_mode(pair, server):
    _, reference, rng = pair
    url = server.qdrant_url
    have = [i for i in range(60) if i % 3]  # the points with every dense field

    def some():
        return int(rng.choice(have))

    for _ in range(6):
        using = str(rng.choice(["a", "b"]))
        dim = FIELDS[using].size
        pos = [some(), rng.normal(size=dim).round(3).tolist()]
        neg = [some()]
        for strategy in ("average_vector", "best_score", "sum_scores"):
            want = reference.query_points(
                "calls",
                query=m.RecommendQuery(
                    recommend=m.RecommendInput(positive=pos, negative=neg, strategy=strategy)
                ),
                using=using, limit=7, search_params=EXACT,
            ).points  # fmt: skip
            body = {"positive": pos, "negative": neg, "strategy": strategy, "using": using,
                    "limit": 7, "params": {"exact": True}}  # fmt: skip
            st, got = _post(url, "/collections/calls/points/recommend", body)
            assert st == 200, got
            assert _scored_json(got["result"]) == _scored(want), strategy
            st, batch = _post(url, "/collections/calls/points/recommend/batch",
                              {"searches": [body, {**body, "limit": 2}]})  # fmt: skip
            assert st == 200, batch
            assert [_scored_json(r) for r in batch["result"]] == [
                _scored(want),
                _scored(want[:2]),
            ]
        target = some()
        ctx = [{"positive": some(), "negative": some()}]
        pairs = [m.ContextPair(**p) for p in ctx]
        want = reference.query_points(
            "calls",
            query=m.DiscoverQuery(discover=m.DiscoverInput(target=target, context=pairs)),
            using=using, limit=5, search_params=EXACT,
        ).points  # fmt: skip
        body = {"target": target, "context": ctx, "using": using, "limit": 5,
                "params": {"exact": True}}  # fmt: skip
        st, got = _post(url, "/collections/calls/points/discover", body)
        assert st == 200, got
        assert _scored_json(got["result"]) == _scored(want)
        # without a target: a context search (scores only: ties at 0 come in any order)
        want = reference.query_points(
            "calls", query=m.ContextQuery(context=pairs), using=using, limit=5, search_params=EXACT
        ).points
        st, batch = _post(url, "/collections/calls/points/discover/batch",
                          {"searches": [{**body, "target": None}]})  # fmt: skip
        assert st == 200, batch
        np.testing.assert_allclose(
            [p["score"] for p in batch["result"][0]], [p.score for p in want], rtol=1e-4, atol=1e-6
        )
    route = "/collections/calls/points/recommend"
    st, err = _post(url, route, {"negative": [1], "limit": 3, "using": "a"})
    assert st == 400 and "Positive" in err["status"]["error"], err
    st, err = _post(url, "/collections/calls/points/discover", {"limit": 3, "using": "a"})
    assert st == 400 and "target or context" in err["status"]["error"], err
    st, err = _post(url, route, {"positive": [1], "limit": 3, "using": "a", "x": 1})
    assert st == 400 and "unknown field" in err["status"]["error"], err


def _groups(result):
    return [
        (g.id, _scored(g.hits), g.lookup and (g.lookup.id, g.lookup.payload)) for g in result.groups
    ]


def _groups_json(result):
    out = []
    for g in result["groups"]:
        lookup = g.get("lookup")
        out.append((g["id"], _scored_json(g["hits"]), lookup and (lookup["id"], lookup["payload"])))
    return out


def test_groups_answer_as_local_mode(pair, server):
    """Groups by a payload key holding strings, integers, a list of both and values that
    cannot group (a float, null, a bool, missing): query, search and recommend groups,
    with_lookup, group_size and limit."""
    client, reference, rng = pair
    for _ in range(5):
        using = str(rng.choice(["a", "b", "t"]))
        dim = FIELDS[using].size
        query = rng.normal(size=(2, dim) if using == "t" else dim).round(3).tolist()
        size, limit = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        kwargs = dict(query=query, using=using, group_by="g", group_size=size, limit=limit,
                      search_params=EXACT, with_payload=True)  # fmt: skip
        want = reference.query_points_groups("calls", with_lookup="lookup", **kwargs)
        got = client.query_points_groups("calls", with_lookup="lookup", **kwargs)
        assert _groups(got) == _groups(want)
        flt = m.Filter(must=[m.FieldCondition(key="i", range=m.Range(gte=10))])
        want = reference.query_points_groups("calls", query_filter=flt, **kwargs)
        got = client.query_points_groups("calls", query_filter=flt, **kwargs)
        assert _groups(got) == _groups(want)
        if using == "t":
            continue
        lookup = m.WithLookup(collection="lookup", with_payload=["name"])
        want = reference.query_points_groups("calls", with_lookup=lookup, **kwargs)
        body = {"vector": {"name": using, "vector": query}, "group_by": "g", "group_size": size,
                "limit": limit, "params": {"exact": True}, "with_payload": True,
                "with_lookup": {"collection": "lookup", "with_payload": ["name"]}}  # fmt: skip
        st, got = _post(server.qdrant_url, "/collections/calls/points/search/groups", body)
        assert st == 200, got
        assert _groups_json(got["result"]) == _groups(want)
        pos = [int(rng.choice([i for i in range(60) if i % 3]))]
        want = reference.query_points_groups(
            "calls", query=m.RecommendQuery(recommend=m.RecommendInput(positive=pos)),
            using=using, group_by="g", group_size=size, limit=limit, search_params=EXACT,
        )  # fmt: skip
        body = {"positive": pos, "using": using, "group_by": "g", "group_size": size,
                "limit": limit, "params": {"exact": True}}  # fmt: skip
        st, got = _post(server.qdrant_url, "/collections/calls/points/recommend/groups", body)
        assert st == 200, got
        assert [(g["id"], _scored_json(g["hits"])) for g in got["result"]["groups"]] == [
            (g.id, _scored(g.hits)) for g in want.groups
        ]
    body = {"vector": {"name": "a", "vector": [1, 2, 3, 4]}, "group_by": "g", "limit": 2}
    st, err = _post(server.qdrant_url, "/collections/calls/points/search/groups", body)
    assert st == 400 and "group_size" in err["status"]["error"], err


def test_distance_matrix_answers_as_local_mode(pair):
    """With sample at least the number of allowed points the matrix is deterministic: pairs
    and offsets equal local mode's, with and without a filter, for each kind of field."""
    client, reference, _ = pair
    flt = m.Filter(must=[m.FieldCondition(key="i", range=m.Range(lt=30))])
    for using in ("a", "b", "t"):
        for f in (None, flt):
            kw = dict(sample=100, limit=3, using=using, query_filter=f)
            want = reference.search_matrix_pairs("calls", **kw).pairs
            got = client.search_matrix_pairs("calls", **kw).pairs
            assert [(p.a, p.b, round(p.score, 4)) for p in got] == [
                (p.a, p.b, round(p.score, 4)) for p in want
            ], using
            want = reference.search_matrix_offsets("calls", **kw)
            got = client.search_matrix_offsets("calls", **kw)
            assert got.ids == want.ids and got.offsets_row == want.offsets_row
            assert got.offsets_col == want.offsets_col
            np.testing.assert_allclose(got.scores, want.scores, rtol=1e-4, atol=1e-5)
    # a sample smaller than the points: sampled ids, sorted, each with its limit neighbours
    got = client.search_matrix_offsets("calls", sample=5, limit=2, using="a")
    assert len(got.ids) == 5 and got.ids == sorted(got.ids)
    assert got.offsets_row == [r for r in range(5) for _ in range(2)]
    assert all(r != c for r, c in zip(got.offsets_row, got.offsets_col, strict=True))
    with pytest.raises(UnexpectedResponse) as info:
        client.search_matrix_pairs("calls", using="nope")
    assert info.value.status_code == 400


def _create(collection, alias):
    return m.CreateAliasOperation(
        create_alias=m.CreateAlias(collection_name=collection, alias_name=alias)
    )


def test_aliases_resolve_everywhere_and_survive_a_restart(server, tmp_path):
    """Aliases (create, rename, delete, all or none) answer as local mode's, every call
    through an alias reaches its collection, and aliases, payload index declarations
    and the settings PATCH accepted are still there after a restart."""
    data = tmp_path / "data"
    srv = _start(data)
    try:
        c = _client(srv.qdrant_url)
        reference = QdrantClient(":memory:")
        for cl in (c, reference):
            cl.create_collection("real", vectors_config=m.VectorParams(size=2, distance="Dot"))
            point = m.PointStruct(id=1, vector=[1, 0], payload={"k": 1})
            cl.upsert("real", points=[point], wait=True)
            assert cl.update_collection_aliases(
                change_aliases_operations=[
                    _create("real", "al"),
                    _create("real", "tmp"),
                    m.RenameAliasOperation(
                        rename_alias=m.RenameAlias(old_alias_name="tmp", new_alias_name="al2")
                    ),
                    m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name="never-made")),
                ]
            )
        for cl in (c, reference):
            assert sorted((a.alias_name, a.collection_name) for a in cl.get_aliases().aliases) == [
                ("al", "real"),
                ("al2", "real"),
            ]
            assert cl.count("al").count == 1
            assert cl.query_points("al2", query=[1, 1]).points[0].id == 1
            assert len(cl.get_collection_aliases("real").aliases) == 2
        # a rejected action leaves every alias as it was
        for cl in (c, reference):
            with pytest.raises((UnexpectedResponse, ValueError)):
                cl.update_collection_aliases(
                    change_aliases_operations=[
                        m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name="al")),
                        _create("missing", "x"),
                    ]
                )
            with pytest.raises((UnexpectedResponse, ValueError)):
                cl.create_collection("al", vectors_config=m.VectorParams(size=2, distance="Dot"))
            assert len(cl.get_aliases().aliases) == 2
        with pytest.raises(UnexpectedResponse) as info:
            c.update_collection_aliases(change_aliases_operations=[_create("missing", "x")])
        assert info.value.status_code == 404
        c.create_payload_index("al", "k", m.PayloadSchemaType.INTEGER)
        c.update_collection("al", optimizers_config=m.OptimizersConfigDiff(indexing_threshold=5))
        c.close()
        srv.ctx.__exit__(None, None, None)
        srv = _start(data)
        c = _client(srv.qdrant_url)
        assert sorted(a.alias_name for a in c.get_aliases().aliases) == ["al", "al2"]
        schema = c.get_collection("real").payload_schema
        assert list(schema) == ["k"] and schema["k"].data_type == m.PayloadSchemaType.INTEGER
        assert schema["k"].points == 1
        assert c.get_collection("al").config.optimizer_config.indexing_threshold == 5
        assert c.retrieve("al", [1])[0].payload == {"k": 1}
        # deleting the collection deletes its aliases; deleting it again answers False
        for cl in (c, reference):
            assert cl.delete_collection("real") is True
            assert cl.get_aliases().aliases == []
            assert cl.delete_collection("real") is False
        c.close()
        reference.close()
    finally:
        srv.ctx.__exit__(None, None, None)


def test_update_collection_keeps_what_it_accepts_and_refuses_what_it_cannot(client, server):
    """PATCH: settings that change no answer are accepted and reported by get_collection
    (after a restart too: see the aliases test); metadata merges as local mode merges it;
    a new m, another quantization or an unknown key answer 400 naming it; nothing is kept
    from a refused update."""
    reference = QdrantClient(":memory:")
    try:
        for c in (client, reference):
            c.create_collection(
                "patch",
                vectors_config=m.VectorParams(size=2, distance="Dot"),
                metadata={"owner": "a", "drop": 1},
            )
            assert c.update_collection("patch", metadata={"drop": None, "team": "x"})
            assert c.get_collection("patch").config.metadata == {"owner": "a", "team": "x"}
        assert client.update_collection(
            "patch",
            hnsw_config=m.HnswConfigDiff(full_scan_threshold=1234, m=16),
            optimizers_config=m.OptimizersConfigDiff(indexing_threshold=777, deleted_threshold=0.5),
            collection_params=m.CollectionParamsDiff(replication_factor=2),
            vectors_config={"": m.VectorParamsDiff(on_disk=True)},
        )
        config = client.get_collection("patch").config
        assert config.hnsw_config.full_scan_threshold == 1234 and config.hnsw_config.m == 16
        assert config.optimizer_config.indexing_threshold == 777
        assert config.optimizer_config.deleted_threshold == 0.5
        assert config.params.replication_factor == 2 and config.params.vectors.on_disk is True
        refused = {
            "m = 32": dict(hnsw_config=m.HnswConfigDiff(m=32, full_scan_threshold=1)),
            "quantization": dict(
                quantization_config=m.ScalarQuantization(
                    scalar=m.ScalarQuantizationConfig(type=m.ScalarType.INT8)
                )
            ),
            "Not existing vector name": dict(
                vectors_config={"nope": m.VectorParamsDiff(on_disk=True)}
            ),
        }
        for needle, kwargs in refused.items():
            with pytest.raises(UnexpectedResponse) as info:
                client.update_collection("patch", **kwargs)
            assert info.value.status_code == 400
            assert needle in info.value.content.decode(), (needle, info.value.content)
        req = urllib.request.Request(
            server.qdrant_url + "/collections/patch",
            data=json.dumps({"hnsw_config": {"ef": 100}}).encode(),
            method="PATCH",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=30)
        assert info.value.code == 400
        assert 'unknown field "ef"' in json.loads(info.value.read())["status"]["error"]
        assert client.get_collection("patch").config.hnsw_config.full_scan_threshold == 1234
    finally:
        client.delete_collection("patch")
        reference.close()


def test_update_batches_and_conditional_updates_answer_as_local_mode(client):
    """points/batch runs every kind of operation in order, one UpdateResult each; a
    malformed operation changes nothing; update_filter and update_mode of an upsert and
    update_filter of update_vectors leave alone what local mode leaves alone."""
    reference = QdrantClient(":memory:")
    config = {"v": m.VectorParams(size=2, distance="Dot")}
    try:
        for c in (client, reference):
            c.create_collection("batch", vectors_config=config)
            points = [m.PointStruct(id=i, vector={"v": [i, 1]}, payload={"n": i}) for i in range(6)]
            c.upsert("batch", points=points, wait=True)
        ops = [
            m.UpsertOperation(
                upsert=m.PointsList(points=[m.PointStruct(id=9, vector={"v": [1, 1]}, payload={})])
            ),
            m.DeleteOperation(delete=m.PointIdsList(points=[0])),
            m.SetPayloadOperation(set_payload=m.SetPayload(payload={"s": 1}, points=[1, 2])),
            m.OverwritePayloadOperation(
                overwrite_payload=m.SetPayload(payload={"o": 1}, points=[3])
            ),
            m.DeletePayloadOperation(delete_payload=m.DeletePayload(keys=["n"], points=[4])),
            m.ClearPayloadOperation(
                clear_payload=m.FilterSelector(
                    filter=m.Filter(must=[m.FieldCondition(key="n", match=m.MatchValue(value=5))])
                )
            ),
            m.UpdateVectorsOperation(
                update_vectors=m.UpdateVectors(points=[m.PointVectors(id=2, vector={"v": [7, 7]})])
            ),
            m.DeleteVectorsOperation(delete_vectors=m.DeleteVectors(points=[1], vector=["v"])),
        ]
        for c in (client, reference):
            assert len(c.batch_update_points("batch", ops, wait=True)) == len(ops)
        cond = m.Filter(must=[m.FieldCondition(key="n", range=m.Range(gte=3))])
        new = [m.PointStruct(id=i, vector={"v": [0, i]}, payload={"new": i}) for i in (2, 3, 12)]
        for c in (client, reference):
            c.upsert("batch", points=new, update_filter=cond, wait=True)
            c.upsert("batch", points=[new[0]], update_mode=m.UpdateMode.INSERT_ONLY, wait=True)
            c.upsert(
                "batch",
                points=[m.PointStruct(id=20, vector={"v": [1, 0]})],
                update_mode=m.UpdateMode.UPDATE_ONLY,
                wait=True,
            )
            c.update_vectors(
                "batch",
                [m.PointVectors(id=i, vector={"v": [5, 5]}) for i in (2, 3)],
                update_filter=m.Filter(must=[m.HasIdCondition(has_id=[3])]),
            )

        def state(c):
            got = c.scroll("batch", limit=100, with_vectors=True)[0]
            return [(p.id, p.payload, p.vector) for p in got]

        assert state(client) == state(reference)
        req = urllib.request.Request(
            client._client.rest_uri + "/collections/batch/points/batch",
            data=json.dumps(
                {"operations": [{"delete": {"points": [9]}}, {"delete": {"nope": 1}}]}
            ).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=30)
        assert info.value.code == 400
        assert "operations[1].delete" in json.loads(info.value.read())["status"]["error"]
        assert [p.id for p in client.retrieve("batch", [9])] == [9]  # nothing ran
    finally:
        client.delete_collection("batch")
        reference.close()
