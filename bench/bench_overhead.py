"""Cost of the Python boundary: one single-query search through strata's Python API against the
same search timed without Python, reported as microseconds of overhead per call.

Three timings of the same searches (same vectors, same queries in the same order, k=10, ef=64, one
thread, M=16, ef_construction=200, seed 1):

  python   strata.Index.search(q[1, dim], k, ef, num_threads=1) in a loop
  c        the same calls through strata's C ABI from C (overhead_c/search_one.c, compiled here
           with gcc and run on the installed engine library). The graph is built with one thread
           and the same seed on both sides, so it is the same graph; the script checks that both
           return the same ids. python - c is the cost of the Python layer (checks + cffi).
  go       the Go benchmark BenchmarkSearchOne in go/hnsw (no cgo crossing at all); python - go
           is the whole boundary (Python layer + C->Go call).

The data is written once as raw little-endian float32 files and handed to the C program as
arguments and to the Go benchmark through environment variables:

    STRATA_BENCH_TRAIN=<path>     n x dim float32, row-major, no header (n = size / (4 * dim))
    STRATA_BENCH_QUERIES=<path>   nq x dim float32, row-major, no header
    STRATA_BENCH_DIM=<dim>        STRATA_BENCH_N=<n>
    STRATA_BENCH_METRIC=l2|ip|cosine
    STRATA_BENCH_K=10  STRATA_BENCH_EF=64  STRATA_BENCH_M=16  STRATA_BENCH_EFC=200
    STRATA_BENCH_SEED=1  STRATA_BENCH_BUILD_THREADS=1

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
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import runinfo
from adapters import load_strata

C_SOURCE = Path(__file__).resolve().parent / "overhead_c" / "search_one.c"
METRIC_CODES = {"l2": 0, "ip": 1, "cosine": 2}  # enum strata_metric in capi/strata.h
_BENCH_LINE = re.compile(r"^BenchmarkSearchOne(?:-\d+)?\s+(\d+)\s+([\d.]+) ns/op(.*)$")


class PythonSide:
    """index.search on one (1, dim) query, one thread, cycling through the queries."""

    def __init__(self, index: Any, queries: np.ndarray, k: int, ef: int) -> None:
        self.views = [queries[i:i + 1] for i in range(queries.shape[0])]  # made before timing
        self.search = index.search
        self.k, self.ef = k, ef
        # ids of a first, untimed pass over every query (compared with the C side's)
        self.first_ids = np.stack([self.search(v, k=k, ef=ef, num_threads=1)[0][0]
                                   for v in self.views])

    def round_ns(self, calls: int) -> float:
        views, nq, search, k, ef = self.views, len(self.views), self.search, self.k, self.ef
        t0 = time.perf_counter_ns()
        for i in range(calls):
            search(views[i % nq], k=k, ef=ef, num_threads=1)
        return (time.perf_counter_ns() - t0) / calls


class PeerSide:
    """The same single-query calls through a peer library's Python API (hnswlib knn_query on a
    1-D row, FAISS IndexHNSWFlat.search on a (1, dim) row), same M, ef_construction and ef,
    one query thread; its rounds alternate with strata's."""

    def __init__(self, lib: str, train: np.ndarray, queries: np.ndarray, metric: str, k: int,
                 ef: int, build_threads: int) -> None:
        n, dim = train.shape
        self.k = k
        if lib == "hnswlib":
            import hnswlib

            index = hnswlib.Index(space={"l2": "l2", "ip": "ip", "cosine": "cosine"}[metric],
                                  dim=dim)
            index.init_index(max_elements=n, M=16, ef_construction=200, random_seed=1)
            index.set_num_threads(build_threads)
            index.add_items(train)
            index.set_num_threads(1)
            index.set_ef(ef)
            self.views = [queries[i] for i in range(queries.shape[0])]
            self.search = index.knn_query
        elif lib == "faiss":
            import faiss

            faiss.omp_set_num_threads(build_threads)
            if metric == "l2":
                index = faiss.IndexHNSWFlat(dim, 16)
            else:  # cosine: normalised rows and queries, inner product (prepared before timing)
                index = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
                if metric == "cosine":
                    train = train / np.linalg.norm(train, axis=1, keepdims=True)
                    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
            index.hnsw.efConstruction = 200
            index.add(np.ascontiguousarray(train, dtype=np.float32))
            index.hnsw.efSearch = ef
            faiss.omp_set_num_threads(1)
            queries = np.ascontiguousarray(queries, dtype=np.float32)
            self.views = [queries[i:i + 1] for i in range(queries.shape[0])]
            self.search = index.search
        else:
            raise ValueError(f"unknown peer {lib!r}")

    def round_ns(self, calls: int) -> float:
        views, nq, search, k = self.views, len(self.views), self.search, self.k
        t0 = time.perf_counter_ns()
        for i in range(calls):
            search(views[i % nq], k)
        return (time.perf_counter_ns() - t0) / calls


class CSide:
    """overhead_c/search_one.c: the same searches through the C ABI, in a child process that
    runs one round per request, so that its rounds alternate with Python's."""

    def __init__(self, lib_path: str, train_path: Path, query_path: Path, dim: int, metric: str,
                 k: int, ef: int, seed: int, build_threads: int, workdir: Path) -> None:
        exe = workdir / "search_one"
        subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(C_SOURCE),
                        "-ldl"], check=True)
        ids_path = workdir / "c_ids.i64"
        cmd = [str(exe), lib_path, str(train_path), str(query_path), str(dim),
               str(METRIC_CODES[metric]), str(k), str(ef), "16", "200", str(seed),
               str(build_threads), str(ids_path)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"search_one failed to start (exit {self.proc.wait()})")
        self.first_ids = np.fromfile(ids_path, dtype=np.int64).reshape(-1, k)

    def round_ns(self, calls: int) -> float:
        self.proc.stdin.write(f"{calls}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"search_one exited ({self.proc.wait()})")
        return float(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def engine_library(strata: ModuleType) -> str:
    """Path of the engine .so inside the installed strata package."""
    find = getattr(getattr(strata, "_lib", None), "_library_path", None)
    if callable(find):
        return find()
    found = sorted(Path(strata.__file__).parent.glob("_native*.so"))
    if not found:
        raise FileNotFoundError(f"no _native*.so in {Path(strata.__file__).parent}")
    return str(found[0])


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


def us(values: list[float]) -> str:
    return ", ".join(f"{x / 1000:.2f}" for x in values)


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
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--build-threads", type=int, default=1,
                    help="threads for building (1 makes the graphs of all sides identical)")
    ap.add_argument("--repo", default=str(runinfo.REPO_DIR), help="where to run go test")
    ap.add_argument("--go-package", default="./go/hnsw")
    ap.add_argument("--skip-go", action="store_true", help="do not run the Go benchmark")
    ap.add_argument("--skip-c", action="store_true", help="do not run the C-ABI timing")
    ap.add_argument("--peers", default="",
                    help="comma-separated peers timed the same way, alternating with strata "
                         "(hnswlib, faiss)")
    ap.add_argument("--out", help="result JSON (default: runinfo.result_path('overhead'))")
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
    standin = bool(getattr(strata, "STANDIN", False))
    index = strata.Index(dim, metric=metric, M=16, ef_construction=200,
                         num_threads=args.build_threads, seed=1)
    index.add(train)
    py_side = PythonSide(index, queries, args.k, args.ef)
    result = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "data": source, "n": n, "dim": dim, "nq": int(queries.shape[0]), "metric": metric,
        "k": args.k, "ef": args.ef, "calls": args.calls, "rounds": args.rounds,
        "build_threads": args.build_threads, "strata_standin": standin,
        "python_len_call_ns": trivial_call_ns(index),
        "machine": runinfo.machine(), "load_average_start": list(os.getloadavg()),
        "git": runinfo.git_info(), "versions": runinfo.versions(),
    }
    summary = []
    with tempfile.TemporaryDirectory(prefix="strata-overhead-") as tmp:
        train_path, query_path = Path(tmp) / "train.f32", Path(tmp) / "queries.f32"
        train.astype("<f4").tofile(train_path)
        queries.astype("<f4").tofile(query_path)
        c_side = None
        if not args.skip_c and not standin:
            c_side = CSide(engine_library(strata), train_path, query_path, dim, metric, args.k,
                           args.ef, 1, args.build_threads, Path(tmp))
        peers = {name: PeerSide(name, train, queries, metric, args.k, args.ef, args.build_threads)
                 for name in filter(None, args.peers.split(","))}
        # Warm-up, then rounds alternating Python, C and the peers so that all see the same
        # machine load.
        py_side.round_ns(min(args.calls, 2000))
        if c_side:
            c_side.round_ns(min(args.calls, 2000))
        for peer in peers.values():
            peer.round_ns(min(args.calls, 2000))
        py_rounds, c_rounds = [], []
        peer_rounds: dict[str, list[float]] = {name: [] for name in peers}
        for _ in range(args.rounds):
            py_rounds.append(py_side.round_ns(args.calls))
            if c_side:
                c_rounds.append(c_side.round_ns(args.calls))
            for name, peer in peers.items():
                peer_rounds[name].append(peer.round_ns(args.calls))
        py_ns = statistics.median(py_rounds)
        result.update({"python_ns_per_call": py_ns, "python_rounds_ns": py_rounds})
        log(f"python: {py_ns / 1000:.2f} us per call (rounds: {us(py_rounds)}); "
            f"len(index) {result['python_len_call_ns'] / 1000:.3f} us")
        summary.append(f"python {py_ns / 1000:.2f} us per single-query search call")
        for name, rounds in peer_rounds.items():
            ratio = statistics.median(p / q for p, q in zip(py_rounds, rounds, strict=True))
            result.setdefault("peers", {})[name] = {
                "ns_per_call": statistics.median(rounds), "rounds_ns": rounds,
                "strata_time_ratio_median": ratio}
            log(f"{name}: {statistics.median(rounds) / 1000:.2f} us per call "
                f"(rounds: {us(rounds)})")
            summary.append(f"{name} {statistics.median(rounds) / 1000:.2f} us  ->  strata/{name} "
                           f"time {ratio:.3f} (median of paired rounds)")
        if c_side:
            c_side.close()
            c_ns = statistics.median(c_rounds)
            # Rounds are paired in time: the per-pair difference cancels most of the noise.
            layer_us = statistics.median(
                p - c for p, c in zip(py_rounds, c_rounds, strict=True)) / 1000
            same = float(np.mean(c_side.first_ids == py_side.first_ids))
            result.update({"c_ns_per_call": c_ns, "c_rounds_ns": c_rounds,
                           "c_python_same_ids": same, "python_layer_overhead_us": layer_us})
            log(f"c:      {c_ns / 1000:.2f} us per call (rounds: {us(c_rounds)}); "
                f"same ids as Python: {same:.2%}")
            summary.append(
                f"C ABI  {c_ns / 1000:.2f} us  ->  Python layer {layer_us:+.2f} us per call "
                "(median of paired rounds)"
                + ("" if same == 1.0 else f"; WARNING: only {same:.2%} of ids agree"))
        if not args.skip_go:
            env = {"STRATA_BENCH_TRAIN": str(train_path), "STRATA_BENCH_QUERIES": str(query_path),
                   "STRATA_BENCH_DIM": str(dim), "STRATA_BENCH_N": str(n),
                   "STRATA_BENCH_METRIC": metric, "STRATA_BENCH_K": str(args.k),
                   "STRATA_BENCH_EF": str(args.ef), "STRATA_BENCH_M": "16",
                   "STRATA_BENCH_EFC": "200", "STRATA_BENCH_SEED": "1",
                   "STRATA_BENCH_BUILD_THREADS": str(args.build_threads)}
            go_rounds, metrics, cmd = run_go_benchmark(Path(args.repo), env, args.calls,
                                                       args.rounds, args.go_package)
            go_ns = statistics.median(go_rounds)
            result.update({"go_command": cmd,
                           "go_env": {k: v for k, v in env.items()
                                      if not k.endswith(("TRAIN", "QUERIES"))},
                           "go_ns_per_call": go_ns, "go_rounds_ns": go_rounds,
                           "go_metrics": metrics, "overhead_us_per_call": (py_ns - go_ns) / 1000})
            log(f"go:     {go_ns / 1000:.2f} us per call (rounds: {us(go_rounds)}); {metrics}")
            summary.append(f"Go     {go_ns / 1000:.2f} us  ->  whole boundary "
                           f"{(py_ns - go_ns) / 1000:+.2f} us per call (target <= 2 us)")
            if not metrics["used_files"]:
                summary.append("WARNING: the Go benchmark did not log `strata-bench-data:`: it "
                               "searched its own generated data, so the Go line is approximate")
    if standin:
        summary.append("WARNING: the Python side is the hnswlib stand-in, not strata")
    load = result["load_average_start"][0]
    if load > 0.5:
        summary.append(f"NOTE: load average {load:.2f} at start: other processes add noise")
    print("\n".join(summary))
    out = Path(args.out) if args.out else runinfo.result_path("overhead")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
