"""Two builds of strata, one run: single-field Collection query speed, alternating A and B.

Why: a change to the collection layer (named vector fields, segments, ...) must not make the
plain single-vector collection slower, and on this shared machine only a comparison inside one
run, alternating the two, says anything. Each build is a Python interpreter with its own strata
installed (a second venv holding an older wheel, say); this script runs each one in a child
process over the same data and queries.

Per build: Collection.create(dim=512, metric="cosine", M=16, ef_construction=200,
fsync="never"), the first --n rows of ../shared/data/pypi-use512/train.f16.npy upserted in
batches of 1,000, checkpoint(), close(). Then --rounds rounds, the order of the builds reversed
every round: open the collection, one pass of warm-up queries, then for each ef of --efs every
query (pypi-use512 test.f16.npy, held-out texts) one call at a time, k=10. Recorded per round
and ef: QPS by wall clock, QPS per CPU second of the child (steadier under load) and recall@10
against exact float64 search over the same n rows.

    python bench/ab_collection.py --build old=/tmp/old/bin/python --build new=.venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo

SHARED = Path(
    os.environ.get("STRATA_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
K = 10


def load(n: int, nq: int) -> tuple[np.ndarray, np.ndarray]:
    base = SHARED / "pypi-use512"
    train = np.load(base / "train.f16.npy", mmap_mode="r")[:n].astype(np.float32)
    test = np.load(base / "test.f16.npy")[:nq].astype(np.float32)
    return train, test


def child_build(path: str, n: int) -> dict:
    import strata

    train, _ = load(n, 1)
    t0 = time.perf_counter()
    col = strata.Collection.create(path, 512, metric="cosine", M=16, ef_construction=200,
                                   fsync="never")
    for lo in range(0, n, 1000):
        col.upsert(np.arange(lo, min(lo + 1000, n)), train[lo:lo + 1000])
    col.checkpoint()
    col.close()
    return {"build_s": time.perf_counter() - t0, "strata": strata.__file__}


def child_query(path: str, n: int, nq: int, efs: list[int], truth_path: str) -> dict:
    import strata

    _, test = load(n, nq)
    truth = np.load(truth_path)
    col = strata.Collection.open(path)
    for q in test[: min(200, nq)]:
        col.query(q, k=K, include_metadata=False)
    out = {}
    for ef in efs:
        found = np.empty((nq, K), dtype=np.int64)
        w0, c0 = time.perf_counter(), time.process_time()
        for i, q in enumerate(test):
            r = col.query(q, k=K, ef=ef, include_metadata=False)
            ids = np.asarray(r.ids).reshape(-1)
            found[i, : len(ids)] = ids
            found[i, len(ids):] = -1
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        hits = sum(len(set(found[i]) & set(truth[i])) for i in range(nq))
        out[str(ef)] = {"qps_wall": nq / wall, "qps_cpu": nq / cpu, "recall": hits / (nq * K)}
    col.close()
    return out


def exact_truth(n: int, nq: int) -> np.ndarray:
    train, test = load(n, nq)
    t = train.astype(np.float64)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    q = test.astype(np.float64)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return np.argsort(-(q @ t.T), axis=1)[:, :K]


def run_child(python: str, opts: list[str], *args: str) -> dict:
    res = subprocess.run([python, __file__, *opts, "--child", *args], capture_output=True,
                         text=True, cwd=tempfile.gettempdir(), check=False)
    if res.returncode != 0:
        raise SystemExit(f"{python} {' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", default=[], metavar="LABEL=PYTHON",
                    help="a build to compare (twice or more); the first is the baseline")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--efs", default="32,64,128")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", help="result JSON (default bench/results/ab/...)")
    ap.add_argument("--work", help="directory for the collections; ones already built there "
                    "(by an earlier run with the same --n and labels) are reused")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    efs = [int(e) for e in args.efs.split(",")]
    if args.child:
        kind, path = args.child[0], args.child[1]
        if kind == "build":
            print(json.dumps(child_build(path, args.n)))
        else:
            print(json.dumps(child_query(path, args.n, args.queries, efs, args.child[2])))
        return 0
    builds = [b.split("=", 1) for b in args.build]
    if len(builds) < 2 or any(len(b) != 2 for b in builds):
        ap.error("give at least two --build LABEL=PYTHON")
    opts = ["--n", str(args.n), "--queries", str(args.queries), "--efs", args.efs]
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="strata-ab-"))
    work.mkdir(parents=True, exist_ok=True)
    truth_path = str(work / f"truth-{args.n}-{args.queries}.npy")
    if not Path(truth_path).exists():
        np.save(truth_path, exact_truth(args.n, args.queries))
    result: dict = {"benchmark": "ab", "what": "single-field Collection query, pypi-use512",
                    "n": args.n, "queries": args.queries, "k": K, "efs": efs,
                    "load_avg_start": os.getloadavg(), "machine": runinfo.machine(),
                    "git": runinfo.git_info(), "builds": {}, "rounds": []}
    for label, python in builds:
        if (work / label / "CURRENT").exists():
            result["builds"][label] = {"python": python, "reused": str(work / label)}
            print(f"{label}: reusing {work / label}", flush=True)
            continue
        info = run_child(python, opts, "build", str(work / label))
        info["python"] = python
        result["builds"][label] = info
        print(f"{label}: built in {info['build_s']:.1f} s ({info['strata']})", flush=True)
    for r in range(args.rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for label, python in order:
            res = run_child(python, opts, "query", str(work / label), truth_path)
            result["rounds"].append({"round": r, "build": label, "by_ef": res})
            print(f"round {r} {label}: " + "  ".join(
                f"ef={ef} {v['qps_cpu']:.0f}/cpu-s r={v['recall']:.3f}" for ef, v in res.items()),
                flush=True)
    base = builds[0][0]
    summary: dict = {}
    for label, _ in builds:
        summary[label] = {}
        for ef in efs:
            rows = [x["by_ef"][str(ef)] for x in result["rounds"] if x["build"] == label]
            summary[label][str(ef)] = {
                "qps_wall_median": statistics.median(v["qps_wall"] for v in rows),
                "qps_cpu_median": statistics.median(v["qps_cpu"] for v in rows),
                "recall": rows[0]["recall"]}
    for label, _ in builds:
        for ef in efs:
            s, b = summary[label][str(ef)], summary[base][str(ef)]
            s["cpu_ratio_vs_" + base] = s["qps_cpu_median"] / b["qps_cpu_median"]
            s["wall_ratio_vs_" + base] = s["qps_wall_median"] / b["qps_wall_median"]
    result["summary"] = summary
    result["load_avg_end"] = os.getloadavg()
    out = Path(args.out) if args.out else runinfo.result_path("ab", "collection-query")
    out.write_text(json.dumps(result, indent=1) + "\n")
    for label, _ in builds:
        print(label, json.dumps(summary[label]))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
