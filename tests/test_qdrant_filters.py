"""The Qdrant door's geo, datetime and text filters, order_by, payload ops by key and by
filter, facets, payload indexes and Manhattan distance, against QdrantClient(":memory:")
(Qdrant's reference in Python) with the same data; every test runs over REST and over gRPC
(--qdrant-grpc-addr, prefer_grpc=True)."""

from __future__ import annotations

import datetime as dt
import json
import urllib.error
import urllib.request
import warnings

import grpc
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


@pytest.fixture(scope="module", params=["rest", "grpc"])
def client(request, tmp_path_factory):
    port, grpc_port = free_port(), free_port()
    data = tmp_path_factory.mktemp("qdrant_filters") / "data"
    args = ("--qdrant-addr", f"127.0.0.1:{port}", "--qdrant-grpc-addr", f"127.0.0.1:{grpc_port}")
    with running_server(data, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the version check must pass quietly
            c = QdrantClient(
                url=f"http://127.0.0.1:{port}",
                grpc_port=grpc_port,
                prefer_grpc=request.param == "grpc",
                timeout=30,
            )
        c.strata_url = f"http://127.0.0.1:{port}"
        c.door = request.param
        yield c
        c.close()


@pytest.fixture
def pair(client):
    """strata's client and a local-mode reference, each with a collection "c" (dim 2,
    Dot) made by make(points); both dropped afterwards."""
    reference = QdrantClient(":memory:")

    def make(points, distance=m.Distance.DOT, size=2):
        for c in (client, reference):
            c.create_collection("c", vectors_config=m.VectorParams(size=size, distance=distance))
            c.upsert("c", points=points, wait=True)

    yield client, reference, make
    if client.collection_exists("c"):
        client.delete_collection("c")
    reference.close()


def _points(payloads):
    return [m.PointStruct(id=i, vector=[1.0, float(i)], payload=p) for i, p in enumerate(payloads)]


# ---------------------------------------------------------------- payloads and filters

_DATETIMES = [
    "2024-01-01",
    "2024-01-01T00:00:00Z",
    "2024-01-01T01:00:00+01:00",
    "2024-01-01 00:00:00.000001",
    "2023-12-31T23:59:59.999999",
    "2024-02-29T12:00",
    "2024-06-15 12:30:00 UTC",
    "2024-06-15T12:30:00-05",
    "2024-06-15T07:30:00.5+00:00",
    "not a date",
    "2023-02-29",
]
_TEXTS = ["red car", "the red fast car", "car red", "Red, Car!", "blue", "", "fast"]


def _coord(rng, limit):
    return float(rng.integers(-4, 5)) * limit / 4 + float(rng.choice([0, 0.5, -0.25]))


def _geo(rng):
    kind = rng.integers(10)
    if kind == 0:
        return {"lat": 1.0}
    if kind == 1:
        return [1, 2]
    return {"lon": _coord(rng, 180), "lat": _coord(rng, 90)}


def _payload(rng):
    p = {}
    shape = rng.integers(5)
    if shape in (1, 2):
        p["loc"] = _geo(rng)
    elif shape == 3:
        p["loc"] = [_geo(rng) for _ in range(rng.integers(4))]
    elif shape == 4:
        p["shops"] = [{"at": _geo(rng)} for _ in range(rng.integers(1, 3))]
    if rng.integers(4):
        w = str(rng.choice(_DATETIMES))
        p["when"] = [w, str(rng.choice(_DATETIMES))] if rng.integers(4) == 0 else w
    if rng.integers(3):
        p["txt"] = str(rng.choice(_TEXTS))
    if rng.integers(3):
        p["tags"] = [str(t) for t in rng.choice(["a", "b", "c"], size=rng.integers(0, 3))]
    opt = rng.integers(5)
    if opt == 1:
        p["opt"] = None
    elif opt == 2:
        p["opt"] = []
    elif opt == 3:
        p["opt"] = [None]
    elif opt == 4:
        p["opt"] = [1, None]
    return p


def _point(rng, lon_limit=180, lat_limit=90):
    return m.GeoPoint(
        lon=float(rng.integers(-4, 5)) * lon_limit / 4,
        lat=float(rng.integers(-4, 5)) * lat_limit / 4,
    )


def _ring(points):
    return m.GeoLineString(points=[*points, points[0]])


def _condition(rng, depth):
    key = str(rng.choice(["loc", "loc[]", "shops[].at", "when", "txt", "tags", "opt"]))
    kind = rng.integers(13 if depth < 2 else 11)
    if kind == 0:
        tl, br = _point(rng), _point(rng)
        return m.FieldCondition(
            key=key, geo_bounding_box=m.GeoBoundingBox(top_left=tl, bottom_right=br)
        )
    if kind == 1:
        radius = float(rng.choice([1.0, 5e5, 2e6, 5e6, 2e7]))
        return m.FieldCondition(key=key, geo_radius=m.GeoRadius(center=_point(rng), radius=radius))
    if kind == 2:
        if rng.integers(2):
            ext = [
                m.GeoPoint(lon=-90, lat=-45),
                m.GeoPoint(lon=90, lat=-45),
                m.GeoPoint(lon=90, lat=45),
                m.GeoPoint(lon=-90, lat=45),
            ]
        else:
            ext = [_point(rng) for _ in range(3)]
            if len({(p.lon, p.lat) for p in ext}) < 3:
                ext = [
                    m.GeoPoint(lon=0, lat=0),
                    m.GeoPoint(lon=45, lat=0),
                    m.GeoPoint(lon=0, lat=45),
                ]
        holes = None
        if rng.integers(2):
            holes = [
                _ring(
                    [
                        m.GeoPoint(lon=-45, lat=-22.5),
                        m.GeoPoint(lon=45, lat=-22.5),
                        m.GeoPoint(lon=0, lat=22.5),
                    ]
                )
            ]
        return m.FieldCondition(
            key=key, geo_polygon=m.GeoPolygon(exterior=_ring(ext), interiors=holes)
        )
    if kind in (3, 4):
        bounds = {}
        for b in ("gt", "gte", "lt", "lte"):
            if rng.integers(3) == 0:
                moment = [
                    dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
                    dt.datetime(2024, 1, 1, 0, 0, 0, 1),  # naive: UTC
                    dt.datetime(2024, 6, 15, 12, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
                    dt.datetime(2023, 12, 31, 23, 59, 59, 999999),
                    dt.date(2024, 2, 29),
                ][rng.integers(5)]
                bounds[b] = moment
        # Without a bound the wire form is "range": {}, which Qdrant reads as a numeric
        # range (any number), local mode's object as any datetime: one bound at least.
        bounds = bounds or {"gte": dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)}
        return m.FieldCondition(key="when", range=m.DatetimeRange(**bounds))
    if kind == 5:
        text = str(rng.choice(["red car", "car red", "red", "fast car", "blue red", "!"]))
        match = [m.MatchText(text=text), m.MatchTextAny(text_any=text), m.MatchPhrase(phrase=text)]
        return m.FieldCondition(key="txt", match=match[rng.integers(3)])
    if kind == 6:
        b = {k: int(rng.integers(0, 3)) for k in ("gt", "gte", "lt", "lte") if rng.integers(3) == 0}
        return m.FieldCondition(key=key, values_count=m.ValuesCount(**b))
    if kind == 7:
        return m.IsEmptyCondition(is_empty=m.PayloadField(key=key))
    if kind == 8:
        return m.IsNullCondition(is_null=m.PayloadField(key=key))
    if kind == 9:
        return m.FieldCondition(key=key, is_empty=bool(rng.integers(2)))
    if kind == 10:
        return m.FieldCondition(key="tags", match=m.MatchAny(any=["a", "c"]))
    if kind == 11:
        inner = m.Filter(
            must=[
                m.FieldCondition(key="at", geo_radius=m.GeoRadius(center=_point(rng), radius=5e6))
            ]
        )
        return m.NestedCondition(nested=m.Nested(key="shops", filter=inner))
    return _filter(rng, depth + 1)


def _filter(rng, depth=0):
    clauses = {
        c: [_condition(rng, depth) for _ in range(rng.integers(1, 3))]
        for c in ("must", "should", "must_not")
        if rng.integers(2)
    }
    return m.Filter(**clauses)


def test_geo_datetime_text_and_emptiness_filters_agree_with_local_mode(pair):
    """Random geo points (single, lists, inside lists of objects, look-alikes), datetimes
    in every format Qdrant reads, texts and null/[]/[null] values; random bounding boxes
    (across the antimeridian too), radii, polygons with holes, datetime ranges (aware,
    naive and date bounds), text/text_any/phrase, values_count, is_empty and is_null:
    strata's ids are local mode's."""
    client, reference, make = pair
    rng = np.random.default_rng(26)
    make(_points([_payload(rng) for _ in range(120)]))
    matched = 0
    for _ in range(300):
        flt = _filter(rng)
        want = sorted(p.id for p in reference.scroll("c", scroll_filter=flt, limit=200)[0])
        got = sorted(p.id for p in client.scroll("c", scroll_filter=flt, limit=200)[0])
        differ = [reference.retrieve("c", [i])[0].payload for i in set(got) ^ set(want)]
        assert got == want, (flt.model_dump_json(exclude_none=True), differ)
        assert client.count("c", count_filter=flt).count == len(want)
        matched += 0 < len(want) < 120
    assert matched > 100  # most filters split the points: the comparison has teeth


def test_invalid_geo_and_datetime_conditions_answer_400(client):
    """An open polygon ring, a latitude beyond 90, an impossible datetime and a range
    mixing numbers and datetimes are Qdrant's 400 with a message naming them."""
    client.create_collection("bad", vectors_config=m.VectorParams(size=2, distance=m.Distance.DOT))
    try:
        for cond, says in (
            (
                {
                    "key": "g",
                    "geo_polygon": {
                        "exterior": {
                            "points": [
                                {"lon": 0, "lat": 0},
                                {"lon": 1, "lat": 0},
                                {"lon": 1, "lat": 1},
                                {"lon": 0, "lat": 1},
                            ]
                        }
                    },
                },
                "closed line",
            ),
            (
                {"key": "g", "geo_radius": {"center": {"lon": 0, "lat": 95}, "radius": 1}},
                "latitude",
            ),
            ({"key": "w", "range": {"gt": "2024-13-01"}}, "not a datetime"),
            ({"key": "w", "range": {"gt": "2024-01-01", "lt": 3}}, "not both"),
        ):
            body = json.dumps({"filter": {"must": [cond]}}).encode()
            req = urllib.request.Request(
                client.strata_url + "/collections/bad/points/count",
                data=body,
                method="POST",
                headers={"Content-Type": "application/json"},
            )
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=10)
            assert err.value.code == 400
            assert says in json.loads(err.value.read())["status"]["error"]
    finally:
        client.delete_collection("bad")


# ---------------------------------------------------------------- order_by


def test_order_by_numbers_and_datetimes_as_local_mode(pair):
    """order_by over integers, floats, datetimes (mixed zones and formats) and lists of
    them, ascending and descending, from a numeric or datetime start_from, with a
    filter: the same (id, order_value) sequence as local mode."""
    client, reference, make = pair
    rng = np.random.default_rng(7)
    payloads = []
    for i in range(80):
        p = {"n": int(rng.integers(-50, 50)) if i % 5 else float(rng.integers(-500, 500)) / 10}
        if i % 7:
            p["when"] = str(rng.choice(_DATETIMES[:9]))
        if i % 3 == 0:
            p["many"] = [int(v) for v in rng.integers(0, 20, size=rng.integers(0, 4))]
        p["g"] = ["a", "b"][i % 2]
        payloads.append(p)
    # Distinct values where ties would order by different rules (local mode: insertion
    # order, strata: id order; the same here as points go in by id).
    make(_points(payloads))
    cases = []
    for key in ("n", "when", "many"):
        for direction in (m.Direction.ASC, m.Direction.DESC):
            for start in (None, 0, 10, "2024-01-01T00:00:00Z", "2024-06-15"):
                if key != "when" and isinstance(start, str):
                    continue
                cases.append((key, direction, start))
    for key, direction, start in cases:
        for flt in (
            None,
            m.Filter(must=[m.FieldCondition(key="g", match=m.MatchValue(value="a"))]),
        ):
            order = m.OrderBy(key=key, direction=direction, start_from=start)
            want = reference.scroll("c", order_by=order, scroll_filter=flt, limit=30)[0]
            got = client.scroll("c", order_by=order, scroll_filter=flt, limit=30)[0]
            assert [(p.id, p.order_value) for p in got] == [(p.id, p.order_value) for p in want], (
                order
            )
            assert [p.payload for p in got] == [p.payload for p in want]


# ---------------------------------------------------------------- payload operations


def _all_payloads(c):
    return {p.id: p.payload for p in c.scroll("c", limit=100)[0]}


def test_payload_ops_by_key_and_by_filter_as_local_mode(pair):
    """set_payload with a nested key (objects made, lists entered, [] for each element),
    set/overwrite/delete/clear by filter, nested delete keys, a null removing a key, and
    an id list naming a missing point (the others are written, then the error): every
    payload equals local mode's after every step."""
    client, reference, make = pair
    payloads = [
        {"a": {"b": 1}, "list": [{"x": 1}, {"x": 2}], "k": i, "g": ["x", "y"][i % 2]}
        for i in range(10)
    ]
    make(_points(payloads))
    by_g = m.Filter(must=[m.FieldCondition(key="g", match=m.MatchValue(value="x"))])
    small = m.Filter(must=[m.FieldCondition(key="k", range=m.Range(lt=4))])
    steps = [
        lambda c: c.set_payload("c", payload={"new": 1, "a": None}, points=[0, 1]),
        lambda c: c.set_payload("c", payload={"deep": True}, points=[2], key="a.b.c"),
        lambda c: c.set_payload("c", payload={"y": 9}, points=by_g, key="list[]"),
        lambda c: c.set_payload("c", payload={"z": 0}, points=[3], key="list[1]"),
        lambda c: c.set_payload("c", payload={"q": 1}, points=[4], key="list[5]"),
        lambda c: c.overwrite_payload("c", payload={"only": "this", "n": None}, points=small),
        lambda c: c.delete_payload("c", keys=["list[].x", "a.b"], points=by_g),
        lambda c: c.delete_payload("c", keys=["list[]", "missing.key"], points=[5]),
        lambda c: c.clear_payload("c", points_selector=[6]),
        lambda c: c.clear_payload(
            "c",
            points_selector=m.FilterSelector(
                filter=m.Filter(must=[m.FieldCondition(key="k", match=m.MatchValue(value=9))])
            ),
        ),
        lambda c: c.set_payload(
            "c",
            payload={"k": 42},
            points=m.Filter(must=[m.IsEmptyCondition(is_empty=m.PayloadField(key="k"))]),
        ),
    ]
    for i, step in enumerate(steps):
        step(client)
        step(reference)
        assert _all_payloads(client) == _all_payloads(reference), f"after step {i}"
    # A missing id: the present one is written, and both answer an error.
    with pytest.raises((UnexpectedResponse, grpc.RpcError)) as err:
        client.set_payload("c", payload={"late": 1}, points=[7, 999])
    if client.door == "rest":
        assert err.value.status_code == 404
    else:
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(KeyError):  # local mode's spelling of the 404
        reference.set_payload("c", payload={"late": 1}, points=[7, 999])
    assert _all_payloads(client) == _all_payloads(reference)


# ---------------------------------------------------------------- facets and indexes


def test_facets_count_as_local_mode(pair):
    client, reference, make = pair
    rng = np.random.default_rng(3)
    payloads = []
    for _ in range(90):
        payloads.append(
            {
                "color": str(rng.choice(["red", "green", "blue", "cyan"])),
                "size": int(rng.integers(0, 6)),
                "flag": bool(rng.integers(2)),
                "tags": [str(t) for t in rng.choice(["a", "b", "c", "d"], size=rng.integers(0, 4))],
                "ratio": float(rng.random()),
            }
        )
    make(_points(payloads))
    for c in (client,):  # Qdrant needs an index to facet on; local mode does not
        for key, schema in (
            ("color", "keyword"),
            ("size", "integer"),
            ("flag", "bool"),
            ("tags", "keyword"),
        ):
            c.create_payload_index("c", key, field_schema=schema, wait=True)
    for key in ("color", "size", "flag", "tags", "ratio", "missing"):
        for flt in (None, m.Filter(must=[m.FieldCondition(key="size", range=m.Range(gte=3))])):
            for limit in (2, 10):
                want = reference.facet("c", key, facet_filter=flt, limit=limit).hits
                got = client.facet("c", key, facet_filter=flt, limit=limit, exact=True).hits
                assert [(h.value, h.count) for h in got] == [(h.value, h.count) for h in want], key


def test_payload_indexes_are_reported_in_payload_schema(client):
    """create_payload_index is reported in get_collection's payload_schema with its type
    and the points holding a value of that type; delete_payload_index removes it."""
    client.create_collection("ix", vectors_config=m.VectorParams(size=2, distance=m.Distance.DOT))
    try:
        payloads = [
            {"city": "x", "n": 1, "f": 1.5, "loc": {"lon": 1, "lat": 2}, "at": "2024-01-01"},
            {"city": ["y", "z"], "n": 2.5, "at": "nope"},
            {"n": "3", "loc": [{"lon": 0, "lat": 0}]},
            {},
        ]
        client.upsert("ix", points=_points(payloads), wait=True)
        schemas = {
            "city": m.PayloadSchemaType.KEYWORD,
            "n": m.PayloadSchemaType.INTEGER,
            "f": m.PayloadSchemaType.FLOAT,
            "loc": m.PayloadSchemaType.GEO,
            "at": m.PayloadSchemaType.DATETIME,
        }
        for field, schema in schemas.items():
            client.create_payload_index("ix", field, field_schema=schema, wait=True)
        client.create_payload_index(
            "ix", "txt", field_schema=m.TextIndexParams(type="text", tokenizer=m.TokenizerType.WORD)
        )
        info = client.get_collection("ix").payload_schema
        assert {k: (v.data_type, v.points) for k, v in info.items()} == {
            "city": (m.PayloadSchemaType.KEYWORD, 2),
            "n": (m.PayloadSchemaType.INTEGER, 1),
            "f": (m.PayloadSchemaType.FLOAT, 1),
            "loc": (m.PayloadSchemaType.GEO, 2),
            "at": (m.PayloadSchemaType.DATETIME, 1),
            "txt": (m.PayloadSchemaType.TEXT, 0),
        }
        assert info["txt"].params.tokenizer == m.TokenizerType.WORD
        client.delete_payload_index("ix", "city", wait=True)
        assert "city" not in client.get_collection("ix").payload_schema
        req = urllib.request.Request(
            client.strata_url + "/collections/ix/index",
            data=b'{"field_name": "x", "field_schema": "nonsense"}',
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 400
        assert "unknown payload index type" in json.loads(err.value.read())["status"]["error"]
    finally:
        client.delete_collection("ix")


# ---------------------------------------------------------------- Manhattan


def test_manhattan_scores_as_local_mode(pair):
    """A Manhattan collection answers local mode's ids and scores (the L1 distance,
    lower first), exact and through the graph, with a score threshold."""
    client, reference, make = pair
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(300, 8)).astype(np.float32)
    make(
        [m.PointStruct(id=i, vector=v.tolist(), payload={"i": i}) for i, v in enumerate(vectors)],
        distance=m.Distance.MANHATTAN,
        size=8,
    )
    assert client.get_collection("c").config.params.vectors.distance == m.Distance.MANHATTAN
    for q in rng.normal(size=(10, 8)).astype(np.float32):
        want = reference.query_points("c", query=q.tolist(), limit=5).points
        for params in (m.SearchParams(exact=True), m.SearchParams(hnsw_ef=300)):
            got = client.query_points("c", query=q.tolist(), limit=5, search_params=params).points
            assert [p.id for p in got] == [p.id for p in want]
            assert [round(p.score, 3) for p in got] == [round(p.score, 3) for p in want]
        cut = (want[2].score + want[3].score) / 2  # between two hits: float32 vs float64
        got = client.query_points(
            "c",
            query=q.tolist(),
            limit=5,
            score_threshold=cut,
            search_params=m.SearchParams(exact=True),
        ).points
        assert [p.id for p in got] == [p.id for p in want[:3]]
