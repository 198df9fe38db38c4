"""BenchmarkDoor (go/server/qdrant) of this tree against another commit, alternating rounds.

    python bench/ab_door.py --base main [--rounds 4 --bench 'Door/(query|upsert-100)/' \\
        --benchtime 300x --label L]

Exports --base with `git archive` into a scratch directory (no worktree, nothing in .git
changes), builds both test binaries (`go test -c ./go/server/qdrant`), then per round runs the
base binary and this tree's in turn (the first of the two alternating each round) with
-test.bench, -test.benchmem and -test.benchtime. The base runs with this tree's
door_bench_test.go, so that both report cpu-ns/op (the process's user+system CPU per operation,
steadier than ns/op on a loaded machine) for the same operations.

Results: bench/results/qdrant-door/qdrant-door-<UTC>-<commit>[-<label>].json, every round's
figures and, per operation, the medians over rounds of cpu-ns/op, allocs/op and B/op for both
builds and the median of the per-round ratios new / base of cpu-ns/op.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo

LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$")
PKG = "./go/server/qdrant"
BENCH_FILE = "go/server/qdrant/door_bench_test.go"


def build(src: Path, out: Path) -> None:
    subprocess.run(["go", "test", "-c", "-o", str(out), PKG], cwd=src, check=True)


def run(binary: Path, pkg_dir: Path, bench: str, benchtime: str) -> dict[str, dict]:
    out = subprocess.run([str(binary), "-test.run", "^$", "-test.bench", bench,
                          "-test.benchmem", "-test.benchtime", benchtime],
                         cwd=pkg_dir, check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        fields = m.group(2).split()
        got[m.group(1)] = {unit: float(v) for v, unit in zip(fields[::2], fields[1::2],
                                                             strict=True)}
    if not got:
        raise RuntimeError(f"{binary}: no benchmark lines in its output:\n{out[-2000:]}")
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="commit to compare against (e.g. main)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--bench", default="Door/(query|upsert-100)/")
    ap.add_argument("--benchtime", default="300x")
    ap.add_argument("--label")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    repo = runinfo.REPO_DIR
    base_commit = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=repo,
                                 check=True, capture_output=True, text=True).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="strata-abdoor-"))
    loads = []
    try:
        src = scratch / "base"
        src.mkdir()
        archive = subprocess.run(["git", "archive", base_commit], cwd=repo, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        shutil.copy(repo / BENCH_FILE, src / BENCH_FILE)
        bins = {"base": scratch / "base.test", "new": scratch / "new.test"}
        build(src, bins["base"])
        build(repo, bins["new"])
        pkg_dir = repo / PKG
        rounds = []
        for r in range(args.rounds):
            order = ["base", "new"] if r % 2 == 0 else ["new", "base"]
            got = {}
            for b in order:
                loads.append(os.getloadavg()[0])
                got[b] = run(bins[b], pkg_dir, args.bench, args.benchtime)
            rounds.append(got)
            for op in sorted(got["new"]):
                nb, bb = got["new"][op], got["base"].get(op, {})
                print(f"round {r} {op:24} cpu-ns/op base {bb.get('cpu-ns/op', 0):10.0f} "
                      f"new {nb.get('cpu-ns/op', 0):10.0f}  allocs base "
                      f"{bb.get('allocs/op', 0):6.0f} new {nb.get('allocs/op', 0):6.0f}",
                      flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary = []
    for op in sorted(rounds[0]["new"]):
        def med(build: str, unit: str, op=op) -> float | None:
            vals = [r[build][op][unit] for r in rounds if unit in r[build].get(op, {})]
            return statistics.median(vals) if vals else None

        ratios = [r["new"][op]["cpu-ns/op"] / r["base"][op]["cpu-ns/op"] for r in rounds
                  if r["base"].get(op, {}).get("cpu-ns/op")]
        summary.append({"op": op, "rounds": len(rounds),
                        **{f"{b}_{k}": med(b, unit) for b in ("base", "new")
                           for k, unit in (("cpu_ns_per_op", "cpu-ns/op"),
                                           ("allocs_per_op", "allocs/op"),
                                           ("bytes_per_op", "B/op"))},
                        "cpu_new_to_base": statistics.median(ratios) if ratios else None})
    result = {"benchmark": "qdrant-door", "machine": runinfo.machine(), "git": runinfo.git_info(),
              "base": {"ref": args.base, "commit": base_commit},
              "command": " ".join(sys.argv), "note": args.note,
              "loadavg_per_run": loads, "summary": summary, "rounds": rounds}
    path = runinfo.result_path("qdrant-door", args.label)
    path.write_text(json.dumps(result, indent=2) + "\n")
    for s in summary:
        print(f"{s['op']:24} cpu-ns/op {s['base_cpu_ns_per_op'] or 0:10.0f} -> "
              f"{s['new_cpu_ns_per_op'] or 0:10.0f} (x{s['cpu_new_to_base'] or 0:.2f})  allocs "
              f"{s['base_allocs_per_op'] or 0:.0f} -> {s['new_allocs_per_op'] or 0:.0f}  B/op "
              f"{s['base_bytes_per_op'] or 0:.0f} -> {s['new_bytes_per_op'] or 0:.0f}")
    print(path)


if __name__ == "__main__":
    main()
