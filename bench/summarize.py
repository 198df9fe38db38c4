"""Tables from bench_ann.py results: build, size, QPS at fixed recall, ratios, algorithm check.

    python bench/summarize.py                      # newest result per data set in bench/results/ann
    python bench/summarize.py bench/results/ann/ann-....json --markdown

QPS at recall >= r is read off the single-thread sweep: the points are reduced to their Pareto
frontier (no point kept that another beats in both recall and QPS), and between the two frontier
points that straddle r, log(QPS) is interpolated linearly in recall. When the lowest-recall point
already reaches r its QPS is used (no extrapolation); "n/a" when no ef reached r.

The algorithm check compares strata with hnswlib ef for ef: PASS when the recalls differ by at
most 0.01. Both build an HNSW graph with the same M and ef_construction, so a larger gap points to a
difference in the algorithm rather than in speed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results" / "ann"
RECALL_LEVELS = (0.90, 0.95, 0.99)
CHECK_TOLERANCE = 0.01
STRATA_NAMES = ("strata", "strata-sq8")
REFERENCE = "hnswlib"


def load_results(paths: list[str]) -> list[dict]:
    if paths:
        files = [Path(p) for p in paths]
    else:
        newest: dict[str, tuple[str, Path]] = {}
        for p in sorted(RESULTS_DIR.glob("*.json")):
            try:
                r = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            name = r.get("dataset", {}).get("name")
            if name and (name not in newest or r.get("created", "") >= newest[name][0]):
                newest[name] = (r.get("created", ""), p)
        files = [p for _, p in sorted(newest.values(), key=lambda t: str(t[1]))]
    out = []
    for p in files:
        r = json.loads(Path(p).read_text())
        r["_path"] = str(p)
        out.append(r)
    return out


def frontier(sweep: list[dict]) -> list[tuple[float, float]]:
    """(recall, qps) points not beaten in both, sorted by recall."""
    pts = sorted(((p["recall"], p["qps"]) for p in sweep), key=lambda t: (-t[0], -t[1]))
    out, best_qps = [], -1.0
    for recall, qps in pts:  # descending recall: keep a point only if it is faster
        if qps > best_qps:
            out.append((recall, qps))
            best_qps = qps
    return sorted(out)


def qps_at_recall(sweep: list[dict], target: float) -> float | None:
    pts = frontier(sweep)
    if not pts or pts[-1][0] < target:
        return None
    if pts[0][0] >= target:
        return pts[0][1]
    for (r0, q0), (r1, q1) in itertools.pairwise(pts):
        if r0 < target <= r1:
            if r1 == r0:
                return q1
            t = (target - r0) / (r1 - r0)
            return math.exp(math.log(q0) + t * (math.log(q1) - math.log(q0)))
    return None


def fmt_num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |",
                 "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    fmt = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths, strict=False)))
    return "\n".join([fmt(headers), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def summarize(result: dict, markdown: bool) -> tuple[str, bool]:
    ds = result["dataset"]
    params = result["params"]
    libs = result["libs"]
    out = []
    h = "###" if markdown else "=="
    m = result.get("machine", {})
    out.append(f"{h} {ds['name']}  ({ds['n_train']:,} x {ds['dimension']}, {ds['distance']}, "
               f"{ds['n_queries_used']:,} queries, k={params['k']}, M={params['M']}, "
               f"efC={params['ef_construction']})")
    git = result.get("git", {})
    out.append(f"{m.get('cpu_model')}, {m.get('cores')} cores; commit "
               f"{(git.get('commit') or '?')[:10]}{' (dirty)' if git.get('dirty') else ''}; "
               f"{result.get('created')}; {Path(result.get('_path', '')).name}")
    load = result.get("load_average_start")
    if load and load[0] > 0.5:
        out.append(f"NOTE: 1-minute load average was {load[0]:.2f} when the run started "
                   f"({m.get('cores')} cores): other processes were running; expect noise.")
    standins = [n for n, lib in libs.items() if lib.get("info", {}).get("standin")]
    if standins:
        out.append(f"WARNING: {', '.join(standins)} measured with the hnswlib stand-in, "
                   "not strata.")
    if markdown:
        out.append("")

    headers = (["library", "build s", "index MiB"]
               + [f"QPS@{r:.2f}" for r in RECALL_LEVELS]
               + [f"batch QPS (ef={params['batch_ef']}, {params['threads']} thr)", "max recall"])
    rows = []
    for name, lib in libs.items():
        b = lib["build"]
        rows.append([name, fmt_num(b["seconds"], 2), fmt_num(b["index_mib"], 1)]
                    + [fmt_num(qps_at_recall(lib["sweep"], r)) for r in RECALL_LEVELS]
                    + [fmt_num((lib.get("batch") or {}).get("qps")),
                       fmt_num(max(p["recall"] for p in lib["sweep"]), 4)])
    out.append(table(headers, rows, markdown))

    ok = True
    for mine in [n for n in STRATA_NAMES if n in libs]:
        # Float strata is compared with float peers; strata-sq8 with every peer.
        peers = [n for n in libs if n not in STRATA_NAMES
                 and (mine == "strata-sq8" or not n.endswith("-sq8"))]
        if not peers:
            continue
        out.append("")
        rows = []
        for peer in peers:
            cells = [f"{mine} / {peer}"]
            for r in RECALL_LEVELS:
                a = qps_at_recall(libs[mine]["sweep"], r)
                b = qps_at_recall(libs[peer]["sweep"], r)
                cells.append(f"{a / b:.2f}x" if a and b else "n/a")
            a = (libs[mine].get("batch") or {}).get("qps")
            b = (libs[peer].get("batch") or {}).get("qps")
            cells.append(f"{a / b:.2f}x" if a and b else "n/a")
            bs, bp = libs[mine]["build"]["seconds"], libs[peer]["build"]["seconds"]
            cells.append(f"{bs / bp:.2f}x")
            rows.append(cells)
        out.append(table(["ratio"] + [f"QPS@{r:.2f}" for r in RECALL_LEVELS]
                         + ["batch QPS", "build time"], rows, markdown))

    if "strata" in libs and REFERENCE in libs:
        ref = {p["ef"]: p["recall"] for p in libs[REFERENCE]["sweep"]}
        rows = []
        for p in libs["strata"]["sweep"]:
            if p["ef"] not in ref:
                continue
            delta = p["recall"] - ref[p["ef"]]
            passed = abs(delta) <= CHECK_TOLERANCE
            ok &= passed
            rows.append([str(p["ef"]), f"{p['recall']:.4f}", f"{ref[p['ef']]:.4f}",
                         f"{delta:+.4f}", "PASS" if passed else "FAIL"])
        out.append("")
        out.append(f"Algorithm check: strata recall within {CHECK_TOLERANCE} of {REFERENCE}'s "
                   f"at equal ef: {'PASS' if ok else 'FAIL'}")
        if markdown:
            out.append("")
        out.append(table(["ef", "strata recall", f"{REFERENCE} recall", "delta", "check"], rows,
                         markdown))
    ndis = {n: [(p["ef"], p["stats"]) for p in lib["sweep"] if p.get("stats")]
            for n, lib in libs.items()}
    ndis = {n: v for n, v in ndis.items() if v}
    if ndis:
        out.append("")
        out.append("Distance computations per query (where the library reports them): " + "; ".join(
            f"{n}: " + ", ".join(f"ef={ef} {s.get('ndis', float('nan')):.0f}" for ef, s in v)
            for n, v in ndis.items()))
    return "\n".join(out), ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="*", help="result JSON files (default: newest per data set)")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when an algorithm check fails")
    args = ap.parse_args(argv)
    results = load_results(args.results)
    if not results:
        print(f"no results in {RESULTS_DIR}", file=sys.stderr)
        return 1
    all_ok = True
    for r in results:
        text, ok = summarize(r, args.markdown)
        all_ok &= ok
        print(text)
        print()
    return 0 if all_ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
