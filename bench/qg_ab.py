#!/usr/bin/env python3
"""A/B of two builds of go/hnsw's qg search (BenchmarkQGHop), alternated in one run.

Build each side with `go test -c -o <bin> ./go/hnsw/` (the base from the commit
before the change, with rabitq_qg_bench_test.go beside it), then:

    bench/qg_ab.py --base /tmp/base.test --new /tmp/new.test --label qg-move \\
        --rounds 7 --env STRATA_RABITQ_INDEX=/tmp/pypi20k.idx

Each round runs base then new (the order flips every round), each binary
measuring $STRATA_QG_ROUNDS passes over the queries; the medians of the
per-pass CPU ns per query are compared. The answers' hashes must agree
(the change kept the results) or the script fails, unless
--answers-may-differ (a change of the search's results, such as its loop):
then each side's CPU ns and hops per query at --at-recall are interpolated
between the efs that bracket it ($STRATA_QG_EFS must). Writes
bench/results/rabitq-go/rabitq-go-<time>-<commit>-<label>.json.
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo


def run(binary: str, env: dict) -> list[dict]:
    out = subprocess.run([binary, "-test.run", "^$", "-test.bench", "^BenchmarkQGHop$",
                          "-test.benchtime", "1x"], env=env, capture_output=True, text=True,
                         check=True)
    return [json.loads(line[6:]) for line in out.stderr.splitlines() if line.startswith("QGHOP ")]


def at_recall(rows: list[dict], target: float) -> dict | None:
    """CPU ns, hops and ef per query at recall target, linear between the two
    efs that bracket it (rows of one side, by ef); None if none do."""
    rows = sorted(rows, key=lambda r: r["ef"])
    for lo, hi in itertools.pairwise(rows):
        if lo["recall"] <= target <= hi["recall"] and hi["recall"] > lo["recall"]:
            f = (target - lo["recall"]) / (hi["recall"] - lo["recall"])
            return {key: lo[key] + f * (hi[key] - lo[key])
                    for key in ("ef", "cpu_ns_per_query", "hops_per_query", "dist_per_query")}
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--answers-may-differ", action="store_true")
    ap.add_argument("--at-recall", type=float, default=0.95)
    args = ap.parse_args()
    env = dict(os.environ, **dict(e.split("=", 1) for e in args.env))
    cells: dict[tuple[str, int], dict] = {}
    loads = []
    for r in range(args.rounds):
        sides = [("base", args.base), ("new", args.new)]
        for mode, binary in sides if r % 2 == 0 else sides[::-1]:
            loads.append(os.getloadavg()[0])
            for line in run(binary, env):
                cell = cells.setdefault((mode, line["ef"]), {**line, "cpu_ns_per_query_rounds": []})
                if cell["results_hash"] != line["results_hash"]:
                    sys.exit(f"{mode} ef {line['ef']}: answers differ between runs")
                cell["cpu_ns_per_query_rounds"].append(line["cpu_ns_per_query"])
                if "prepare_cpu_ns_per_query" in line:  # BenchmarkQGHop's query preparation alone
                    cell.setdefault("prepare_rounds", []).append(line["prepare_cpu_ns_per_query"])
        print(f"round {r + 1}/{args.rounds} load {loads[-1]:.1f}", file=sys.stderr)
    rows = []
    for (mode, ef), c in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med = statistics.median(c["cpu_ns_per_query_rounds"])
        rows.append({"mode": mode, "ef": ef, "recall": c["recall"], "qps_cpu": 1e9 / med,
                     "cpu_ns_per_query": med,
                     "cpu_ns_per_query_rounds": c["cpu_ns_per_query_rounds"],
                     "dist_per_query": c["dist_per_query"], "hops_per_query": c["hops_per_query"],
                     "results_hash": c["results_hash"],
                     **({"prepare_cpu_ns_per_query": statistics.median(c["prepare_rounds"])}
                        if c.get("prepare_rounds") else {})})
    for ef in sorted({ef for _, ef in cells}):
        base, new = cells[("base", ef)], cells[("new", ef)]
        if base["results_hash"] != new["results_hash"] and not args.answers_may_differ:
            sys.exit(f"ef {ef}: the new build's answers differ from the base's")
        b = statistics.median(base["cpu_ns_per_query_rounds"])
        n = statistics.median(new["cpu_ns_per_query_rounds"])
        print(f"ef {ef}: base {b:,.0f} new {n:,.0f} cpu ns/query, new/base {n / b:.3f}, "
              f"recall {new['recall']:.4f}", file=sys.stderr)
    at = {}
    if args.answers_may_differ:
        for mode in ("base", "new"):
            at[mode] = at_recall([r for r in rows if r["mode"] == mode], args.at_recall)
            print(f"{mode} at recall {args.at_recall}: {at[mode]}", file=sys.stderr)
        if at["base"] and at["new"]:
            print(f"new/base CPU ns per query at recall {args.at_recall}: "
                  f"{at['new']['cpu_ns_per_query'] / at['base']['cpu_ns_per_query']:.3f}",
                  file=sys.stderr)
    first = next(iter(cells.values()))
    out = runinfo.result_path("rabitq-go", args.label)
    out.write_text(json.dumps({
        "benchmark": "go/hnsw BenchmarkQGHop via bench/qg_ab.py", "label": args.label,
        "set": first["set"], "n": first["n"], "queries": first["queries"], "k": first["k"],
        "dim": first["dim"], "rounds": args.rounds, "env": args.env,
        "loadavg": f"{statistics.median(loads):.2f}", "loadavg_range": [min(loads), max(loads)],
        "machine": runinfo.machine(), "git": runinfo.git_info(), "rows": rows,
        **({"at_recall": {"recall": args.at_recall, **at}} if at else {})}, indent=2) + "\n")
    print(out, file=sys.stderr)


if __name__ == "__main__":
    main()
