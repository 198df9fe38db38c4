"""Full-text BM25 query speed: strata vs bm25s vs tantivy on the pypi-demo summaries.

Corpora:
  pypi30k   the 30k `summary` fields of ../shared/data/pypi-demo/docs.jsonl
  pypi300k  made from it: --scale copies (default 10), copy c of document i being summary i
            followed by summary (7i + c) mod n, so the vocabulary stays real and the term
            statistics change between copies

Queries: 1-, 2- and 4-term queries (--queries of each), words drawn with a fixed seed from
random summaries, kept only if the "english" analyzer leaves each word a term.

Every engine answers every query one call at a time on one thread (k = 10), timed per call:
  strata   Collection.query(text=q, k=10): analysis, BM25 over the inverted index, top-k heap,
           ids and documents back through the C ABI (include_metadata=False, as the others
           return ids only)
  bm25s    BM25(k1=1.2, b=0.75, method="lucene").retrieve([tokens], k=10): the same tokens as
           strata (strata.analyze, outside the timed call: bm25s's own tokenizer differs), so
           scores and top-10 are compared: same_top10 counts queries whose 10 ids agree up to
           ties at the 10th score, max_score_diff the largest |score difference|
  tantivy  searcher.search(index.parse_query(q, ["summary"]), 10) with the en_stem tokenizer
           (its own analysis: speed only, not compared)

Build: strata = upserts of the documents (dim-2 vectors, fsync="never") into a collection with
a text index on summary, and the rebuild when reopening it (the index is derived from the
documents at open); bm25s = index(); tantivy = add_document + commit (1 writer thread). Size:
strata's terms and postings (each posting 8 bytes: slot + tf), bm25s's sparse matrix bytes,
tantivy's directory on disk.

  python bench/bench_text.py [--scale 10] [--queries 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import runinfo

import strata

DATA = Path(os.environ.get("STRATA_SHARED_DATA", Path(__file__).parents[1] / "../shared/data"))


def load(scale: int) -> dict[str, list[str]]:
    docs = [json.loads(line) for line in (DATA / "pypi-demo" / "docs.jsonl").open()]
    base = [d["summary"] or "" for d in docs]
    n = len(base)
    big = [base[i] + " " + base[(7 * i + c) % n] for c in range(scale) for i in range(n)]
    return {"pypi30k": base, f"pypi{n * scale // 1000}k": big}


def make_queries(texts: list[str], count: int, seed: int = 7) -> dict[int, list[str]]:
    rng = np.random.default_rng(seed)
    out: dict[int, list[str]] = {}
    for terms in (1, 2, 4):
        qs: list[str] = []
        while len(qs) < count:
            words = [w for w in texts[rng.integers(len(texts))].split() if w.isalnum()]
            words = [w for w in words if strata.analyze(w)]
            if len(words) >= terms:
                start = rng.integers(len(words) - terms + 1)
                qs.append(" ".join(words[start : start + terms]))
        out[terms] = qs
    return out


def timed(fn, queries: list) -> tuple[dict, list]:
    lat, results = [], []
    for q in queries:
        t0 = time.perf_counter()
        results.append(fn(q))
        lat.append(time.perf_counter() - t0)
    a = np.array(lat)
    return {
        "p50_us": float(np.percentile(a, 50) * 1e6),
        "p99_us": float(np.percentile(a, 99) * 1e6),
        "qps": float(len(a) / a.sum()),
    }, results


def same_top10(ids_a, ids_b, scores_b) -> bool:
    """Same 10 ids up to ties at the 10th score (scores_b is the reference's)."""
    if len(scores_b) == 0:
        return len([i for i in ids_a if i >= 0]) == 0
    tenth = scores_b[-1]
    must = {int(i) for i, s in zip(ids_b, scores_b, strict=True) if s > tenth + 1e-4}
    return must <= {int(i) for i in ids_a}


def run_corpus(name: str, texts: list[str], queries: dict[int, list[str]], tmp: Path) -> dict:
    import bm25s
    import tantivy

    out: dict = {"docs": len(texts)}
    # --- strata
    path = tmp / f"strata-{name}"
    t0 = time.perf_counter()
    col = strata.Collection.create(path, dim=2, metric="l2", fsync="never", text_fields=["summary"])
    vecs = np.zeros((len(texts), 2), dtype=np.float32)
    for s in range(0, len(texts), 20000):
        part = texts[s : s + 20000]
        col.upsert(
            np.arange(s, s + len(part)), vecs[s : s + len(part)], [{"summary": t} for t in part]
        )
    build = time.perf_counter() - t0
    col.close()
    t0 = time.perf_counter()
    col = strata.Collection.open(path)
    reopen = time.perf_counter() - t0
    tf = col.info()["text_fields"][0]
    out["strata"] = {"build_s": build, "reopen_s": reopen, "terms": tf["terms"]}
    # --- bm25s (same tokens)
    tokens = [strata.analyze(t) for t in texts]
    t0 = time.perf_counter()
    model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    kept = [i for i, t in enumerate(tokens) if t]  # N counts documents with terms, as strata's
    model.index([tokens[i] for i in kept], show_progress=False)
    kept_ids = np.array(kept)
    m = model.scores
    out["bm25s"] = {
        "build_s": time.perf_counter() - t0,
        "bytes": int(m["data"].nbytes + m["indices"].nbytes + m["indptr"].nbytes),
    }
    # --- tantivy
    t0 = time.perf_counter()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("summary", stored=False, tokenizer_name="en_stem")
    sb.add_unsigned_field("id", stored=True)
    tdir = tmp / f"tantivy-{name}"
    tdir.mkdir()
    index = tantivy.Index(sb.build(), path=str(tdir))
    writer = index.writer(heap_size=256 << 20, num_threads=1)
    for i, t in enumerate(texts):
        writer.add_document(tantivy.Document(summary=t, id=i))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    out["tantivy"] = {
        "build_s": time.perf_counter() - t0,
        "bytes": sum(f.stat().st_size for f in tdir.iterdir()),
    }

    for terms, qs in queries.items():
        key = f"{terms}term"
        st, sres = timed(lambda q: col.query(text=q, k=10, include_metadata=False), qs)
        toks = [strata.analyze(q) for q in qs]
        bt, bres = timed(
            lambda tk: model.retrieve([tk], k=10, show_progress=False, n_threads=1), toks
        )
        tt, _ = timed(lambda q: searcher.search(index.parse_query(q, ["summary"]), 10).hits, qs)
        same, diff = 0, 0.0
        for r, (bdocs, bscores) in zip(sres, bres, strict=True):
            bscores = bscores[0]
            bids = kept_ids[bdocs[0]][bscores > 0]
            bscores = bscores[bscores > 0]
            sids = r.ids[0][r.ids[0] >= 0]
            sscores = r.scores[0][: len(sids)]
            same += same_top10(sids, bids, bscores)
            if len(sscores) == len(bscores) and len(bscores):
                diff = max(diff, float(np.abs(sscores - bscores).max()))
            elif len(sscores) != len(bscores):
                diff = float("inf")
        out["strata"][key] = st
        out["bm25s"][key] = {**bt, "same_top10": same, "queries": len(qs), "max_score_diff": diff}
        out["tantivy"][key] = tt
        print(
            f"{name} {key}: strata p50 {st['p50_us']:.0f}us qps {st['qps']:.0f} | bm25s p50 "
            f"{bt['p50_us']:.0f}us qps {bt['qps']:.0f} same {same}/{len(qs)} diff {diff:.2g} | "
            f"tantivy p50 {tt['p50_us']:.0f}us qps {tt['qps']:.0f}",
            flush=True,
        )
    col.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", default=None,
                    help="result JSON (default bench/results/text/text-<time>-<commit>.json)")
    args = ap.parse_args()
    corpora = load(args.scale)
    queries = make_queries(corpora["pypi30k"], args.queries)
    result = {
        "machine": runinfo.machine(),
        "git": runinfo.git_info(),
        "load_before": os.getloadavg(),
        "queries": {k: v[:5] for k, v in queries.items()},
        "corpora": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, texts in corpora.items():
            result["corpora"][name] = run_corpus(name, texts, queries, Path(tmp))
    result["load_after"] = os.getloadavg()
    path = Path(args.out) if args.out else runinfo.result_path("text")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
