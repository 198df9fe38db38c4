"""strata.Collection against Chroma and LanceDB: durable ingest, single upserts, filtered queries,
queries under a concurrent write load, reopen time, and group commit.

Every library runs with its durable default in a fresh directory on the same disk:
  strata   Collection.create(path, dim, metric="cosine", fsync="always") (M=16, ef_construction=200)
  chroma   chromadb.PersistentClient(path), a collection with {"hnsw:space": "cosine"}
           (hnswlib + SQLite)
  lancedb  lancedb.connect(path), one table; no vector index (LanceDB searches exactly until one
           is built), so its recall is 1 by construction and its query cost grows with n

Data: ../shared/data/pypi-demo/vectors.f16.npy (real 512-d sentence embeddings; the first --n rows)
and, as queries, ../shared/data/pypi-use512/test.f16.npy (the same model, other texts). Metadata:
{"bucket": b} with b uniform in 0..999 (fixed seed), so {"bucket": {"$lt": c}} selects c/10 % of
the rows: 50 %, 10 %, 1 %, 0.1 % (random filters); {"near": r}, the per-mille rank of a row's
closeness to one fixed row, so {"near": {"$lt": c}} selects the rows around one point (correlated
filters, where graph walks lose recall); plus the real {"year": ...} of each package. Recall@10
of a filtered query is measured against exact search over the allowed rows (float64 NumPy).

Sections (--only to pick some):
  ingest     batches of 500 vectors with metadata: vectors/s
  single     --singles single-row upserts of new ids: latency p50/p99
  filtered   one query per call, k=10, unfiltered and the 4 selectivities, random and
             correlated: QPS, recall@10
  contended  query latency p50/p99 while another thread upserts 500-row batches, versus idle
  reopen     strata: 100k rows (pypi-use512 train) checkpointed plus a 10k-record log tail left by a
             SIGKILLed writer: open() time; peers: reopen of their persisted 100k + first query
  group      strata only, d=128: rows/s of single upserts from 1 and 8 threads (fsync="always"),
             and batch ingest rate at d=128

    python bench/bench_collection.py     # everything; writes bench/results/collection/
    python bench/bench_collection.py --libs strata --only ingest,filtered --n 5000 --quick
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo

SHARED = Path(
    os.environ.get("STRATA_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
CUTS = [500, 100, 10, 1]  # bucket < cut: 50 %, 10 %, 1 %, 0.1 %
K = 10


def load_data(n: int, nq: int) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    vecs = np.load(SHARED / "pypi-demo" / "vectors.f16.npy")[:n].astype(np.float32)
    queries = np.load(SHARED / "pypi-use512" / "test.f16.npy")[:nq].astype(np.float32)
    years = []
    with open(SHARED / "pypi-demo" / "docs.jsonl") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            years.append(json.loads(line)["year"])
    rng = np.random.default_rng(12345)
    buckets = rng.integers(0, 1000, size=n)
    # "near": per-mille rank of closeness to one row (fixed seed), so near < c selects the
    # c/10 % of rows around one point: a filter correlated with the vectors.
    centre = vecs[rng.integers(n)]
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    order = np.argsort(-(unit @ (centre / np.linalg.norm(centre))))
    near = np.empty(n, dtype=np.int64)
    near[order] = np.arange(n) * 1000 // n
    metas = [
        {"bucket": int(b), "near": int(c), "year": int(y)}
        for b, c, y in zip(buckets, near, years, strict=True)
    ]
    return vecs, queries, metas


def exact_filtered(vecs: np.ndarray, queries: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    x = vecs[allowed].astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = queries.astype(np.float64)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    sims = q @ x.T
    kk = min(K, allowed.size)
    top = np.argsort(-sims, axis=1)[:, :kk]
    return allowed[top]


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


# --- adapters ----------------------------------------------------------------


class StrataLib:
    name = "strata"

    def __init__(self, path: Path, dim: int) -> None:
        import strata

        self.strata = strata
        self.path = path
        self.col = strata.Collection.create(path, dim=dim, metric="cosine", fsync="always", seed=1)

    def upsert(self, ids: np.ndarray, vecs: np.ndarray, metas: list[dict]) -> None:
        self.col.upsert(ids, vecs, metas)

    def query(self, q: np.ndarray, where: dict | None) -> list[int]:
        res = self.col.query(q, k=K, where=where, include_metadata=False, num_threads=1)
        return [int(i) for i in res.ids[0] if i >= 0]

    def close(self) -> None:
        self.col.close()

    def version(self) -> str:
        return self.strata.__version__


class ChromaLib:
    name = "chroma"

    def __init__(self, path: Path, dim: int) -> None:
        import chromadb

        self.chromadb = chromadb
        self.client = chromadb.PersistentClient(path=str(path))
        self.col = self.client.create_collection("bench", metadata={"hnsw:space": "cosine"})

    def upsert(self, ids: np.ndarray, vecs: np.ndarray, metas: list[dict]) -> None:
        self.col.upsert(ids=[str(int(i)) for i in ids], embeddings=vecs, metadatas=metas)

    def query(self, q: np.ndarray, where: dict | None) -> list[int]:
        res = self.col.query(query_embeddings=q[None, :], n_results=K, where=where, include=[])
        return [int(i) for i in res["ids"][0]]

    def close(self) -> None:
        pass

    def version(self) -> str:
        return self.chromadb.__version__


class LanceLib:
    name = "lancedb"

    def __init__(self, path: Path, dim: int) -> None:
        import lancedb

        self.lancedb = lancedb
        self.db = lancedb.connect(str(path))
        self.table = None
        self.dim = dim

    def _rows(self, ids: np.ndarray, vecs: np.ndarray, metas: list[dict]) -> Any:
        import pyarrow as pa

        flat = pa.array(np.ascontiguousarray(vecs, dtype=np.float32).ravel())
        return pa.table(
            {
                "id": pa.array(ids.astype(np.int64)),
                "vector": pa.FixedSizeListArray.from_arrays(flat, self.dim),
                "bucket": pa.array([m["bucket"] for m in metas], type=pa.int64()),
                "near": pa.array([m["near"] for m in metas], type=pa.int64()),
                "year": pa.array([m["year"] for m in metas], type=pa.int64()),
            }
        )

    def upsert(self, ids: np.ndarray, vecs: np.ndarray, metas: list[dict]) -> None:
        rows = self._rows(ids, vecs, metas)
        if self.table is None:
            self.table = self.db.create_table("bench", data=rows)
            return
        (
            self.table.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(rows)
        )

    def query(self, q: np.ndarray, where: dict | None) -> list[int]:
        search = self.table.search(q).metric("cosine").limit(K).select(["id"])
        if where is not None:
            ((field, cond),) = where.items()
            search = search.where(f"{field} < {cond['$lt']}", prefilter=True)
        return [int(r["id"]) for r in search.to_list()]

    def close(self) -> None:
        pass

    def version(self) -> str:
        return self.lancedb.__version__


LIBS = {"strata": StrataLib, "chroma": ChromaLib, "lancedb": LanceLib}


# --- sections ----------------------------------------------------------------


def ingest(lib: Any, vecs: np.ndarray, metas: list[dict], batch: int = 500) -> dict:
    t0 = time.perf_counter()
    for s in range(0, len(vecs), batch):
        lib.upsert(
            np.arange(s, min(s + batch, len(vecs))), vecs[s : s + batch], metas[s : s + batch]
        )
    dt = time.perf_counter() - t0
    return {"rows": len(vecs), "seconds": dt, "vectors_per_s": len(vecs) / dt}


def singles(lib: Any, vecs: np.ndarray, metas: list[dict], count: int, base: int) -> dict:
    lat = []
    for i in range(count):
        row = i % len(vecs)
        t0 = time.perf_counter()
        lib.upsert(np.array([base + i]), vecs[row : row + 1], [metas[row]])
        lat.append(time.perf_counter() - t0)
    return {"count": count, "p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3}


def filtered(
    lib: Any, vecs: np.ndarray, queries: np.ndarray, metas: list[dict], budget: float
) -> list:
    out = []
    rows = [(None, None)] + [(field, cut) for field in ("bucket", "near") for cut in CUTS]
    for field, cut in rows:
        where = None if cut is None else {field: {"$lt": cut}}
        if field is None:
            allowed = np.arange(len(vecs))
        else:
            values = np.array([m[field] for m in metas])
            allowed = np.flatnonzero(values < cut)
        truth = exact_filtered(vecs, queries, allowed)
        hits = total = 0
        lat = []
        t_start = time.perf_counter()
        for qi, q in enumerate(queries):
            t0 = time.perf_counter()
            got = lib.query(q, where)
            lat.append(time.perf_counter() - t0)
            want = set(int(i) for i in truth[qi])
            hits += len(want.intersection(got))
            total += len(want)
            if time.perf_counter() - t_start > budget and qi >= 20:
                break
        out.append(
            {
                "filter": {None: "none", "bucket": "random", "near": "correlated"}[field],
                "selectivity": 1.0 if cut is None else cut / 1000,
                "allowed": int(allowed.size),
                "queries": len(lat),
                "qps": len(lat) / sum(lat),
                "p50_ms": pct(lat, 50) * 1e3,
                "p99_ms": pct(lat, 99) * 1e3,
                "recall": hits / max(total, 1),
            }
        )
        print(
            f"  {lib.name} {out[-1]['filter']} sel={out[-1]['selectivity']}: "
            f"{out[-1]['qps']:.0f} QPS, "
            f"recall {out[-1]['recall']:.4f}",
            flush=True,
        )
    return out


def contended(
    lib: Any, vecs: np.ndarray, queries: np.ndarray, metas: list[dict], base: int, seconds: float
) -> dict:
    def measure(duration: float) -> list[float]:
        lat = []
        end = time.perf_counter() + duration
        i = 0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            lib.query(queries[i % len(queries)], None)
            lat.append(time.perf_counter() - t0)
            i += 1
        return lat

    idle = measure(seconds)
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        i = 0
        while not stop.is_set():
            rows = slice((i * 500) % len(vecs), (i * 500) % len(vecs) + 500)
            n = len(vecs[rows])
            lib.upsert(np.arange(base + i * 500, base + i * 500 + n), vecs[rows], metas[rows])
            written[0] += n
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    busy = measure(seconds)
    stop.set()
    t.join()
    return {
        "idle_p50_ms": pct(idle, 50) * 1e3,
        "idle_p99_ms": pct(idle, 99) * 1e3,
        "busy_p50_ms": pct(busy, 50) * 1e3,
        "busy_p99_ms": pct(busy, 99) * 1e3,
        "rows_written_meanwhile": written[0],
        "seconds": seconds,
    }


REOPEN_WRITER = """
import os, signal, sys, numpy as np, strata
path, n_base, tail = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x = np.load(sys.argv[4])[: n_base + tail].astype(np.float32)
c = strata.Collection.create(path, dim=x.shape[1], metric="cosine", seed=1)
for s in range(0, n_base, 1000):
    c.upsert(np.arange(s, min(s + 1000, n_base)), x[s : min(s + 1000, n_base)],
             [{"i": int(i)} for i in range(s, min(s + 1000, n_base))])
c.checkpoint()
for i in range(n_base, n_base + tail):
    c.upsert([i], x[i], [{"i": i}])
os.kill(os.getpid(), signal.SIGKILL)
"""


def reopen_strata(workdir: Path, n_base: int, tail: int) -> dict:
    import strata

    path = workdir / "reopen-strata"
    src = SHARED / "pypi-use512" / "train.f16.npy"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-P", "-c", REOPEN_WRITER, str(path), str(n_base), str(tail), str(src)],
        capture_output=True,
        text=True,
    )
    build = time.perf_counter() - t0
    if proc.returncode != -signal.SIGKILL:
        raise RuntimeError(f"reopen writer failed: {proc.stderr}")
    times = []
    for rep in range(3):
        # Each repetition opens a fresh copy: close() checkpoints, which would empty the tail.
        copy = workdir / f"reopen-copy-{rep}"
        shutil.copytree(path, copy)
        t0 = time.perf_counter()
        col = strata.Collection.open(copy)
        times.append(time.perf_counter() - t0)
        replayed = col.info()["recovery"]["replayed_records"]
        col.close()
        shutil.rmtree(copy)
    return {
        "rows": n_base + tail,
        "tail_records": tail,
        "replayed": replayed,
        "open_seconds": times,
        "open_median_s": float(np.median(times)),
        "build_seconds": build,
    }


def group_commit(workdir: Path, threads: int, per_thread: int, dim: int = 128) -> dict:
    import strata

    path = workdir / f"group-{threads}"
    rng = np.random.default_rng(threads)
    data = rng.normal(size=(threads, per_thread, dim)).astype(np.float32)
    with strata.Collection.create(path, dim=dim, metric="l2", fsync="always", seed=1) as col:

        def work(w: int) -> None:
            for i in range(per_thread):
                col.upsert([w * per_thread + i], data[w, i])

        t0 = time.perf_counter()
        ts = [threading.Thread(target=work, args=(w,)) for w in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        dt = time.perf_counter() - t0
        info = col.info()
    shutil.rmtree(path)
    return {
        "threads": threads,
        "rows": threads * per_thread,
        "rows_per_s": threads * per_thread / dt,
        "fsyncs": info["fsyncs"],
        "group_commits": info["group_commits"],
    }


def ingest128(workdir: Path, n: int) -> dict:
    import strata

    rng = np.random.default_rng(7)
    x = rng.normal(size=(n, 128)).astype(np.float32)
    path = workdir / "ingest128"
    with strata.Collection.create(path, dim=128, metric="l2", fsync="always", seed=1) as col:
        r = ingest(type("L", (), {"upsert": lambda self, i, v, m: col.upsert(i, v)})(), x, [{}] * n)
    shutil.rmtree(path)
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libs", default="strata,chroma,lancedb")
    ap.add_argument("--only", default="ingest,single,filtered,contended,reopen,group")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--singles", type=int, default=300)
    ap.add_argument(
        "--budget", type=float, default=20.0, help="seconds per filtered row and library"
    )
    ap.add_argument("--reopen-n", type=int, default=100_000)
    ap.add_argument("--reopen-tail", type=int, default=10_000)
    ap.add_argument(
        "--workdir", default=None, help="directory for the collections (default: a temp dir)"
    )
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    ap.add_argument("--out", default=None,
                    help="result JSON (default: runinfo.result_path('collection'))")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.queries, args.singles, args.budget = min(args.n, 3000), 30, 30, 2.0
        args.reopen_n, args.reopen_tail = 3000, 300
    only = set(args.only.split(","))
    vecs, queries, metas = load_data(args.n, args.queries)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-collection-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "machine": runinfo.machine(),
        "git": runinfo.git_info(),
        "versions": runinfo.versions(),
        "args": vars(args),
        "libs": {},
    }
    for name in args.libs.split(","):
        path = workdir / name
        shutil.rmtree(path, ignore_errors=True)
        lib = LIBS[name](path, vecs.shape[1])
        row: dict[str, Any] = {"version": lib.version()}
        print(f"{name} {row['version']}", flush=True)
        base = 10_000_000
        if only & {"ingest", "filtered", "contended", "single"}:
            row["ingest"] = ingest(lib, vecs, metas)
            print(f"  ingest {row['ingest']['vectors_per_s']:.0f} vectors/s", flush=True)
        if "single" in only:
            row["single"] = singles(lib, vecs, metas, args.singles, base)
            print(
                f"  single upsert p50 {row['single']['p50_ms']:.2f} ms, "
                f"p99 {row['single']['p99_ms']:.2f} ms",
                flush=True,
            )
            base += args.singles
        if "filtered" in only:
            # The single upserts added rows the ground truth does not know: query only the
            # first n rows' ids by recomputing truth over what the collection holds.
            if "single" in only:
                extra = np.arange(args.singles) % len(vecs)
                all_vecs = np.concatenate([vecs, vecs[extra]])
                all_metas = metas + [metas[i] for i in extra]
                ids_map = np.concatenate(
                    [np.arange(len(vecs)), 10_000_000 + np.arange(args.singles)]
                )
            else:
                all_vecs, all_metas, ids_map = vecs, metas, np.arange(len(vecs))
            row["filtered"] = filtered(
                _Remap(lib, ids_map), all_vecs, queries, all_metas, args.budget
            )
        if "contended" in only:
            row["contended"] = contended(
                lib, vecs, queries, metas, base, seconds=5.0 if not args.quick else 1.0
            )
            c = row["contended"]
            print(
                f"  query p50/p99 idle {c['idle_p50_ms']:.2f}/{c['idle_p99_ms']:.2f} ms, during "
                f"writes {c['busy_p50_ms']:.2f}/{c['busy_p99_ms']:.2f} ms",
                flush=True,
            )
        lib.close()
        result["libs"][name] = row
    if "reopen" in only and "strata" in args.libs:
        result["reopen_strata"] = reopen_strata(
            workdir, args.reopen_n - args.reopen_tail, args.reopen_tail
        )
        print(f"  strata reopen: {result['reopen_strata']['open_median_s']:.3f} s", flush=True)
    if "group" in only and "strata" in args.libs:
        per = 200 if args.quick else 1000
        result["group_commit"] = [group_commit(workdir, t, per) for t in (1, 8)]
        result["ingest_d128"] = ingest128(workdir, 5000 if args.quick else 50_000)
        g = result["group_commit"]
        print(
            f"  group commit: 1 thread {g[0]['rows_per_s']:.0f} rows/s, 8 threads "
            f"{g[1]['rows_per_s']:.0f} rows/s ({g[1]['rows_per_s'] / g[0]['rows_per_s']:.1f}x); "
            f"d=128 ingest {result['ingest_d128']['vectors_per_s']:.0f} vectors/s",
            flush=True,
        )
    file = Path(args.out) if args.out else runinfo.result_path("collection")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(result, indent=1))
    print(f"wrote {file}")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


class _Remap:
    """Maps a library's ids back to row numbers of the data the ground truth was computed on."""

    def __init__(self, lib: Any, ids_map: np.ndarray) -> None:
        self.lib, self.name = lib, lib.name
        self.row_of = {int(i): r for r, i in enumerate(ids_map)}

    def query(self, q: np.ndarray, where: dict | None) -> list[int]:
        return [self.row_of.get(i, -1) for i in self.lib.query(q, where)]


if __name__ == "__main__":
    sys.exit(main())
