"""Cost of the Python boundary: one single-query search through strata's Python API against the
same search timed without Python, reported as microseconds of overhead per call.

The index (M=16, ef_construction=200, seed 1; --quantization/--bits/--layout as
strata.Index takes them) is built once in Python and saved; every side loads that one file, so
all search the very same graph and codes. Three timings of the same searches (same queries in the
same order, k=10, one thread), wall clock and CPU time of the searching thread:

  python   strata.Index.search(q[1, dim], k, ef, num_threads=1) in a loop, on Index.load(file)
  c        the same calls through strata's C ABI from C (overhead_c/search_one.c, compiled here
           with gcc, strata_load + strata_search_one on the installed engine library); the
           script checks that both return the same ids. python - c is the cost of the Python
           layer (checks + cffi).
  go       the Go benchmark BenchmarkSearchOne in go/hnsw on hnsw.Load(file) (no cgo crossing
           at all); python - go is the whole boundary (Python layer + C->Go call). Its B/op and
           allocs/op say what a search allocates.

--ef-for-recall R picks ef instead of --ef: the smallest of --efs whose recall@k (against exact
float64 search of the indexed rows) is at least R. --profile adds the top of a cProfile of one
Python round. --python NAME=PYTHON and --c-lib NAME=LIB add sides that alternate with the others:
another interpreter (with another build of strata installed) searching the same file, or the C
program on another engine library; that is how two builds are compared in one run.

The Go benchmark gets the file and the queries through environment variables:

    STRATA_BENCH_INDEX=<path>     the saved index
    STRATA_BENCH_QUERIES=<path>   nq x dim float32, row-major, no header
    STRATA_BENCH_DIM=<dim>  STRATA_BENCH_K=10  STRATA_BENCH_EF=<ef>

and is run as

    go test -run '^$' -bench '^BenchmarkSearchOne$' -benchtime=<calls>x -count=<rounds> ./go/hnsw

from the repository root; its ns/op and cpu-ns/op (medians over rounds) are the Go time per
call, and its dist/op, B/op and allocs/op are recorded. The benchmark logs one line
`strata-bench-index: <path>` when it loaded the file (b.Logf; the script runs go test with -v to
see it); without it the script fails.

    python bench/bench_overhead.py                                   # 20k x 128 clustered
    python bench/bench_overhead.py --dataset fashion-mnist-784-euclidean --n 20000
    python bench/bench_overhead.py --dataset pypi-use512-angular --n 20000 \
        --quantization rabitq --layout qg --ef-for-recall 0.95 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
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
_BENCH_LINE = re.compile(r"^BenchmarkSearchOne(?:-\d+)?\s+(\d+)\s+([\d.]+) ns/op(.*)$")


class PythonSide:
    """index.search on one (1, dim) query, one thread, cycling through the queries."""

    def __init__(self, index: Any, queries: np.ndarray, k: int, ef: int) -> None:
        self.views = [queries[i:i + 1] for i in range(queries.shape[0])]  # made before timing
        self.search = index.search
        self.k, self.ef = k, ef
        # ids of a first, untimed pass over every query (compared with the other sides')
        self.first_ids = np.stack([self.search(v, k=k, ef=ef, num_threads=1)[0][0]
                                   for v in self.views])

    def round_ns(self, calls: int) -> tuple[float, float]:
        """Wall-clock and thread CPU nanoseconds per call of one round."""
        views, nq, search, k, ef = self.views, len(self.views), self.search, self.k, self.ef
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for i in range(calls):
            search(views[i % nq], k=k, ef=ef, num_threads=1)
        return (time.perf_counter_ns() - t0) / calls, (time.thread_time_ns() - c0) / calls

    def profile(self, calls: int, top: int = 15) -> str:
        """The top of a cProfile of one round, by internal time."""
        prof = cProfile.Profile()
        prof.enable()
        self.round_ns(calls)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
        return out.getvalue()


class RawSide:
    """The engine's strata_search_one called straight through cffi with buffers made before
    timing: python - python-raw is what Index.search adds (checks, output arrays, from_buffer),
    python-raw - c is the interpreter loop and cffi's call."""

    def __init__(self, index: Any, queries: np.ndarray, k: int, ef: int) -> None:
        from strata._ffi import ffi

        from strata import _index

        self.ffi, self.call = ffi, _index._engine().strata_search_one
        self.handle, self.k, self.ef = index._handle, k, ef
        self.ids = np.empty(k, dtype=np.int64)
        self.dists = np.empty(k, dtype=np.float32)
        self.out = ffi.from_buffer("int64_t[]", self.ids), ffi.from_buffer("float[]", self.dists)
        self.views = [ffi.from_buffer("float[]", queries[i]) for i in range(queries.shape[0])]
        self.err = ffi.new("char[]", 256)

    def round_ns(self, calls: int) -> tuple[float, float]:
        views, nq, call, h, k, ef = (self.views, len(self.views), self.call, self.handle, self.k,
                                     self.ef)
        (ids, dists), err = self.out, self.err
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for i in range(calls):
            if call(h, views[i % nq], k, ef, ids, dists, err, 256):
                raise RuntimeError(f"strata_search_one failed: {self.ffi.string(err)!r}")
        return (time.perf_counter_ns() - t0) / calls, (time.thread_time_ns() - c0) / calls


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

    def round_ns(self, calls: int) -> tuple[float, float]:
        views, nq, search, k = self.views, len(self.views), self.search, self.k
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for i in range(calls):
            search(views[i % nq], k)
        return (time.perf_counter_ns() - t0) / calls, (time.thread_time_ns() - c0) / calls


class ChildSide:
    """A child process that searches the saved index and serves rounds: it reads a number of
    calls per line on stdin and answers "<wall ns> <cpu ns>" per call; before "ready" it wrote
    the ids of a first pass over the queries (nq x k int64) to ids_path."""

    def __init__(self, cmd: list[str], ids_path: Path, k: int, env: dict | None = None) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{cmd[0]} failed to start (exit {self.proc.wait()})")
        self.first_ids = np.fromfile(ids_path, dtype=np.int64).reshape(-1, k)

    def round_ns(self, calls: int) -> tuple[float, float]:
        self.proc.stdin.write(f"{calls}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"child exited ({self.proc.wait()})")
        wall, cpu = line.split()
        return float(wall), float(cpu)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def c_side(exe: Path, lib_path: str, index_path: Path, query_path: Path, dim: int, k: int,
           ef: int, ids_path: Path) -> ChildSide:
    """overhead_c/search_one.c on lib_path: the same searches through the C ABI."""
    return ChildSide([str(exe), lib_path, str(index_path), str(query_path), str(dim), str(k),
                      str(ef), str(ids_path)], ids_path, k)


def python_child(python: str, index_path: Path, query_path: Path, dim: int, k: int, ef: int,
                 ids_path: Path) -> ChildSide:
    """This script's --serve mode under another interpreter (another build of strata)."""
    env = {key: v for key, v in os.environ.items() if key != "PYTHONPATH"}
    return ChildSide([python, str(Path(__file__).resolve()), "--serve", str(index_path),
                      str(query_path), str(dim), str(k), str(ef), str(ids_path)], ids_path, k,
                     env=env)


def serve(index_path: str, query_path: str, dim: int, k: int, ef: int, ids_path: str) -> int:
    """The child side of python_child: PythonSide over strata.Index.load(index_path)."""
    strata = load_strata()
    index = strata.Index.load(index_path)
    queries = np.fromfile(query_path, dtype="<f4").reshape(-1, dim)
    side = PythonSide(index, queries, k, ef)
    side.first_ids.astype(np.int64).tofile(ids_path)
    print("ready", flush=True)
    for line in sys.stdin:
        calls = int(line)
        if calls <= 0:
            break
        wall, cpu = side.round_ns(calls)
        print(f"{wall:.1f} {cpu:.1f}", flush=True)
    return 0


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


def exact_neighbours(train: np.ndarray, queries: np.ndarray, metric: str, k: int) -> np.ndarray:
    """The true k nearest rows of each query (float64), for recall."""
    x, q = train.astype(np.float64), queries.astype(np.float64)
    if metric == "cosine":
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
    d = (x * x).sum(1)[None, :] - 2 * q @ x.T if metric == "l2" else -(q @ x.T)
    return np.argsort(d, axis=1)[:, :k]


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([np.intersect1d(f, t).size / truth.shape[1]
                          for f, t in zip(found, truth, strict=True)]))


def run_go_benchmark(repo: Path, env: dict, calls: int, rounds: int, package: str
                     ) -> tuple[list[float], dict, str]:
    cmd = ["go", "test", "-v", "-run", "^$", "-bench", "^BenchmarkSearchOne$",
           f"-benchtime={calls}x", f"-count={rounds}", package]
    proc = subprocess.run(cmd, cwd=repo, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    if "strata-bench-index:" not in proc.stdout:
        raise RuntimeError(f"BenchmarkSearchOne did not load {env['STRATA_BENCH_INDEX']}:\n"
                           f"{proc.stdout}")
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
    medians["cpu_rounds_ns"] = metrics.get("cpu-ns/op", [])
    return ns, medians, " ".join(cmd)


def us(values: list[float]) -> str:
    return ", ".join(f"{x / 1000:.2f}" for x in values)


def named(pairs: str, what: str) -> dict[str, str]:
    """NAME=VALUE,NAME=VALUE -> {NAME: VALUE}."""
    out = {}
    for pair in filter(None, pairs.split(",")):
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise SystemExit(f"{what}: expected NAME=VALUE, got {pair!r}")
        out[name] = value
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        if len(argv) != 7:
            raise SystemExit("usage: --serve INDEX QUERIES DIM K EF IDS_OUT")
        index_path, query_path, dim, k, ef, ids_path = argv[1:]
        return serve(index_path, query_path, int(dim), int(k), int(ef), ids_path)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", help="take vectors from this data set (default: generated "
                                      "clustered data, 20k x 128, like the Go benchmark's own)")
    ap.add_argument("--n", type=int, default=20_000, help="train vectors to index")
    ap.add_argument("--dim", type=int, default=128, help="dimension of generated data")
    ap.add_argument("--nq", type=int, default=1000, help="distinct queries cycled through")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--ef", type=int, default=64)
    ap.add_argument("--ef-for-recall", type=float, metavar="R",
                    help="use the smallest ef of --efs whose recall@k is at least R")
    ap.add_argument("--efs", default="16,24,32,48,64,80,96,128,160,192,256,384,512")
    ap.add_argument("--index", metavar="FILE",
                    help="search this saved index (built from the same rows) instead of building "
                         "one in this process")
    ap.add_argument("--quantization", choices=("none", "sq8", "rabitq"), default="none")
    ap.add_argument("--bits", type=int, help="strata.Index(bits=...), rabitq only")
    ap.add_argument("--layout", choices=("default", "qg"), default="default")
    ap.add_argument("--calls", type=int, default=20_000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--build-threads", type=int, default=runinfo.cpu_count(),
                    help="threads for building (every side loads the one saved file)")
    ap.add_argument("--repo", default=str(runinfo.REPO_DIR), help="where to run go test")
    ap.add_argument("--go-package", default="./go/hnsw")
    ap.add_argument("--skip-go", action="store_true", help="do not run the Go benchmark")
    ap.add_argument("--skip-c", action="store_true", help="do not run the C-ABI timing")
    ap.add_argument("--profile", action="store_true",
                    help="record the top of a cProfile of one Python round")
    ap.add_argument("--raw", action="store_true",
                    help="add python-raw: strata_search_one through cffi without Index.search")
    ap.add_argument("--python", default="", metavar="NAME=PYTHON,...",
                    help="more Python sides: interpreters with another strata installed")
    ap.add_argument("--c-lib", default="", metavar="NAME=LIB,...",
                    help="more C sides: other engine libraries (_native*.so)")
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

    strata = load_strata()
    if getattr(strata, "STANDIN", False):
        raise SystemExit("bench_overhead.py measures strata itself: unset STRATA_BENCH_STANDIN")
    options: dict[str, Any] = {}
    if args.quantization != "none":
        options["quantization"] = args.quantization
    if args.bits is not None:
        options["bits"] = args.bits
    if args.layout != "default":
        options["layout"] = args.layout
    built = None
    if not args.index:
        built = strata.Index(dim, metric=metric, M=16, ef_construction=200,
                             num_threads=args.build_threads, seed=1, **options)
        built.add(train)
    result: dict[str, Any] = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *argv]),
        "data": source, "n": n, "dim": dim, "nq": int(queries.shape[0]), "metric": metric,
        "index_options": options, "index_file": args.index, "k": args.k, "calls": args.calls,
        "rounds": args.rounds, "build_threads": args.build_threads,
        "machine": runinfo.machine(), "load_average_start": list(os.getloadavg()),
        "git": runinfo.git_info(), "versions": runinfo.versions(),
    }
    summary = []
    with tempfile.TemporaryDirectory(prefix="strata-overhead-") as tmp:
        index_path, query_path = Path(tmp) / "index.strata", Path(tmp) / "queries.f32"
        if built is None:
            index_path = Path(args.index)
        else:
            built.save(str(index_path))
            del built
        index = strata.Index.load(str(index_path))
        queries.astype("<f4").tofile(query_path)
        truth = exact_neighbours(train, queries, metric, args.k)
        ef = args.ef
        if args.ef_for_recall is not None:
            tried = {}
            for candidate in sorted(int(e) for e in args.efs.split(",")):
                tried[candidate] = recall(PythonSide(index, queries, args.k, candidate).first_ids,
                                          truth)
                ef = candidate
                if tried[candidate] >= args.ef_for_recall:
                    break
            else:
                raise SystemExit(f"no ef of {args.efs} reaches recall {args.ef_for_recall}: "
                                 f"{tried}")
            result["ef_recalls"] = tried
        py_side = PythonSide(index, queries, args.k, ef)
        result.update({"ef": ef, "recall": recall(py_side.first_ids, truth),
                       "python_len_call_ns": trivial_call_ns(index)})
        log(f"data: {source}; {options or 'float32'}; k={args.k} ef={ef} (recall@{args.k} "
            f"{result['recall']:.4f}), {args.calls} calls x {args.rounds} rounds")
        sides: dict[str, Any] = {"python": py_side}
        if args.raw:
            sides["python-raw"] = RawSide(index, queries, args.k, ef)
        for name, python in named(args.python, "--python").items():
            sides[f"python-{name}"] = python_child(python, index_path, query_path, dim, args.k,
                                                   ef, Path(tmp) / f"py-{name}.i64")
        libs = {} if args.skip_c else {"": engine_library(strata)}
        libs.update(named(args.c_lib, "--c-lib"))
        if libs:
            exe = Path(tmp) / "search_one"
            subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(C_SOURCE), "-ldl"],
                           check=True)
            for name, lib in libs.items():
                side = "c" if not name else f"c-{name}"
                sides[side] = c_side(exe, lib, index_path, query_path, dim, args.k, ef,
                                     Path(tmp) / f"{side}.i64")
        for name in filter(None, args.peers.split(",")):
            sides[name] = PeerSide(name, train, queries, metric, args.k, ef, args.build_threads)
        # Warm-up, then rounds alternating the sides (the order rotated every round) so that
        # all see the same machine load.
        names = list(sides)
        for name in names:
            sides[name].round_ns(min(args.calls, 2000))
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        for r in range(args.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                rounds[name].append(sides[name].round_ns(args.calls))
        if args.profile:
            result["python_profile"] = py_side.profile(args.calls)
        result["sides"] = {}
        for name in names:
            wall = [w for w, _ in rounds[name]]
            cpu = [c for _, c in rounds[name]]
            entry = {"ns_per_call": statistics.median(wall),
                     "cpu_ns_per_call": statistics.median(cpu),
                     "rounds_ns": wall, "cpu_rounds_ns": cpu}
            if name != "python" and hasattr(sides[name], "first_ids"):
                entry["same_ids_as_python"] = float(np.mean(sides[name].first_ids
                                                            == py_side.first_ids))
            if name != "python":
                # Rounds are paired in time: per-pair differences cancel most of the noise.
                entry["python_minus_this_us"] = statistics.median(
                    p[0] - q[0] for p, q in zip(rounds["python"], rounds[name], strict=True)
                ) / 1000
                entry["python_minus_this_cpu_us"] = statistics.median(
                    p[1] - q[1] for p, q in zip(rounds["python"], rounds[name], strict=True)
                ) / 1000
            result["sides"][name] = entry
            log(f"{name}: {entry['ns_per_call'] / 1000:.2f} us per call, CPU "
                f"{entry['cpu_ns_per_call'] / 1000:.2f} us (rounds: {us(wall)})")
            line = (f"{name:<16} {entry['ns_per_call'] / 1000:8.2f} us wall "
                    f"{entry['cpu_ns_per_call'] / 1000:8.2f} us CPU per call")
            if name != "python":
                line += (f"   python - this: {entry['python_minus_this_us']:+.2f} us wall, "
                         f"{entry['python_minus_this_cpu_us']:+.2f} us CPU")
            same = entry.get("same_ids_as_python", 1.0)
            if same != 1.0:
                line += f"; WARNING: only {same:.2%} of ids agree with python's"
            summary.append(line)
        for side in sides.values():
            if isinstance(side, ChildSide):
                side.close()
        if not args.skip_go:
            env = {"STRATA_BENCH_INDEX": str(index_path), "STRATA_BENCH_QUERIES": str(query_path),
                   "STRATA_BENCH_DIM": str(dim), "STRATA_BENCH_K": str(args.k),
                   "STRATA_BENCH_EF": str(ef)}
            go_rounds, metrics, cmd = run_go_benchmark(Path(args.repo), env, args.calls,
                                                       args.rounds, args.go_package)
            go_ns = statistics.median(go_rounds)
            py_ns = result["sides"]["python"]["ns_per_call"]
            py_cpu = result["sides"]["python"]["cpu_ns_per_call"]
            go_cpu = metrics.get("cpu-ns/op", go_ns)
            result.update({"go_command": cmd,
                           "go_env": {k: v for k, v in env.items()
                                      if not k.endswith(("INDEX", "QUERIES"))},
                           "go_ns_per_call": go_ns, "go_rounds_ns": go_rounds,
                           "go_metrics": metrics, "overhead_us_per_call": (py_ns - go_ns) / 1000,
                           "overhead_cpu_us_per_call": (py_cpu - go_cpu) / 1000})
            log(f"go:     {go_ns / 1000:.2f} us per call (rounds: {us(go_rounds)}); {metrics}")
            summary.append(f"{'go':<16} {go_ns / 1000:8.2f} us wall {go_cpu / 1000:8.2f} us CPU"
                           f" per call   python - go: {(py_ns - go_ns) / 1000:+.2f} us wall, "
                           f"{(py_cpu - go_cpu) / 1000:+.2f} us CPU (separate run: the Go "
                           f"benchmark cannot alternate); {metrics.get('B/op', 0):.0f} B/op, "
                           f"{metrics.get('allocs/op', 0):.0f} allocs/op")
    load = result["load_average_start"][0]
    if load > 0.5:
        summary.append(f"NOTE: load average {load:.2f} at start: other processes add noise")
    result["load_average_end"] = list(os.getloadavg())
    print("\n".join(summary))
    if args.profile:
        print(result["python_profile"])
    out = Path(args.out) if args.out else runinfo.result_path("overhead")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
