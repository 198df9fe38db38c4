"""What the LlamaIndex vector store costs over the collection it wraps, next to Chroma's store.

Data: the 30,000 pypi-demo documents (../shared/data/pypi-demo: summaries, metadata and their
512-d unit-norm embeddings), one TextNode per document with its stored embedding, so no model
runs and every store indexes exactly the same vectors. Queries are --queries of the stored
embeddings drawn with a fixed seed, each a VectorStoreQuery(query_embedding=<list of floats>,
similarity_top_k=k) as a LlamaIndex retriever builds it.

Timed per call (perf_counter_ns), one call at a time, in rounds that visit the methods in a
rotating order so that load on the shared machine falls on all of them alike:

  collection   strata.Collection.query(vector, k) + one LlamaIndex node per hit (rebuilt from
               the stored metadata, as any store that keeps the text must) and a
               VectorStoreQueryResult: the floor a hand-written adapter pays (the query vector
               handed over as a NumPy array)
  strata       StrataVectorStore.query(VectorStoreQuery): list -> array, the query, the nodes
  chroma       llama_index.vector_stores.chroma.ChromaVectorStore.query on a persistent Chroma
               collection (hnsw:space cosine, its defaults otherwise) holding the same nodes
  strata_mmr   StrataVectorStore.query in mmr mode (mmr_prefetch_k=20): in the engine
  chroma_mmr   ChromaVectorStore.query in mmr mode (mmr_prefetch_k=20): LlamaIndex's NumPy MMR

The result (bench/results/llamaindex/) has p50 / p99 / mean microseconds per method, the ratios
strata / collection (the issue's target for LangChain, taken here too: <= 1.5) and
chroma / strata, and how often each store's first hit is the query's own document (both search
approximately: a sanity check, not a recall study).

    python bench/bench_llamaindex.py                      # 30k docs, 500 queries, 5 rounds, k=4
    python bench/bench_llamaindex.py --n 2000 --queries 50 --rounds 1 --out /tmp/x.json  # smoke
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets
import latency
import runinfo
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryResult
from llama_index.core.vector_stores.utils import metadata_dict_to_node

import strata
from strata.integrations.llamaindex import StrataVectorStore


def load(n: int) -> tuple[list[TextNode], np.ndarray]:
    root = datasets.shared_data_dir() / "pypi-demo"
    vectors = np.load(root / "vectors.f16.npy")[:n].astype(np.float32)
    rows = vectors.tolist()
    nodes = []
    with open(root / "docs.jsonl") as f:
        for line in f:
            if len(nodes) == n:
                break
            doc = json.loads(line)
            text = doc.pop("summary")
            meta = {k: v for k, v in doc.items() if v is not None}
            nodes.append(TextNode(text=text, id_=f"pkg-{len(nodes)}", metadata=meta,
                                  embedding=rows[len(nodes)]))
    return nodes, vectors



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--no-chroma", action="store_true")
    ap.add_argument("--out", help="result JSON (default: runinfo.result_path('llamaindex', ...))")
    args = ap.parse_args(argv)

    nodes, vectors = load(args.n)
    rng = np.random.default_rng(7)
    picks = rng.choice(len(nodes), size=min(args.queries, len(nodes)), replace=False)
    query_lists = [vectors[i].tolist() for i in picks]
    query_vectors = vectors[picks]
    tmp = Path(tempfile.mkdtemp(prefix="bench-llamaindex-"))
    result: dict = {"benchmark": "llamaindex", "set": "pypi-demo", "n": len(nodes),
                    "dim": int(vectors.shape[1]), "queries": len(picks), "rounds": args.rounds,
                    "k": args.k, "mmr_prefetch_k": 20, "machine": runinfo.machine(),
                    "git": runinfo.git_info(), "versions": runinfo.versions(),
                    "loadavg": list(os.getloadavg())}

    t0 = time.perf_counter()
    store = StrataVectorStore(path=tmp / "strata", collection_options={"fsync": "never"})
    for lo in range(0, len(nodes), 1000):
        store.add(nodes[lo:lo + 1000])
    result["strata_ingest_s"] = time.perf_counter() - t0
    col = store.client
    assert col is not None

    def floor(i: int) -> VectorStoreQueryResult:
        r = col.query(query_vectors[i], k=args.k)
        hits, sims, ids = [], [], []
        for j, meta in enumerate(r.metadata[0]):
            if meta is None:
                break
            node = metadata_dict_to_node(meta, text=meta.get("_text"))
            hits.append(node)
            ids.append(node.node_id)
            sims.append(1.0 - float(r.distances[0, j]))
        return VectorStoreQueryResult(nodes=hits, similarities=sims, ids=ids)

    # Built before timing: a retriever builds the query whichever store answers it.
    plain = [VectorStoreQuery(query_embedding=q, similarity_top_k=args.k) for q in query_lists]
    mmr = [VectorStoreQuery(query_embedding=q, similarity_top_k=args.k, mode="mmr")
           for q in query_lists]

    methods = {
        "collection": floor,
        "strata": lambda i: store.query(plain[i]),
        "strata_mmr": lambda i: store.query(mmr[i], mmr_prefetch_k=20),
    }
    chroma = None
    if not args.no_chroma:
        import chromadb
        from llama_index.vector_stores.chroma import ChromaVectorStore

        t0 = time.perf_counter()
        client = chromadb.PersistentClient(path=str(tmp / "chroma"))
        chroma = ChromaVectorStore(chroma_collection=client.get_or_create_collection(
            "bench", metadata={"hnsw:space": "cosine"}))
        for lo in range(0, len(nodes), 1000):
            chroma.add(nodes[lo:lo + 1000])
        result["chroma_ingest_s"] = time.perf_counter() - t0
        methods["chroma"] = lambda i: chroma.query(plain[i])
        methods["chroma_mmr"] = lambda i: chroma.query(mmr[i], mmr_prefetch_k=20)

    # Same answers where it matters: the strata store is the floor plus translation.
    for i in range(min(20, len(picks))):
        got, want = methods["strata"](i), floor(i)
        assert got.ids == want.ids, f"query {i}: the store and the floor disagree"
        assert [n.get_content() for n in got.nodes] == [n.get_content() for n in want.nodes]
    own = {name: 0 for name in ("strata", "chroma") if name in methods}
    for i in range(len(picks)):
        for name in own:
            ids = methods[name](i).ids  # also warms every path up
            own[name] += bool(ids) and ids[0] == f"pkg-{picks[i]}"
    result["first_hit_is_own_doc"] = {name: c / len(picks) for name, c in own.items()}

    times = latency.time_rotating(methods, len(picks), args.rounds)
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
        times, len(picks), args.rounds)
    store.close()
    versions = result["versions"]
    for pkg in ("llama-index-core", "llama-index-vector-stores-chroma", "chromadb"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    result["strata_version"] = strata.__version__
    out = Path(args.out) if args.out else runinfo.result_path("llamaindex", "pypi-demo")
    out.write_text(json.dumps(result, indent=1) + "\n")
    for name, stats in m.items():
        print(f"{name:12s} p50 {stats['p50_us']:8.1f} us   p99 {stats['p99_us']:8.1f} us")
    print(" ".join(f"{k}={v:.2f}" for k, v in ratios.items()))
    print(f"first hit is the query's own document: {result['first_hit_is_own_doc']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
