"""Sparse vector search: strata's MaxScore index vs exhaustive scoring vs a scipy brute force.

Corpora (built by the Go benchmark, go/collection/sparse BenchmarkSparseReport):
  pypi29k        BM25 document weights (tf part, k1=1.2, b=0.75) of the first 29,000 pypi-demo
                 summaries, terms from package text's English analyzer hashed to u32 indices
  synthetic300k  300,000 synthetic documents sampled from the real corpus's term statistics:
                 each takes the term count of a uniformly drawn real summary, then that many
                 terms drawn independently from the real corpus's term occurrences (the
                 unigram distribution); BM25 weights as above. Labelled synthetic.
Queries: the last 1,000 summaries (held out), 1.0 per distinct term; the index applies the IDF
modifier (Qdrant's), so scores are BM25.

Per corpus, one query per call on one thread, k=10:
  maxscore    strata's search (MaxScore with block bounds), Go, in process
  bmw         block-max WAND on the same index (measured to justify MaxScore; not used)
  exhaustive  every posting of the query's indices scored term at a time (the baseline)
  scipy       X @ q with X a float32 scipy.sparse CSR matrix of the documents (columns: the
              indices in use, in order) and q the query's weights after the IDF as a dense
              float32 vector, then np.argpartition for the top 10
The Go plans alternate query by query; Go and scipy alternate round by round (--rounds).
exact_top10 checks every query's top 10 (keys and float32 scores) from strata against a float64
CSR product rounded to float32, ties by key ascending, candidates the documents sharing an index
with the query: the score strata documents (go/collection/sparse doc).

qdrant (--qdrant Q, pypi29k only): qdrant-client's local mode (QdrantClient(":memory:"), Qdrant's
reference implementation in Python) with the same documents in a sparse field with
modifier=IDF and the first Q queries as given (1.0 per term): p50 of query_points, and how many
top 10s have the same keys as strata's (same_top10_keys), the same keys in any order
(same_top10_set), the same ten scores within 1e-5 position by position (same_top10_scores: the
rankings differ at most in the order of equal or float-rounding-close scores), and the largest
score difference.

  python bench/bench_sparse.py [--n 300000] [--rounds 2] [--qdrant 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runinfo

K = 10


def run_go(out: Path, n: int) -> dict:
    env = dict(os.environ, STRATA_SPARSE_OUT=str(out), STRATA_SPARSE_N=str(n))
    subprocess.run(["go", "test", "./go/collection/sparse", "-run", "^$", "-bench", "SparseReport",
                    "-benchtime", "1x", "-timeout", "60m"],
                   cwd=runinfo.REPO_DIR, env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "report.json").read_text())


def load_csr(d: Path, prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.fromfile(d / f"{prefix}_indptr", dtype="<i8"),
            np.fromfile(d / f"{prefix}_indices", dtype="<u4"),
            np.fromfile(d / f"{prefix}_values", dtype="<f4"))


class Corpus:
    def __init__(self, d: Path) -> None:
        indptr, indices, values = load_csr(d, "docs")
        self.columns = np.unique(indices)
        cols = np.searchsorted(self.columns, indices).astype(np.int32)
        self.x = sp.csr_matrix((values, cols, indptr), shape=(len(indptr) - 1, len(self.columns)))
        self.x64 = self.x.astype(np.float64)
        self.pattern = self.x.copy()
        self.pattern.data = np.ones_like(self.pattern.data)
        qptr, qidx, qval = load_csr(d, "queries")
        self.queries = [(np.searchsorted(self.columns, qidx[a:b]), qval[a:b])
                        for a, b in itertools.pairwise(qptr)]
        self.top_keys = np.fromfile(d / "top_keys", dtype="<i8").reshape(-1, K)
        self.top_scores = np.fromfile(d / "top_scores", dtype="<f4").reshape(-1, K)

    def dense(self, q: tuple[np.ndarray, np.ndarray], dtype: type) -> np.ndarray:
        v = np.zeros(len(self.columns), dtype=dtype)
        v[q[0]] = q[1]
        return v

    def time_scipy(self) -> list[float]:
        dense = [self.dense(q, np.float32) for q in self.queries]
        out = []
        for v in dense:
            t0 = time.perf_counter()
            s = self.x @ v
            top = np.argpartition(-s, K)[:K]
            top[np.argsort(-s[top], kind="stable")]
            out.append((time.perf_counter() - t0) * 1e6)
        return out

    def exact_top10(self) -> tuple[int, int]:
        """Queries whose top 10 from strata equals the float64 brute force, of all queries."""
        equal = 0
        for qi, q in enumerate(self.queries):
            s = (self.x64 @ self.dense(q, np.float64)).astype(np.float32)
            matched = np.flatnonzero(self.pattern @ self.dense((q[0], np.ones(len(q[0]))),
                                                               np.float32))
            order = np.lexsort((matched, -s[matched]))[:K]
            keys, scores = matched[order], s[matched][order]
            want_k = np.full(K, -1, dtype=np.int64)
            want_s = np.zeros(K, dtype=np.float32)
            want_k[:len(keys)], want_s[:len(keys)] = keys, scores
            if np.array_equal(want_k, self.top_keys[qi]) and np.array_equal(
                    want_s, self.top_scores[qi]):
                equal += 1
        return equal, len(self.queries)


def run_qdrant(c: Corpus, d: Path, nq: int) -> dict:
    from qdrant_client import QdrantClient, models

    indptr, indices, values = load_csr(d, "docs")
    client = QdrantClient(":memory:")
    client.create_collection("sparse", vectors_config={}, sparse_vectors_config={
        "bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)})
    t0 = time.perf_counter()
    batch = 2000
    for start in range(0, len(indptr) - 1, batch):
        points = [models.PointStruct(id=i, payload={}, vector={"bm25": models.SparseVector(
            indices=indices[indptr[i]:indptr[i + 1]].tolist(),
            values=values[indptr[i]:indptr[i + 1]].tolist())})
            for i in range(start, min(start + batch, len(indptr) - 1))]
        client.upsert("sparse", points=points)
    build = time.perf_counter() - t0
    qptr, qidx, _ = load_csr(d, "queries")
    lat, same_keys, same_set, same_scores, diff = [], 0, 0, 0, 0.0
    for qi in range(min(nq, len(qptr) - 1)):
        q = models.SparseVector(indices=qidx[qptr[qi]:qptr[qi + 1]].tolist(),
                                values=[1.0] * int(qptr[qi + 1] - qptr[qi]))
        t0 = time.perf_counter()
        hits = client.query_points("sparse", query=q, using="bm25", limit=K).points
        lat.append((time.perf_counter() - t0) * 1e6)
        keys = [int(h.id) for h in hits]
        ours = [int(k) for k in c.top_keys[qi] if k >= 0]
        same_keys += keys == ours
        same_set += sorted(keys) == sorted(ours)
        gaps = [abs(float(h.score) - float(s))
                for h, s in zip(hits, c.top_scores[qi], strict=False)]
        same_scores += len(keys) == len(ours) and max(gaps, default=0) <= 1e-5
        diff = max([diff, *gaps])
    return {"build_s": build, "p50_us": pct(lat, 50), "p99_us": pct(lat, 99), "queries": len(lat),
            "same_top10_keys": same_keys, "same_top10_set": same_set,
            "same_top10_scores": same_scores, "max_score_diff": diff}


def pct(v: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(v), p))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300000, help="synthetic documents")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--qdrant", type=int, default=0,
                    help="queries for qdrant-client's local mode on pypi29k (0: skip)")
    ap.add_argument("--out", default=None,
                    help="result JSON (default bench/results/sparse/sparse-<time>-<commit>.json)")
    args = ap.parse_args()
    result: dict = {"machine": runinfo.machine(), "git": runinfo.git_info(),
                    "load_before": os.getloadavg(), "k": K, "rounds": [],
                    "versions": {"numpy": np.__version__, "scipy": scipy.__version__}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            out = Path(tmp) / f"round{r}"
            go = run_go(out, args.n)
            result["goversion"] = go["goversion"]
            rnd = {}
            for name, g in go["corpora"].items():
                c = Corpus(out / name)
                lat = c.time_scipy()
                entry = dict(g)
                entry["scipy"] = {"p50_us": pct(lat, 50), "p99_us": pct(lat, 99),
                                  "mean_us": float(np.mean(lat))}
                entry["scipy_over_maxscore_p50"] = (entry["scipy"]["p50_us"]
                                                    / g["maxscore"]["p50_us"])
                entry["exhaustive_over_maxscore_p50"] = (g["exhaustive"]["p50_us"]
                                                         / g["maxscore"]["p50_us"])
                if r == 0:
                    entry["exact_top10"], entry["queries_checked"] = c.exact_top10()
                    if args.qdrant and not g["synthetic"]:
                        entry["qdrant_local"] = run_qdrant(c, out / name, args.qdrant)
                        print(f"qdrant local {name}: {entry['qdrant_local']}", flush=True)
                rnd[name] = entry
                print(f"round {r} {name}: maxscore p50 {g['maxscore']['p50_us']:.0f} us, "
                      f"exhaustive {g['exhaustive']['p50_us']:.0f} us, "
                      f"scipy {entry['scipy']['p50_us']:.0f} us "
                      f"({entry['scipy_over_maxscore_p50']:.1f}x)", flush=True)
            result["rounds"].append(rnd)
    result["load_after"] = os.getloadavg()
    result["corpora"] = {}
    for name in result["rounds"][0]:
        runs = [rnd[name] for rnd in result["rounds"]]
        first = runs[0]
        result["corpora"][name] = {
            "docs": first["docs"], "nonzeros": first["nonzeros"], "queries": first["queries"],
            "synthetic": first["synthetic"], "mean_query_terms": first["mean_query_terms"],
            "exact_top10": first["exact_top10"], "queries_checked": first["queries_checked"],
            **({"qdrant_local": first["qdrant_local"]} if "qdrant_local" in first else {}),
            **{f"{plan}_p50_us": float(np.median([x[plan]["p50_us"] for x in runs]))
               for plan in ("maxscore", "bmw", "exhaustive", "scipy")},
            **{f"{plan}_postings_per_query": first[plan]["postings_per_query"]
               for plan in ("maxscore", "bmw", "exhaustive")},
            "scipy_over_maxscore_p50": float(np.median([x["scipy_over_maxscore_p50"]
                                                        for x in runs])),
        }
    path = Path(args.out) if args.out else runinfo.result_path("sparse")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
