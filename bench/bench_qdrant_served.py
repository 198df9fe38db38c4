"""Served speed: strata's native door against qdrant-client over REST and gRPC, in one run.

    python bench/bench_qdrant_served.py --server bin/strata-server [--duration 3 --rounds 3]

Starts strata-server on loopback (native REST, Qdrant REST and Qdrant gRPC on three free
ports, a fresh data directory), creates one collection through the Qdrant door (128-d Euclid,
m 16, ef_construct 100) and loads n synthetic clustered points (100 Gaussian centres, sigma
0.3, as bench/loadgen makes them) through the native door, waits until they are indexed, then
measures every cell of (clients x operation x door) for --duration seconds, in --rounds
rounds, the door order rotating each round so that no door always runs first or last (before
each cell it waits until the points the upserts before it wrote are indexed, so that no cell
pays for the builder's work of another):

  door    native (strata.client.Client), rest (QdrantClient(host="127.0.0.1"), as is),
          rest-ka (the same with limits=httpx.Limits(max_connections=None): connections kept
          alive), grpc (prefer_grpc=True), null-rest and null-grpc (the same clients as rest
          and grpc against bench/nulldoor, a server that does no work: see below)
  op      query (top-10, ef 64, ids and scores only), upsert-1 (one point with a payload),
          upsert-batch (--batch points per request with payloads; figures count requests)
  clients 1, 8, 32 concurrent clients, each a process of its own (Python clients hold the
          GIL, so threads would measure one interpreter), one connection each

qdrant-client turns keep-alive off when the host is "localhost" or "127.0.0.1"
(qdrant_remote.py: `httpx.Limits(max_connections=None, max_keepalive_connections=0)`, "Disable
keep-alive for local connections"): on the default --host 127.0.0.1, "rest" opens a TCP
connection per request, as every user on loopback gets; "rest-ka" is what it does for any other
host. --host 127.0.0.2 (loopback too) serves every port there, and "rest" keeps its connections
as for any remote host. Each cell counts the TCP connections the clients opened (httpcore's
connect_tcp) after one untimed warm-up query per client before the window: httpx closes a
pooled connection idle for its keepalive_expiry (5 s), and a client sits idle longer than that
while the other doors' cells run, so without the warm-up every kept-alive cell opened one
connection per client inside its window (0.4 and 1.9 connections per request of rest-ka's
upsert-batch at 8 and 32 clients, where a cell finishes 10-20 requests: read as drops before).

All doors query the same collection, so they search the same graph. A request counts when it
finishes inside the cell's window and its answer has the expected shape (10 hits; an upsert
that returned). Each cell records requests/s, latency percentiles, and the CPU time of the
server and of the clients per request (user+system, from /proc and time.process_time): the
clients share the 2 cores with the server, so client CPU per request is the cost of the
client library itself (qdrant-client's models, JSON or protobuf, httpx or grpcio), measured
without a stub. --profile DIR writes the server's CPU profile of every cell (its
--debug-addr, net/http/pprof) for `go tool pprof`.

The null doors measure the client's ceiling. bench/nulldoor (Go, built by this script unless
--nulldoor names a binary) answers qdrant-client's query and upsert calls, REST and gRPC, with
the bytes strata's own Qdrant door sent for this case (captured from the server after the load:
one query answer, one upsert answer) and does nothing else. Its throughput is what qdrant-client
can do on this machine's cores against a server of zero cost; each cell of rest / grpc is also
reported as a fraction of it (ratio_to_null, per round). The null doors run once per round,
beside the first build.

--baseline BIN starts a second server from another build (the same data loaded into it), and
every cell runs against both builds in turn, the build order alternating each round: server and
client CPU per request and requests/s of one build against the other's, in one run and under the
same load.

Results: bench/results/qdrant-served/qdrant-served-<UTC>-<commit>[-<label>].json, every
cell of every round and, per (door, op, clients), the median over rounds and the median of
the per-round ratios door / native.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo

DOORS = ("native", "rest", "rest-ka", "grpc", "null-rest", "null-grpc")
NULL_OF = {"rest": "null-rest", "rest-ka": "null-rest", "grpc": "null-grpc"}
OPS = ("query", "upsert-1", "upsert-batch")
COLLECTION = "bench"
QUERIES_PER_WORKER = 200
SINGLE_IDS = 2000  # upsert-1 overwrites ids n .. n+1999 (as loadgen's upsert-1 does)
BATCH_IDS = 20000  # upsert-batch overwrites ids n+2000 .. n+21999


def sha256_of(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def clustered(rng, n: int, dim: int, centres):
    """n points around the centres (sigma 0.3), float32."""
    import numpy as np

    pick = rng.integers(len(centres), size=n)
    return (centres[pick] + 0.3 * rng.standard_normal((n, dim))).astype(np.float32)


def centres_of(dim: int):
    import numpy as np

    return np.random.default_rng(1).standard_normal((100, dim))


def proc_cpu(pid: int) -> float:
    """CPU seconds of a process: the sum of its threads' run time in nanoseconds
    (/proc/<pid>/task/*/schedstat). /proc/<pid>/stat counts clock ticks (10 ms): a 3 s cell of
    a REST door at 15-70 req/s held 5-33 of them (qdrant-served-20261203T171109Z-999de51-
    ceiling.json), so its CPU per request was quantized by up to a fifth. A thread that exits
    between two readings takes its time with it (Go servers keep their threads); without
    schedstat, the ticks."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except FileNotFoundError:  # the thread exited meanwhile
                continue
    except FileNotFoundError:
        total = 0
    if total:
        return total / 1e9
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the client processes ------------------------------------------------------------


class Door:
    """One door's three operations from one client process."""

    def __init__(self, door: str, ports: dict, dim: int, ef: int, host: str):
        from qdrant_client import QdrantClient, models

        self.door, self.models, self.ef = door, models, ef
        if door == "native":
            from strata.client import Client

            self.col = Client(f"http://{host}:{ports['native']}").collection(COLLECTION)
        else:
            import httpx

            keep = {"limits": httpx.Limits(max_connections=None)} if door == "rest-ka" else {}
            rest, grpc = ((ports["null_rest"], ports["null_grpc"]) if door.startswith("null")
                          else (ports["rest"], ports["grpc"]))
            self.qc = QdrantClient(host=host, port=rest, grpc_port=grpc,
                                   prefer_grpc=door in ("grpc", "null-grpc"),
                                   timeout=120, check_compatibility=False, **keep)
            self.params = models.SearchParams(hnsw_ef=ef)

    def query(self, vec_np, vec_list) -> bool:
        if self.door == "native":
            got = self.col.query(vec_np, k=10, ef=self.ef, include_metadata=False)
            ids = [i for i in got.ids[0].tolist() if i is not None and i != -1]
            if len(ids) != 10:  # padded with -1 (or None) past the points found
                raise RuntimeError(f"short answer: {len(ids)} of 10 points: {ids}")
            return True
        # with_payload=False: ids and scores, as the native door's include_metadata=False
        # (qdrant-client's default, True, made its answers carry every payload before).
        got = self.qc.query_points(COLLECTION, query=vec_list, limit=10, with_payload=False,
                                   search_params=self.params).points
        if len(got) != 10:
            raise RuntimeError(f"short answer: {len(got)} of 10 points: "
                               f"{[(p.id, round(p.score, 4)) for p in got]}")
        return True

    def upsert(self, ids: list[int], vecs_np, vecs_list, payloads: list[dict]) -> bool:
        if self.door == "native":
            self.col.upsert(ids, vecs_np, metadata=payloads)
            return True
        m = self.models
        if len(ids) == 1:
            points = [m.PointStruct(id=ids[0], vector=vecs_list[0], payload=payloads[0])]
        else:
            points = m.Batch(ids=ids, vectors=vecs_list, payloads=payloads)
        r = self.qc.upsert(COLLECTION, points=points, wait=True)
        return r.status == m.UpdateStatus.COMPLETED


CONNECTS = [0]  # TCP connections this client process opened through httpcore


def count_connects() -> None:
    import httpcore._backends.sync as sync

    connect = sync.SyncBackend.connect_tcp

    def counted(self, *args, **kwargs):
        CONNECTS[0] += 1
        return connect(self, *args, **kwargs)

    sync.SyncBackend.connect_tcp = counted


def worker(index: int, builds: dict, cfg: dict, commands, answers) -> None:
    import numpy as np

    count_connects()

    rng = np.random.default_rng(1000 + index)
    centres = centres_of(cfg["dim"])
    queries = clustered(rng, QUERIES_PER_WORKER, cfg["dim"], centres)
    qlists = queries.tolist()
    writes = clustered(rng, QUERIES_PER_WORKER * cfg["batch"], cfg["dim"], centres)
    wlists = writes.tolist()
    doors = {(b, d): Door(d, {**ports, **cfg["null"]}, cfg["dim"], cfg["ef"], cfg["host"])
             for b, ports in builds.items() for d in DOORS
             if not d.startswith("null") or (b == NULL_BUILD and cfg["null"])}
    answers.put(("ready", index))
    n, batch = cfg["n"], cfg["batch"]
    while True:
        cmd = commands.get()
        if cmd is None:
            return
        build, door, op, start_at, end_at = cmd
        d = doors[(build, door)]
        lat: list[float] = []
        errors, first_error, i = 0, "", index * 7919
        # the connection this client keeps (if it keeps one) is open before the window; a
        # failure here shows in the cell's own requests
        with contextlib.suppress(Exception):
            d.query(queries[0:1], qlists[0])
        while time.time() < start_at:
            time.sleep(min(0.01, max(0.0, start_at - time.time())))
        cpu0, connects0 = time.process_time(), CONNECTS[0]
        while True:
            t0 = time.perf_counter()
            if time.time() >= end_at:
                break
            j = i % QUERIES_PER_WORKER
            try:
                if op == "query":
                    ok = d.query(queries[j:j + 1], qlists[j])
                elif op == "upsert-1":
                    ids = [n + (index * 61 + i) % SINGLE_IDS]
                    ok = d.upsert(ids, writes[j:j + 1], wlists[j:j + 1], [{"bucket": i % 100}])
                else:
                    first = n + SINGLE_IDS + (index * batch * 13 + i * batch) % BATCH_IDS
                    ids = list(range(first, first + batch))
                    s = slice(j * batch, (j + 1) * batch)
                    ok = d.upsert(ids, writes[s], wlists[s], [{"bucket": k % 100} for k in ids])
            except Exception as e:  # noqa: BLE001 (counted and reported, never hidden)
                ok, first_error = False, first_error or f"{type(e).__name__}: {e}"[:300]
            done = time.time()
            i += 1
            if done > end_at:
                break  # finished after the window: not counted
            if ok:
                lat.append(time.perf_counter() - t0)
            else:
                errors += 1
        answers.put(("cell", index, lat, errors, first_error, time.process_time() - cpu0,
                     CONNECTS[0] - connects0))


# --- the server ----------------------------------------------------------------------


def start_server(binary: str, data_dir: str, ports: dict, debug: bool) -> subprocess.Popen:
    host = ports["host"]
    args = [binary, "--data-dir", data_dir, "--addr", f"{host}:{ports['native']}",
            "--qdrant-addr", f"{host}:{ports['rest']}",
            "--qdrant-grpc-addr", f"{host}:{ports['grpc']}", "--log-level", "error"]
    if debug:
        args += ["--debug-addr", f"{host}:{ports['debug']}"]
    proc = subprocess.Popen(args)
    for _ in range(1200):
        try:
            urllib.request.urlopen(f"http://{host}:{ports['native']}/health", timeout=5)
            urllib.request.urlopen(f"http://{host}:{ports['rest']}/", timeout=5)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"strata-server exited with {proc.returncode}") from None
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("strata-server did not answer within 120 s")


NULL_BUILD = "new"  # the build whose answers the null door sends, and beside which it runs


def capture_answers(ports: dict, n: int, dim: int, ef: int, into: Path) -> tuple[Path, Path]:
    """The bodies strata's Qdrant door answers for the bench's query and upsert-1 (the
    requests qdrant-client sends for them), written to into/query.json and into/upsert.json."""
    import numpy as np

    rng = np.random.default_rng(3)
    vec = clustered(rng, 1, dim, centres_of(dim))[0].tolist()
    base = f"http://{ports['host']}:{ports['rest']}/collections/{COLLECTION}/points"
    calls = {"query": ("POST", base + "/query",
                       {"query": vec, "limit": 10, "with_payload": False,
                        "params": {"hnsw_ef": ef}}),
             "upsert": ("PUT", base + "?wait=true",
                        {"points": [{"id": n, "vector": vec, "payload": {"bucket": 0}}]})}
    out = []
    for name, (method, url, body) in calls.items():
        req = urllib.request.Request(url, method=method, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            path = into / f"{name}.json"
            path.write_bytes(r.read())
            out.append(path)
    return out[0], out[1]


def start_null(binary: str, ports: dict, query: Path, upsert: Path) -> subprocess.Popen:
    host = ports["host"]
    proc = subprocess.Popen([binary, "--rest-addr", f"{host}:{ports['null_rest']}",
                             "--grpc-addr", f"{host}:{ports['null_grpc']}",
                             "--query-answer", str(query), "--upsert-answer", str(upsert)])
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://{host}:{ports['null_rest']}/", timeout=5)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"nulldoor exited with {proc.returncode}") from None
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("nulldoor did not answer within 60 s")


def native_info(ports: dict) -> dict:
    url = f"http://{ports['host']}:{ports['native']}/collections/{COLLECTION}"
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def load(ports: dict, n: int, dim: int) -> float:
    """Creates the collection through the Qdrant door and loads n points through the native
    one; returns the load's seconds."""
    import numpy as np
    from qdrant_client import QdrantClient, models

    from strata.client import Client

    qc = QdrantClient(url=f"http://{ports['host']}:{ports['rest']}", timeout=300,
                      check_compatibility=False)
    qc.create_collection(COLLECTION, vectors_config=models.VectorParams(
        size=dim, distance=models.Distance.EUCLID),
        hnsw_config=models.HnswConfigDiff(m=16, ef_construct=100))
    col = Client(f"http://{ports['host']}:{ports['native']}").collection(COLLECTION)
    rng = np.random.default_rng(2)
    centres = centres_of(dim)
    t0 = time.perf_counter()
    for at in range(0, n, 1000):
        rows = clustered(rng, min(1000, n - at), dim, centres)
        ids = list(range(at, at + len(rows)))
        col.upsert(ids, rows, metadata=[{"bucket": i % 100} for i in ids])
    seconds = time.perf_counter() - t0
    if qc.count(COLLECTION).count != n:
        raise RuntimeError("the Qdrant door does not count the points loaded natively")
    return seconds


def wait_indexed(ports: dict, timeout: float = 1800) -> dict:
    """Waits until no point waits in the tail for the graph builder (native tail_rows)."""
    deadline = time.time() + timeout
    while True:
        info = native_info(ports)
        if "tail_rows" not in info:
            raise RuntimeError(f"GET /collections/{COLLECTION}: no tail_rows in {info}")
        if info["tail_rows"] == 0 or time.time() > deadline:
            return info
        time.sleep(1)


# --- the run -------------------------------------------------------------------------


def percentile(sorted_lat: list[float], q: float) -> float | None:
    if not sorted_lat:
        return None
    return sorted_lat[min(len(sorted_lat) - 1, int(q * len(sorted_lat)))] * 1e3


def run_cell(pool, answers, build: str, server: subprocess.Popen, ports: dict, door: str,
             op: str, clients: int, duration: float, profile: Path | None) -> dict:
    # The upserts of the cells before leave points in the tail for the graph builder, whose
    # CPU would be counted to this cell's requests (a query cell after an upsert-batch one
    # measured 7 ms of server CPU per query and a 50 ms p50, on every door): wait it out.
    waited = time.perf_counter()
    tail = native_info(ports).get("tail_rows", 0)
    if tail:
        wait_indexed(ports, timeout=600)
    waited = time.perf_counter() - waited
    start_at = time.time() + 0.5 + 0.02 * clients  # every client has the command by then
    end_at = start_at + duration
    for q in pool[:clients]:
        q.put((build, door, op, start_at, end_at))
    prof = None
    if profile is not None:
        out = profile / f"{build}-{door}-{op}-c{clients}.pb.gz"
        url = (f"http://{ports['host']}:{ports['debug']}/debug/pprof/profile"
               f"?seconds={int(duration)}")

        def fetch() -> None:
            with urllib.request.urlopen(url, timeout=duration + 60) as r:
                out.write_bytes(r.read())

        time.sleep(max(0.0, start_at - time.time()))
        prof = threading.Thread(target=fetch)
        prof.start()
    time.sleep(max(0.0, start_at - time.time()))
    cpu0 = proc_cpu(server.pid)
    time.sleep(max(0.0, end_at - time.time()))
    cpu1 = proc_cpu(server.pid)
    lat: list[float] = []
    errors, first_error, client_cpu, connects = 0, "", 0.0, 0
    for _ in range(clients):
        _, _, got, e, fe, c, nc = answers.get()
        lat += got
        errors += e
        first_error = first_error or fe
        client_cpu += c
        connects += nc
    if prof is not None:
        prof.join()
    lat.sort()
    reqs = len(lat)
    return {"build": build, "door": door, "op": op, "clients": clients, "seconds": duration,
            "requests": reqs, "errors": errors, "first_error": first_error,
            "req_per_s": reqs / duration,
            "p50_ms": percentile(lat, 0.50), "p99_ms": percentile(lat, 0.99),
            "mean_ms": statistics.fmean(lat) * 1e3 if lat else None,
            "server_cpu_s": cpu1 - cpu0, "client_cpu_s": client_cpu,
            "server_cpu_us_per_req": (cpu1 - cpu0) / reqs * 1e6 if reqs else None,
            "client_cpu_us_per_req": client_cpu / reqs * 1e6 if reqs else None,
            "connects": connects, "connects_per_req": connects / reqs if reqs else None,
            "tail_rows_before": tail, "waited_for_index_s": waited,
            "loadavg": os.getloadavg()[0]}


def summarize(cells: list[dict]) -> list[dict]:
    """Per (build, door, op, clients): medians over rounds, the median of door / native (of the
    same build) per round and, for a build beside a baseline, of build / baseline per round."""
    by = {}
    for c in cells:
        by.setdefault((c.get("build", "new"), c["door"], c["op"], c["clients"]), []).append(c)

    def per_round(cs: list[dict], other: list[dict], key: str) -> list[float]:
        ref = {c["round"]: c for c in other}
        return [c[key] / ref[c["round"]][key] for c in cs
                if c["round"] in ref and c[key] is not None and ref[c["round"]][key]]

    out = []
    for (build, door, op, clients), cs in sorted(by.items()):
        ratios = per_round(cs, by.get((build, "native", op, clients), []), "req_per_s")
        null = by.get((NULL_BUILD, NULL_OF.get(door, ""), op, clients), [])
        to_null = per_round(cs, null, "req_per_s")
        base = by.get(("baseline", door, op, clients), []) if build != "baseline" else []
        vs_base = {k: per_round(cs, base, k) for k in
                   ("req_per_s", "server_cpu_us_per_req", "client_cpu_us_per_req")}

        def med(key: str, cs=cs) -> float | None:
            vals = [c[key] for c in cs if c[key] is not None]
            return statistics.median(vals) if vals else None

        out.append({"build": build, "door": door, "op": op, "clients": clients, "rounds": len(cs),
                    "req_per_s": med("req_per_s"), "p50_ms": med("p50_ms"),
                    "p99_ms": med("p99_ms"), "server_cpu_us_per_req": med("server_cpu_us_per_req"),
                    "client_cpu_us_per_req": med("client_cpu_us_per_req"),
                    "connects_per_req": med("connects_per_req"),
                    "errors": sum(c["errors"] for c in cs),
                    "ratio_to_native": statistics.median(ratios) if ratios else None,
                    "ratio_to_null": statistics.median(to_null) if to_null else None,
                    **({f"{k}_to_baseline": statistics.median(v) if v else None
                        for k, v in vs_base.items()} if base else {})})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default=str(runinfo.REPO_DIR / "bin" / "strata-server"))
    ap.add_argument("--baseline", help="a second strata-server build, measured beside --server")
    ap.add_argument("--nulldoor", help="a bench/nulldoor binary (default: built here with go)")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--ef", type=int, default=64)
    ap.add_argument("--batch", type=int, default=100, help="points per upsert-batch request")
    ap.add_argument("--host", default="127.0.0.1",
                    help="loopback address every port is served on (127.0.0.2: qdrant-client "
                         "keeps its REST connections alive, as for any host but 127.0.0.1)")
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--doors", default=",".join(DOORS))
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per cell")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--label")
    ap.add_argument("--note", default="")
    ap.add_argument("--profile", type=Path,
                    help="write the server's CPU profile of every cell here")
    ap.add_argument("--out", type=Path, help="result file (default: bench/results/qdrant-served/)")
    args = ap.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    ops, doors = args.ops.split(","), args.doors.split(",")
    for o in ops:
        if o not in OPS:
            ap.error(f"--ops: unknown operation {o!r} (known: {', '.join(OPS)})")
    for d in doors:
        if d not in DOORS:
            ap.error(f"--doors: unknown door {d!r} (known: {', '.join(DOORS)})")
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    binaries = {"new": args.server, **({"baseline": args.baseline} if args.baseline else {})}
    builds = {b: {"host": args.host, **{k: free_port(args.host)
                                        for k in ("native", "rest", "grpc", "debug")}}
              for b in binaries}
    data_dirs = {b: tempfile.mkdtemp(prefix=f"strata-qserved-{b}-") for b in binaries}
    use_null = any(d.startswith("null") for d in doors)
    null_ports = ({k: free_port(args.host) for k in ("null_rest", "null_grpc")}
                  if use_null else {})
    null_dir = Path(tempfile.mkdtemp(prefix="strata-qserved-null-"))
    null_bin, null_sizes = args.nulldoor, {}
    if use_null and not null_bin:
        null_bin = str(null_dir / "nulldoor")
        subprocess.run(["go", "build", "-o", null_bin, "./bench/nulldoor"], check=True,
                       cwd=runinfo.REPO_DIR)
    servers = {}
    ctx = mp.get_context("spawn")  # grpcio and the Go runtime do not survive fork
    pool, procs = [], []
    try:
        for b, binary in binaries.items():
            servers[b] = start_server(binary, data_dirs[b], builds[b], args.profile is not None)
        with ThreadPoolExecutor(len(builds)) as ex:  # each build loads and indexes its copy
            load_s = dict(zip(builds, ex.map(lambda p: load(p, args.n, args.dim),
                                             builds.values()), strict=True))
            for b, info in zip(builds, ex.map(wait_indexed, builds.values()), strict=True):
                print(f"{b}: loaded {args.n} x {args.dim} in {load_s[b]:.1f} s, indexed: "
                      f"{json.dumps(info)[:200]}", flush=True)
        if use_null:
            qa, ua = capture_answers(builds[NULL_BUILD], args.n, args.dim, args.ef, null_dir)
            null_sizes = {"query": qa.stat().st_size, "upsert": ua.stat().st_size}
            print(f"null door answers (bytes): {null_sizes}", flush=True)
            servers["null"] = start_null(null_bin, {"host": args.host, **null_ports}, qa, ua)
        cfg = {"n": args.n, "dim": args.dim, "ef": args.ef, "batch": args.batch,
               "host": args.host, "null": null_ports}
        answers = ctx.Queue()
        for i in range(max(clients)):
            q = ctx.Queue()
            p = ctx.Process(target=worker, args=(i, builds, cfg, q, answers), daemon=True)
            p.start()
            pool.append(q)
            procs.append(p)
        for _ in procs:
            answers.get(timeout=600)
        cells = []
        names = list(builds)
        for rnd in range(args.rounds):
            order = doors[rnd % len(doors):] + doors[:rnd % len(doors)]
            border = names[rnd % len(names):] + names[:rnd % len(names)]
            for nc in clients:
                for op in ops:
                    for door in order:
                        for b in border:
                            if door.startswith("null") and b != NULL_BUILD:
                                continue
                            server = servers["null" if door.startswith("null") else b]
                            c = run_cell(pool, answers, b, server, builds[b], door, op, nc,
                                         args.duration, args.profile if rnd == 0 else None)
                            c["round"] = rnd
                            cells.append(c)
                            print(f"round {rnd} {b:8} {door:7} {op:12} c={nc:<3} "
                                  f"{c['req_per_s']:8.0f} req/s  p50 {c['p50_ms'] or 0:7.2f} ms"
                                  f"  cpu/req server {c['server_cpu_us_per_req'] or 0:6.0f} us "
                                  f"client {c['client_cpu_us_per_req'] or 0:6.0f} us  errors "
                                  f"{c['errors']}  load {c['loadavg']:.1f}"
                                  + (f"  first error: {c['first_error']}" if c["first_error"]
                                     else ""), flush=True)
    finally:
        for q in pool:
            q.put(None)
        for p in procs:
            p.join(timeout=30)
        for server in servers.values():
            server.terminate()
            server.wait(timeout=60)
        for d in data_dirs.values():
            shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(null_dir, ignore_errors=True)
    from importlib.metadata import version

    import qdrant_client  # noqa: F401 (its version is recorded)

    result = {"benchmark": "qdrant-served", "machine": runinfo.machine(),
              "git": runinfo.git_info(), "versions": {**runinfo.versions(),
                                                      "qdrant-client": version("qdrant-client"),
                                                      "grpcio": version("grpcio")},
              "params": {"host": args.host, "n": args.n, "dim": args.dim, "metric": "euclid",
                         "ef": args.ef,
                         "k": 10, "batch": args.batch, "clients": clients, "ops": ops,
                         "doors": doors, "duration_s": args.duration, "rounds": args.rounds,
                         "data": "synthetic clustered (100 centres, sigma 0.3)",
                         "client_side": "one process per client, one connection each"},
              "builds": {b: {"server": binaries[b], "sha256": sha256_of(binaries[b])}
                         for b in binaries},
              "null_door": ({"binary": "bench/nulldoor", "answer_bytes": null_sizes}
                            if use_null else None),
              "load_seconds": load_s, "note": args.note,
              "loadavg_at_end": os.getloadavg(), "summary": summarize(cells), "cells": cells}
    path = args.out or runinfo.result_path("qdrant-served", args.label)
    path.write_text(json.dumps(result, indent=2) + "\n")
    nan = float("nan")
    for s in result["summary"]:
        r, rb = s["ratio_to_native"], s.get("server_cpu_us_per_req_to_baseline")
        rn = s["ratio_to_null"]
        print(f"{s['build']:8} {s['door']:7} {s['op']:12} c={s['clients']:<3} "
              f"{s['req_per_s']:8.0f} req/s  x{r if r is not None else nan:.2f} of native  "
              + (f"x{rn:.2f} of null  " if rn is not None else "") +
              f"server {s['server_cpu_us_per_req'] or 0:.0f} us/req"
              + (f" (x{rb if rb is not None else nan:.2f} of baseline)"
                 if "server_cpu_us_per_req_to_baseline" in s else "")
              + f"  client {s['client_cpu_us_per_req'] or 0:.0f} us/req")
    print(path)


if __name__ == "__main__":
    main()
