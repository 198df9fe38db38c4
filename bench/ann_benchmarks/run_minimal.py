"""A minimal stand-in for ann-benchmarks' runner, driving strata/module.py the way it does:

    import strata/module.py                    # in the parent, as main.py checks every module
    # then, for each arg group, in a child forked from the parent (main.py's workers):
    algo = Strata(metric, arg_group)           # constructor and arguments from config.yml
    algo.fit(train)
    for ef in query_args:
        algo.set_query_arguments(ef)
        [algo.query(q, k) for q in test]       # timed one at a time
        algo.batch_query(test, k); algo.get_batch_results()
    algo.done()

and scoring recall@k against exact ground truth, on a small generated Gaussian mixture (or a
prepared data set from bench/data). Exit status 1 when the best recall is below --min-recall.

    python bench/ann_benchmarks/run_minimal.py
    python bench/ann_benchmarks/run_minimal.py --metric angular --n 5000
    python bench/ann_benchmarks/run_minimal.py --dataset fashion-mnist-784-euclidean --queries 500
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from types import ModuleType

import numpy as np

HERE = Path(__file__).resolve().parent
# This folder holds a directory named `strata` (the wrapper) that must not shadow the library.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))  # bench/, for datasets.py

import datasets  # noqa: E402

MODULE_PATH = HERE / "strata" / "module.py"
CONFIG_PATH = HERE / "strata" / "config.yml"
# Used when PyYAML is not installed; mirrors the M-16 group of config.yml.
FALLBACK_RUN_GROUPS = {"M-16": {"arg_groups": [{"M": 16, "efConstruction": 200}],
                                "query_args": [[10, 16, 32, 64, 128, 256]]}}


def load_wrapper() -> ModuleType:
    """strata/module.py imported under a private name, as ann-benchmarks would import it."""
    if os.environ.get("STRATA_BENCH_STANDIN") == "1":
        sys.modules["strata"] = importlib.import_module("_standin_strata")
    spec = importlib.util.spec_from_file_location("strata_ann_benchmarks_module", MODULE_PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_groups() -> dict:
    try:
        import yaml
    except ImportError:
        return FALLBACK_RUN_GROUPS
    cfg = yaml.safe_load(CONFIG_PATH.read_text())
    entry = cfg["float"]["any"][0]
    assert entry["constructor"] == "Strata" and entry["base_args"] == ["@metric"], entry
    return entry["run_groups"]


def recall(found: list, truth: np.ndarray, k: int) -> float:
    return sum(len(set(np.asarray(f)[:k].tolist()) & set(t[:k].tolist()))
               for f, t in zip(found, truth, strict=False)) / (len(found) * k)


def run(train: np.ndarray, test: np.ndarray, neighbors: np.ndarray, metric: str, k: int = 10,
        groups: dict | None = None, only_group: str | None = "M-16",
        log: Callable[..., None] = print, fork: bool = False) -> list[dict]:
    """Runs every arg group of the selected run groups and returns one dict per query argument.

    fork=True runs each arg group in a child process forked after the wrapper was imported
    here, which is what ann-benchmarks' main.py does with --local (import every algorithm
    module in the parent to check it, then multiprocessing.Process workers). It needs a
    process in which strata's engine has not started yet (see strata._lib).
    """
    mod = load_wrapper()
    groups = groups or run_groups()
    results = []
    for gname, group in groups.items():
        if only_group and gname != only_group:
            continue
        for arg_group in group["arg_groups"]:
            args = (mod, metric, arg_group, gname, group["query_args"], train, test, neighbors, k,
                    log)
            results += _in_forked_worker(_run_definition, args) if fork else _run_definition(*args)
    return results


def _run_definition(mod: ModuleType, metric: str, arg_group: dict, gname: str,
                    query_args_groups: list, train: np.ndarray, test: np.ndarray,
                    neighbors: np.ndarray, k: int, log: Callable[..., None]) -> list[dict]:
    """One definition, as ann-benchmarks' runner.run drives it."""
    results = []
    algo = mod.Strata(metric, arg_group)
    t0 = time.perf_counter()
    algo.fit(train)
    build_s = time.perf_counter() - t0
    for query_args in query_args_groups:
        for ef in query_args:
            algo.set_query_arguments(ef)
            t0 = time.perf_counter()
            found = [algo.query(q, k) for q in test]
            qps = len(test) / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            algo.batch_query(test, k)
            batch_qps = len(test) / (time.perf_counter() - t0)
            batch = algo.get_batch_results()
            r = {"name": str(algo), "group": gname, "ef": ef, "build_s": build_s,
                 "qps": qps, "batch_qps": batch_qps, "recall": recall(found, neighbors, k),
                 "batch_recall": recall(batch, neighbors, k),
                 "memory_kb": algo.get_memory_usage(),
                 "lengths": sorted({len(f) for f in found})}
            results.append(r)
            log(f"{r['name']:60s} recall {r['recall']:.4f} batch {r['batch_recall']:.4f} "
                f"{qps:9.0f} qps {batch_qps:9.0f} batch qps")
    algo.done()
    return results


def _in_forked_worker(fn: Callable[..., list[dict]], args: tuple) -> list[dict]:
    """fn(*args) in a forked child; its results come back through a queue.

    Unlike ann-benchmarks, a failing worker is an error here, not a skipped definition.
    """
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def worker() -> None:
        try:
            queue.put(("ok", fn(*args)))
        except BaseException as exc:
            queue.put(("error", f"{type(exc).__name__}: {exc}"))
            raise

    proc = ctx.Process(target=worker, name="run_minimal-worker")
    proc.start()
    status, payload = "error", "the worker died without reporting"
    while True:
        try:
            status, payload = queue.get(timeout=0.5)
            break
        except Empty:
            if not proc.is_alive():  # one more look: it may have reported just before exiting
                with contextlib.suppress(Empty):
                    status, payload = queue.get(timeout=1)
                break
    proc.join(timeout=60)
    if status != "ok" or proc.exitcode != 0:
        raise RuntimeError(f"worker exited with status {proc.exitcode}: {payload}")
    return payload


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", help="a prepared data set instead of generated data")
    ap.add_argument("--metric", choices=["euclidean", "angular"], default="euclidean")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--all-groups", action="store_true", help="every run group, not only M-16")
    ap.add_argument("--min-recall", type=float, default=0.95,
                    help="fail unless the best recall reaches this")
    ap.add_argument("--no-fork", action="store_true",
                    help="run in this process instead of a forked worker per definition")
    args = ap.parse_args(argv)
    if args.dataset:
        ds = datasets.load(args.dataset)
        train, test = ds.train, ds.test[: args.queries]
        neighbors, metric = ds.neighbors[: args.queries], ds.distance
    else:
        train, test = datasets.make_clustered(args.n, args.queries, args.dim,
                                              centres=max(10, args.n // 100), seed=7, spread=0.3)
        metric = args.metric
        neighbors, _ = datasets.exact_knn(train, test, metric, k=args.k, progress=False)
    results = run(train, test, neighbors, metric, args.k,
                  only_group=None if args.all_groups else "M-16", fork=not args.no_fork)
    best = max(r["recall"] for r in results)
    print(f"best recall@{args.k}: {best:.4f} (minimum {args.min_recall})")
    return 0 if best >= args.min_recall else 1


if __name__ == "__main__":
    sys.exit(main())
