"""python -m strata.demo: build an HNSW index, compare it with exact search, sweep ef.

Data: the directory in $STRATA_DATA (or --data) holding train.f16.npy and
test.f16.npy (the pypi-use512 embeddings, cosine), else a generated Gaussian
mixture. Ground truth comes from strata.FlatIndex, so the demo checks the
approximate index against the exact one on the same data.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import strata


def load(data_dir: str, limit: int, queries: int) -> tuple[np.ndarray, np.ndarray, str, str]:
    directory = Path(data_dir)
    train = np.load(directory / "train.f16.npy", mmap_mode="r")[:limit].astype(np.float32)
    test = np.load(directory / "test.f16.npy", mmap_mode="r")[:queries].astype(np.float32)
    return train, test, "cosine", f"{directory.name} ({len(train)} x {train.shape[1]})"


def generate(limit: int, queries: int, dim: int = 128) -> tuple[np.ndarray, np.ndarray, str, str]:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(500, dim))
    labels = rng.integers(0, len(centres), size=limit + queries)
    points = (centres[labels] + 0.4 * rng.normal(size=(limit + queries, dim))).astype(np.float32)
    return points[:limit], points[limit:], "l2", f"Gaussian mixture ({limit} x {dim}, 500 centres)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("STRATA_DATA") or None)
    parser.add_argument("--limit", type=int, default=50_000, help="vectors to index")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)

    if args.data:
        train, test, metric, name = load(args.data, args.limit, args.queries)
    else:
        train, test, metric, name = generate(args.limit, args.queries)
    print(f"strata {strata.__version__}, kernels: {strata.kernel_path()}")
    print(f"data: {name}, {len(test)} queries, metric {metric}")

    with strata.FlatIndex(train.shape[1], metric=metric) as flat:
        flat.add(train)
        start = time.perf_counter()
        truth, _ = flat.search(test, k=args.k)
        print(f"exact search (FlatIndex): {time.perf_counter() - start:.2f} s for all queries")

    with strata.Index(train.shape[1], metric=metric, M=16, ef_construction=200, seed=1) as index:
        start = time.perf_counter()
        index.add(train, progress=True)
        build = time.perf_counter() - start
        print(f"HNSW build (M=16, ef_construction=200): {build:.1f} s, "
              f"{len(train) / build:,.0f} vectors/s")  # fmt: skip
        index.check_integrity()

        print(f"\n{'ef':>5} {'recall@' + str(args.k):>10} {'batch QPS':>11} {'1-query us':>11}")
        for ef in (10, 16, 32, 64, 128, 256):
            ef = max(ef, args.k)
            start = time.perf_counter()
            found, _ = index.search(test, k=args.k, ef=ef)
            qps = len(test) / (time.perf_counter() - start)
            start = time.perf_counter()
            for query in test[:200]:
                index.search(query, k=args.k, ef=ef, num_threads=1)
            latency = (time.perf_counter() - start) / min(200, len(test)) * 1e6
            hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True))
            print(f"{ef:>5} {hits / truth.size:>10.4f} {qps:>11,.0f} {latency:>11.1f}")


if __name__ == "__main__":
    main()
