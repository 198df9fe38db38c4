"""Runs go/collection's TestSegmentBench (or its overwrite phase alone) and files the result.

The Go test does the measuring (public API only: ingest, checkpoints, reopen, queries against
one hnsw.Index, the 30 % overwrite merge with its RSS sampler); this script builds the test
binary, runs it at each size and writes one file under bench/results/segments/ with the
machine, the commit and the load average, in the layout report.py's scale table reads::

    python3 bench/segbench.py --sizes 100k 1M            # the whole bench at each size
    python3 bench/segbench.py --overwrite --sizes 100k   # TestSegmentBenchOverwrite alone
    python3 bench/segbench.py --wrap 1M=out.json --commit 8bcba67 --note "..."  # a finished run

Sizes run one after another (two at once share the two cores and both slow down).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import runinfo

POLICY = ("tiered: merges deferred while writes come (at most 12 segments), fan-in 10; idle, "
          "segments of similar sizes (each at most twice the others together); a merge of "
          "several segments holds at most half the field's live keys; each merge checkpointed "
          "when it lands")
DATA = ("synthetic clustered: 100 Gaussian blobs (synth.Blobs, spread 0.25), 128-d, L2, fsync "
        "always, checkpoint every 10 % of n")


def size_of(label: str) -> int:
    scale = {"k": 1_000, "M": 1_000_000}[label[-1]]
    return int(float(label[:-1]) * scale)


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def run(sizes: list[str], overwrite: bool) -> dict[str, dict]:
    test = "TestSegmentBenchOverwrite" if overwrite else "TestSegmentBench"
    env_out = "STRATA_SEGBENCH_OVERWRITE" if overwrite else "STRATA_SEGBENCH"
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "collection.test"
        subprocess.run(["go", "test", "-c", "-o", str(binary), "./go/collection/"],
                       cwd=runinfo.REPO_DIR, check=True)
        for size in sizes:
            out = Path(tmp) / f"{size}.json"
            env = dict(os.environ, **{env_out: str(out), "STRATA_SEGBENCH_N": str(size_of(size))})
            subprocess.run([str(binary), "-test.run", f"^{test}$", "-test.timeout", "0"],
                           cwd=tmp, env=env, check=True)
            runs[size] = json.loads(out.read_text())
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="*", default=["100k"])
    ap.add_argument("--overwrite", action="store_true", help="the 30 %% overwrite phase alone")
    ap.add_argument("--wrap", nargs="*", default=[], metavar="SIZE=FILE",
                    help="file the Go test's output of a run made by hand instead of running")
    ap.add_argument("--commit", help="the commit a wrapped run was built from (default HEAD)")
    ap.add_argument("--label")
    ap.add_argument("--note", default="")
    args = ap.parse_args(argv)
    before = loadavg()
    if args.wrap:
        runs = {}
        for item in args.wrap:
            size, _, path = item.partition("=")
            runs[size] = json.loads(Path(path).read_text())
    else:
        runs = run(args.sizes, args.overwrite)
    commit = args.commit or (runinfo.git_info().get("commit") or "nogit")[:7]
    result = {
        "what": "issue 24 (merges that do not blow memory, the scale table): go/collection "
                + ("TestSegmentBenchOverwrite" if args.overwrite else "TestSegmentBench")
                + ", public API only",
        "command": "python3 bench/segbench.py "
                   + " ".join(argv if argv is not None else sys.argv[1:]),
        "sizes": list(runs), "merge_policy": POLICY, "data": DATA, "commit": commit,
        "runs": runs, "machine": runinfo.machine(),
        "load_average_when_filed": before, "note": args.note,
    }
    label = args.label or "-".join(runs)
    path = runinfo.result_path("segments", label)
    if args.commit:  # a wrapped run names the commit it ran, not HEAD
        head = (runinfo.git_info().get("commit") or "nogit")[:7]
        path = path.with_name(path.name.replace(f"-{head}-", f"-{commit}-"))
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
