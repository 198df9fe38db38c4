"""The differential test: one random list of calls against qdrant-client's local mode
(QdrantClient(":memory:"), Qdrant's executable specification) and against strata-server's
Qdrant door, answers compared: ids, scores within 1e-4 relative, payloads, vectors, and
error-or-not for invalid calls.

Collections are small and searched exactly (exact=true), so equality is the right check.
The fast tier runs in the normal pytest run (seeded, a few hundred calls); the long tier
runs with STRATA_DIFF_CALLS=<n> (make soak). Targets are pluggable: TARGETS maps a name
to a function of the server fixture returning a client ("rest" and "grpc");
FIELDS lists the vector fields (sparse ones slot in once the door has them).
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
from server_process import BINARY, free_port, running_server

qdrant_client = pytest.importorskip("qdrant_client")
from qdrant_client import QdrantClient  # noqa: E402
from qdrant_client import models as m  # noqa: E402
from test_qdrant import _random_filter, _random_payload  # noqa: E402

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

CALLS = int(os.environ.get("STRATA_DIFF_CALLS", "300"))
SEEDS = [int(s) for s in os.environ.get("STRATA_DIFF_SEEDS", "1,2").split(",")]

# name -> (VectorParams, a function of rng giving one value)
FIELDS = {
    "text": (m.VectorParams(size=4, distance=m.Distance.COSINE), lambda r: r.normal(size=4)),
    "image": (m.VectorParams(size=3, distance=m.Distance.EUCLID), lambda r: r.normal(size=3)),
    "score": (m.VectorParams(size=3, distance=m.Distance.DOT), lambda r: r.normal(size=3)),
    "tokens": (
        m.VectorParams(
            size=2,
            distance=m.Distance.DOT,
            multivector_config=m.MultiVectorConfig(comparator=m.MultiVectorComparator.MAX_SIM),
        ),
        lambda r: r.normal(size=(int(r.integers(1, 4)), 2)),
    ),
}
MULTI = {"tokens"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # Two servers, one per door: each target holds the same collections.
    port, port2, grpc_port = free_port(), free_port(), free_port()
    data = tmp_path_factory.mktemp("qdiff")
    grpc_args = (
        "--qdrant-addr",
        f"127.0.0.1:{port2}",
        "--qdrant-grpc-addr",
        f"127.0.0.1:{grpc_port}",
    )
    with (
        running_server(data / "rest", "--qdrant-addr", f"127.0.0.1:{port}") as srv,
        running_server(data / "grpc", *grpc_args),
    ):
        srv.qdrant_url = f"http://127.0.0.1:{port}"
        srv.qdrant_grpc_url = f"http://127.0.0.1:{port2}"
        srv.qdrant_grpc_port = grpc_port
        yield srv


def _rest(server):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return QdrantClient(url=server.qdrant_url, timeout=30)


def _grpc(server):
    """qdrant-client over strata-server --qdrant-grpc-addr: the same calls as protobuf."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return QdrantClient(
            url=server.qdrant_grpc_url,
            grpc_port=server.qdrant_grpc_port,
            prefer_grpc=True,
            timeout=30,
        )


TARGETS = {"rest": _rest, "grpc": _grpc}


def _vector(rng, name):
    return np.round(FIELDS[name][1](rng), 3).tolist()


def _point(rng, i):
    vector = {n: _vector(rng, n) for n in FIELDS if rng.integers(5)}
    payload = _random_payload(rng)
    # keys a formula or an order_by reads: a number, a datetime, a geo point (each mostly there)
    if rng.integers(4):
        # a float is never integral: strata stores 4.0 as 4, as JSON does (docs/qdrant.md)
        x = float(np.round(rng.normal() * 3, 2))
        x = x if x != int(x) else x + 0.5
        payload["n"] = x if rng.integers(2) else int(rng.integers(-3, 9))
    if rng.integers(4):
        month, day, hour = (int(rng.integers(lo, hi)) for lo, hi in ((1, 4), (10, 28), (10, 24)))
        payload["when"] = f"2024-0{month}-{day}T{hour}:00:00Z"
    if rng.integers(4):
        payload["geo"] = {"lon": float(rng.uniform(-20, 20)), "lat": float(rng.uniform(-20, 20))}
    return m.PointStruct(id=i, vector=vector, payload=payload)


def _expression(rng, depth=0):
    """A random formula expression (the kinds Qdrant's gRPC Expression also has)."""
    leaves = 6
    kind = int(rng.integers(leaves if depth >= 3 else 20))
    sub = lambda: _expression(rng, depth + 1)  # noqa: E731
    if kind == 0:
        return float(rng.choice([0, 1, 2, -1, 0.5, 3.25]))
    if kind == 1:
        return str(rng.choice(["$score", "$score", "$score[0]", "$score[1]"]))
    if kind == 2:
        return str(rng.choice(["n", "n", "a", "o.x", "missing"]))
    if kind == 3:
        return _random_filter(rng, 2)  # a condition: 1 or 0
    if kind == 4:
        v = rng.choice([0, 1, 2, -1, True, "a"])
        key = str(rng.choice(["a", "b", "c"]))
        return m.FieldCondition(key=key, match=m.MatchValue(value=v.item()))
    if kind == 5:
        return m.DatetimeKeyExpression(datetime_key="when") if rng.integers(2) else "n"
    if kind in (6, 7):
        return m.SumExpression(sum=[sub() for _ in range(rng.integers(1, 4))])
    if kind == 8:
        return m.MultExpression(mult=[sub() for _ in range(rng.integers(1, 4))])
    if kind == 9:
        return m.NegExpression(neg=sub()) if rng.integers(2) else m.AbsExpression(abs=sub())
    if kind == 10:
        by_zero = float(rng.choice([0, 5])) if rng.integers(2) else None
        return m.DivExpression(div=m.DivParams(left=sub(), right=sub(), by_zero_default=by_zero))
    if kind == 11:
        return m.SqrtExpression(sqrt=sub())
    if kind == 12:
        exponent = float(rng.choice([2, 0.5, -1, 3]))
        return m.PowExpression(pow=m.PowParams(base=sub(), exponent=exponent))
    if kind == 13:
        return m.ExpExpression(exp=sub()) if rng.integers(2) else m.LnExpression(ln=sub())
    if kind == 14:
        return m.Log10Expression(log10=sub())
    if kind in (15, 16, 17):
        x, target, scale = sub(), None, None
        if rng.integers(3) == 0:
            x = m.DatetimeKeyExpression(datetime_key="when")
            target = m.DatetimeExpression(datetime="2024-02-15T00:00:00Z")
            scale = 86400.0 * 20
        elif rng.integers(2) == 0:
            origin = m.GeoPoint(lon=float(rng.uniform(-10, 10)), lat=float(rng.uniform(-10, 10)))
            x = m.GeoDistance(geo_distance=m.GeoDistanceParams(origin=origin, to="geo"))
            scale = 1e6
        elif rng.integers(2):
            target = float(rng.choice([0, 1, 2.5]))
            scale = float(rng.choice([0.5, 1, 4]))
        midpoint = float(rng.choice([0.1, 0.5, 0.9])) if rng.integers(2) else None
        params = m.DecayParamsExpression(x=x, target=target, scale=scale, midpoint=midpoint)
        return [
            m.LinDecayExpression(lin_decay=params),
            m.ExpDecayExpression(exp_decay=params),
            m.GaussDecayExpression(gauss_decay=params),
        ][kind - 15]
    return m.SumExpression(sum=["$score", sub()])


def _formula_defaults(rng):
    defaults = {}
    if rng.integers(2):
        defaults["n"] = float(rng.choice([0, 1, 2.5]))
    if rng.integers(3) == 0:
        defaults["missing"] = 4
    if rng.integers(3) == 0:
        defaults[str(rng.choice(["$score[1]", "$score"]))] = 0.25
    if rng.integers(3) == 0:
        defaults["when"] = "2024-02-01T00:00:00Z"
    if rng.integers(3) == 0:
        defaults["geo"] = {"lon": 1.0, "lat": 2.0}
    return defaults


class DifferenceError(AssertionError):
    pass


def _close(a, b):
    return abs(a - b) <= 1e-4 * max(1.0, abs(a), abs(b))


def _same_vectors(a, b):
    if a is None or b is None:
        return a == b
    if a.keys() != b.keys():
        return False
    return all(np.allclose(np.asarray(a[k]), np.asarray(b[k]), rtol=1e-4, atol=1e-5) for k in a)


def _compare_scored(got, want, what, by_score_only=False):
    if len(got) != len(want):
        raise DifferenceError(f"{what}: {len(got)} points, local mode {len(want)}")
    for g, w in zip(got, want, strict=True):
        if not _close(g.score, w.score):
            raise DifferenceError(f"{what}: score {g.score} vs {w.score} ({g.id} vs {w.id})")
    if by_score_only:
        return
    # Ties (equal scores within tolerance) may come in either order.
    groups_g, groups_w = {}, {}
    for g, w in zip(got, want, strict=True):
        key = round(w.score, 3)
        groups_g.setdefault(key, set()).add(g.id)
        groups_w.setdefault(key, set()).add(w.id)
    tie_cut = round(want[-1].score, 3) if want else None
    for key in groups_w:
        if key != tie_cut and groups_g.get(key) != groups_w[key]:
            raise DifferenceError(
                f"{what}: ids {groups_g.get(key)} vs {groups_w[key]} at score {key}"
            )
    byid = {w.id: w for w in want}
    for g in got:
        w = byid.get(g.id)
        if w is not None and not _same_payload(g.payload, w.payload, what):
            raise DifferenceError(f"{what}: payload of {g.id}: {g.payload} vs {w.payload}")


def _same_payload(got, want, what):
    # qdrant-client turns an empty gRPC payload map into None (conversion.py,
    # convert_scored_point / convert_retrieved_point: "HasField raises on map fields"),
    # against Qdrant itself too: over gRPC None and {} are the same answer.
    if what.startswith("[grpc") and not got and not want:
        return True
    return got == want


def _compare_records(got, want, what):
    if isinstance(got, list) and got and isinstance(got[0], m.ScoredPoint):
        scores = [p.score for p in got], [p.score for p in want]
        if len(got) != len(want) or not all(_close(a, b) for a, b in zip(*scores, strict=True)):
            raise DifferenceError(f"{what}: scores {scores[0]} vs {scores[1]}")
        got = [m.Record(id=p.id, payload=p.payload, vector=p.vector) for p in got]
        want = [m.Record(id=p.id, payload=p.payload, vector=p.vector) for p in want]
    if [p.id for p in got] != [p.id for p in want]:
        raise DifferenceError(f"{what}: ids {[p.id for p in got]} vs {[p.id for p in want]}")
    for g, w in zip(got, want, strict=True):
        if not _same_payload(g.payload, w.payload, what):
            raise DifferenceError(f"{what}: payload of {g.id}: {g.payload} vs {w.payload}")
        if not _same_vectors(g.vector, w.vector):
            raise DifferenceError(f"{what}: vectors of {g.id}: {g.vector} vs {w.vector}")


def _compare_ordered(got, want, what):
    """An order_by answer: the same order values; points of one value in any order (local
    mode keeps insertion order among them, strata id order), except where the offset or the
    limit cuts a run of one value."""
    values = [p.order_value for p in got], [p.order_value for p in want]
    if values[0] != values[1]:
        raise DifferenceError(f"{what}: order values {values[0]} vs {values[1]}")
    scores = [p.score for p in got], [p.score for p in want]
    if not all(_close(a, b) for a, b in zip(*scores, strict=True)):
        raise DifferenceError(f"{what}: scores {scores[0]} vs {scores[1]}")
    runs_g, runs_w = {}, {}
    for g, w in zip(got, want, strict=True):
        runs_g.setdefault(w.order_value, set()).add(g.id)
        runs_w.setdefault(w.order_value, set()).add(w.id)
    cuts = {want[0].order_value, want[-1].order_value} if want else set()
    for value, ids in runs_w.items():
        if value not in cuts and runs_g[value] != ids:
            raise DifferenceError(f"{what}: ids {runs_g[value]} vs {ids} at order value {value}")
    byid = {w.id: w for w in want}
    for g in got:
        w = byid.get(g.id)
        if w is not None and not _same_payload(g.payload, w.payload, what):
            raise DifferenceError(f"{what}: payload of {g.id}: {g.payload} vs {w.payload}")


def _compare_groups(got, want, what):
    if [g for g, _ in got] != [g for g, _ in want]:
        raise DifferenceError(f"{what}: groups {[g for g, _ in got]} vs {[g for g, _ in want]}")
    for (gid, g), (_, w) in zip(got, want, strict=True):
        if len(g) != len(w):
            raise DifferenceError(f"{what}: group {gid}: {len(g)} hits vs {len(w)}")
        for (gi, gs, gp), (wi, ws, wp) in zip(g, w, strict=True):
            if not _close(gs, ws) or (gi != wi and not _close(gs, ws)) or (gi == wi and gp != wp):
                raise DifferenceError(f"{what}: group {gid}: {gi} {gs} vs {wi} {ws}")


def _compare_matrix(got, want, what):
    if hasattr(want, "pairs"):
        g = [(p.a, p.b) for p in got.pairs]
        w = [(p.a, p.b) for p in want.pairs]
        scores = [p.score for p in got.pairs], [p.score for p in want.pairs]
    else:
        g = (got.ids, got.offsets_row, got.offsets_col)
        w = (want.ids, want.offsets_row, want.offsets_col)
        scores = got.scores, want.scores
    if len(scores[0]) != len(scores[1]) or not all(
        _close(a, b) for a, b in zip(*scores, strict=True)
    ):
        raise DifferenceError(f"{what}: scores {scores[0]} vs {scores[1]}")
    if g != w and len(set(np.round(scores[1], 4))) == len(scores[1]):  # ties may swap
        raise DifferenceError(f"{what}: {g} vs {w}")


def _run(client, call):
    try:
        return True, call(client)
    except Exception as e:  # noqa: BLE001 - error-or-not is what is compared
        return False, e


def _calls(rng, name, ids):
    """One random call: (description, function of a client, comparison kind)."""
    exact = m.SearchParams(exact=True)
    field = str(rng.choice(list(FIELDS)))
    flt = _random_filter(rng) if rng.integers(3) == 0 else None
    limit = int(rng.integers(1, 12))
    known = sorted(ids) or [0]

    def example():
        if rng.integers(2):
            return int(rng.choice(known))
        return _vector(rng, field)

    kind = int(rng.integers(24))
    if kind == 0:
        points = [_point(rng, int(i)) for i in rng.integers(0, 80, size=rng.integers(1, 6))]
        ids.update(p.id for p in points)
        return "upsert", lambda c: c.upsert(name, points=points, wait=True), "ok"
    if kind == 1:
        gone = [int(i) for i in rng.integers(0, 80, size=rng.integers(1, 4))]
        ids.difference_update(gone)
        return "delete", lambda c: c.delete(name, points_selector=gone, wait=True), "ok"
    if kind == 2:
        target = [int(i) for i in rng.choice(known, size=min(3, len(known)))]
        payload = _random_payload(rng)
        return "set_payload", lambda c: c.set_payload(name, payload, points=target, wait=True), "ok"
    if kind in (3, 4):
        query = _vector(rng, field) if kind == 3 else int(rng.choice(known))
        return (
            f"query {field} {query} {flt}",
            lambda c: (
                c.query_points(
                    name,
                    query=query,
                    using=field,
                    query_filter=flt,
                    limit=limit,
                    search_params=exact,
                ).points
            ),
            "scored",
        )
    if kind == 5:
        pos = [example() for _ in range(rng.integers(0, 3))]
        neg = [example() for _ in range(rng.integers(0, 3))]
        strategy = rng.choice([m.RecommendStrategy.AVERAGE_VECTOR, m.RecommendStrategy.BEST_SCORE])
        inp = m.RecommendInput(positive=pos, negative=neg, strategy=strategy)
        q = m.RecommendQuery(recommend=inp)
        return (
            f"recommend {field} {q}",
            lambda c: (
                c.query_points(
                    name, query=q, using=field, query_filter=flt, limit=limit, search_params=exact
                ).points
            ),
            "scored",
        )
    if kind == 6:
        pairs = [
            m.ContextPair(positive=example(), negative=example()) for _ in range(rng.integers(1, 3))
        ]
        q = m.DiscoverQuery(discover=m.DiscoverInput(target=example(), context=pairs))
        return (
            f"discover {field} {q}",
            lambda c: (
                c.query_points(
                    name, query=q, using=field, query_filter=flt, limit=limit, search_params=exact
                ).points
            ),
            "scored",
        )
    if kind == 7:
        pairs = [
            m.ContextPair(positive=example(), negative=example()) for _ in range(rng.integers(1, 3))
        ]
        q = m.ContextQuery(context=pairs)
        return (
            f"context {field} {q}",
            lambda c: (
                c.query_points(
                    name, query=q, using=field, query_filter=flt, limit=limit, search_params=exact
                ).points
            ),
            "scores",  # context scores tie at 0 for most points: compare scores only
        )
    if kind == 8:
        return (
            f"scroll {flt}",
            lambda c: c.scroll(name, scroll_filter=flt, limit=limit, with_vectors=True)[0],
            "records",
        )
    if kind == 9:
        return f"count {flt}", lambda c: c.count(name, count_filter=flt).count, "equal"
    if kind == 10:
        which = [int(i) for i in rng.integers(0, 80, size=rng.integers(1, 5))]
        return (
            f"retrieve {which}",
            lambda c: sorted(c.retrieve(name, which, with_vectors=True), key=lambda p: p.id),
            "records",
        )
    if kind == 11:
        return (
            f"query without vector {flt}",
            lambda c: c.query_points(name, query_filter=flt, limit=limit).points,
            "records",
        )
    if kind == 12:
        # invalid: a vector of the wrong size, or a field that does not exist
        bad = rng.normal(size=7).tolist()
        using = field if rng.integers(2) else "nope"
        return (
            f"invalid query {using}",
            lambda c: c.query_points(name, query=bad, using=using, limit=limit).points,
            "scored",
        )
    if kind == 13:
        key = str(rng.choice(["a", "b", "o.x", "missing"]))
        size = int(rng.integers(1, 4))
        query = _vector(rng, field) if rng.integers(2) else int(rng.choice(known))
        return (
            f"query groups {field} by {key} size {size} limit {limit} {flt}",
            lambda c: [
                (g.id, [(p.id, p.score, p.payload) for p in g.hits])
                for g in c.query_points_groups(
                    name,
                    query=query,
                    using=field,
                    group_by=key,
                    group_size=size,
                    limit=limit,
                    query_filter=flt,
                    search_params=exact,
                ).groups
            ],
            "groups",
        )
    if kind == 14:
        ops = []
        for _ in range(rng.integers(1, 4)):
            op = int(rng.integers(4))
            target = [int(i) for i in rng.choice(known, size=min(2, len(known)))]
            if op == 0:
                points = [_point(rng, int(i)) for i in rng.integers(0, 80, size=rng.integers(1, 3))]
                ids.update(p.id for p in points)
                ops.append(m.UpsertOperation(upsert=m.PointsList(points=points)))
            elif op == 1:
                ids.difference_update(target)
                ops.append(m.DeleteOperation(delete=m.PointIdsList(points=target)))
            elif op == 2:
                ops.append(
                    m.SetPayloadOperation(
                        set_payload=m.SetPayload(payload=_random_payload(rng), points=target)
                    )
                )
            else:
                ops.append(m.ClearPayloadOperation(clear_payload=m.PointIdsList(points=target)))
        return (
            f"batch {[type(o).__name__ for o in ops]}",
            lambda c: len(c.batch_update_points(name, ops, wait=True)),
            "equal",
        )
    if kind == 15:
        points = [_point(rng, int(i)) for i in rng.integers(0, 80, size=rng.integers(1, 6))]
        cond = _random_filter(rng)
        mode = rng.choice(
            [None, m.UpdateMode.UPSERT, m.UpdateMode.INSERT_ONLY, m.UpdateMode.UPDATE_ONLY]
        )
        if mode != m.UpdateMode.INSERT_ONLY:
            # a repeated id under update_filter: local mode judges the later value against
            # the earlier one just written, strata against the stored payload (docs/qdrant.md)
            points = list({p.id: p for p in points}.values())
        ids.update(p.id for p in points)  # may stay missing: the id set is an upper bound

        def conditional(c):
            c.upsert(name, points=points, update_filter=cond, update_mode=mode, wait=True)
            return sorted(
                (p.id, json.dumps(p.payload, sort_keys=True))
                for p in c.retrieve(name, [p.id for p in points])
            )

        return f"conditional upsert {mode} {cond}", conditional, "equal"
    if kind in (16, 17):
        # an unknown field: local mode answers an empty matrix, strata (and Qdrant) a 400
        using = field
        call = "search_matrix_pairs" if kind == 16 else "search_matrix_offsets"
        neighbours = int(rng.integers(1, 4))
        return (
            f"{call} {using} {flt}",
            lambda c: getattr(c, call)(
                name, sample=200, limit=neighbours, using=using, query_filter=flt
            ),
            "matrix",
        )
    dense = [f for f in FIELDS if f not in MULTI]

    def prefetch():
        using = str(rng.choice(list(FIELDS)))
        vec = _vector(rng, using)
        return m.Prefetch(query=vec, using=using, limit=int(rng.integers(1, 15)), params=exact)

    if kind == 19:
        prefetches = [prefetch() for _ in range(rng.integers(1, 3))]
        q = m.FormulaQuery(formula=_expression(rng), defaults=_formula_defaults(rng))
        threshold = float(rng.choice([0.0, 1.0])) if rng.integers(4) == 0 else None
        return (
            f"formula {q} over {prefetches} threshold {threshold} {flt}",
            lambda c: (
                c.query_points(
                    name,
                    prefetch=prefetches,
                    query=q,
                    query_filter=flt,
                    limit=limit,
                    score_threshold=threshold,
                ).points
            ),
            "scored",
        )
    if kind == 20:
        key = str(rng.choice(["n", "when", "a", "o.x"]))
        direction = m.Direction.DESC if rng.integers(2) else m.Direction.ASC
        start = None
        if rng.integers(3) == 0:
            start = float(rng.choice([0, 2])) if key != "when" else "2024-02-10T00:00:00Z"
        q = m.OrderByQuery(order_by=m.OrderBy(key=key, direction=direction, start_from=start))
        offset = int(rng.integers(0, 3))
        return (
            f"order_by query {q} offset {offset} {flt}",
            lambda c: (
                c.query_points(name, query=q, query_filter=flt, limit=limit, offset=offset).points
            ),
            "ordered",
        )
    if kind == 21:
        prefetches = [prefetch() for _ in range(rng.integers(1, 4))]
        n = len(prefetches) if rng.integers(5) else len(prefetches) + 1  # a wrong count: an error
        weights = [float(rng.choice([0.5, 1, 2, 0])) for _ in range(n)] if rng.integers(4) else None
        q = m.RrfQuery(rrf=m.Rrf(k=int(rng.integers(1, 6)), weights=weights))
        return (
            f"rrf {q} over {prefetches}",
            lambda c: c.query_points(name, prefetch=prefetches, query=q, limit=limit).points,
            "scored",
        )
    if kind == 22:
        using = str(rng.choice(dense))
        mmr = m.Mmr(
            diversity=float(rng.choice([0, 0.25, 0.5, 1])),
            candidates_limit=int(rng.integers(limit, limit + 10)) if rng.integers(2) else None,
        )
        q = m.NearestQuery(nearest=_vector(rng, using), mmr=mmr)
        return (
            f"mmr {using} {q} {flt}",
            lambda c: (
                c.query_points(
                    name, query=q, using=using, query_filter=flt, limit=limit, search_params=exact
                ).points
            ),
            "scored",
        )
    if kind == 23:
        return _prefetch_by_example(rng, name, known, flt, limit, exact)
    # a point id that does not exist (an error in both)
    return (
        "query by a missing id",
        lambda c: (
            c.query_points(
                name, query=1000 + int(rng.integers(10)), using=field, limit=limit
            ).points
        ),
        "scored",
    )


def _example_query(rng, using, known):
    """A query by example against using: a point id (bare or nearest), recommend (each
    strategy), discover or context; context's ties at score 0 are only safe where every
    point is kept, so its caller asks for them with a limit above the point count."""

    def example():
        return int(rng.choice(known)) if rng.integers(2) else _vector(rng, using)

    kind = int(rng.integers(5))
    if kind == 0:
        return int(rng.choice(known)) if rng.integers(2) else m.NearestQuery(nearest=example())
    if kind == 1:
        strategy = rng.choice(list(m.RecommendStrategy))
        pos = [example() for _ in range(rng.integers(1, 3))]
        neg = [example() for _ in range(rng.integers(0, 3))]
        inp = m.RecommendInput(positive=pos, negative=neg, strategy=strategy)
        return m.RecommendQuery(recommend=inp)
    pairs = [
        m.ContextPair(positive=example(), negative=example()) for _ in range(rng.integers(1, 3))
    ]
    if kind in (2, 3):
        return m.DiscoverQuery(discover=m.DiscoverInput(target=example(), context=pairs))
    return m.ContextQuery(context=pairs)


def _prefetch_by_example(rng, name, known, flt, limit, exact):
    """Queries by example inside prefetches, under a fusion, a re-scoring vector or a
    query by example at the top (whose ids are left out of the prefetches too)."""
    prefetches = []
    for _ in range(rng.integers(1, 3)):
        using = str(rng.choice(list(FIELDS)))
        q = _example_query(rng, using, known)
        size = 100 if isinstance(q, m.ContextQuery) else int(rng.integers(1, 15))
        pflt = _random_filter(rng) if rng.integers(4) == 0 else None
        prefetches.append(m.Prefetch(query=q, using=using, limit=size, filter=pflt, params=exact))
    top = int(rng.integers(3))
    contexts = any(isinstance(p.query, m.ContextQuery) for p in prefetches)
    using = str(rng.choice(list(FIELDS)))
    if top == 0 and not contexts:  # rrf ranks context's ties: not defined
        q = m.FusionQuery(fusion=m.Fusion.RRF)
        using = None
    elif top == 1:
        q = _vector(rng, using)
    else:
        q = _example_query(rng, using, known)
        while isinstance(q, m.ContextQuery):
            q = _example_query(rng, using, known)
    return (
        f"prefetch by example {q} using {using} over {prefetches} {flt}",
        lambda c: (
            c.query_points(
                name,
                prefetch=prefetches,
                query=q,
                using=using,
                query_filter=flt,
                limit=limit,
                search_params=exact,
            ).points
        ),
        "scored",
    )


def _differential(server, seed, calls):
    rng = np.random.default_rng(seed)
    name = f"diff{seed}"
    reference = QdrantClient(":memory:")
    targets = {t: make(server) for t, make in TARGETS.items()}
    clients = {"local": reference, **targets}
    config = {n: params for n, (params, _) in FIELDS.items()}
    try:
        for c in clients.values():
            c.create_collection(name, vectors_config=config)
        points = [_point(rng, i) for i in range(40)]
        ids = {p.id for p in points}
        for c in clients.values():
            c.upsert(name, points=points, wait=True)
        done = 0
        while done < calls:
            what, fn, kind = _calls(rng, name, ids)
            ok_want, want = _run(reference, fn)
            for tname, client in targets.items():
                ok_got, got = _run(client, fn)
                label = f"[{tname} seed {seed} call {done}] {what}"
                if ok_got != ok_want:
                    mine = "ok" if ok_got else str(getattr(got, "content", got))[:300]
                    theirs = "ok" if ok_want else repr(want)
                    raise DifferenceError(f"{label}: {mine} vs local mode {theirs}")
                if not ok_got:
                    continue
                if kind == "scored":
                    _compare_scored(got, want, label)
                elif kind == "scores":
                    _compare_scored(got, want, label, by_score_only=True)
                elif kind == "records":
                    _compare_records(got, want, label)
                elif kind == "ordered":
                    _compare_ordered(got, want, label)
                elif kind == "equal" and got != want:
                    raise DifferenceError(f"{label}: {got} vs {want}")
                elif kind == "groups":
                    _compare_groups(got, want, label)
                elif kind == "matrix":
                    _compare_matrix(got, want, label)
            done += 1
    finally:
        for c in targets.values():
            c.delete_collection(name)
            c.close()
        reference.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_random_calls_answer_as_local_mode(server, seed):
    """A few hundred random calls (upserts, deletes, payload writes, queries by vector and
    by id, recommend, discover, context, groups, update batches, conditional upserts, the
    distance matrix, scroll, count, retrieve, invalid calls) answer as
    QdrantClient(":memory:") answers them."""
    _differential(server, seed, CALLS)
