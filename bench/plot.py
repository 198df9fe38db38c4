"""Recall-vs-QPS curves (one PNG per data set, log QPS axis, one curve per library) and
build-time bars (one PNG over all data sets), from bench_ann.py results.

    python bench/plot.py                       # newest result per data set in bench/results/ann
    python bench/plot.py bench/results/ann/ann-....json --out-dir build/plots   # the default
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from summarize import RESULTS_DIR, load_results

STYLE = {"strata": ("tab:red", "o"), "strata-sq8": ("tab:orange", "D"),
         "hnswlib": ("tab:blue", "s"), "faiss": ("tab:green", "^"),
         "faiss-sq8": ("tab:olive", "v")}


def plot_curves(result: dict, out_dir: Path) -> Path:
    ds = result["dataset"]
    p = result["params"]
    fig, ax = plt.subplots(figsize=(7, 4.8))
    for name, lib in result["libs"].items():
        pts = sorted(lib["sweep"], key=lambda s: s["ef"])
        color, marker = STYLE.get(name, (None, "x"))
        label = name + (" (stand-in)" if lib.get("info", {}).get("standin") else "")
        ax.plot([s["recall"] for s in pts], [s["qps"] for s in pts], marker=marker, color=color,
                label=label, markersize=4)
    ax.set_yscale("log")
    ax.set_xlabel(f"recall@{p['k']}")
    ax.set_ylabel("queries per second (1 thread, one query per call)")
    ax.set_title(f"{ds['name']}: M={p['M']}, efC={p['ef_construction']}, "
                 f"ef {min(p['efs'])}..{max(p['efs'])}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    m = result.get("machine", {})
    commit = (result.get("git", {}).get("commit") or "?")[:10]
    fig.text(0.01, 0.005, f"{m.get('cpu_model')}, {m.get('cores')} cores, commit {commit}",
             fontsize=7, color="gray")
    fig.tight_layout()
    path = out_dir / f"{ds['name']}-recall-qps.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_build(results: list[dict], out_dir: Path) -> Path:
    names = [r["dataset"]["name"] for r in results]
    libs = []
    for r in results:
        libs += [n for n in r["libs"] if n not in libs]
    width = 0.8 / max(1, len(libs))
    fig, ax = plt.subplots(figsize=(max(6, 2.2 * len(names)), 4.2))
    for i, lib in enumerate(libs):
        xs, ys = [], []
        for j, r in enumerate(results):
            if lib in r["libs"]:
                xs.append(j + (i - (len(libs) - 1) / 2) * width)
                ys.append(r["libs"][lib]["build"]["seconds"])
        bars = ax.bar(xs, ys, width, label=lib, color=STYLE.get(lib, (None,))[0])
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    threads = sorted({r["params"]["threads"] for r in results})
    ax.set_xticks(range(len(names)), names, rotation=10, fontsize=8)
    ax.set_ylabel(f"build time, s ({'/'.join(map(str, threads))} threads)")
    ax.set_title("Index build time (M=16, ef_construction=200)", fontsize=10)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    path = out_dir / "build-time.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="*", help="result JSON files (default: newest per data set)")
    ap.add_argument("--out-dir",
                    default=str(Path(__file__).resolve().parent.parent / "build" / "plots"))
    args = ap.parse_args(argv)
    results = load_results(args.results)
    if not results:
        print(f"no results in {RESULTS_DIR}", file=sys.stderr)
        return 1
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for r in results:
        print(plot_curves(r, out_dir))
    print(plot_build(results, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
