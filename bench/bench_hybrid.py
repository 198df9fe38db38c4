"""Hybrid dense + sparse queries through the engine: Collection.QueryFused at 29,000 pypi-demo rows.

The collection (built by the Go benchmark, go/collection BenchmarkHybridReport): the first 29,000
pypi-demo rows, each with its 512-d embedding (dense field "", cosine) and the BM25 document
weights of its summary (sparse field "bm25", IDF modifier; as bench_sparse.py's pypi29k).
Queries: the last 1,000 rows (held out), their embedding and 1.0 per distinct summary term.

One query per call on one thread, k=10, the four alternating query by query, each first for a
quarter of the queries (the first search of a query meets its graph region cold):
  dense        the dense side alone (Collection.Search, limit 10, default ef)
  sparse       the sparse side alone (limit 10)
  hybrid_rrf   QueryFused of both sides (limit 10 each), reciprocal rank fusion (k=2)
  hybrid_dbsf  the same, distribution-based score fusion
Each round is one run of the Go benchmark (a fresh collection); p50s are the median over rounds.

  python bench/bench_hybrid.py [--rounds 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runinfo

KINDS = ("dense", "sparse", "hybrid_rrf", "hybrid_dbsf")


def run_go(out: Path) -> dict:
    env = dict(os.environ, STRATA_HYBRID_OUT=str(out))
    subprocess.run(
        [
            "go",
            "test",
            "./go/collection",
            "-run",
            "^$",
            "-bench",
            "HybridReport",
            "-benchtime",
            "1x",
            "-timeout",
            "60m",
        ],
        cwd=runinfo.REPO_DIR,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return json.loads((out / "report.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--out",
        default=None,
        help="result JSON (default bench/results/hybrid/hybrid-<time>-<commit>.json)",
    )
    args = ap.parse_args()
    result: dict = {
        "machine": runinfo.machine(),
        "git": runinfo.git_info(),
        "load_before": os.getloadavg(),
        "rounds": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            go = run_go(Path(tmp) / f"round{r}")
            result["rounds"].append(go)
            print(
                f"round {r}: " + ", ".join(f"{k} p50 {go[k]['p50_us']:.0f} us" for k in KINDS),
                flush=True,
            )
    result["load_after"] = os.getloadavg()
    first = result["rounds"][0]
    result["goversion"] = first["goversion"]
    result["summary"] = {
        "docs": first["docs"],
        "dim": first["dim"],
        "queries": first["queries"],
        "k": first["k"],
        "sub_query_limit": first["sub_query_limit"],
        **{
            f"{k}_p50_us": statistics.median(x[k]["p50_us"] for x in result["rounds"])
            for k in KINDS
        },
        **{
            f"{k}_p99_us": statistics.median(x[k]["p99_us"] for x in result["rounds"])
            for k in KINDS
        },
    }
    path = Path(args.out) if args.out else runinfo.result_path("hybrid")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
