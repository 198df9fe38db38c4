"""VectorDBBench (PyPI vectordb-bench) against strata-server's Qdrant door, on pypi-use512.

VectorDBBench is not in the project's venv (it pins streamlit, pymilvus and more): install it
into a venv of its own, `python -m venv V && V/bin/pip install 'vectordb-bench[qdrant]==2.0.0'`.

    # 1. its custom-dataset files (train/test/neighbors parquet), outside the repository
    V/bin/python bench/bench_vectordbbench.py parquet --data ../shared/data/pypi-use512 --out DIR
    # 2. strata-server --qdrant-addr 127.0.0.1:18633 on a scratch data dir, then
    V/bin/vectordbbench qdrantlocal --url http://127.0.0.1:18633 --m 16 --ef-construct 200 \\
        --hnsw-ef 64 --k 10 --num-concurrency 1,8,32 --concurrency-duration 10 \\
        --case-type PerformanceCustomDataset --custom-case-name pypi-use512 \\
        --custom-dataset-name pypi-use512 --custom-dataset-dir DIR \\
        --custom-dataset-size 100000 --custom-dataset-dim 512 --custom-dataset-metric-type COSINE \\
        --custom-dataset-file-count 1 > run.log 2>&1
    # 3. its figures (from its log lines and its result JSON) into bench/results/vectordbbench/
    python bench/bench_vectordbbench.py record --log run.log [--log more.log] --label L

`record` reads what VectorDBBench logs (insert count and duration, each concurrency's QPS, the
serial pass's recall, ndcg and latency percentiles): a run cut short, or one made of several
invocations (--skip-load on the loaded collection), still records what each phase printed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runinfo

INSERT = re.compile(r"Finish concurrent insert, count=(\d+), dur=([\d.]+)s")
CONCURRENT = re.compile(
    r"End search in concurrency (\d+): dur=([\d.]+)s, total_count=(\d+), qps=([\d.]+)")
SERIAL = re.compile(
    r"search entire test_data: cost=([\d.]+)s, queries=(\d+), avg_recall=([\d.]+), "
    r"avg_ndcg=([\d.]+), avg_latency=([\d.]+), p99=([\d.]+), p95=([\d.]+), p50=([\d.]+)")
TASK = re.compile(r"TaskConfig\((.*)")


def parquet(data: Path, out: Path) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    train = np.load(data / "train.f16.npy").astype(np.float32)
    test = np.load(data / "test.f16.npy").astype(np.float32)
    neighbors = np.load(data / "neighbors.npy").astype(np.int64)

    def rows(vectors: np.ndarray) -> pa.Table:
        return pa.table({"id": pa.array(np.arange(len(vectors)), pa.int64()),
                         "emb": pa.array(list(vectors), pa.list_(pa.float32()))})

    pq.write_table(rows(train), out / "train.parquet")
    pq.write_table(rows(test), out / "test.parquet")
    pq.write_table(pa.table({"id": pa.array(np.arange(len(neighbors)), pa.int64()),
                             "neighbors_id": pa.array(list(neighbors), pa.list_(pa.int64()))}),
                   out / "neighbors.parquet")
    print(f"{out}: train {train.shape}, test {test.shape}, neighbors {neighbors.shape}")


def record(logs: list[Path], label: str | None, server: str, note: str) -> Path:
    result: dict = {"benchmark": "vectordbbench", "machine": runinfo.machine(),
                    "git": runinfo.git_info(), "server": server, "note": note,
                    "logs": [p.name for p in logs], "tasks": [], "concurrent": []}
    for log in logs:
        text = log.read_text(errors="replace")
        result["tasks"] += [m.group(1)[:600] for m in TASK.finditer(text)]
        for m in INSERT.finditer(text):
            count, seconds = int(m[1]), float(m[2])
            result["insert"] = {"count": count, "seconds": seconds, "rows_per_s": count / seconds}
        for m in CONCURRENT.finditer(text):
            result["concurrent"].append({"concurrency": int(m[1]), "seconds": float(m[2]),
                                         "queries": int(m[3]), "qps": float(m[4])})
        for m in SERIAL.finditer(text):
            result["serial"] = {"seconds": float(m[1]), "queries": int(m[2]),
                                "recall": float(m[3]), "ndcg": float(m[4]),
                                "mean_ms": float(m[5]) * 1e3, "p99_ms": float(m[6]) * 1e3,
                                "p95_ms": float(m[7]) * 1e3, "p50_ms": float(m[8]) * 1e3}
    path = runinfo.result_path("vectordbbench", label)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parquet", help="VectorDBBench's custom-dataset files from pypi-use512")
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("record", help="a results JSON from VectorDBBench's logs")
    r.add_argument("--log", type=Path, action="append", required=True)
    r.add_argument("--label")
    r.add_argument("--server", default="", help="which strata-server build was measured")
    r.add_argument("--note", default="")
    args = ap.parse_args()
    if args.command == "parquet":
        parquet(args.data, args.out)
    else:
        record(args.log, args.label, args.server, args.note)


if __name__ == "__main__":
    main()
