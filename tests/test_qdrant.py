"""The real qdrant-client against strata-server --qdrant-addr, compared with strata.Collection.

Every test with the client fixture runs twice: over REST and over gRPC (--qdrant-grpc-addr,
QdrantClient(prefer_grpc=True)), each door with a server of its own."""

from __future__ import annotations

import json
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

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

DIM = 8
N = 400
METRICS = {"cosine": m.Distance.COSINE, "l2": m.Distance.EUCLID, "ip": m.Distance.DOT}


@pytest.fixture(scope="module", params=["rest", "grpc"])
def server(request, tmp_path_factory):
    port, grpc_port = free_port(), free_port()
    data = tmp_path_factory.mktemp("qdrant") / "data"
    args = ("--qdrant-addr", f"127.0.0.1:{port}", "--qdrant-grpc-addr", f"127.0.0.1:{grpc_port}")
    with running_server(data, *args) as srv:
        srv.qdrant_url = f"http://127.0.0.1:{port}"
        srv.qdrant_grpc_port = grpc_port
        srv.door = request.param
        yield srv


@pytest.fixture
def client(server):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the version check must pass quietly
        c = QdrantClient(
            url=server.qdrant_url,
            grpc_port=server.qdrant_grpc_port,
            prefer_grpc=server.door == "grpc",
            timeout=30,
        )
    yield c
    c.close()


# What a refused call raises: qdrant-client's REST error, its own checks, or a gRPC status.
REFUSED = (UnexpectedResponse, ValueError, grpc.RpcError)


def _refused(server, call):
    """The REST status or gRPC code and the message of a call the door refuses."""
    if server.door == "grpc":
        with pytest.raises(grpc.RpcError) as info:
            call()
        return info.value.code(), info.value.details()
    with pytest.raises(UnexpectedResponse) as info:
        call()
    return info.value.status_code, json.loads(info.value.content)["status"]["error"]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(N, DIM)).astype(np.float32)
    payloads = [
        {
            "i": i,
            "group": ["a", "b", "c"][i % 3],
            "tags": [f"t{i % 5}", f"t{i % 7}"],
            "nested": {"score": i % 10},
            "opt": None if i % 4 == 0 else i,
            "text": f"doc number {i}",
        }
        for i in range(N)
    ]
    return vectors, payloads


def _exact_scores(vectors, query, metric):
    if metric == "cosine":
        v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return v @ (query / np.linalg.norm(query))
    if metric == "ip":
        return vectors @ query
    return np.sqrt(((vectors - query) ** 2).sum(axis=1))


def _create(client, name, metric, tmp_path, vectors, payloads, batch=False):
    client.create_collection(
        name,
        vectors_config=m.VectorParams(
            size=DIM, distance=METRICS[metric], hnsw_config=m.HnswConfigDiff(m=12, ef_construct=80)
        ),
    )
    if batch:
        client.upsert(
            name,
            points=m.Batch(ids=list(range(N)), vectors=vectors.tolist(), payloads=payloads),
            wait=True,
        )
    else:
        points = [
            m.PointStruct(id=i, vector=vectors[i].tolist(), payload=payloads[i]) for i in range(N)
        ]
        client.upsert(name, points=points, wait=True)
    embedded = strata.Collection.create(
        tmp_path / name, dim=DIM, metric=metric, M=12, ef_construction=80, seed=1
    )
    embedded.upsert(np.arange(N), vectors, metadata=payloads)
    return embedded


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_collection_calls_and_scores_match_qdrant_semantics(client, tmp_path, metric):
    vectors, payloads = _data(1)
    name = f"c_{metric}"
    assert not client.collection_exists(name)
    embedded = _create(client, name, metric, tmp_path, vectors, payloads, batch=metric == "l2")
    assert client.collection_exists(name)
    assert name in [c.name for c in client.get_collections().collections]
    info = client.get_collection(name)
    assert info.points_count == N and info.status == m.CollectionStatus.GREEN
    assert info.config.params.vectors.size == DIM
    assert info.config.params.vectors.distance == METRICS[metric]
    assert (info.config.hnsw_config.m, info.config.hnsw_config.ef_construct) == (12, 80)

    query = np.random.default_rng(9).normal(size=DIM).astype(np.float32)
    exact = _exact_scores(vectors, query, metric)
    order = np.argsort(exact) if metric == "l2" else np.argsort(-exact)
    res = client.query_points(
        name,
        query=query.tolist(),
        limit=10,
        with_payload=True,
        with_vectors=True,
        search_params=m.SearchParams(exact=True),
    ).points
    assert [p.id for p in res] == order[:10].tolist()
    np.testing.assert_allclose([p.score for p in res], exact[order[:10]], rtol=1e-4, atol=1e-5)
    assert res[0].payload == payloads[res[0].id]
    stored = vectors[res[0].id]
    if metric == "cosine":
        stored = stored / np.linalg.norm(stored)
    np.testing.assert_allclose(res[0].vector, stored, rtol=1e-5)

    # The same query on the embedded collection: the same ids.
    emb = embedded.query(query, k=10, ef=N + 1)
    assert emb.ids[0].tolist() == [p.id for p in res]

    # offset, hnsw_ef, score_threshold.
    paged = client.query_points(
        name, query=query.tolist(), limit=5, offset=5, search_params=m.SearchParams(hnsw_ef=400)
    ).points
    assert [p.id for p in paged] == order[5:10].tolist()
    threshold = float(exact[order[6]])
    cut = client.query_points(
        name,
        query=query.tolist(),
        limit=20,
        score_threshold=threshold,
        search_params=m.SearchParams(exact=True),
    ).points
    assert [p.id for p in cut] == order[:7].tolist()

    # query_batch_points with filters, against the embedded collection.
    flt = m.Filter(
        must=[m.FieldCondition(key="group", match=m.MatchValue(value="b"))],
        must_not=[m.FieldCondition(key="nested.score", range=m.Range(gte=7))],
    )
    batch = client.query_batch_points(
        name,
        requests=[
            m.QueryRequest(query=query.tolist(), limit=4, params=m.SearchParams(exact=True)),
            m.QueryRequest(
                query=vectors[3].tolist(), limit=6, filter=flt, params=m.SearchParams(exact=True)
            ),
        ],
    )
    assert [p.id for p in batch[0].points] == order[:4].tolist()
    where = {"group": "b", "$nor": [{"nested.score": {"$gte": 7}}]}
    want = embedded.query(vectors[3], k=6, where=where, ef=N + 1).ids[0].tolist()
    assert [p.id for p in batch[1].points] == want
    embedded.close()
    client.delete_collection(name)
    assert not client.collection_exists(name)


FILTERS = [
    (
        m.Filter(must=[m.FieldCondition(key="i", range=m.Range(gt=10, lte=50))]),
        lambda p: 10 < p["i"] <= 50,
    ),
    (
        m.Filter(
            should=[
                m.FieldCondition(key="group", match=m.MatchValue(value="a")),
                m.FieldCondition(key="tags", match=m.MatchAny(any=["t3"])),
            ]
        ),
        lambda p: p["group"] == "a" or "t3" in p["tags"],
    ),
    (
        m.Filter(
            must_not=[m.FieldCondition(key="tags", match=m.MatchExcept(**{"except": ["t1", "t2"]}))]
        ),
        lambda p: all(t in ("t1", "t2") for t in p["tags"]),
    ),
    (m.Filter(must=[m.FieldCondition(key="tags", range=m.Range(gte=1, lte=2))]), lambda p: False),
    (
        m.Filter(
            must=[
                m.HasIdCondition(has_id=[1, 5, 9, 2000]),
                m.FieldCondition(key="group", match=m.MatchValue(value="c")),
            ]
        ),
        lambda p: p["i"] in (1, 5, 9) and p["group"] == "c",
    ),
    (
        m.Filter(
            should=[
                m.HasIdCondition(has_id=[7]),
                m.IsNullCondition(is_null=m.PayloadField(key="opt")),
            ]
        ),
        lambda p: p["i"] == 7 or p["opt"] is None,
    ),
    (
        m.Filter(
            must=[m.IsEmptyCondition(is_empty=m.PayloadField(key="missing"))],
            must_not=[m.IsEmptyCondition(is_empty=m.PayloadField(key="opt"))],
        ),
        lambda p: p["opt"] is not None,
    ),
    (
        m.Filter(
            must=[m.FieldCondition(key="tags", values_count=m.ValuesCount(gte=2))],
            min_should=m.MinShould(
                min_count=2,
                conditions=[
                    m.FieldCondition(key="group", match=m.MatchValue(value="a")),
                    m.FieldCondition(key="nested.score", range=m.Range(lt=5)),
                    m.FieldCondition(key="i", range=m.Range(gte=200)),
                ],
            ),
        ),
        lambda p: sum([p["group"] == "a", p["nested"]["score"] < 5, p["i"] >= 200]) >= 2,
    ),
    (
        m.Filter(must=[m.FieldCondition(key="text", match=m.MatchText(text="Number 12"))]),
        lambda p: p["i"] == 12,
    ),
    (
        m.Filter(must=[m.Filter(must_not=[m.HasIdCondition(has_id=list(range(100)))])]),
        lambda p: p["i"] >= 100,
    ),
]


def test_filters_scroll_count_and_search_agree_with_a_python_model(client, tmp_path):
    vectors, payloads = _data(2)
    embedded = _create(client, "filters", "l2", tmp_path, vectors, payloads)
    query = vectors[17]
    exact = _exact_scores(vectors, query, "l2")
    for flt, model in FILTERS:
        want = sorted(i for i in range(N) if model(payloads[i]))
        assert client.count("filters", count_filter=flt, exact=True).count == len(want), flt
        got, offset = [], None
        while True:
            page, offset = client.scroll("filters", scroll_filter=flt, limit=37, offset=offset)
            got += [p.id for p in page]
            if offset is None:
                break
        assert got == want, flt
        res = client.query_points(
            "filters",
            query=query.tolist(),
            query_filter=flt,
            limit=8,
            search_params=m.SearchParams(exact=True),
        ).points
        best = sorted(want, key=lambda i: (exact[i], i))[:8]
        assert sorted(p.id for p in res) == sorted(best), flt
    # A filter that maps onto strata's directly: the embedded collection agrees.
    where = {"$or": [{"group": "a"}, {"tags": {"$in": ["t3"]}}]}
    assert client.count("filters", count_filter=FILTERS[1][0]).count == embedded.count(where)
    embedded.close()


def test_retrieve_scroll_order_and_payload_updates(client, tmp_path):
    vectors, payloads = _data(3)
    embedded = _create(client, "edits", "cosine", tmp_path, vectors, payloads)
    got = client.retrieve("edits", ids=[5, 3, 100000], with_vectors=True)
    assert [r.id for r in got] == [5, 3] and got[0].payload == payloads[5]
    emb = embedded.get([5, 3], include_vectors=True)
    np.testing.assert_allclose([r.vector for r in got], emb.vectors, rtol=1e-6)
    page, _ = client.scroll(
        "edits", limit=5, order_by=m.OrderBy(key="nested.score", direction="desc")
    )
    assert [p.order_value for p in page] == [9] * 5
    assert [p.id for p in page] == [9, 19, 29, 39, 49]
    page, _ = client.scroll("edits", limit=3, order_by=m.OrderBy(key="i", start_from=390))
    assert [p.id for p in page] == [390, 391, 392]

    client.set_payload("edits", payload={"flag": True, "i": -1}, points=[1, 2])
    client.overwrite_payload(
        "edits", payload={"only": 1}, points=m.Filter(must=[m.HasIdCondition(has_id=[3])])
    )
    client.delete_payload("edits", keys=["tags", "flag"], points=[2])
    embedded.update_metadata(
        [1, 2, 3],
        [
            {**payloads[1], "flag": True, "i": -1},
            {k: v for k, v in payloads[2].items() if k != "tags"} | {"i": -1},
            {"only": 1},
        ],
    )
    remote = {r.id: r.payload for r in client.retrieve("edits", ids=[1, 2, 3])}
    assert remote == dict(zip([1, 2, 3], embedded.get([1, 2, 3]).metadata, strict=True))
    client.create_payload_index("edits", field_name="group", field_schema="keyword")

    client.delete("edits", points_selector=m.PointIdsList(points=[1, 2]))
    client.delete(
        "edits",
        points_selector=m.FilterSelector(
            filter=m.Filter(must=[m.FieldCondition(key="group", match=m.MatchValue(value="a"))])
        ),
    )
    embedded.delete([1, 2])
    embedded.delete(where={"group": "a"})
    assert (
        client.count("edits").count
        == len(embedded)
        == N - 2 - sum(1 for i in range(N) if i % 3 == 0 and i not in (1, 2, 3))
    )  # 3 lost its group
    embedded.close()


def test_unsupported_calls_answer_qdrants_400_naming_the_construct(client, server):
    """REST answers 400, gRPC INVALID_ARGUMENT, with the same message naming the construct."""
    client.create_collection("refuse", vectors_config=m.VectorParams(size=3, distance="Cosine"))
    client.upsert("refuse", points=[m.PointStruct(id=1, vector=[1, 2, 3], payload={"a": 1})])
    cases = {
        "Unable to parse UUID": lambda: client.upsert(
            "refuse", points=[m.PointStruct(id="not-a-uuid", vector=[1, 2, 3])]
        ),
        "keys may not contain '.'": lambda: client.upsert(
            "refuse", points=[m.PointStruct(id=2, vector=[1, 2, 3], payload={"l": [{"x.y": 1}]})]
        ),
        "rrf weights": lambda: client.query_points(
            "refuse",
            query=m.RrfQuery(rrf=m.Rrf(weights=[1.0])),  # one weight for two lists
            prefetch=[m.Prefetch(query=[1, 2, 3]), m.Prefetch(query=[3, 2, 1])],
        ),
        "formula query needs prefetch": lambda: client.query_points(
            "refuse", query=m.FormulaQuery(formula=m.SumExpression(sum=["$score"]))
        ),
        "does not rebuild": lambda: client.update_collection(
            "refuse", hnsw_config=m.HnswConfigDiff(m=48)
        ),
        "strict_mode_config": lambda: client.update_collection(
            "refuse", strict_mode_config=m.StrictModeConfig(enabled=True)
        ),
    }
    if server.door == "rest":  # gRPC has no prefix match: qdrant-client cannot send it
        cases['match "prefix"'] = lambda: client.count(
            "refuse",
            count_filter=m.Filter(
                must=[m.FieldCondition(key="a", match=m.MatchPrefix(prefix="x"))]
            ),
        )
    bad = 400 if server.door == "rest" else grpc.StatusCode.INVALID_ARGUMENT
    for needle, call in cases.items():
        code, message = _refused(server, call)
        assert code == bad, (needle, code, message)
        assert needle in message, (needle, message)
    code, _ = _refused(server, lambda: client.get_collection("nope"))
    assert code == (404 if server.door == "rest" else grpc.StatusCode.NOT_FOUND)
    assert client.count("refuse").count == 1


def test_update_collection_is_reported_by_get_collection_over_both_doors(client):
    """What update_collection accepts, get_collection reports back, over either door."""
    client.create_collection("patched", vectors_config=m.VectorParams(size=2, distance="Dot"))
    assert client.update_collection(
        "patched",
        hnsw_config=m.HnswConfigDiff(full_scan_threshold=1234),
        optimizers_config=m.OptimizersConfigDiff(indexing_threshold=777),
        collection_params=m.CollectionParamsDiff(replication_factor=2),
        vectors_config={"": m.VectorParamsDiff(on_disk=True)},
        metadata={"team": "x"},
    )
    config = client.get_collection("patched").config
    assert config.hnsw_config.full_scan_threshold == 1234
    assert config.optimizer_config.indexing_threshold == 777
    assert config.params.replication_factor == 2 and config.params.vectors.on_disk is True
    assert config.metadata == {"team": "x"}
    client.delete_collection("patched")


def test_aliases_over_both_doors(client):
    """An alias names its collection in every call; rename and delete; listed per collection."""
    client.create_collection("aliased", vectors_config=m.VectorParams(size=2, distance="Dot"))
    client.upsert("aliased", points=[m.PointStruct(id=1, vector=[1, 0])])
    create = m.CreateAliasOperation(
        create_alias=m.CreateAlias(collection_name="aliased", alias_name="nick")
    )
    assert client.update_collection_aliases(change_aliases_operations=[create])
    assert client.count("nick").count == 1
    rename = m.RenameAliasOperation(
        rename_alias=m.RenameAlias(old_alias_name="nick", new_alias_name="nick2")
    )
    assert client.update_collection_aliases(change_aliases_operations=[rename])
    listed = [(a.alias_name, a.collection_name) for a in client.get_aliases().aliases]
    assert ("nick2", "aliased") in listed and not any(a == "nick" for a, _ in listed)
    assert [a.alias_name for a in client.get_collection_aliases("aliased").aliases] == ["nick2"]
    delete = m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name="nick2"))
    assert client.update_collection_aliases(change_aliases_operations=[delete])
    assert client.get_collection_aliases("aliased").aliases == []
    client.delete_collection("aliased")


def test_version_route_and_api_key(tmp_path):
    port = free_port()
    key_env = {"STRATA_API_KEY": "s3cret"}
    with running_server(tmp_path / "d", "--qdrant-addr", f"127.0.0.1:{port}", env=key_env):
        url = f"http://127.0.0.1:{port}"
        request = urllib.request.Request(url + "/", headers={"api-key": "s3cret"})
        with urllib.request.urlopen(request) as r:
            assert json.loads(r.read())["title"] == "qdrant - vector search engine"
        with pytest.raises(UnexpectedResponse) as info:
            QdrantClient(url=url, api_key="wrong", check_compatibility=False).get_collections()
        assert info.value.status_code == 401
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # api_key over plain http warns
            good = QdrantClient(url=url, api_key="s3cret", check_compatibility=False)
        assert good.get_collections().collections == []


def test_grpc_api_key(tmp_path):
    """The gRPC door takes the REST door's key, from the api-key metadata qdrant-client sends."""
    port, grpc_port = free_port(), free_port()
    key_env = {"STRATA_API_KEY": "s3cret"}
    args = ("--qdrant-addr", f"127.0.0.1:{port}", "--qdrant-grpc-addr", f"127.0.0.1:{grpc_port}")
    with running_server(tmp_path / "d", *args, env=key_env):
        url = f"http://127.0.0.1:{port}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # api_key over plain http warns
            wrong = QdrantClient(
                url=url, grpc_port=grpc_port, prefer_grpc=True, api_key="wrong",
                check_compatibility=False,
            )  # fmt: skip
            good = QdrantClient(
                url=url, grpc_port=grpc_port, prefer_grpc=True, api_key="s3cret",
                check_compatibility=False,
            )  # fmt: skip
        with pytest.raises(grpc.RpcError) as info:
            wrong.get_collections()
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert good.get_collections().collections == []
        wrong.close()
        good.close()


def test_cross_site_delete_and_huge_batch_are_refused_on_the_qdrant_port(client, server):
    """Issue 20 items 2 and 3 on the Qdrant port: a no-cors POST from any page deleted every
    point; a batch of 100 searches x limit 10,000 with vectors reached 4.4 GB at dim 128.
    Over gRPC the batch is RESOURCE_EXHAUSTED with the same message."""
    params = m.VectorParams(size=128, distance=m.Distance.EUCLID)
    client.create_collection("guarded", vectors_config=params)
    vectors = np.random.default_rng(0).random((20, 128)).tolist()
    client.upsert("guarded", [m.PointStruct(id=i, vector=v) for i, v in enumerate(vectors)])
    request = urllib.request.Request(
        server.qdrant_url + "/collections/guarded/points/delete", method="POST",
        data=json.dumps({"filter": {}}).encode(),
        headers={"Content-Type": "text/plain", "Origin": "http://evil.example",
                 "Sec-Fetch-Site": "cross-site"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 403
    assert "--allow-origin" in json.loads(refused.value.read())["status"]["error"]
    assert client.count("guarded").count == 20
    searches = [m.QueryRequest(query=vectors[0], limit=10_000, with_vector=True)] * 100
    code, message = _refused(server, lambda: client.query_batch_points("guarded", searches))
    assert code == (422 if server.door == "rest" else grpc.StatusCode.RESOURCE_EXHAUSTED)
    assert "--max-answer-bytes" in message
    small = client.query_batch_points("guarded", [m.QueryRequest(query=vectors[1], limit=3)] * 4)
    assert [len(r.points) for r in small] == [3, 3, 3, 3]
    client.delete_collection("guarded")  # DELETE without a body or a Content-Type


def _random_payload(rng):
    def scalar():
        return rng.choice(
            [None, True, False, 0, 1, 2, -1, 10, 2.5, -0.5, "a", "b", "red car", "Red", "a_b", ""]
        )

    def value(depth=0):
        kind = rng.integers(10)
        if kind < 6 or depth:
            return scalar()
        if kind < 9:
            return [scalar() for _ in range(rng.integers(4))]
        return {"x": value(1), "y": value(1)}

    return {k: value() for k in ("a", "b", "c", "o") if rng.integers(4)}


_FLAT_KEYS = ["a", "b", "c", "o", "o.x", "o.y", "missing"]

# Keys over _random_list_payload: array projections, positions, and keys
# that stop at (or pass over) a list of objects.
_LIST_KEYS = [
    "nested.array[].word",
    "nested.array[].number",
    "nested.array[].nested_empty",
    "nested.array[].nested_empty2",
    "nested.array[].nested_empty[]",
    "nested.array",
    "nested.array[]",
    "nested.array[0].number",
    "nested.array[1].word",
    "nested.array.word",
    "two_words",
    "two_words[]",
    "two_words[1]",
    "grid",
    "grid[]",
    "grid[0]",
    "grid[].x",
    "a",
]

# Keys inside one object of nested.array, for nested conditions.
_ELEMENT_KEYS = ["word", "number", "nested_empty", "nested_empty2", "nested_empty[]", "missing"]


def _random_list_payload(rng):
    """A payload shaped like qdrant-client's own fixture (tests/fixtures/payload.py):
    a list of objects under nested.array, with optional and empty lists inside,
    plus a list of scalars and a list mixing lists, objects and scalars."""

    def word():
        return str(rng.choice(["cat", "dog", "a", "b", "red car"]))

    def element():
        item = {
            "nested_empty": [word()] if rng.integers(2) else None,
            "nested_empty2": [word()] if rng.integers(2) else [],
            "word": word(),
            "number": int(rng.integers(1, 6)),
        }
        return {k: v for k, v in item.items() if rng.integers(6)}

    def grid_item():
        kind = rng.integers(3)
        if kind == 0:
            return [None, 1, 2, "a"][rng.integers(4)]
        if kind == 1:
            return [int(v) for v in rng.integers(0, 4, size=rng.integers(3))]
        return {"x": int(rng.integers(0, 4))}

    payload = {
        "nested": {"array": [element() for _ in range(rng.integers(0, 4))]},
        "two_words": [word() for _ in range(rng.integers(0, 3))],
        "grid": [grid_item() for _ in range(rng.integers(0, 3))],
        "a": _random_payload(rng).get("a"),
    }
    return {k: v for k, v in payload.items() if rng.integers(5)}


def _random_filter(rng, depth=0, keys=_FLAT_KEYS, element_keys=None):
    def key():
        return str(rng.choice(keys))

    def ints():
        return [int(v) for v in rng.choice([0, 1, 2, -1, 10], size=rng.integers(1, 4))]

    def bounds(cls):
        values = [-1, 0, 0.5, 1, 2, 2.5, 3] if cls is m.Range else [0, 1, 2, 3]
        picked = {b: rng.choice(values).item() for b in ("gt", "gte", "lt", "lte")}
        return cls(**{b: v for b, v in picked.items() if rng.integers(3) == 0})

    def condition():
        kind = rng.integers(14 if depth < 2 else 12)
        if element_keys and depth < 2 and rng.integers(5) == 0:
            inner = _random_filter(rng, depth + 1, element_keys)
            path = str(rng.choice(["nested.array", "nested.array[]", "grid", "two_words", "a"]))
            return m.NestedCondition(nested=m.Nested(key=path, filter=inner))
        k = key()
        if kind == 0:
            v = rng.choice([0, 1, 2, -1, True, False, "a", "b", "red car", "Red"])
            v = v.item() if hasattr(v, "item") else v
            return m.FieldCondition(key=k, match=m.MatchValue(value=v))
        if kind == 1:
            return m.FieldCondition(key=k, match=m.MatchAny(any=ints()))
        if kind == 2:
            words = [
                str(w) for w in rng.choice(["a", "b", "red car", "Red"], size=rng.integers(1, 3))
            ]
            return m.FieldCondition(key=k, match=m.MatchAny(any=words))
        if kind == 3:
            return m.FieldCondition(key=k, match=m.MatchExcept(**{"except": ints()}))
        if kind == 4:
            text = str(rng.choice(["red", "car RED", "a", "b", "", "a b", "_"]))
            return m.FieldCondition(key=k, match=m.MatchText(text=text))
        if kind in (5, 6):
            return m.FieldCondition(key=k, range=bounds(m.Range))
        if kind == 7:
            return m.FieldCondition(key=k, values_count=bounds(m.ValuesCount))
        if kind == 8:
            return m.IsEmptyCondition(is_empty=m.PayloadField(key=k))
        if kind == 9:
            return m.IsNullCondition(is_null=m.PayloadField(key=k))
        if kind == 10:
            return m.HasIdCondition(
                has_id=[int(i) for i in rng.integers(0, 60, size=rng.integers(4))]
            )
        if kind == 11:
            return m.FieldCondition(key=k, match=m.MatchExcept(**{"except": ["a", "red car"]}))
        return _random_filter(rng, depth + 1, keys, element_keys)

    def conditions():
        return [condition() for _ in range(rng.integers(4))]

    clauses = {c: conditions() for c in ("must", "should", "must_not") if rng.integers(2)}
    if rng.integers(4) == 0:
        clauses["min_should"] = m.MinShould(
            conditions=conditions(), min_count=int(rng.integers(1, 4))
        )
    return m.Filter(**clauses)


@pytest.mark.parametrize("shape", ["flat", "lists of objects"])
def test_filters_agree_with_qdrant_local_mode(client, shape):
    """Random filters over random payloads: strata's answers are local mode's answers,
    on flat payloads and on payloads holding lists of objects (array projections
    such as nested.array[].number, positions, nested conditions).

    Integral floats (1.0) are left out of the payloads: Qdrant keeps them apart from
    integers, strata stores numbers as float64 and cannot.
    """
    rng = np.random.default_rng(20)
    if shape == "flat":
        payloads = [_random_payload(rng) for _ in range(60)]
        keys = {}
    else:
        payloads = [_random_list_payload(rng) for _ in range(60)]
        keys = {"keys": _LIST_KEYS, "element_keys": _ELEMENT_KEYS}
    reference = QdrantClient(":memory:")
    for c in (client, reference):
        c.create_collection(
            "reference", vectors_config=m.VectorParams(size=2, distance=m.Distance.DOT)
        )
        c.upsert(
            "reference",
            points=[
                m.PointStruct(id=i, vector=[1.0, float(i)], payload=p)
                for i, p in enumerate(payloads)
            ],
            wait=True,
        )
    try:
        for _ in range(400):
            flt = _random_filter(rng, **keys)
            want = sorted(
                p.id for p in reference.scroll("reference", scroll_filter=flt, limit=100)[0]
            )
            got = sorted(p.id for p in client.scroll("reference", scroll_filter=flt, limit=100)[0])
            assert got == want, (flt, [payloads[i] for i in set(got) ^ set(want)])
    finally:
        client.delete_collection("reference")
        reference.close()


def test_payloads_that_would_change_are_refused(client):
    """Integers beyond 2**53 (stored rounded before) and lone surrogates (stored as U+FFFD
    by set_payload before) answer Qdrant's 400; 2**53 and floats come back as sent."""
    client.create_collection(
        "exact", vectors_config=m.VectorParams(size=2, distance=m.Distance.DOT)
    )
    try:
        for bad in ({"n": 2**53 + 1}, {"n": -(2**70)}, {"s": "a\ud800"}):
            with pytest.raises(REFUSED):
                client.upsert("exact", points=[m.PointStruct(id=1, vector=[1, 0], payload=bad)])
        client.upsert(
            "exact", points=[m.PointStruct(id=1, vector=[1, 0], payload={"n": 2**53, "f": 1.5e18})]
        )
        # Only integers here: qdrant-client's own serializer already turns a lone
        # surrogate in a set_payload body into U+FFFD (go/server/qdrant tests the
        # door's refusal of the escape).
        for bad in ({"n": 2**53 + 1}, {"n": 2**70}):
            with pytest.raises(REFUSED):
                client.set_payload("exact", payload=bad, points=[1])
            with pytest.raises(REFUSED):
                client.overwrite_payload("exact", payload=bad, points=[1])
        (point,) = client.retrieve("exact", [1])
        assert point.payload == {"n": 2**53, "f": 1.5e18} and type(point.payload["n"]) is int
    finally:
        client.delete_collection("exact")


def test_uuid_ids_agree_with_qdrant_local_mode(client):
    """UUID and integer ids side by side, in every spelling Qdrant parses: upsert,
    retrieve, has_id, scroll order and offsets, query and delete answer as local mode."""
    import uuid

    rng = np.random.default_rng(25)
    uuids = [
        uuid.UUID(int=int(rng.integers(2**62)) << 64 | int(rng.integers(2**62))) for _ in range(30)
    ]
    spell = [
        str,
        lambda u: u.hex,
        lambda u: str(u).upper(),
        lambda u: "{" + str(u) + "}",
        lambda u: u.urn,
    ]
    points = [
        m.PointStruct(id=spell[i % len(spell)](u), vector=[1.0, float(i)], payload={"i": i})
        for i, u in enumerate(uuids)
    ] + [m.PointStruct(id=i, vector=[0.5, float(i)], payload={"i": 100 + i}) for i in range(10)]
    reference = QdrantClient(":memory:")
    for c in (client, reference):
        c.create_collection("uuids", vectors_config=m.VectorParams(size=2, distance=m.Distance.DOT))
        c.upsert("uuids", points=points, wait=True)
    try:
        for c in (client, reference):
            c.delete("uuids", points_selector=[str(uuids[3]), uuids[4].hex, 2], wait=True)

        def answers(c):
            pages, offset = [], None
            while True:
                page, offset = c.scroll("uuids", limit=7, offset=offset)
                pages.append([(p.id, p.payload) for p in page])
                if offset is None:
                    break
            picked = m.Filter(
                must=[m.HasIdCondition(has_id=[str(u).upper() for u in uuids[:8]] + [1, 5])]
            )
            return {
                "scroll": pages,
                "retrieve": [
                    (p.id, p.payload) for p in c.retrieve("uuids", [uuids[0].urn, 7, str(uuids[9])])
                ],
                "has_id": sorted(
                    (str(p.id), p.payload["i"])
                    for p in c.scroll("uuids", scroll_filter=picked, limit=50)[0]
                ),
                "query": [
                    (p.id, round(p.score, 4))
                    for p in c.query_points("uuids", query=[1.0, 0.1], limit=6).points
                ],
                "count": c.count("uuids").count,
            }

        assert answers(client) == answers(reference)
    finally:
        client.delete_collection("uuids")


def test_named_vectors_and_multivectors_answer_as_local_mode(client):
    """Named dense fields of different sizes and distances and a MAX_SIM multivector
    field, points with some of them: query with using, has_vector, update_vectors and
    delete_vectors answer what QdrantClient(":memory:") answers (ids, scores, vectors)."""
    rng = np.random.default_rng(25)
    config = {
        "text": m.VectorParams(size=6, distance=m.Distance.COSINE),
        "image": m.VectorParams(size=4, distance=m.Distance.EUCLID),
        "colbert": m.VectorParams(
            size=3,
            distance=m.Distance.DOT,
            multivector_config=m.MultiVectorConfig(comparator=m.MultiVectorComparator.MAX_SIM),
        ),
    }
    points = []
    for i in range(60):
        vector = {}
        if i % 4 != 0:
            vector["text"] = rng.normal(size=6).round(3).tolist()
        if i % 3 != 0:
            vector["image"] = rng.normal(size=4).round(3).tolist()
        if i % 2 == 0:
            vector["colbert"] = rng.normal(size=(1 + i % 4, 3)).round(3).tolist()
        points.append(m.PointStruct(id=i, vector=vector, payload={"i": i}))
    reference = QdrantClient(":memory:")
    try:
        for c in (client, reference):
            c.create_collection("named", vectors_config=config)
            c.upsert("named", points=points, wait=True)
            image = {"image": [1.0, 2.0, 3.0, 4.0]}
            c.update_vectors("named", [m.PointVectors(id=5, vector=image)])
            c.delete_vectors("named", ["text"], points=[1, 2])

        def answers(c, query, using, flt=None):
            got = c.query_points(
                "named",
                query=query,
                using=using,
                query_filter=flt,
                limit=10,
                search_params=m.SearchParams(exact=True),
            ).points
            return [(p.id, round(p.score, 4)) for p in got]

        for _ in range(10):
            cases = [
                (rng.normal(size=6).tolist(), "text", None),
                (rng.normal(size=4).tolist(), "image", None),
                (rng.normal(size=(2, 3)).tolist(), "colbert", None),
                (
                    rng.normal(size=6).tolist(),
                    "text",
                    m.Filter(must=[m.HasVectorCondition(has_vector="colbert")]),
                ),
            ]
            for query, using, flt in cases:
                want = answers(reference, query, using, flt)
                assert answers(client, query, using, flt) == want, using
        for ids in ([1, 2, 5], [0, 3, 8]):
            want = reference.retrieve("named", ids, with_vectors=True)
            got = client.retrieve("named", ids, with_vectors=True)
            assert [p.id for p in got] == [p.id for p in want]
            for g, w in zip(got, want, strict=True):
                assert g.vector.keys() == w.vector.keys(), g.id
                for name in w.vector:
                    np.testing.assert_allclose(
                        np.asarray(g.vector[name]), np.asarray(w.vector[name]), rtol=1e-5, atol=1e-6
                    )
    finally:
        client.delete_collection("named")
        reference.close()
