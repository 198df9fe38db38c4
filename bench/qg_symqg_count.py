#!/usr/bin/env python3
"""SymphonyQG's per-query work (hops, estimates, exact distances, CPU ns) on BenchmarkQGHop's rows.

Issue 22 asks where strata's qg layout spends a query compared with SymphonyQG. This
copies RaBitQ-Library's headers (the `include/` of github.com/VectorDB-NTU/RaBitQ-Library
or of the `rabitqlib` sdist on PyPI), patches counters into symqg/qg.hpp (buffer pops,
hops, estimates, buffer inserts, exact distances) and an accessor for the neighbour ids,
compiles bench/qg_symqg_count.cpp against them and runs it on a directory that
BenchmarkQGHop filled with $STRATA_QG_DUMP:

    STRATA_RABITQ_N=50000 STRATA_RABITQ_Q=500 STRATA_QG_DUMP=/tmp/pypi50k \\
        go test ./go/hnsw/ -run '^$' -bench '^BenchmarkQGHop$' -benchtime 1x
    bench/qg_symqg_count.py --include RaBitQ-Library/include --dir /tmp/pypi50k \\
        --dim 512 --metric cosine --efs 10,16,24,32,48,64

It builds SymphonyQG's graph (QGBuilder, ef 200, degree 32, 2 threads; cached in
<dir>/symqg.index), writes it to <dir>/symqg.graph for BenchmarkQGHop's
$STRATA_QG_GRAPH (strata's search on SymphonyQG's graph), and prints one JSON line per ef.
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (old, new, count): each old text must occur exactly count times in qg.hpp.
PATCHES = [
    ("namespace rabitqlib::symqg {",
     "namespace qgcount {\n"
     "inline thread_local unsigned long long pops, hops, est, exact, inserts;\n}\n"
     "namespace rabitqlib::symqg {", 1),
    ("   public:\n",
     "   public:\n    [[nodiscard]] const PID* neighbours_of(PID id) const {\n"
     "        return get_neighbors(id);\n    }\n",
     1),
    ("        PID cur_node = search_pool.pop();\n        if (vis->get(cur_node)) {\n"
     "            continue;\n        }\n        vis->set(cur_node);\n",
     "        PID cur_node = search_pool.pop();\n        qgcount::pops++;\n"
     "        if (vis->get(cur_node)) {\n            continue;\n        }\n"
     "        vis->set(cur_node);\n        qgcount::hops++; qgcount::exact++;\n", 2),
    ("    void set_ef(size_t);\n",
     "    void set_ef(size_t);\n"
     "    // the query preparation of search() alone: rotation, LUT (bench/qg_symqg_count.cpp)\n"
     "    [[nodiscard]] T prepare_only(const T* query) const {\n"
     "        std::vector<T> rotated_query(padded_dim_);\n"
     "        rotator_->rotate(query, rotated_query.data());\n"
     "        BatchQuery<T> q_obj(rotated_query.data(), padded_dim_);\n"
     "        return q_obj.delta() + q_obj.lut()[padded_dim_ % 7];\n"
     "    }\n", 1),
    ("    const auto* batch_data = get_batch_data(data_id);\n",
     "    const auto* batch_data = get_batch_data(data_id);\n    qgcount::est += cur_degree;\n", 1),
    ("        search_pool.insert(cur_neighbor, dist);  // update search buffer\n",
     "        search_pool.insert(cur_neighbor, dist);  // update search buffer\n"
     "        qgcount::inserts++;\n", 1),
    ("                vis.set(cur_neighbor);\n                result_pool.insert(",
     "                vis.set(cur_neighbor);\n                qgcount::exact++;\n"
     "                result_pool.insert(", 1),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--include", required=True, help="RaBitQ-Library's include directory")
    ap.add_argument("--dir", required=True, help="a $STRATA_QG_DUMP directory")
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--metric", choices=["cosine", "l2"], required=True)
    ap.add_argument("--efs", default="10,16,24,32,48,64")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inc = Path(tmp) / "include"
        shutil.copytree(args.include, inc)
        qg = inc / "rabitqlib/index/symqg/qg.hpp"
        text = qg.read_text()
        for old, new, count in PATCHES:
            if text.count(old) != count:
                sys.exit(f"{qg}: {old.splitlines()[0]!r} found {text.count(old)} times, "
                         f"want {count} (another RaBitQ-Library version?)")
            text = text.replace(old, new)
        qg.write_text(text)
        binary = Path(tmp) / "qg_symqg_count"
        subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", "-std=c++17", "-I", str(inc),
                        str(HERE / "qg_symqg_count.cpp"), "-o", str(binary)], check=True)
        subprocess.run([str(binary), args.dir, str(args.dim), args.metric, args.efs,
                        str(args.rounds)], check=True)


if __name__ == "__main__":
    main()
