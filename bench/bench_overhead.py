"""Cost of the Python boundary: one single-query search through strata's Python API against the
same search timed inside Go, reported as microseconds of overhead per call.

Both sides search the same vectors with the same queries in the same order (k=10, ef=64, one
thread, M=16, ef_construction=200, seed 1). The data is written once as raw little-endian float32
files and handed to the Go benchmark through environment variables:

    STRATA_BENCH_TRAIN=<path>     n x dim float32, row-major, no header (n = size / (4 * dim))
    STRATA_BENCH_QUERIES=<path>   nq x dim float32, row-major, no header
    STRATA_BENCH_DIM=<dim>        STRATA_BENCH_N=<n>
    STRATA_BENCH_METRIC=l2|ip|cosine
    STRATA_BENCH_K=10  STRATA_BENCH_EF=64  STRATA_BENCH_M=16  STRATA_BENCH_EFC=200
    STRATA_BENCH_SEED=1  STRATA_BENCH_BUILD_THREADS=<cores>

and the benchmark is run as

    go test -run '^$' -bench '^BenchmarkSearchOne$' -benchtime=<calls>x -count=<rounds> ./go/hnsw

from the repository root; its ns/op (median over rounds) is the Go time per call, and its dist/op
metric is recorded. When it uses the files, the benchmark logs one line
`strata-bench-data: <train path>` (b.Logf; the script runs go test with -v to see it). Without that
line the Go benchmark searched its own generated data of the same n and dim, and the script says
that the comparison is only approximate.

    python bench/bench_overhead.py                                   # 20k x 128 clustered
    python bench/bench_overhead.py --dataset fashion-mnist-784-euclidean --n 20000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import runinfo
from adapters import load_strata

RESULTS_DIR = Path(__file__).resolve().parent / "results"
_BENCH_LINE = re.compile(r"^BenchmarkSearchOne(?:-\d+)?\s+(\d+)\s+([\d.]+) ns/op(.*)$")


def python_per_call_ns(index: Any, queries: np.ndarray, k: int, ef: int, calls: int,
                       rounds: int) -> list[float]:
    """Per-call time of index.search on one query, one thread, cycling through the queries."""
    views = [queries[i:i + 1] for i in range(queries.shape[0])]  # (1, dim) views, made up front
    nq = len(views)
    search = index.search
    for i in range(min(calls, 2 * nq)):  # warm-up
        search(views[i % nq], k=k, ef=ef, num_threads=1)
    per_round = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for i in range(calls):
            search(views[i % nq], k=k, ef=ef, num_threads=1)
        per_round.append((time.perf_counter_ns() - t0) / calls)
    return per_round


def trivial_call_ns(index: Any, calls: int = 200_000) -> float:
    """len(index): the floor of one call into the library (cffi + Go entry), for reference."""
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        len(index)
    return (time.perf_counter_ns() - t0) / calls


def run_go_benchmark(repo: Path, env: dict, calls: int, rounds: int, package: str
                     ) -> tuple[list[float], dict, str]:
    cmd = ["go", "test", "-v", "-run", "^$", "-bench", "^BenchmarkSearchOne$",
           f"-benchtime={calls}x", f"-count={rounds}", package]
    proc = subprocess.run(cmd, cwd=repo, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    ns, metrics = [], {}
    for line in proc.stdout.splitlines():
        m = _BENCH_LINE.match(line.strip())
        if not m:
            continue
        ns.append(float(m.group(2)))
        for value, unit in re.findall(r"([\d.]+) (\S+)", m.group(3)):
            metrics.setdefault(unit, []).append(float(value))
    if not ns:
        raise RuntimeError(f"no BenchmarkSearchOne result in:\n{proc.stdout}")
    medians = {u: statistics.median(v) for u, v in metrics.items()}
    medians["used_files"] = "strata-bench-data:" in proc.stdout
    return ns, medians, " ".join(cmd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", help="take vectors from this data set (default: generated "
                                      "clustered data, 20k x 128, like the Go benchmark's own)")
    ap.add_argument("--n", type=int, default=20_000, help="train vectors to index")
    ap.add_argument("--dim", type=int, default=128, help="dimension of generated data")
    ap.add_argument("--nq", type=int, default=1000, help="distinct queries cycled through")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--ef", type=int, default=64)
    ap.add_argument("--calls", type=int, default=20_000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repo", default=str(runinfo.REPO_DIR), help="where to run go test")
    ap.add_argument("--go-package", default="./go/hnsw")
    ap.add_argument("--skip-go", action="store_true", help="only time the Python side")
    ap.add_argument("--out", help="result JSON (default bench/results/overhead-<time>.json)")
    args = ap.parse_args(argv)

    if args.dataset:
        ds = datasets.load(args.dataset)
        train = np.ascontiguousarray(ds.train[: args.n])
        queries = np.ascontiguousarray(ds.test[: args.nq])
        metric = {"euclidean": "l2", "angular": "cosine"}[ds.distance]
        source = f"{ds.name} (first {train.shape[0]} train rows, {queries.shape[0]} queries)"
    else:
        train, queries = datasets.make_clustered(args.n, args.nq, args.dim, centres=200,
                                                 seed=11, spread=0.3)
        metric = "l2"
        source = f"Gaussian mixture {args.n} x {args.dim}, 200 centres (bench/datasets.py)"
    n, dim = train.shape
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    log(f"data: {source}; k={args.k} ef={args.ef}, {args.calls} calls x {args.rounds} rounds")

    strata = load_strata()
    index = strata.Index(dim, metric=metric, M=16, ef_construction=200,
                         num_threads=runinfo.cpu_count(), seed=1)
    index.add(train)
    py_rounds = python_per_call_ns(index, queries, args.k, args.ef, args.calls, args.rounds)
    py_ns = statistics.median(py_rounds)
    floor_ns = trivial_call_ns(index)
    log(f"python: {py_ns / 1000:.2f} us per single-query search "
        f"(rounds: {', '.join(f'{x / 1000:.2f}' for x in py_rounds)}); "
        f"len(index) {floor_ns / 1000:.3f} us")

    result = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "data": source, "n": n, "dim": dim, "nq": int(queries.shape[0]), "metric": metric,
        "k": args.k, "ef": args.ef, "calls": args.calls, "rounds": args.rounds,
        "python_ns_per_call": py_ns, "python_rounds_ns": py_rounds,
        "python_len_call_ns": floor_ns,
        "strata_standin": bool(getattr(strata, "STANDIN", False)),
        "machine": runinfo.machine(), "git": runinfo.git_info(), "versions": runinfo.versions(),
    }
    if not args.skip_go:
        with tempfile.TemporaryDirectory(prefix="strata-overhead-") as tmp:
            train_path, query_path = Path(tmp) / "train.f32", Path(tmp) / "queries.f32"
            train.astype("<f4").tofile(train_path)
            queries.astype("<f4").tofile(query_path)
            env = {"STRATA_BENCH_TRAIN": str(train_path), "STRATA_BENCH_QUERIES": str(query_path),
                   "STRATA_BENCH_DIM": str(dim), "STRATA_BENCH_N": str(n),
                   "STRATA_BENCH_METRIC": metric, "STRATA_BENCH_K": str(args.k),
                   "STRATA_BENCH_EF": str(args.ef), "STRATA_BENCH_M": "16",
                   "STRATA_BENCH_EFC": "200", "STRATA_BENCH_SEED": "1",
                   "STRATA_BENCH_BUILD_THREADS": str(runinfo.cpu_count())}
            log("go: " + " ".join(f"{k}={v}" for k, v in env.items()))
            go_rounds, metrics, cmd = run_go_benchmark(Path(args.repo), env, args.calls,
                                                       args.rounds, args.go_package)
        go_ns = statistics.median(go_rounds)
        overhead_us = (py_ns - go_ns) / 1000
        result.update({"go_command": cmd, "go_env": {k: v for k, v in env.items()
                                                     if not k.endswith(("TRAIN", "QUERIES"))},
                       "go_ns_per_call": go_ns, "go_rounds_ns": go_rounds, "go_metrics": metrics,
                       "overhead_us_per_call": overhead_us})
        log(f"go:     {go_ns / 1000:.2f} us per call (rounds: "
            f"{', '.join(f'{x / 1000:.2f}' for x in go_rounds)}); metrics {metrics}")
        print(f"Python overhead per single-query call: {overhead_us:+.2f} us "
              f"(python {py_ns / 1000:.2f} us, go {go_ns / 1000:.2f} us; target <= 2 us)")
        if not metrics["used_files"]:
            print("  WARNING: the Go benchmark did not report `strata-bench-data:`, so it searched "
                  "its own generated data (same n and dim): the comparison is approximate")
        if "dist/op" in metrics:
            print(f"  Go distance computations per call: {metrics['dist/op']:.0f} "
                  "(same data and seed on both sides is what makes the difference meaningful)")
        if result["strata_standin"]:
            print("  WARNING: Python side is the hnswlib stand-in, not strata")
    else:
        print(f"Python single-query call: {py_ns / 1000:.2f} us (Go side skipped)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else RESULTS_DIR / f"overhead-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
