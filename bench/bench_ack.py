"""The durable write path's ack (issue 24): what an fsync="always" upsert costs, in CPU time.

    python bench/bench_ack.py go --before main [--rounds 3]   # Go benchmarks, A/B, alternating
    python bench/bench_ack.py python [--label before]         # the installed wheel, C ABI path

`go` builds the collection package's test binary of HEAD and of the `--before` commit (its tree
from `git archive`, with HEAD's go/collection/ackbench_test.go copied in, so both run the same
benchmarks), then runs them round by round, alternating: BenchmarkAckBatch (1,000 x 512-d per
call), BenchmarkAckSingle (1 and 8 writers), each with the builder stopped (the ack path alone)
and running, BenchmarkAckBuild (the builder's own rows/s over 4,000 rows) and BenchmarkFsync
(the disk's floor: a 2 KiB append + fsync, and the alternatives). It writes every round's
figures, their medians and after/before ratios. `--only REGEX` runs the benchmarks whose key
matches (a targeted A/B; the file's label ends in -targeted).

`python` measures Collection.upsert through the C ABI: single rows from 1 and 8 Python threads
and batches of 1,000 from one, fsync="always", 512-d: rows/s, CPU seconds per row
(time.process_time: every thread of the process, Go's included), fsyncs per upsert call (the
collection's own count) and the latency median. Two Python threads can only beat one if the
call releases the GIL while Go waits for the fsync.

The machine is shared: CPU time per row and fsyncs per ack are the figures to compare; wall
rates are recorded with the load average beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import runinfo

REPO = runinfo.REPO_DIR
BENCH = ("BenchmarkAckBatch/build=off|BenchmarkAckBatch/build=on|BenchmarkAckSingle|"
         "BenchmarkAckBuild|BenchmarkFsync")
# Iterations per benchmark (-test.benchtime Nx): BenchmarkAckBatch counts batches of 1,000.
# The build=on batch run passes the tail's bound (8,192 rows), so it ends builder-bound.
BENCHTIME = {"BenchmarkAckBatch/build=off": 40, "BenchmarkAckBatch/build=on": 12,
             "BenchmarkAckSingle": 2000, "BenchmarkAckBuild": 4, "BenchmarkFsync": 1000}
LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$")


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def build(tree: Path, out: Path) -> None:
    subprocess.run(["go", "test", "-c", "-o", str(out), "./collection/"], cwd=tree / "go",
                   check=True)


def run_binary(binary: Path, workdir: Path, only: str | None) -> dict[str, dict[str, float]]:
    """One round: every benchmark (those matching only, if set) once; {name: {unit: value}}."""
    out: dict[str, dict[str, float]] = {}
    for pattern, n in BENCHTIME.items():
        if only and not re.search(only, pattern):
            continue
        proc = subprocess.run(
            [str(binary), "-test.run", "XXX", "-test.bench", "^" + pattern.replace("/", "$/^")
             + ("$" if "/" in pattern else ""), "-test.benchtime", f"{n}x", "-test.count", "1"],
            cwd=workdir, capture_output=True, text=True, timeout=1800, check=True)
        for line in proc.stdout.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            fields = m[3].split()
            metrics = {unit: float(v) for v, unit in zip(fields[::2], fields[1::2], strict=True)}
            out[m[1]] = metrics
    return out


def go_mode(args: argparse.Namespace) -> dict[str, Any]:
    before = subprocess.run(["git", "rev-parse", "--short=7", args.before], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.strip()
    after = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="bench_ack-"))
    try:
        old = tmp / "before"
        old.mkdir()
        archive = subprocess.run(["git", "archive", args.before], cwd=REPO, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        shutil.copy(REPO / "go/collection/ackbench_test.go", old / "go/collection/")
        binaries = {"before": tmp / "before.test", "after": tmp / "after.test"}
        build(old, binaries["before"])
        build(REPO, binaries["after"])
        rounds: list[dict[str, Any]] = []
        for r in range(args.rounds):
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for who in order:
                load0 = loadavg()
                figures = run_binary(binaries[who], REPO / "go/collection", args.only)
                rounds.append({"round": r, "build": who, "load_before": load0,
                               "load_after": loadavg(), "figures": figures})
                print(f"round {r} {who}: {json.dumps(figures)}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    medians: dict[str, dict[str, dict[str, float]]] = {"before": {}, "after": {}}
    for who in medians:
        names = {n for rd in rounds if rd["build"] == who for n in rd["figures"]}
        for name in sorted(names):
            units = {u for rd in rounds if rd["build"] == who for u in rd["figures"].get(name, {})}
            medians[who][name] = {u: statistics.median(
                rd["figures"][name][u] for rd in rounds
                if rd["build"] == who and u in rd["figures"].get(name, {})) for u in sorted(units)}
    ratios = {name: {u: m[u] / medians["before"][name][u]
                     for u in m if medians["before"].get(name, {}).get(u)}
              for name, m in medians["after"].items()}
    return {"mode": "go", "commits": {"before": before, "after": after}, "rounds": rounds,
            "medians": medians, "after_over_before": ratios,
            "command": f"python bench/bench_ack.py go --before {args.before} "
                       f"--rounds {args.rounds}" + (f" --only '{args.only}'" if args.only else ""),
            "benchtime": BENCHTIME}


def python_mode(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    import strata

    dim = 512
    rng = np.random.default_rng(1)
    res: dict[str, Any] = {"mode": "python", "strata_file": strata.__file__, "dim": dim}
    with tempfile.TemporaryDirectory() as tmp:
        col = strata.Collection.create(tmp + "/c", dim=dim, metric="l2")
        try:
            def syncs() -> int:
                return int(col.info()["fsyncs"])

            def single(threads: int, per: int, base: int) -> dict[str, float]:
                rows = rng.standard_normal((threads, per, dim), dtype=np.float32)
                lat: list[list[float]] = [[] for _ in range(threads)]
                start = threading.Barrier(threads + 1)

                def work(w: int) -> None:
                    start.wait()
                    for i in range(per):
                        t0 = time.perf_counter()
                        col.upsert([base + w * per + i], rows[w, i])
                        lat[w].append(time.perf_counter() - t0)

                ts = [threading.Thread(target=work, args=(w,)) for w in range(threads)]
                for t in ts:
                    t.start()
                s0, c0 = syncs(), time.process_time()
                start.wait()
                w0 = time.perf_counter()
                for t in ts:
                    t.join()
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                n = threads * per
                return {"rows_per_s": n / wall, "cpu_us_per_row": cpu / n * 1e6,
                        "fsyncs_per_ack": (syncs() - s0) / n,
                        "p50_ms": statistics.median(x for xs in lat for x in xs) * 1e3}

            batches = rng.standard_normal((args.batches, 1000, dim), dtype=np.float32)
            s0, c0, w0 = syncs(), time.process_time(), time.perf_counter()
            for b in range(args.batches):
                col.upsert(np.arange(b * 1000, (b + 1) * 1000, dtype=np.uint64) + 10**9,
                           batches[b])
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            n = args.batches * 1000
            # Includes the builder's graph work beside the acks (the tail's bound is 8,192 rows).
            res["batch_1000"] = {"rows_per_s": n / wall, "cpu_us_per_row": cpu / n * 1e6,
                                 "fsyncs_per_ack": (syncs() - s0) / args.batches}
            col.checkpoint()  # the builder done: the single-row runs start from an empty tail
            res["single_1thread"] = single(1, args.per, 10**6)
            res["single_8threads"] = single(8, args.per // 2, 2 * 10**6)
            res["single_8_over_1_rows_per_s"] = (res["single_8threads"]["rows_per_s"]
                                                 / res["single_1thread"]["rows_per_s"])
        finally:
            col.close()
    label = f" --label {args.label}" if args.label else ""
    res["command"] = f"python bench/bench_ack.py python --per {args.per} --batches {args.batches}"
    res["command"] += label
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    g = sub.add_parser("go")
    g.add_argument("--before", default="main")
    g.add_argument("--rounds", type=int, default=3)
    g.add_argument("--only", default=None,
                   help="run only the benchmarks of BENCHTIME whose key matches this regex "
                        "(a targeted A/B, e.g. 'AckSingle/build=off|Fsync')")
    p = sub.add_parser("python")
    p.add_argument("--per", type=int, default=1000, help="single-row upserts per thread (1 thread)")
    p.add_argument("--batches", type=int, default=12)
    p.add_argument("--label", default=None)
    args = ap.parse_args(argv)
    load0, began = loadavg(), time.time()
    result = go_mode(args) if args.mode == "go" else python_mode(args)
    result.update({"machine": runinfo.machine(), "git": runinfo.git_info(),
                   "versions": runinfo.versions(), "load_average_start": load0,
                   "load_average_end": loadavg(), "seconds": time.time() - began,
                   "go": subprocess.run(["go", "version"], capture_output=True,
                                        text=True).stdout.strip()})
    label = args.mode + (f"-{args.label}" if getattr(args, "label", None) else "")
    if getattr(args, "only", None):
        label += "-targeted"
    out = runinfo.result_path("ack", label)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GOFLAGS", "")
    sys.exit(main())
