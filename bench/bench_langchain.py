"""What the LangChain vector store costs over the collection it wraps, next to langchain-chroma.

Data: the 30,000 pypi-demo documents (../shared/data/pypi-demo: summaries, metadata and their
512-d unit-norm embeddings). The embeddings are the stored vectors: a fake Embeddings maps each
summary to its row (as a list of floats, what an Embeddings returns), so no model runs and both
stores index exactly the same vectors. Queries are --queries summaries drawn with a fixed seed;
each call embeds one through that lookup.

Timed per call (perf_counter_ns), one call at a time, in rounds that visit the methods in a
rotating order so that load on the shared machine falls on all of them alike:

  collection   strata.Collection.query(vector, k) + one langchain Document per hit: the floor
               a hand-written adapter pays (the query vector handed over as a NumPy array)
  strata       StrataVectorStore.similarity_search(text, k): embedding lookup, list -> array,
               the query, Documents
  chroma       langchain_chroma.Chroma.similarity_search(text, k) on a persistent Chroma
               (hnsw:space cosine, its defaults otherwise) holding the same documents
  strata_mmr   StrataVectorStore.max_marginal_relevance_search(text, k, fetch_k=20): in the engine
  chroma_mmr   Chroma.max_marginal_relevance_search(text, k, fetch_k=20): LangChain's NumPy MMR

The result (bench/results/langchain/) has p50 / p99 / mean microseconds per method, the ratios
strata / collection (the target is <= 1.5) and chroma / strata, and how often each store's first
hit is the query's own document (both search approximately: a sanity check, not a recall study).

    python bench/bench_langchain.py                      # 30k docs, 500 queries, 5 rounds, k=4
    python bench/bench_langchain.py --n 2000 --queries 50 --rounds 1 --out /tmp/x.json  # smoke
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import latency
import runinfo
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

import strata
from strata.integrations.langchain import StrataVectorStore


class StoredEmbeddings(Embeddings):
    """Each known text's stored vector, as the list of floats an Embeddings returns."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self._rows = {t: i for i, t in enumerate(texts)}
        self._lists = vectors.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._lists[self._rows[t]] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._lists[self._rows[text]]


def load(n: int) -> tuple[list[str], list[dict], np.ndarray]:
    root = datasets.shared_data_dir() / "pypi-demo"
    vectors = np.load(root / "vectors.f16.npy")[:n].astype(np.float32)
    texts, metas = [], []
    with open(root / "docs.jsonl") as f:
        for line in f:
            if len(texts) == n:
                break
            doc = json.loads(line)
            texts.append(doc.pop("summary"))
            metas.append({k: v for k, v in doc.items() if v is not None})
    return texts, metas, vectors



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--k", type=int, default=4, help="LangChain's default k")
    ap.add_argument("--no-chroma", action="store_true")
    ap.add_argument("--out", help="result JSON (default: runinfo.result_path('langchain', ...))")
    args = ap.parse_args(argv)

    texts, metas, vectors = load(args.n)
    emb = StoredEmbeddings(texts, vectors)
    rng = np.random.default_rng(7)
    picks = rng.choice(len(texts), size=min(args.queries, len(texts)), replace=False)
    queries = [texts[i] for i in picks]
    query_vectors = vectors[picks]
    ids = [f"pkg-{i}" for i in range(len(texts))]
    tmp = Path(tempfile.mkdtemp(prefix="bench-langchain-"))
    result: dict = {"benchmark": "langchain", "set": "pypi-demo", "n": len(texts),
                    "dim": int(vectors.shape[1]), "queries": len(queries), "rounds": args.rounds,
                    "k": args.k, "fetch_k": 20, "machine": runinfo.machine(),
                    "git": runinfo.git_info(), "versions": runinfo.versions(),
                    "loadavg": list(__import__("os").getloadavg())}

    t0 = time.perf_counter()
    store = StrataVectorStore(embedding=emb, path=tmp / "strata",
                              collection_options={"fsync": "never"})
    for lo in range(0, len(texts), 1000):
        store.add_texts(texts[lo:lo + 1000], metas[lo:lo + 1000], ids=ids[lo:lo + 1000])
    result["strata_ingest_s"] = time.perf_counter() - t0
    col = store.collection
    assert col is not None

    def floor(i: int) -> list[Document]:
        r = col.query(query_vectors[i], k=args.k)
        out = []
        for id_, meta in zip(r.ids[0], r.metadata[0], strict=True):
            if meta is not None:
                meta = dict(meta)
                text = meta.pop("page_content")
                out.append(Document(page_content=text, metadata=meta, id=str(id_)))
        return out

    methods = {
        "collection": floor,
        "strata": lambda i: store.similarity_search(queries[i], k=args.k),
        "strata_mmr": lambda i: store.max_marginal_relevance_search(queries[i], k=args.k,
                                                                     fetch_k=20),
    }
    chroma = None
    if not args.no_chroma:
        from langchain_chroma import Chroma

        t0 = time.perf_counter()
        chroma = Chroma(collection_name="bench", embedding_function=emb,
                        persist_directory=str(tmp / "chroma"),
                        collection_metadata={"hnsw:space": "cosine"})
        for lo in range(0, len(texts), 1000):
            chroma.add_texts(texts[lo:lo + 1000], metas[lo:lo + 1000], ids=ids[lo:lo + 1000])
        result["chroma_ingest_s"] = time.perf_counter() - t0
        methods["chroma"] = lambda i: chroma.similarity_search(queries[i], k=args.k)
        methods["chroma_mmr"] = lambda i: chroma.max_marginal_relevance_search(
            queries[i], k=args.k, fetch_k=20)

    # Same answers where it matters: the strata store is the floor plus translation.
    for i in range(min(20, len(queries))):
        assert methods["strata"](i) == floor(i), f"query {i}: the store and the floor disagree"
    own = {name: 0 for name in ("strata", "chroma") if name in methods}
    for i in range(len(queries)):
        for name in own:
            hits = methods[name](i)  # also warms every path up
            own[name] += bool(hits) and hits[0].id == ids[picks[i]]
    result["first_hit_is_own_doc"] = {name: c / len(queries) for name, c in own.items()}

    times = latency.time_rotating(methods, len(queries), args.rounds)
    result["methods"] = {name: latency.percentiles(ns) for name, ns in times.items()}
    m = result["methods"]
    ratios = {"strata_over_collection_p50": m["strata"]["p50_us"] / m["collection"]["p50_us"],
              "strata_over_collection_p99": m["strata"]["p99_us"] / m["collection"]["p99_us"]}
    if chroma is not None:
        ratios["chroma_over_strata_p50"] = m["chroma"]["p50_us"] / m["strata"]["p50_us"]
        ratios["chroma_over_strata_p99"] = m["chroma"]["p99_us"] / m["strata"]["p99_us"]
        ratios["chroma_mmr_over_strata_mmr_p50"] = (m["chroma_mmr"]["p50_us"]
                                                    / m["strata_mmr"]["p50_us"])
    result["ratios"] = ratios
    result["median_of_round_p50_us"] = latency.median_of_round_p50_us(
        times, len(queries), args.rounds)
    store.close()
    if chroma is not None:
        versions = result["versions"]
        for pkg in ("langchain-core", "langchain-chroma", "chromadb"):
            try:
                versions[pkg] = __import__("importlib.metadata").metadata.version(pkg)
            except Exception:  # noqa: BLE001 - a missing version is recorded as such
                versions[pkg] = None
    result["strata_version"] = strata.__version__
    out = Path(args.out) if args.out else runinfo.result_path("langchain", "pypi-demo")
    out.write_text(json.dumps(result, indent=1) + "\n")
    for name, stats in m.items():
        print(f"{name:12s} p50 {stats['p50_us']:8.1f} us   p99 {stats['p99_us']:8.1f} us")
    print(" ".join(f"{k}={v:.2f}" for k, v in ratios.items()))
    print(f"first hit is the query's own document: {result['first_hit_is_own_doc']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
