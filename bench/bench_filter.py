"""Filtered search: recall@k and single-thread QPS of strata, hnswlib and FAISS under allow lists.

For every selectivity (share of the train vectors a filter allows), every kind of allow list and
every ef, each library answers the same queries one per call on one thread, with the filter passed
in that call:

  random      allowed ids drawn uniformly (one fixed-seed permutation; smaller lists are prefixes
              of larger ones)
  correlated  the ids nearest to one centre (a train vector picked with a fixed seed), i.e. one
              region of the space: most queries come from elsewhere, so their filtered neighbours
              are far from their unfiltered ones (the case where graph traversal loses recall)

Every call starts from the allow list as a NumPy int64 array and pays for turning it into what the
library needs, inside the timed loop:
  strata   index.search(q, k, ef=ef, num_threads=1, filter_ids=allowed)  (bitset built in Go)
  hnswlib  a NumPy bool mask over the labels, then knn_query(q, k, filter=lambda label: mask[label])
           (a Python callable per visited node; the mask was measured faster overall than building
           a set per call, whose construction alone costs milliseconds at 50 %)
  faiss    IndexHNSWFlat.search(q, k, params=SearchParametersHNSW(sel=IDSelectorBatch(allowed),
           efSearch=ef)); rows it cannot fill come back as -1 and count as misses
The filter construction alone (outside any search) is timed separately and reported as
filter_build_us, so its share of a call can be read off.

Ground truth is exact: brute force over the allowed rows only (datasets.exact_knn, float64, blocked
matmul). Recall is id-based recall@k; recall_ties also accepts ids tied with the k-th true distance;
`violations` counts returned ids outside the allow list (must be 0).

Libraries run in rotated order per configuration. Each runs the first --queries queries, stopping
early after --budget seconds (never before --min-queries), so slow peers at low selectivity
(hnswlib's callable) keep the run bounded; the query count used is recorded beside each number.

    python bench/bench_filter.py --dataset pypi-use512-angular
    python bench/bench_filter.py --dataset glove-100-angular --libs strata,faiss
    python bench/bench_filter.py --dataset random-clustered-20k-64-angular --quick
    python bench/bench_filter.py --summarize bench/results/filter/<file>.json --markdown
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import runinfo
from adapters import ADAPTERS

SELECTIVITIES = [0.5, 0.1, 0.05, 0.02, 0.01, 0.001]
EFS = [64, 128]
KINDS = ["random", "correlated"]
LIBS = ["strata", "hnswlib", "faiss"]
RECALL_TARGET = 0.99
ALLOW_SEED = 5
SCHEMA = 1


# ----------------------------------------------------------------------------- allow lists


def allow_lists(train: np.ndarray, distance: str, selectivities: list[float],
                seed: int = ALLOW_SEED) -> tuple[dict[tuple[str, float], np.ndarray], dict]:
    """{(kind, selectivity): sorted int64 row ids}, and how the lists were made.

    Each list has max(1, round(selectivity * n)) ids.
    """
    n = train.shape[0]
    rng = np.random.default_rng(seed)
    order_random = rng.permutation(n)
    centre_row = int(rng.integers(n))
    centre = train[centre_row].astype(np.float64)
    x = train.astype(np.float64)
    if distance == "angular":
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        dist = 1.0 - x @ (centre / np.linalg.norm(centre))
    else:
        dist = np.einsum("ij,ij->i", x, x) - 2.0 * (x @ centre)
    order_near = np.argsort(dist, kind="stable")
    out = {}
    for s in selectivities:
        count = max(1, round(s * n))
        out[("random", s)] = np.sort(order_random[:count]).astype(np.int64)
        out[("correlated", s)] = np.sort(order_near[:count]).astype(np.int64)
    return out, {"seed": seed, "correlated_centre_row": centre_row,
                 "random": "prefixes of one permutation of the rows",
                 "correlated": "the rows nearest to train[correlated_centre_row]"}


def filtered_truth(train: np.ndarray, queries: np.ndarray, allowed: np.ndarray, distance: str,
                   k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k over the allowed rows only: (train row ids, distances), shape (nq, min(k, m))."""
    sub_ids, sub_dist = datasets.exact_knn(train[allowed], queries, distance, k=k,
                                           progress=False)
    return allowed[sub_ids], sub_dist


def recall(found: np.ndarray, truth: np.ndarray, k: int) -> float:
    """Mean share of the true top-k ids returned (-1 rows are misses; k capped at the truth)."""
    kk = min(k, truth.shape[1])
    hits = sum(np.intersect1d(f[f >= 0], t[:kk]).size for f, t in zip(found, truth, strict=True))
    return hits / (len(found) * kk)


def recall_ties(found: np.ndarray, truth_dist: np.ndarray, train: np.ndarray,
                queries: np.ndarray, allowed_mask: np.ndarray, distance: str, k: int) -> float:
    """Like recall(), but an allowed id tied with the k-th true distance also counts."""
    kk = min(k, truth_dist.shape[1])
    good = 0
    for row, ids in enumerate(found):
        ids = ids[:kk]
        ids = ids[(ids >= 0) & allowed_mask[np.clip(ids, 0, None)]]
        if ids.size == 0:
            continue
        x = train[ids].astype(np.float64)
        q = queries[row].astype(np.float64)
        if distance == "euclidean":
            d = np.linalg.norm(x - q, axis=1)
        else:
            d = 1.0 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        limit = truth_dist[row, kk - 1]
        good += int(np.sum(d <= limit + 1e-6 * max(abs(limit), 1e-12)))
    return good / (len(found) * kk)


# ----------------------------------------------------------------------------- libraries


class FilteredSearcher:
    """One library's filtered single-query search; build() reuses bench_ann's adapters."""

    name = "?"

    def __init__(self, distance: str, dim: int, n: int, M: int, ef_construction: int,
                 seed: int) -> None:
        self.adapter = ADAPTERS[self.name](distance, dim, M=M, ef_construction=ef_construction,
                                           seed=seed)
        self.n = n

    def build(self, train: np.ndarray, threads: int) -> None:
        self.adapter.build(train, threads)

    def prepare_queries(self, queries: np.ndarray) -> list[np.ndarray]:
        """(1, dim) rows made before timing, so slicing is not charged to any library."""
        q = self.adapter.prepare_queries(queries)
        return [q[i:i + 1] for i in range(q.shape[0])]

    def set_ef(self, ef: int) -> None:
        self.adapter.set_ef(ef)

    def make_filter(self, allowed: np.ndarray) -> Any:
        """The library's filter object built from the allow list (timed on its own)."""
        return allowed

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
        """Ids of the k nearest allowed rows (-1 padded); allowed=None searches unfiltered."""
        raise NotImplementedError

    def info(self) -> dict:
        return self.adapter.info()

    def close(self) -> None:
        self.adapter.close()


class StrataFiltered(FilteredSearcher):
    name = "strata"

    def build(self, train: np.ndarray, threads: int) -> None:
        super().build(train, threads)
        if self.adapter.row_of_id is not None:
            raise RuntimeError("strata assigned ids other than the row numbers 0..n-1")
        self.index = self.adapter.index

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
        if allowed is None:
            return self.adapter.query_one(q, k)
        ids, _ = self.index.search(q, k=k, ef=self.adapter.ef, num_threads=1, filter_ids=allowed)
        return ids[0]

    def plan_stats(self, rows: list[np.ndarray], k: int, allowed: np.ndarray | None) -> dict:
        """Untimed: which plan strata chose and how many distances it computed per query."""
        plans: Counter[str] = Counter()
        ndis = 0
        allowed_seen = set()
        for q in rows:
            _, _, stats = self.index.search(q, k=k, ef=self.adapter.ef, num_threads=1,
                                            filter_ids=allowed, return_stats=True)
            plans[str(stats.get("plan"))] += 1
            ndis += int(stats.get("ndis", 0))
            allowed_seen.add(stats.get("allowed"))
        return {"plans": dict(plans), "ndis_per_query": ndis / max(1, len(rows)),
                "allowed_reported": sorted(a for a in allowed_seen if a is not None)}


class HnswlibFiltered(FilteredSearcher):
    name = "hnswlib"

    def make_filter(self, allowed: np.ndarray) -> Callable[[int], bool]:
        mask = np.zeros(self.n, dtype=bool)
        mask[allowed] = True
        return lambda label: mask[label]

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
        if allowed is None:
            return self.adapter.query_one(q, k)
        mask = np.zeros(self.n, dtype=bool)
        mask[allowed] = True
        try:
            labels, _ = self.adapter.index.knn_query(q, k=k, num_threads=1,
                                                     filter=lambda label: mask[label])
        except RuntimeError:
            # hnswlib raises when it finds fewer than k matches ("Cannot return the results in a
            # contiguous 2D array"): the caller gets nothing, counted as misses and as an error.
            self.errors += 1
            return np.full(k, -1, dtype=np.int64)
        return labels[0]

    errors = 0


class FaissFiltered(FilteredSearcher):
    name = "faiss"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import faiss

        self.faiss = faiss

    def make_filter(self, allowed: np.ndarray) -> Any:
        sel = self.faiss.IDSelectorBatch(allowed)
        return sel, self.faiss.SearchParametersHNSW(sel=sel, efSearch=self.adapter.ef)

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None) -> np.ndarray:
        if allowed is None:
            return self.adapter.query_one(q, k)
        sel = self.faiss.IDSelectorBatch(allowed)
        params = self.faiss.SearchParametersHNSW(sel=sel, efSearch=self.adapter.ef)
        _, ids = self.adapter.index.search(q, k, params=params)
        return ids[0]


SEARCHERS = {s.name: s for s in (StrataFiltered, HnswlibFiltered, FaissFiltered)}


# ----------------------------------------------------------------------------- measuring


def timed_queries(
    searcher: FilteredSearcher, rows: list[np.ndarray], k: int,
    allowed: np.ndarray | None, budget_s: float, min_queries: int,
) -> tuple[np.ndarray, float]:
    """Runs queries in order until all are done or budget_s passed (after min_queries)."""
    out = np.full((len(rows), k), -1, dtype=np.int64)
    search = searcher.search
    clock = time.perf_counter
    t0 = clock()
    done = 0
    for i, q in enumerate(rows):
        ids = search(q, k, allowed)
        out[i, :len(ids)] = ids
        done = i + 1
        if done >= min_queries and clock() - t0 > budget_s:
            break
    return out[:done], clock() - t0


def filter_build_us(searcher: FilteredSearcher, allowed: np.ndarray | None,
                    reps: int = 5) -> float | None:
    if allowed is None or isinstance(searcher, StrataFiltered):
        return None  # built inside the Go call; part of strata's search time
    t0 = time.perf_counter()
    for _ in range(reps):
        searcher.make_filter(allowed)
    return (time.perf_counter() - t0) / reps * 1e6


def rotated(items: list, shift: int) -> list:
    shift %= len(items)
    return items[shift:] + items[:shift]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", help="name in bench/data (see datasets.py --list) or .hdf5 path")
    ap.add_argument("--libs", default=",".join(LIBS), help=f"comma-separated, from {LIBS}")
    ap.add_argument("--quick", action="store_true",
                    help="first 20,000 train vectors, 200 queries, 3 s budget")
    ap.add_argument("--train-limit", type=int, help="index only the first N train vectors")
    ap.add_argument("--queries", type=int, default=500, help="queries per configuration (max)")
    ap.add_argument("--budget", type=float, default=8.0,
                    help="seconds per library and configuration before stopping early")
    ap.add_argument("--min-queries", type=int, default=50)
    ap.add_argument("--selectivities", default=",".join(str(s) for s in SELECTIVITIES))
    ap.add_argument("--efs", default=",".join(str(e) for e in EFS))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("-M", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=200)
    ap.add_argument("--threads", type=int, default=runinfo.cpu_count(), help="build threads")
    ap.add_argument("--seed", type=int, default=100, help="graph seed")
    ap.add_argument("--allow-seed", type=int, default=ALLOW_SEED)
    ap.add_argument("--out",
                    help="result JSON (default: runinfo.result_path('filter', dataset))")
    ap.add_argument("--note", help="free text stored in the result (e.g. how strata was built)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--summarize", nargs="+", metavar="JSON",
                    help="only print the table(s) of existing result files")
    args = ap.parse_args(argv)

    if args.summarize:
        for p in args.summarize:
            print(format_table(json.loads(Path(p).read_text()), markdown=args.markdown))
        return 0
    if not args.dataset:
        ap.error("--dataset is required")
    libs = [s.strip() for s in args.libs.split(",") if s.strip()]
    unknown = [lib for lib in libs if lib not in SEARCHERS]
    if unknown:
        ap.error(f"unknown libs {unknown}; choose from {LIBS}")
    selectivities = [float(s) for s in args.selectivities.split(",")]
    efs = [int(e) for e in args.efs.split(",")]
    kinds = [s.strip() for s in args.kinds.split(",") if s.strip()]
    if set(kinds) - set(KINDS):
        ap.error(f"kinds are {KINDS}")
    train_limit = args.train_limit or (20_000 if args.quick else None)
    nq_max = 200 if args.quick else args.queries
    budget = 3.0 if args.quick and args.budget == ap.get_default("budget") else args.budget
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    try:
        ds = datasets.load(args.dataset)
    except datasets.MissingSourceError as e:
        print(f"{args.dataset}: source missing:\n  {e}", file=sys.stderr)
        return 2
    name = ds.name
    train = ds.train
    if train_limit and train_limit < train.shape[0]:
        train = np.ascontiguousarray(train[:train_limit])
        name = f"{name}-first{train_limit}"
    queries = np.ascontiguousarray(ds.test[:nq_max])
    n, nq = train.shape[0], queries.shape[0]
    if os.getloadavg()[0] > 0.5:
        log(f"warning: load average {os.getloadavg()[0]:.2f} before start (recorded)")
    log(f"{name}: {n} x {ds.dim} {ds.distance}, {nq} queries, libs {libs}, "
        f"selectivities {selectivities}, kinds {kinds}, ef {efs}, budget {budget} s")

    lists, lists_info = allow_lists(train, ds.distance, selectivities, args.allow_seed)
    lists = {key: ids for key, ids in lists.items() if key[0] in kinds}
    # The unfiltered search at the same ef, as the reference each filtered row is read against.
    lists[("none", 1.0)] = np.arange(n, dtype=np.int64)
    truth: dict[tuple[str, float], tuple[np.ndarray, np.ndarray]] = {}
    t0 = time.perf_counter()
    for key in lists:
        truth[key] = filtered_truth(train, queries, lists[key], ds.distance, args.k)
    log(f"  filtered ground truth: {time.perf_counter() - t0:.1f} s")

    result: dict[str, Any] = {
        "schema": SCHEMA,
        "benchmark": "filter",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "dataset": {**ds.describe(), "name": name, "n_train_used": n, "n_queries_max": nq},
        "params": {"k": args.k, "M": args.M, "ef_construction": args.ef_construction,
                   "efs": efs, "selectivities": selectivities, "kinds": kinds,
                   "queries_max": nq, "budget_s": budget, "min_queries": args.min_queries,
                   "build_threads": args.threads, "search_threads": 1, "seed": args.seed,
                   "quick": args.quick, "allow_lists": lists_info,
                   "filter_per_call": {
                       "strata": "search(filter_ids=int64 array)",
                       "hnswlib": "bool mask from the array + lambda label: mask[label]",
                       "faiss": "SearchParametersHNSW(sel=IDSelectorBatch(array), efSearch=ef)"}},
        "machine": runinfo.machine(),
        "load_average_start": list(os.getloadavg()),
        "git": runinfo.git_info(),
        "note": args.note,
        "versions": runinfo.versions(),
        "libs": {},
        "configs": [],
    }

    searchers: dict[str, FilteredSearcher] = {}
    rows: dict[str, list[np.ndarray]] = {}
    for lib in libs:
        gc.collect()
        try:
            s = SEARCHERS[lib](ds.distance, ds.dim, n, M=args.M,
                               ef_construction=args.ef_construction, seed=args.seed)
        except ImportError as e:
            log(f"  {lib}: cannot import ({e})")
            return 2
        t0 = time.perf_counter()
        s.build(train, args.threads)
        build_s = time.perf_counter() - t0
        searchers[lib], rows[lib] = s, s.prepare_queries(queries)
        result["libs"][lib] = {"info": s.info(), "build_seconds": build_s}
        log(f"  build {lib}: {build_s:.1f} s")

    configs = [("none", 1.0, ef) for ef in efs]
    configs += [(kind, sel, ef) for sel in selectivities for kind in kinds for ef in efs]
    for c, (kind, sel, ef) in enumerate(configs):
        allowed_mask = np.zeros(n, dtype=bool)
        allowed_mask[lists[(kind, sel)]] = True
        allowed = None if kind == "none" else lists[(kind, sel)]
        t_ids, t_dist = truth[(kind, sel)]
        entry: dict[str, Any] = {"kind": kind, "selectivity": sel, "ef": ef,
                                 "allowed": int(allowed_mask.sum()), "libs": {}}
        for lib in rotated(libs, c):
            s = searchers[lib]
            s.set_ef(ef)
            if isinstance(s, HnswlibFiltered):
                s.errors = 0
            for q in rows[lib][:3]:  # warm-up, untimed
                s.search(q, args.k, allowed)
            errors0 = getattr(s, "errors", 0)
            found, seconds = timed_queries(s, rows[lib], args.k, allowed, budget,
                                           args.min_queries)
            done = found.shape[0]
            valid = found[found >= 0]
            point = {
                "queries": done,
                "qps": done / seconds,
                "mean_latency_us": seconds / done * 1e6,
                "recall": recall(found, t_ids[:done], args.k),
                "recall_ties": recall_ties(found, t_dist[:done], train, queries[:done],
                                           allowed_mask, ds.distance, args.k),
                "violations": int(np.sum(~allowed_mask[valid])) + int(np.sum(found >= n)),
                "short_rows": int(np.sum((found < 0).any(axis=1))),
                "filter_build_us": filter_build_us(s, allowed),
            }
            if isinstance(s, HnswlibFiltered):
                point["errors"] = s.errors - errors0
            if isinstance(s, StrataFiltered):
                point.update(s.plan_stats(rows[lib][:min(done, 100)], args.k, allowed))
            entry["libs"][lib] = point
        result["configs"].append(entry)
        parts = [f"  {kind:10s} sel={sel:<6g} ef={ef:<4d}"]
        for lib in libs:
            p = entry["libs"][lib]
            plan = f" [{_plan_text(p)}]" if lib == "strata" else ""
            parts.append(f"{lib} R={p['recall']:.4f} {p['qps']:7.0f} qps "
                         f"(n={p['queries']}){plan}")
        log("  ".join(parts))

    for s in searchers.values():
        s.close()
    result["load_average_end"] = list(os.getloadavg())
    result["peak_rss_mib"] = runinfo.peak_rss_bytes() / 2**20
    out = Path(args.out) if args.out else runinfo.result_path("filter", name)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=_json_default) + "\n")
    log(f"wrote {out}")
    print(format_table(result, markdown=args.markdown))
    return 0


# ----------------------------------------------------------------------------- reporting


def _plan_text(point: dict) -> str:
    plans = point.get("plans") or {}
    return "/".join(f"{p}" if len(plans) == 1 else f"{p}:{c}" for p, c in sorted(plans.items()))


def target_check(result: dict) -> list[str]:
    """Configurations where strata misses recall >= RECALL_TARGET or returns a disallowed id."""
    bad = []
    for e in result["configs"]:
        p = e["libs"].get("strata")
        if p is None or e["kind"] == "none":
            continue
        where = f"{e['kind']} sel={e['selectivity']:g} ef={e['ef']}"
        if p["recall"] < RECALL_TARGET:
            bad.append(f"{where}: recall {p['recall']:.4f} < {RECALL_TARGET}")
        if p["violations"]:
            bad.append(f"{where}: {p['violations']} ids outside the allow list")
    return bad


def format_table(result: dict, markdown: bool = False) -> str:
    libs = list(result["libs"])
    head = ["selectivity", "kind", "ef"]
    for lib in libs:
        head += [f"{lib} recall", f"{lib} QPS"]
        head += ["strata plan", "strata dist/query"] if lib == "strata" else []
    rows = []
    for e in result["configs"]:
        sel = "no filter" if e["kind"] == "none" else f"{e['selectivity'] * 100:g}%"
        row = [sel, "-" if e["kind"] == "none" else e["kind"], str(e["ef"])]
        for lib in libs:
            p = e["libs"][lib]
            qps = f"{p['qps']:,.0f}"
            if p["queries"] < result["params"]["queries_max"]:
                qps += f" ({p['queries']}q)"
            row += [f"{p['recall']:.3f}", qps]
            if lib == "strata":
                ndis = p.get("ndis_per_query")
                row += [_plan_text(p) or "-", "-" if ndis is None else f"{ndis:,.0f}"]
        rows.append(row)
    ds = result["dataset"]
    title = (f"{ds['name']}: {ds['n_train_used']:,} x {ds['dimension']} {ds['distance']}, "
             f"k={result['params']['k']}, single-thread QPS with the filter built per call")
    bad = target_check(result)
    verdict = ("" if "strata" not in libs
               else f"strata recall >= {RECALL_TARGET} everywhere, no disallowed ids" if not bad
               else "strata misses: " + "; ".join(bad))
    return render_table(title, head, rows, [verdict] if verdict else [], markdown)


def render_table(title: str, head: list[str], rows: list[list[str]], notes: list[str],
                 markdown: bool) -> str:
    """A title, a table (markdown, or right-aligned plain text) and notes below it."""
    if markdown:
        lines = [f"**{title}**", "", "| " + " | ".join(head) + " |",
                 "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join([*lines, "", *notes])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([title, fmt.format(*head), *(fmt.format(*r) for r in rows), *notes])


def _json_default(obj: object) -> object:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


if __name__ == "__main__":
    sys.exit(main())
