"""Recall@10 vs QPS of the quantized-graph peers strata's RaBitQ mode is measured against.

hnswlib (float HNSW), rabitqlib's HnswIndex (HNSW + RaBitQ, 1 + ex bits, clustered centroids)
and SymqgIndex (SymphonyQG: neighbour codes beside each link list, FastScan) on the held-out
queries of a shared real data set, one query per call on one thread, the libraries alternating
at every ef (rotated order), CPU time of the calling thread and wall-clock time per sweep.
Until strata's RaBitQ mode has its Python door, its own figures come from the Go benchmark
(go/hnsw BenchmarkRaBitQSweep), run on the same train rows and queries; compare ratios to
hnswlib within one run of each, and quote the machine's load.

    .venv/bin/python bench/bench_rabitq_peers.py --n 20000 --queries 500
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runinfo

EFS = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def load_npy_rows(path: Path, n: int) -> np.ndarray:
    return np.ascontiguousarray(np.load(path, mmap_mode="r")[:n].astype(np.float32))


def kmeans(x: np.ndarray, k: int, iters: int = 10, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = x[rng.choice(len(x), k, replace=False)].copy()
    for _ in range(iters):
        d = (x * x).sum(1)[:, None] - 2 * x @ centres.T + (centres * centres).sum(1)[None, :]
        assign = d.argmin(1)
        for j in range(k):
            members = x[assign == j]
            if len(members):
                centres[j] = members.mean(0)
    return centres.astype(np.float32), assign.astype(np.uint32)


class Peer:
    name = ""

    def search(self, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        raise NotImplementedError


class Hnswlib(Peer):
    name = "hnswlib"

    def __init__(self, train: np.ndarray, threads: int) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="cosine", dim=train.shape[1])
        self.index.init_index(max_elements=len(train), M=16, ef_construction=200, random_seed=100)
        self.index.add_items(train, np.arange(len(train)), num_threads=threads)
        self.index.set_num_threads(1)
        self.version = getattr(hnswlib, "__version__", None)

    def search(self, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        self.index.set_ef(max(ef, k))
        return self.index.knn_query(q, k=k)[0][0]


class RabitqHnsw(Peer):
    name = "rabitqlib-hnsw8"

    def __init__(self, train: np.ndarray, threads: int, clusters: int) -> None:
        from rabitqlib import HnswIndex

        centres, assign = kmeans(train, clusters)
        self.index = HnswIndex(dim=train.shape[1], max_elements=len(train), M=16,
                               ef_construction=200, nbits=8, metric="l2")
        self.index.build(train, centres, assign, num_threads=threads)

    def search(self, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        return self.index.search(q, k=k, ef=max(ef, k), num_threads=1)[0][0]


class RabitqSymqg(Peer):
    name = "rabitqlib-symqg"

    def __init__(self, train: np.ndarray, threads: int) -> None:
        from rabitqlib import SymqgIndex

        self.index = SymqgIndex(dim=train.shape[1], max_degree=32, metric="l2")
        self.index.build(train, ef_construction=200, num_threads=threads)

    def search(self, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        return self.index.search(q, k=k, ef=max(ef, k), num_threads=1)[0][0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="pypi-use512")
    ap.add_argument("--data-dir", default=os.environ.get("STRATA_DATA_DIR", "/work/shared/data"))
    ap.add_argument("--n", type=int, default=20000, help="first N train rows")
    ap.add_argument("--queries", type=int, default=500, help="first N held-out queries")
    ap.add_argument("--clusters", type=int, default=16, help="rabitqlib HNSW centroids")
    ap.add_argument("--threads", type=int, default=runinfo.cpu_count(), help="build threads")
    ap.add_argument("--out",
                    help="result JSON (default: runinfo.result_path('rabitq-peers', set))")
    args = ap.parse_args(argv)

    src = Path(args.data_dir) / args.set
    train = load_npy_rows(src / "train.f16.npy", args.n)
    queries = load_npy_rows(src / "test.f16.npy", args.queries)
    train /= np.linalg.norm(train, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    k = 10
    truth = np.argsort(-(queries @ train.T), axis=1)[:, :k]

    peers: list[Peer] = []
    builds = {}
    for make in (lambda: Hnswlib(train, args.threads),
                 lambda: RabitqHnsw(train, args.threads, args.clusters),
                 lambda: RabitqSymqg(train, args.threads)):
        t0 = time.perf_counter()
        p = make()
        builds[p.name] = time.perf_counter() - t0
        peers.append(p)
        print(f"built {p.name} in {builds[p.name]:.1f} s", file=sys.stderr)

    rows = [q[None, :] for q in queries]
    results = []
    for i, ef in enumerate(EFS):
        order = peers[i % len(peers):] + peers[:i % len(peers)]
        for p in order:
            found = np.empty((len(rows), k), dtype=np.int64)
            cpu0, wall0 = time.thread_time(), time.perf_counter()
            for j, q in enumerate(rows):
                found[j] = p.search(q, k, ef)
            cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
            hits = sum(np.intersect1d(f, t).size for f, t in zip(found, truth, strict=True))
            r = {"lib": p.name, "ef": ef, "recall": hits / (len(rows) * k),
                 "qps_cpu": len(rows) / cpu, "qps_wall": len(rows) / wall}
            results.append(r)
            print(f"{p.name:16s} ef={ef:<4d} recall {r['recall']:.4f}  "
                  f"qps(cpu) {r['qps_cpu']:7.0f}  qps(wall) {r['qps_wall']:7.0f}", file=sys.stderr)

    out = {
        "benchmark": "bench/bench_rabitq_peers.py", "set": args.set, "n": len(train),
        "queries": len(queries), "k": k, "clusters": args.clusters, "build_seconds": builds,
        "loadavg": os.getloadavg(),
        "machine": runinfo.machine(), "git": runinfo.git_info(),
        "versions": {d: _version(d) for d in ("hnswlib", "rabitqlib", "numpy")},
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": results,
    }
    path = Path(args.out) if args.out else runinfo.result_path("rabitq-peers", args.set)
    path.write_text(json.dumps(out, indent=1))
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
