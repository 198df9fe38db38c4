"""Resident memory, file size, recall and QPS of strata's storage configurations, one process each.

The parent builds each index once (M=16, ef_construction=200, all cores), saves it into a work
directory with the queries and their ground truth (.npy), and then starts one fresh Python process
per configuration (this script with --child CONFIG). A child imports only numpy and strata, loads
the queries, loads its index file, warms up, runs gc.collect(), and reads /proc/self/status:

  float32        Index.load(f32 file)                         vectors and graph resident
  float32-mmap   Index.load(f32 file, mmap_vectors=True)      (for reference, not in the issue)
  sq8            Index.load(sq8+rerank file)                  codes, vectors, graph resident
  sq8-mmap       Index.load(sq8+rerank file, mmap_vectors=True)  vectors stay in the page cache
  sq8-codes      Index.load(sq8 rerank=False file)            codes and graph only
  rabitq         Index.load(rabitq file)                      1-bit codes (default bits), neighbour
                                                              blocks, vectors and graph resident
  rabitq-mmap    Index.load(rabitq file, mmap_vectors=True)   float vectors stay in the page cache
  rabitq-codes   Index.load(rabitq rerank=False file)         codes-only (default bits), no floats
  qg             Index.load(rabitq layout="qg" file)          rows (vector, links, codes) + floats
  qg-mmap        Index.load(qg file, mmap_vectors=True)       the rows keep their copy resident
  rows           Index.load(rabitq layout="rows" file)        1-bit code rows (no neighbour
                                                              records), vectors and graph resident
  rows-mmap      Index.load(rows file, mmap_vectors=True)     graph + code rows resident; floats
                                                              re-rank from the page cache

Memory figures (MiB, from /proc/self/status):
  RssAnon    anonymous resident pages: what the process cannot give back without freeing it
             (Go heap, arenas, Python objects); the figure the issue's target is about
  RssFile    file-backed resident pages (shared libraries, mapped vectors): the kernel can drop
             and re-read them
  RssShmem   shared memory (expected 0)
  VmRSS      the sum; VmHWM its peak
`index VmRSS` is the same difference of VmRSS: it counts the mapped vectors' pages that the
searches touched. Issue 22's memory targets compare the rabitq configurations with float32.
`--build-rounds N` builds every file N times, alternating the kinds, and records each build's
wall and process CPU seconds (every thread), so build times are compared in one run.

`index RssAnon` is RssAnon after load + warm-up minus RssAnon of the same process just before the
load (numpy + strata imported, queries and ground truth loaded), so the interpreter, the Go runtime
and the query array are not charged to the index; the baseline figures are reported as well. A
last reading after --settle seconds of idling shows whether the Go runtime returned anything.

Recall@k is id-based against the data set's exact ground truth; QPS is single-thread, one query
per call, at each --efs value, by wall time and by the child's process CPU time (steadier on a
shared machine); with --rounds N every child runs N times in rotated order and the QPS are the
medians (memory is the first round's).

    python bench/bench_memory.py --dataset pypi-use512-angular
    python bench/bench_memory.py --dataset random-clustered-20k-64-euclidean --quick
    python bench/bench_memory.py --summarize bench/results/memory/<file>.json --markdown
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
SCHEMA = 1
TARGET_RATIO = 0.4  # sq8-mmap index RssAnon <= 0.4 x float32's (issue 4, d >= 100)
# Issue 22: rabitq with mapped floats <= 1/4 of float32's; codes-only <= 1/5, recall >= 0.90 at
# ef=128.
RABITQ_MMAP_RATIO, RABITQ_CODES_RATIO, RABITQ_CODES_RECALL = 0.25, 0.20, 0.90

# file name -> constructor keywords; configurations name a file and how to load it.
FILES = {
    "f32": {},
    "sq8": {"quantization": "sq8", "rerank": True},
    "sq8-codes": {"quantization": "sq8", "rerank": False},
    "rabitq": {"quantization": "rabitq"},
    "rabitq-codes": {"quantization": "rabitq", "rerank": False},
    "qg": {"quantization": "rabitq", "layout": "qg"},
    "rows": {"quantization": "rabitq", "layout": "rows"},
}
CONFIGS = {
    "float32": ("f32", False),
    "float32-mmap": ("f32", True),
    "sq8": ("sq8", False),
    "sq8-mmap": ("sq8", True),
    "sq8-codes": ("sq8-codes", False),
    "rabitq": ("rabitq", False),
    "rabitq-mmap": ("rabitq", True),
    "rabitq-codes": ("rabitq-codes", False),
    "qg": ("qg", False),
    "qg-mmap": ("qg", True),
    "rows": ("rows", False),
    "rows-mmap": ("rows", True),
}
STATUS_FIELDS = ("RssAnon", "RssFile", "RssShmem", "VmRSS", "VmHWM")


def proc_status() -> dict[str, float]:
    """The STATUS_FIELDS of /proc/self/status, in MiB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in STATUS_FIELDS:
                out[key] = int(value.split()[0]) / 1024  # kB
    return out


# ----------------------------------------------------------------------------- child


def child(config: str, workdir: Path, efs: list[int], k: int, warmup: int, settle: float) -> dict:
    """Runs in a fresh process: load one index, query, and report memory, recall and QPS."""
    import strata

    gc.collect()
    after_import = proc_status()
    queries = np.load(workdir / "queries.npy")
    truth = np.load(workdir / "truth.npy")
    gc.collect()
    before_load = proc_status()

    file_key, mmap_vectors = CONFIGS[config]
    path = workdir / f"{file_key}.strata"
    t0 = time.perf_counter()
    index = strata.Index.load(str(path), mmap_vectors=mmap_vectors)
    load_s = time.perf_counter() - t0
    gc.collect()
    after_load = proc_status()

    rows = [queries[i:i + 1] for i in range(queries.shape[0])]
    for ef in efs:  # warm-up at every ef: pages the mapped vectors that reranking touches
        for q in rows[:warmup]:
            index.search(q, k=k, ef=ef, num_threads=1)
    gc.collect()
    after_warmup = proc_status()

    sweep = []
    for ef in efs:
        found = np.empty((len(rows), k), dtype=np.int64)
        search = index.search
        c0, t0 = time.process_time(), time.perf_counter()
        for i, q in enumerate(rows):
            found[i] = search(q, k=k, ef=ef, num_threads=1)[0][0]
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        hits = sum(np.intersect1d(f, t[:k]).size for f, t in zip(found, truth, strict=True))
        sweep.append({"ef": ef, "qps": len(rows) / seconds, "qps_cpu": len(rows) / cpu,
                      "recall": hits / (len(rows) * k)})
    gc.collect()
    after_queries = proc_status()
    time.sleep(settle)
    after_settle = proc_status()
    n, info = len(index), index.info()
    index.close()
    return {
        "config": config, "file": path.name, "mmap_vectors": mmap_vectors, "n": n,
        "load_seconds": load_s, "queries_mib": queries.nbytes / 2**20,
        "status": {"after_import": after_import, "before_load": before_load,
                   "after_load": after_load, "after_warmup": after_warmup,
                   "after_queries": after_queries, f"after_{settle:g}s_idle": after_settle},
        "index_rss_anon_mib": after_warmup["RssAnon"] - before_load["RssAnon"],
        "index_rss_anon_after_queries_mib": after_queries["RssAnon"] - before_load["RssAnon"],
        "index_vm_rss_mib": after_warmup["VmRSS"] - before_load["VmRSS"],
        "index_vm_rss_after_queries_mib": after_queries["VmRSS"] - before_load["VmRSS"],
        "index_info": info,
        "sweep": sweep,
    }


# ----------------------------------------------------------------------------- parent


def _engine_identity(strata: Any) -> str:
    libs = sorted(Path(strata.__file__).parent.glob("_native*"))
    return ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in libs)


def build_files(train: np.ndarray, metric: str, workdir: Path, keys: list[str],
                args: argparse.Namespace, log: Any) -> dict:
    """Builds and saves each index file in keys; reuses files made with the same parameters,
    unless --build-rounds asks for N alternated builds of every kind (the last one is kept)."""
    import strata

    params = {"n": int(train.shape[0]), "dim": int(train.shape[1]), "metric": metric,
              "M": args.M, "ef_construction": args.ef_construction, "seed": args.seed,
              "dataset": args.dataset, "train_limit": args.train_limit_used,
              # A rebuilt engine may write other files: its library's identity is part of the key.
              "engine": _engine_identity(strata)}

    def build(key: str) -> dict:
        path = workdir / f"{key}.strata"
        c0, t0 = time.process_time(), time.perf_counter()
        index = strata.Index(train.shape[1], metric=metric, M=args.M,
                             ef_construction=args.ef_construction,
                             num_threads=args.threads, seed=args.seed, **FILES[key])
        index.add(train)
        build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
        index.save(str(path))
        index.close()
        gc.collect()
        info = {"params": params, "constructor": FILES[key], "build_seconds": build_s,
                "build_cpu_seconds": build_cpu, "load_average": list(os.getloadavg())}
        (workdir / f"{key}.json").write_text(json.dumps(info))
        log(f"  built {path.name}: {build_s:.1f} s, {build_cpu:.1f} CPU s, load "
            f"{os.getloadavg()[0]:.1f}")
        return info

    out, builds = {}, []
    for spec in args.index_file or []:
        key, _, given = spec.partition("=")
        if key not in keys or not Path(given).is_file():
            raise SystemExit(f"--index-file {spec!r}: want KEY=PATH with KEY one of {keys} and "
                             "PATH an index file")
        path = workdir / f"{key}.strata"
        path.unlink(missing_ok=True)
        path.symlink_to(Path(given).resolve())
        out[key] = {"params": params, "constructor": FILES[key], "source": str(given),
                    "build_seconds": None, "note": "built elsewhere (see source)"}
        log(f"  {path.name}: using {given}")
    for r in range(args.build_rounds):
        todo = [key for key in keys if "source" not in out.get(key, {})]
        for key in todo[r % len(todo):] + todo[:r % len(todo)]:
            out[key] = build(key)
            builds.append({"round": r, "file": key, "seconds": out[key]["build_seconds"],
                           "cpu_seconds": out[key]["build_cpu_seconds"],
                           "load_average": out[key]["load_average"]})
    for key in keys:
        path, stamp = workdir / f"{key}.strata", workdir / f"{key}.json"
        if key not in out:
            if (path.exists() and stamp.exists()
                    and json.loads(stamp.read_text())["params"] == params):
                out[key] = json.loads(stamp.read_text())
                log(f"  reusing {path.name} (built {out[key]['build_seconds']:.1f} s)")
            else:
                out[key] = build(key)
        out[key]["file_bytes"] = path.stat().st_size
    return {"files": out, "builds": builds}


def run_child(config: str, workdir: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", config,
           "--workdir", str(workdir), "--efs", args.efs, "-k", str(args.k),
           "--warmup", str(args.warmup), "--settle", str(args.settle)]
    # The child must not import strata from the source tree: run it from the work directory.
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child {config} failed ({proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def baseline_child(workdir: Path) -> dict:
    """A process that imported numpy and strata and nothing else."""
    code = ("import gc, json, sys; import numpy, strata; gc.collect(); "
            f"sys.path.insert(0, {str(BENCH_DIR)!r}); import bench_memory; "
            "print(json.dumps(bench_memory.proc_status()))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=workdir, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", help="name in bench/data (see datasets.py --list) or .hdf5 path")
    ap.add_argument("--quick", action="store_true", help="first 20,000 train vectors, 200 queries")
    ap.add_argument("--train-limit", type=int, help="index only the first N train vectors")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"from {list(CONFIGS)}")
    ap.add_argument("--efs", default="64,128")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("-M", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=200)
    ap.add_argument("--threads", type=int, default=None, help="build threads (default: all)")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=200, help="untimed queries per ef after load")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every configuration's child this many times, rotating their order; "
                         "memory is the first round's, QPS the median over rounds")
    ap.add_argument("--settle", type=float, default=5.0, help="idle seconds before last reading")
    ap.add_argument("--workdir", help="keep index files here and reuse them (default: temporary)")
    ap.add_argument("--index-file", action="append", metavar="KEY=PATH",
                    help=f"use this saved index for file KEY (one of {list(FILES)}) instead of "
                         "building it, e.g. one kept by bench_ann.py --keep-index with the same "
                         "data and parameters (repeatable)")
    ap.add_argument("--build-rounds", type=int, default=0,
                    help="build every file this many times, alternating kinds, and record each "
                         "build's wall and CPU seconds (0: build only what --workdir lacks)")
    ap.add_argument("--out",
                    help="result JSON (default: runinfo.result_path('memory', dataset))")
    ap.add_argument("--note", help="free text stored in the result (e.g. how strata was built)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--summarize", nargs="+", metavar="JSON")
    ap.add_argument("--child", choices=list(CONFIGS), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    efs = [int(e) for e in args.efs.split(",")]

    if args.child:
        report = child(args.child, Path(args.workdir), efs, args.k, args.warmup, args.settle)
        print(json.dumps(report))
        return 0
    if args.summarize:
        for p in args.summarize:
            print(format_table(json.loads(Path(p).read_text()), markdown=args.markdown))
        return 0
    if not args.dataset:
        ap.error("--dataset is required")
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    if set(configs) - set(CONFIGS):
        ap.error(f"configs are {list(CONFIGS)}")

    import datasets
    import runinfo

    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    ds = datasets.load(args.dataset)
    name, train = ds.name, ds.train
    nq = min(200 if args.quick else args.queries, ds.test.shape[0])
    queries = np.ascontiguousarray(ds.test[:nq])
    truth = ds.neighbors[:nq, :args.k]
    args.train_limit_used = args.train_limit or (20_000 if args.quick else None)
    if args.train_limit_used and args.train_limit_used < train.shape[0]:
        train = np.ascontiguousarray(train[:args.train_limit_used])
        truth = datasets.exact_knn(train, queries, ds.distance, k=args.k, progress=False)[0]
        name = f"{name}-first{args.train_limit_used}"
    metric = {"euclidean": "l2", "angular": "cosine"}[ds.distance]
    if os.getloadavg()[0] > 0.5:
        log(f"warning: load average {os.getloadavg()[0]:.2f} before start (recorded)")
    log(f"{name}: {train.shape[0]} x {ds.dim} {ds.distance}, {nq} queries, configs {configs}")

    result: dict[str, Any] = {
        "schema": SCHEMA,
        "benchmark": "memory",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "dataset": {**ds.describe(), "name": name, "n_train_used": int(train.shape[0]),
                    "n_queries_used": nq},
        "params": {"k": args.k, "M": args.M, "rounds": args.rounds,
                   "ef_construction": args.ef_construction,
                   "efs": efs, "seed": args.seed, "warmup": args.warmup, "settle_s": args.settle,
                   "search_threads": 1, "quick": args.quick,
                   "index_rss_anon": "RssAnon after load + warm-up + gc.collect() minus RssAnon "
                                     "just before the load, in the same fresh process"},
        "machine": runinfo.machine(),
        "load_average_start": list(os.getloadavg()),
        "git": runinfo.git_info(),
        "note": args.note,
        "versions": runinfo.versions(),
    }
    tmp = None
    if args.workdir:
        workdir = Path(args.workdir)
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="strata-memory-")
        workdir = Path(tmp.name)
    try:
        np.save(workdir / "queries.npy", queries)
        np.save(workdir / "truth.npy", np.ascontiguousarray(truth, dtype=np.int64))
        del ds
        keys = list(dict.fromkeys(CONFIGS[c][0] for c in configs))
        built = build_files(train, metric, workdir, keys, args, log)
        result["files"], result["builds"] = built["files"], built["builds"]
        del train
        gc.collect()
        result["baseline"] = baseline_child(workdir)
        log(f"  baseline (numpy + strata imported): RssAnon {result['baseline']['RssAnon']:.1f} "
            f"MiB, VmRSS {result['baseline']['VmRSS']:.1f} MiB")
        reports: dict[str, list[dict]] = {c: [] for c in configs}
        for rnd in range(args.rounds):
            for config in configs[rnd % len(configs):] + configs[:rnd % len(configs)]:
                r = run_child(config, workdir, args)
                r["round"], r["load_average"] = rnd, list(os.getloadavg())
                reports[config].append(r)
                s = r["status"]["after_warmup"]
                log(f"  round {rnd} {config:13s} index RssAnon {r['index_rss_anon_mib']:7.1f} MiB  "
                    f"RssFile {s['RssFile']:6.1f}  VmRSS {s['VmRSS']:7.1f}  " + "  ".join(
                        f"ef={p['ef']} R={p['recall']:.4f} {p['qps']:.0f} qps "
                        f"{p['qps_cpu']:.0f} cpu-qps" for p in r["sweep"]))
        result["configs"] = [merge_rounds(reports[c]) for c in configs]
        for r in result["configs"]:
            r["file_mib"] = result["files"][CONFIGS[r["config"]][0]]["file_bytes"] / 2**20
    finally:
        if tmp is not None:
            tmp.cleanup()
    result["load_average_end"] = list(os.getloadavg())
    out = Path(args.out) if args.out else runinfo.result_path("memory", name)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {out}")
    print(format_table(result, markdown=args.markdown))
    return 0


# ----------------------------------------------------------------------------- reporting


def merge_rounds(reports: list[dict]) -> dict:
    """One configuration's children: the first round's report, its sweep's QPS replaced by the
    median over rounds (each round's sweep and memory kept under "rounds")."""
    out = dict(reports[0])
    out["rounds"] = [{"round": r["round"], "load_average": r["load_average"], "sweep": r["sweep"],
                      "index_rss_anon_mib": r["index_rss_anon_mib"],
                      "index_vm_rss_mib": r["index_vm_rss_mib"]} for r in reports]
    sweep = []
    for i, point in enumerate(reports[0]["sweep"]):
        merged = dict(point)
        for key in ("qps", "qps_cpu"):
            merged[key] = float(np.median([r["sweep"][i][key] for r in reports]))
        sweep.append(merged)
    out["sweep"] = sweep
    return out


def target_check(result: dict) -> list[str]:
    """Issue 4's SQ8 target and issue 22's RaBitQ targets, for the configurations measured."""
    by = {r["config"]: r for r in result["configs"]}
    if "float32" not in by:
        return []
    f32, out = by["float32"], []

    def ratio(config: str, key: str) -> float:
        return by[config][key] / f32[key]

    if "sq8-mmap" in by:
        sq8m = by["sq8-mmap"]
        r = ratio("sq8-mmap", "index_rss_anon_mib")
        whole = (sq8m["status"]["after_warmup"]["RssAnon"]
                 / f32["status"]["after_warmup"]["RssAnon"])
        ok = "met" if r <= TARGET_RATIO else "NOT met"
        out.append(f"sq8-mmap / float32 index RssAnon = {r:.2f} (target <= {TARGET_RATIO}: "
                   f"{ok}); whole-process RssAnon ratio {whole:.2f}")
    for config, target in (("rabitq-mmap", RABITQ_MMAP_RATIO), ("qg-mmap", RABITQ_MMAP_RATIO),
                           ("rows-mmap", RABITQ_MMAP_RATIO), ("rabitq-codes", RABITQ_CODES_RATIO)):
        if config not in by or "index_vm_rss_mib" not in by[config]:
            continue
        anon, vm = ratio(config, "index_rss_anon_mib"), ratio(config, "index_vm_rss_mib")

        met = {x: "met" if x <= target else "NOT met" for x in (anon, vm)}
        line = (f"{config} / float32 (issue 22 target <= {target:.2f}): index RssAnon {anon:.2f} "
                f"({met[anon]}), index VmRSS (file pages touched included) {vm:.2f} ({met[vm]})")
        if config == "rabitq-codes":
            at128 = next((p["recall"] for p in by[config]["sweep"] if p["ef"] == 128), None)
            if at128 is not None:
                line += (f"; recall@{result['params']['k']} at ef=128 {at128:.4f} (target >= "
                         f"{RABITQ_CODES_RECALL}: "
                         f"{'met' if at128 >= RABITQ_CODES_RECALL else 'NOT met'})")
        out.append(line)
    return out


def format_table(result: dict, markdown: bool = False) -> str:
    efs = result["params"]["efs"]
    f32 = next((r for r in result["configs"] if r["config"] == "float32"), None)
    head = ["config", "file MiB", "index RssAnon MiB", "x float32", "index VmRSS MiB",
            "x float32", "process RssAnon", "RssFile", "VmRSS"]
    for ef in efs:
        head += [f"recall@{result['params']['k']} ef={ef}", f"QPS ef={ef}", f"CPU QPS ef={ef}"]
    rows = []
    for r in result["configs"]:
        s = r["status"]["after_warmup"]
        ratio = (f"{r['index_rss_anon_mib'] / f32['index_rss_anon_mib']:.2f}" if f32 else "-")
        vm = r.get("index_vm_rss_mib")  # not in results made before it was measured
        vm_ratio = (f"{vm / f32['index_vm_rss_mib']:.2f}"
                    if vm is not None and f32 and f32.get("index_vm_rss_mib") else "-")
        row = [r["config"], f"{r['file_mib']:.1f}", f"{r['index_rss_anon_mib']:.1f}", ratio,
               "-" if vm is None else f"{vm:.1f}", vm_ratio,
               f"{s['RssAnon']:.1f}", f"{s['RssFile']:.1f}", f"{s['VmRSS']:.1f}"]
        for p in r["sweep"]:
            cpu = p.get("qps_cpu")  # not in results made before it was measured
            row += [f"{p['recall']:.4f}", f"{p['qps']:,.0f}", "-" if cpu is None else f"{cpu:,.0f}"]
        rows.append(row)
    ds, base = result["dataset"], result["baseline"]
    q_mib = result["configs"][0]["queries_mib"] if result["configs"] else 0.0
    title = (f"{ds['name']}: {ds['n_train_used']:,} x {ds['dimension']} {ds['distance']}, "
             f"one fresh process per row, single-thread QPS")
    notes = [f"baseline process (numpy + strata imported): RssAnon {base['RssAnon']:.1f} MiB, "
             f"VmRSS {base['VmRSS']:.1f} MiB; query array {q_mib:.2f} MiB (both excluded from "
             "index RssAnon)"]
    notes += target_check(result)
    from bench_filter import render_table  # not at the top: children import nothing extra

    return render_table(title, head, rows, notes, markdown)


if __name__ == "__main__":
    sys.exit(main())
