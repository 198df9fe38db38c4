"""Recall/QPS benchmark of strata against hnswlib and FAISS on one data set, in one process.

Protocol (the same for every library):
  build      M=16, ef_construction=200, all cores; wall time, CPU time of the process (every
             thread), index size (saved file), RSS delta
  sweep      for each ef: queries one at a time on one thread (the ann-benchmarks convention),
             recall@k against the exact ground truth; libraries measured alternately
             (A B C, B C A, C A B, ...) for --passes passes and the median QPS kept, both
             wall-clock QPS and QPS per CPU second of the calling thread (steadier on a shared
             machine: time other processes take from it is not counted)
  batch      all queries in one call on all cores at --batch-ef, alternated and medianed the same
Raw results go to one JSON file (machine, commit, versions, parameters, every pass) that
summarize.py and plot.py read.

    python bench/bench_ann.py --dataset fashion-mnist-784-euclidean
    python bench/bench_ann.py --dataset random-clustered-20k-64-euclidean --quick
    python bench/bench_ann.py --dataset pypi-use512-angular \
        --libs strata,strata-rabitq,hnswlib,faiss-hnsw-rabitq,rabitqlib-hnsw,rabitqlib-symqg

The quantized peers (rabitqlib, faiss-cpu's IndexHNSWRaBitQ) are in the bench extra; a library
that cannot be imported is left out with a message.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import runinfo
from adapters import ADAPTERS, Adapter

DEFAULT_EFS = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
QUICK_EFS = [10, 16, 32, 64, 128, 256]
SCHEMA = 1


def recall_at_k(found: np.ndarray, truth: np.ndarray, k: int) -> float:
    """Mean fraction of the true k nearest ids among the k returned (ids, not distances)."""
    hits = 0
    for f, t in zip(found[:, :k], truth[:, :k], strict=False):
        hits += np.intersect1d(f, t, assume_unique=False).size
    return hits / (found.shape[0] * k)


def recall_with_ties(found: np.ndarray, ds: datasets.Dataset, queries: np.ndarray,
                     qidx: np.ndarray, k: int) -> float:
    """ann-benchmarks style: a returned id counts when its true distance is no larger than the
    k-th true distance (relative tolerance 1e-6), so ties at the k-th place are not penalised."""
    good = 0
    train = ds.train
    for row, qi in enumerate(qidx):
        ids = found[row, :k]
        ids = ids[ids >= 0]
        if ids.size == 0:
            continue
        x = train[ids].astype(np.float64)
        q = queries[row].astype(np.float64)
        if ds.distance == "euclidean":
            d = np.linalg.norm(x - q, axis=1)
        else:
            d = 1.0 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        limit = ds.distances[qi, k - 1]
        good += int(np.sum(d <= limit + 1e-6 * max(abs(limit), 1e-12)))
    return good / (len(qidx) * k)


def time_sweep_pass(adapter: Adapter, rows: list[np.ndarray],
                    k: int) -> tuple[float, float, np.ndarray]:
    """rows: (1, dim) views made before timing, so slicing is not charged to any library.
    Returns wall-clock seconds, CPU seconds of this thread, and the ids found."""
    out = np.empty((len(rows), k), dtype=np.int64)
    query_one = adapter.query_one
    c0, t0 = time.thread_time(), time.perf_counter()
    for i, q in enumerate(rows):
        out[i] = query_one(q, k)
    return time.perf_counter() - t0, time.thread_time() - c0, out


def rotated(items: list, shift: int) -> list:
    shift %= len(items)
    return items[shift:] + items[:shift]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="name in bench/data (see datasets.py --list)")
    ap.add_argument("--libs", default="strata,hnswlib,faiss",
                    help=f"comma-separated, from: {', '.join(ADAPTERS)}")
    ap.add_argument("--quick", action="store_true",
                    help=f"1000 queries, ef in {QUICK_EFS}, 3 passes")
    ap.add_argument("--efs", help=f"comma-separated ef sweep (default: {DEFAULT_EFS})")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--queries", type=int, help="use only the first N test queries")
    ap.add_argument("--train-limit", type=int,
                    help="smoke tests: index only the first N train vectors (ground truth is "
                         "recomputed for them; results are not comparable with full runs)")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("-M", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=200)
    ap.add_argument("--batch-ef", type=int, default=128)
    ap.add_argument("--threads", type=int, default=runinfo.cpu_count(),
                    help="threads for build and batch queries (default: all cores)")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--out", help="result JSON path (default: runinfo.result_path('ann', dataset))")
    ap.add_argument("--keep-index", metavar="DIR",
                    help="save each index into DIR (<lib>.<ext>) and keep it, e.g. for "
                         "bench_memory.py --index-file, so its builds need not be repeated")
    args = ap.parse_args(argv)

    libs = [s.strip() for s in args.libs.split(",") if s.strip()]
    unknown = [lib for lib in libs if lib not in ADAPTERS]
    if unknown:
        ap.error(f"unknown libs {unknown}; choose from {list(ADAPTERS)}")
    efs = ([int(x) for x in args.efs.split(",")] if args.efs
           else QUICK_EFS if args.quick else DEFAULT_EFS)
    nq_limit = args.queries or (1000 if args.quick else None)
    passes = max(1, args.passes)

    try:
        ds = datasets.load(args.dataset)
    except datasets.MissingSourceError as e:
        print(f"{args.dataset}: source missing:\n  {e}", file=sys.stderr)
        return 2
    if args.train_limit and args.train_limit < ds.train.shape[0]:
        ds.train = np.ascontiguousarray(ds.train[: args.train_limit])
        ds.neighbors, ds.distances = datasets.exact_knn(ds.train, ds.test[:nq_limit],
                                                        ds.distance, progress=False)
        ds.test = ds.test[: ds.neighbors.shape[0]]
        ds.name = f"{ds.name}-first{args.train_limit}"
    qidx = np.arange(ds.test.shape[0] if nq_limit is None else min(nq_limit, ds.test.shape[0]))
    queries = np.ascontiguousarray(ds.test[qidx])
    truth = ds.neighbors[qidx]
    nq = len(qidx)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if os.getloadavg()[0] > 0.5:
        log(f"warning: load average {os.getloadavg()[0]:.2f} before start; other processes will "
            "add noise (the result file records it)")
    log(f"{ds.name}: {ds.train.shape[0]} x {ds.dim} {ds.distance}, {nq} queries, "
        f"libs {libs}, ef {efs}, {passes} passes, {args.threads} threads")

    result = {
        "schema": SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "dataset": {**ds.describe(), "n_queries_used": nq},
        "params": {"k": args.k, "M": args.M, "ef_construction": args.ef_construction,
                   "efs": efs, "passes": passes, "batch_ef": args.batch_ef,
                   "threads": args.threads, "seed": args.seed, "quick": args.quick,
                   "recall": "id-based recall@k; recall_ties counts distance ties at the k-th"},
        "machine": runinfo.machine(),
        "load_average_start": list(os.getloadavg()),
        "git": runinfo.git_info(),
        "versions": runinfo.versions(),
        "libs": {},
    }

    adapters, prepared, row_views = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        for lib in libs:
            gc.collect()
            rss0 = runinfo.rss_bytes()
            try:
                adapter = ADAPTERS[lib](ds.distance, ds.dim, M=args.M,
                                        ef_construction=args.ef_construction, seed=args.seed)
            except ImportError as e:
                log(f"  {lib}: cannot import ({e}), left out of this run; install it (pip "
                    "install -e '.[bench]' for the peers, pip install . for strata)")
                result.setdefault("skipped", {})[lib] = f"cannot import: {e}"
                continue
            c0, t0 = time.process_time(), time.perf_counter()
            adapter.build(ds.train, args.threads)
            build_s = time.perf_counter() - t0
            build_cpu = time.process_time() - c0
            gc.collect()
            rss_delta = runinfo.rss_bytes() - rss0
            keep = Path(args.keep_index) if args.keep_index else None
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
            size, size_how = adapter.index_bytes(keep or Path(tmp))
            if size is None:
                size, size_how = rss_delta, f"process RSS delta ({size_how})"
            adapters[lib] = adapter
            prepared[lib] = adapter.prepare_queries(queries)
            row_views[lib] = [prepared[lib][i:i + 1] for i in range(nq)]
            result["libs"][lib] = {
                "info": adapter.info(),
                "build": {"seconds": build_s, "cpu_seconds": build_cpu, "threads": args.threads,
                          "index_mib": size / 2**20 if size is not None else None,
                          "index_size_source": size_how,
                          "rss_delta_mib": rss_delta / 2**20},
                "sweep": [], "batch": None}
            log(f"  build {lib}: {build_s:.2f} s ({build_cpu:.1f} CPU s), index "
                f"{'n/a' if size is None else f'{size / 2**20:.1f} MiB'} ({size_how}), "
                f"RSS +{rss_delta / 2**20:.0f} MiB")

    libs = [lib for lib in libs if lib in adapters]
    if not libs:
        log("no library could be imported")
        return 2
    for ef in efs:
        per_lib = {lib: {"qps_passes": [], "qps_cpu_passes": [], "ids": None} for lib in libs}
        for lib in libs:  # warm caches and branch predictors at this ef, untimed
            adapters[lib].set_ef(ef)
            time_sweep_pass(adapters[lib], row_views[lib][:200], args.k)
        for p in range(passes):
            for lib in rotated(libs, p):
                a = adapters[lib]
                a.set_ef(ef)
                a.reset_stats()
                seconds, cpu, ids = time_sweep_pass(a, row_views[lib], args.k)
                per_lib[lib]["qps_passes"].append(nq / seconds)
                per_lib[lib]["qps_cpu_passes"].append(nq / max(cpu, 1e-9))
                if per_lib[lib]["ids"] is None:
                    per_lib[lib]["ids"] = ids
                    per_lib[lib]["stats"] = a.stats(nq)
        line = [f"  ef={ef:4d}"]
        for lib in libs:
            ids = per_lib[lib]["ids"]
            qps = statistics.median(per_lib[lib]["qps_passes"])
            point = {"ef": ef, "qps": qps, "qps_passes": per_lib[lib]["qps_passes"],
                     "qps_cpu": statistics.median(per_lib[lib]["qps_cpu_passes"]),
                     "qps_cpu_passes": per_lib[lib]["qps_cpu_passes"],
                     "mean_latency_us": 1e6 / qps,
                     "recall": recall_at_k(ids, truth, args.k),
                     "recall_ties": recall_with_ties(ids, ds, queries, qidx, args.k),
                     "stats": per_lib[lib]["stats"]}
            result["libs"][lib]["sweep"].append(point)
            line.append(f"{lib} R={point['recall']:.4f} {qps:6.0f} qps {point['qps_cpu']:6.0f} cpu")
        log("  ".join(line))

    per_lib = {lib: [] for lib in libs}
    batch_ids = {}
    for lib in libs:
        adapters[lib].set_ef(args.batch_ef)
        adapters[lib].query_batch(prepared[lib][: min(nq, 200)], args.k, args.threads)  # warm
    for p in range(passes):
        for lib in rotated(libs, p):
            t0 = time.perf_counter()
            ids = adapters[lib].query_batch(prepared[lib], args.k, args.threads)
            per_lib[lib].append(nq / (time.perf_counter() - t0))
            batch_ids.setdefault(lib, ids)
    line = [f"  batch ef={args.batch_ef} threads={args.threads}"]
    for lib in libs:
        qps = statistics.median(per_lib[lib])
        result["libs"][lib]["batch"] = {
            "ef": args.batch_ef, "threads": args.threads, "qps": qps, "qps_passes": per_lib[lib],
            "recall": recall_at_k(np.asarray(batch_ids[lib]), truth, args.k)}
        line.append(f"{lib} {qps:8.0f} qps")
    log("  ".join(line))
    result["peak_rss_mib"] = runinfo.peak_rss_bytes() / 2**20
    result["load_average_end"] = list(os.getloadavg())

    for a in adapters.values():
        a.close()
    out = Path(args.out) if args.out else runinfo.result_path("ann", ds.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=_json_default) + "\n")
    log(f"wrote {out}")
    return 0


def _json_default(obj: object) -> object:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, bytes):
        return obj.decode(errors="replace")
    return str(obj)


if __name__ == "__main__":
    sys.exit(main())
