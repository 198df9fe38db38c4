#!/usr/bin/env python3
"""Go micro-benchmarks alternated in one run: each round runs every --bench pattern once,
in an order that rotates every round, and the median of each reported metric is kept.

    bench/go_bench_ab.py --pkg ./go/kernels --label fastscan-832-1024 --rounds 7 \\
        --bench 'FastScan32/avx512/d=832$' --bench 'FastScan32/avx512/d=1024$'

Compare the metrics measured in the thread's CPU time (cpu-ns/op, codes/s) on a shared
machine; ns/op is wall time. Writes bench/results/go-bench/go-bench-<time>-<commit>-<label>.json.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo

LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$")


def run(pkg: str, pattern: str, benchtime: str, tags: str) -> dict[str, dict[str, float]]:
    cmd = ["go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, "-count", "1"]
    if tags:
        cmd += ["-tags", tags]
    out = subprocess.run([*cmd, pkg], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            fields = m.group(3).split()  # value unit value unit ...
            pairs = zip(fields[::2], fields[1::2], strict=True)
            found[m.group(1)] = {unit: float(v) for v, unit in pairs}
    if not found:
        sys.exit(f"{pattern}: no benchmark ran\n{out}")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pkg", required=True)
    ap.add_argument("--bench", action="append", required=True, help="a -bench pattern; repeat")
    ap.add_argument("--label", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--benchtime", default="1s")
    ap.add_argument("--tags", default="")
    args = ap.parse_args()
    samples: dict[str, dict[str, list[float]]] = {}
    loads = []
    for r in range(args.rounds):
        order = args.bench[r % len(args.bench):] + args.bench[:r % len(args.bench)]
        for pattern in order:
            loads.append(os.getloadavg()[0])
            for name, metrics in run(args.pkg, pattern, args.benchtime, args.tags).items():
                for unit, v in metrics.items():
                    samples.setdefault(name, {}).setdefault(unit, []).append(v)
        print(f"round {r + 1}/{args.rounds} load {loads[-1]:.1f}", file=sys.stderr)
    rows = [{"benchmark": name, **{unit: statistics.median(v) for unit, v in metrics.items()},
             "rounds": metrics} for name, metrics in samples.items()]
    for row in rows:
        shown = {k: v for k, v in row.items() if k not in ("benchmark", "rounds")}
        text = " ".join(f"{v:,.4g} {k}" for k, v in shown.items())
        print(row["benchmark"], text, file=sys.stderr)
    out = runinfo.result_path("go-bench", args.label)
    out.write_text(json.dumps({
        "benchmark": "go test -bench via bench/go_bench_ab.py", "label": args.label,
        "pkg": args.pkg, "patterns": args.bench, "benchtime": args.benchtime, "tags": args.tags,
        "rounds": args.rounds, "loadavg": f"{statistics.median(loads):.2f}",
        "loadavg_range": [min(loads), max(loads)], "machine": runinfo.machine(),
        "git": runinfo.git_info(), "rows": rows}, indent=2) + "\n")
    print(out, file=sys.stderr)


if __name__ == "__main__":
    main()
