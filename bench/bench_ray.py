"""strata.ray.ShardedIndex on a local Ray cluster against one in-process strata.Index.

On pypi-use512 (first --n train rows, cosine, M=16, ef_construction=200, seed 1; --queries test
rows; ground truth recomputed exactly for the slice) it measures, for the in-process index and for
1, 2 and 4 shards:

  build     seconds to start the shard actors, and seconds for one add() of all rows
  batch     queries/s of one search() call with every query (best of --repeats calls)
  single    milliseconds per search() of one query (median over --singles calls)
  shard     seconds for one shard alone to answer the whole batch (one actor call, merge excluded)
  recall    recall@k of the batch results

and, to build the scale-out model of docs/benchmarks-methodology.md from:

  ray_call_us      a no-op actor round trip (ray.get(actor.pid.remote()))
  ray_put_ms       ray.put of the query batch (what a batch search puts in the object store)
  ray_submit_us    driver time per actor call when 1000 are in flight (the driver's CPU per call)
  merge_us         merge_topk() per query for S = 2 .. 1000 shard lists of k results
  shard_query_us   per-query, per-core cost of an HNSW search against shard size n (single thread)

Every configuration is run --rounds times, alternating (in-process, 1, 2, 4 shards, in-process,
...), and the summary ("best") keeps each figure's best round: the machine is shared, and other
load only ever slows a run down. All shards share this machine's cores (the Ray cluster gets
--cpus), so more shards do not add compute here: what the runs show is Ray's cost, not
scale-out. The model extrapolates.

    python bench/bench_ray.py                          # 20k rows, 1000 queries, ~4 min on 2 cores
    python bench/bench_ray.py --n 5000 --queries 200 --rounds 1   # smoke run
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import runinfo


def load(n: int, nq: int) -> tuple[np.ndarray, np.ndarray]:
    src = datasets.shared_data_dir() / "pypi-use512"
    train = np.load(src / "train.f16.npy", mmap_mode="r")[:n].astype(np.float32)
    test = np.load(src / "test.f16.npy")[:nq].astype(np.float32)
    return train, test


def exact_topk(train: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    x = train / np.linalg.norm(train, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    return np.argsort(-(q.astype(np.float64) @ x.T.astype(np.float64)), axis=1)[:, :k]


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True)) / truth.size


def best_time(fn: Any, repeats: int) -> float:
    """The fastest of repeats calls: the machine is shared, and other load only adds time."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(index: Any, queries: np.ndarray, truth: np.ndarray, args: argparse.Namespace) -> dict:
    k, ef = args.k, args.ef
    ids, _ = index.search(queries, k=k, ef=ef)
    batch = best_time(lambda: index.search(queries, k=k, ef=ef), args.repeats)
    singles = [best_time(lambda q=q: index.search(q, k=k, ef=ef), 1)
               for q in queries[: args.singles]]  # the median of them: one timing each
    return {"batch_qps": len(queries) / batch, "batch_s": batch,
            "single_ms": 1e3 * statistics.median(singles), "recall": recall(ids, truth)}


def per_query_costs(train: np.ndarray, queries: np.ndarray, args: argparse.Namespace) -> dict:
    """Single-thread search cost per query at several index sizes (the model's t(n))."""
    import strata

    out = {}
    for n in sorted({len(train) // 4, len(train) // 2, len(train)}):
        index = strata.Index(train.shape[1], metric="cosine", M=16, ef_construction=200, seed=1)
        index.add(train[:n])
        secs = best_time(lambda i=index: i.search(queries, k=args.k, ef=args.ef,
                                                  num_threads=1), 2 * args.repeats)
        out[str(n)] = 1e6 * secs / len(queries)
        index.close()
    return out


def merge_costs(k: int, nq: int) -> dict:
    from strata.ray._routing import merge_topk

    rng = np.random.default_rng(0)
    out = {}
    for shards in (2, 4, 16, 64, 100, 1000):
        ids = [rng.integers(0, 2**40, size=(nq, k)).astype(np.int64) for _ in range(shards)]
        dists = [np.sort(rng.random((nq, k), dtype=np.float32), axis=1) for _ in range(shards)]
        secs = best_time(lambda i=ids, d=dists: merge_topk(i, d, k), 5)
        out[str(shards)] = 1e6 * secs / nq
    return out


def model(results: dict, args: argparse.Namespace) -> dict:
    """Throughput and latency of 1B vectors on 10-100 machines, from the measured costs.

    Per-query shard cost: the measured single-thread cost t0 at the largest measured size n0,
    grown like the number of HNSW hops, ln(n)/ln(n0), times args.dram_factor (shards of
    10M-100M vectors do not fit in cache; the measured ones mostly do) and args.ef_factor (the
    larger ef such shards need for the same recall). Every query visits every shard, so one
    machine's share of a query costs t(N/M) core-seconds and a set of M machines answers
    C / t(N/M) queries/s (C cores each): adding machines to a fixed data set shrinks t only
    logarithmically. QPS grows with replicas, data size with shards. The driver pays
    ray_submit_us per shard per call and merge_us per query, so it is the limit for single
    queries; batches of B queries pay the submit cost once per B.
    """
    costs = {int(n): us for n, us in results["shard_query_us"].items()}
    n0 = max(costs)
    t0 = costs[n0]
    merge = results["merge_us"]
    submit = results["ray_submit_us"]
    graph = 4 * 2 * 16 + 8  # level-0 links (2M ids of 4 bytes, M=16) and the id
    batch = args.model_batch
    # Build: core-seconds per insert measured in-process, grown like search (an insert is a
    # search with ef_construction plus linking).
    local = results["best"]["in-process"]
    insert_core_s = local["build_s"] * results["ray_cpus"] / results["n"]
    rows = []
    for machines in (10, 20, 50, 100):
        per_machine = args.model_vectors / machines
        t_us = t0 * math.log(per_machine) / math.log(n0) * args.dram_factor * args.model_ef_factor
        merge_us = float(np.interp(machines, [int(m) for m in merge], list(merge.values())))
        rows.append({
            "machines": machines, "vectors_per_machine": per_machine,
            "shard_query_us": round(t_us, 1),
            "merge_us_per_query": round(merge_us, 2),
            "cluster_qps": round(args.model_cores * 1e6 / t_us),
            "single_query_latency_ms": round(
                (t_us + args.model_rtt_us + merge_us + machines * submit) / 1e3, 2),
            "driver_qps_single_queries": round(1e6 / (machines * submit + merge_us)),
            f"driver_qps_batches_of_{batch}": round(
                1e6 * batch / (machines * submit + batch * merge_us)),
            f"batch_of_{batch}_latency_ms": round(
                (batch * t_us / args.model_cores + args.model_rtt_us + machines * submit
                 + batch * merge_us) / 1e3, 1),
            "build_hours_per_machine": round(
                per_machine * insert_core_s * math.log(per_machine) / math.log(results["n"])
                * args.dram_factor / args.model_cores / 3600, 2),
            "memory_per_machine_gib_sq8": round(per_machine * (args.dim + graph) / 2**30, 1),
            "memory_per_machine_gib_f32": round(per_machine * (4 * args.dim + graph) / 2**30, 1),
        })
    return {"t0_us": t0, "n0": n0, "insert_core_s": insert_core_s, "assumptions": {
        "vectors": args.model_vectors, "dim": args.dim, "cores_per_machine": args.model_cores,
        "dram_factor": args.dram_factor, "ef_factor": args.model_ef_factor,
        "network_rtt_us": args.model_rtt_us, "batch": batch}, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000, help="train rows of pypi-use512")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--ef", type=int, default=64)
    ap.add_argument("--shards", default="1,2,4")
    ap.add_argument("--rounds", type=int, default=3, help="rounds over all configurations")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats; the best is kept")
    ap.add_argument("--singles", type=int, default=200, help="single-query searches timed")
    ap.add_argument("--cpus", type=int, default=runinfo.cpu_count(), help="Ray cluster CPUs")
    ap.add_argument("--model-vectors", type=float, default=1e9)
    ap.add_argument("--model-cores", type=int, default=32)
    ap.add_argument("--model-rtt-us", type=float, default=200.0)
    ap.add_argument("--model-batch", type=int, default=100, help="queries per search() call")
    ap.add_argument("--model-ef-factor", type=float, default=2.0,
                    help="ef multiplier assumed to keep recall on 10M-100M vector shards")
    ap.add_argument("--dram-factor", type=float, default=2.0,
                    help="slow-down assumed for shards far larger than the CPU caches")
    ap.add_argument("--model-only", metavar="JSON",
                    help="recompute the model of an earlier result file (rewritten in place)")
    ap.add_argument("--out", help="result JSON (default: runinfo.result_path('ray'))")
    args = ap.parse_args()

    if args.model_only:
        results = json.loads(Path(args.model_only).read_text())
        args.dim = 512
        results["model"] = model(results, args)
        for row in results["model"]["rows"]:
            print(json.dumps(row))
        Path(args.model_only).write_text(json.dumps(results, indent=1))
        return

    import ray

    import strata
    import strata.ray as sray

    train, queries = load(args.n, args.queries)
    args.dim = train.shape[1]
    truth = exact_topk(train, queries, args.k)
    results: dict[str, Any] = {
        "benchmark": "ray", "dataset": "pypi-use512", "n": len(train), "queries": len(queries),
        "k": args.k, "ef": args.ef, "M": 16, "ef_construction": 200, "metric": "cosine",
        "ray_cpus": args.cpus, "machine": runinfo.machine(), "git": runinfo.git_info(),
        "versions": {**runinfo.versions(), "ray": ray.__version__},
        "load_average_start": list(os.getloadavg()), "runs": [],
    }

    def in_process(round_no: int) -> dict:
        local = strata.Index(args.dim, metric="cosine", M=16, ef_construction=200, seed=1)
        start = time.perf_counter()
        local.add(train)
        run = {"config": "in-process", "shards": 0, "round": round_no, "start_s": 0.0,
               "build_s": time.perf_counter() - start, **measure(local, queries, truth, args)}
        local.close()
        return run

    def sharded(round_no: int, shards: int) -> dict:
        start = time.perf_counter()
        index = sray.ShardedIndex(args.dim, shards=shards, metric="cosine", M=16,
                                  ef_construction=200, seed=1)
        started = time.perf_counter()
        index.add(train)
        built = time.perf_counter()
        run = {"config": f"ray-{shards}", "shards": shards, "round": round_no,
               "start_s": started - start, "build_s": built - started,
               **measure(index, queries, truth, args)}
        actor = index._pool.actors[0]
        shard_args = (queries, args.k, args.ef, None, None, None, False)
        run["shard_batch_s"] = best_time(
            lambda a=actor, s=shard_args: ray.get(a.search.remote(*s)), args.repeats)
        if shards == 1:
            overhead = {
                "ray_call_us": 1e6 * best_time(lambda a=actor: ray.get(a.pid.remote()), 500),
                "ray_put_ms": 1e3 * best_time(lambda: ray.put(queries), 20),
                "ray_submit_us": 1e6 * best_time(
                    lambda a=actor: ray.get([a.pid.remote() for _ in range(1000)]), 3) / 1000,
            }
            for key, value in overhead.items():
                results[key] = min(value, results.get(key, math.inf))
        index.close()
        return run

    # Rounds alternate every configuration, and the summary keeps each one's best round: the
    # machine is shared, and other load only ever makes a run slower.
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    for round_no in range(args.rounds):
        for shards in [0, *[int(s) for s in args.shards.split(",")]]:
            run = in_process(round_no) if shards == 0 else sharded(round_no, shards)
            results["runs"].append(run)
            print(json.dumps(run), flush=True)
    ray.shutdown()
    results["best"] = {}
    for run in results["runs"]:
        best = results["best"].setdefault(run["config"], dict(run))
        for key in ("start_s", "build_s", "batch_s", "single_ms", "shard_batch_s"):
            if key in run:
                best[key] = min(best[key], run[key])
        best["batch_qps"] = len(queries) / best["batch_s"]
        best.pop("round", None)
    for best in results["best"].values():
        print("best", json.dumps(best))

    results["shard_query_us"] = per_query_costs(train, queries, args)
    results["merge_us"] = merge_costs(args.k, len(queries))
    results["model"] = model(results, args)
    for key in ("ray_call_us", "ray_put_ms", "ray_submit_us", "shard_query_us", "merge_us"):
        print(key, json.dumps(results[key]))
    for row in results["model"]["rows"]:
        print(json.dumps(row))

    results["load_average_end"] = list(os.getloadavg())
    out = Path(args.out) if args.out else runinfo.result_path("ray")
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
