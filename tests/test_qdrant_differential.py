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
    return m.PointStruct(id=i, vector=vector, payload=_random_payload(rng))


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
        got = [m.Record(id=p.id, payload=p.payload, vector=p.vector) for p in got]
        want = [m.Record(id=p.id, payload=p.payload, vector=p.vector) for p in want]
    if [p.id for p in got] != [p.id for p in want]:
        raise DifferenceError(f"{what}: ids {[p.id for p in got]} vs {[p.id for p in want]}")
    for g, w in zip(got, want, strict=True):
        if not _same_payload(g.payload, w.payload, what):
            raise DifferenceError(f"{what}: payload of {g.id}: {g.payload} vs {w.payload}")
        if not _same_vectors(g.vector, w.vector):
            raise DifferenceError(f"{what}: vectors of {g.id}: {g.vector} vs {w.vector}")


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

    kind = int(rng.integers(19))
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
            "records",  # scores differ: strata answers 0, local mode 1.0 (docs/qdrant.md)
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
