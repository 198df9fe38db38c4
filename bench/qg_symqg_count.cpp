// SymphonyQG's per-query work counted on the rows BenchmarkQGHop measures
// strata's qg layout on (issue 22): rabitqlib's QuantizedGraph built by its
// QGBuilder (ef 200, 3 iterations, degree 32, as bench_ann's
// rabitqlib-symqg), searched one query at a time at each ef with counters
// patched into qg.hpp by bench/qg_symqg_count.py: buffer pops, hops (nodes
// expanded), estimates, buffer inserts and exact distances per query, CPU ns
// per query of this thread, and recall@10 against the truth the Go side
// dumped ($STRATA_QG_DUMP). One JSON line per ef on stdout, after one line
// with the CPU ns of the query preparation alone (rotation and LUT).
//
// usage: qg_symqg_count <dir> <dim> <cosine|l2> <efs, comma-separated> <rounds>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "rabitqlib/index/symqg/qg.hpp"
#include "rabitqlib/index/symqg/qg_builder.hpp"

static std::vector<float> read_f32(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) { std::cerr << "cannot read " << path << "\n"; std::exit(1); }
    std::vector<float> v(f.tellg() / 4);
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), v.size() * 4);
    return v;
}

static double thread_cpu() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void normalise(std::vector<float>& v, size_t dim) {
    for (size_t i = 0; i < v.size(); i += dim) {
        double s = 0;
        for (size_t j = 0; j < dim; ++j) s += double(v[i + j]) * v[i + j];
        float inv = s > 0 ? float(1 / std::sqrt(s)) : 0;
        for (size_t j = 0; j < dim; ++j) v[i + j] *= inv;
    }
}

int main(int argc, char** argv) {
    if (argc != 6) {
        std::cerr << "usage: qg_symqg_count <dir> <dim> <cosine|l2> <efs> <rounds>\n";
        return 2;
    }
    std::string dir = argv[1];
    size_t dim = std::stoul(argv[2]);
    bool cosine = std::string(argv[3]) == "cosine";
    std::vector<size_t> efs;
    std::stringstream ss(argv[4]);
    for (std::string e; std::getline(ss, e, ',');) efs.push_back(std::stoul(e));
    int rounds = std::atoi(argv[5]);

    auto train = read_f32(dir + "/train.f32");
    auto queries = read_f32(dir + "/queries.f32");
    auto truth_f = read_f32(dir + "/truth.u32");
    const uint32_t* truth = reinterpret_cast<const uint32_t*>(truth_f.data());
    if (cosine) { normalise(train, dim); normalise(queries, dim); }
    size_t n = train.size() / dim, nq = queries.size() / dim, k = 10;

    rabitqlib::symqg::QuantizedGraph<float> qg(n, dim, 32, rabitqlib::METRIC_L2,
                                                rabitqlib::RotatorType::FhtKacRotator);
    std::string cache = dir + "/symqg.index";
    if (std::ifstream(cache).good()) {
        qg.load(cache.c_str());
        std::cerr << "loaded " << cache << "\n";
    } else {
        timespec w0, w1;
        clock_gettime(CLOCK_MONOTONIC, &w0);
        rabitqlib::symqg::QGBuilder builder(qg, 200, train.data(), 2);
        builder.build();
        clock_gettime(CLOCK_MONOTONIC, &w1);
        std::cerr << "build wall s " << (w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) * 1e-9 << "\n";
        qg.save(cache.c_str());
    }
    {
        // the graph, for BenchmarkQGHop's $STRATA_QG_GRAPH: entry, then n rows of 32 ids
        std::ofstream g(dir + "/symqg.graph", std::ios::binary);
        uint32_t ep = qg.entry_point();
        g.write(reinterpret_cast<const char*>(&ep), 4);
        for (size_t i = 0; i < n; ++i)
            g.write(reinterpret_cast<const char*>(qg.neighbours_of(i)), 32 * 4);
    }
    std::vector<uint32_t> res(k);
    {
        // the preparation alone (rotation and LUT, as search() starts), per query
        std::vector<double> cpu;
        float sink = 0;
        for (int r = 0; r < rounds; ++r) {
            double t0 = thread_cpu();
            for (size_t i = 0; i < nq; ++i) sink += qg.prepare_only(&queries[i * dim]);
            cpu.push_back((thread_cpu() - t0) * 1e9 / nq);
        }
        std::sort(cpu.begin(), cpu.end());
        std::printf("{\"prepare_cpu_ns_per_query\": %.0f, \"sink\": %g}\n", cpu[cpu.size() / 2], sink);
        std::fflush(stdout);
    }
    for (size_t ef : efs) {
        qg.set_ef(ef);
        std::vector<double> cpu;
        size_t correct = 0;
        unsigned long long pops = 0, hops = 0, est = 0, exact = 0, inserts = 0;
        for (int r = 0; r < rounds; ++r) {
            qgcount::pops = qgcount::hops = qgcount::est = qgcount::exact = qgcount::inserts = 0;
            correct = 0;
            double t0 = thread_cpu();
            for (size_t i = 0; i < nq; ++i) {
                qg.search(&queries[i * dim], k, res.data());
                for (size_t a = 0; a < k; ++a)
                    for (size_t b = 0; b < k; ++b)
                        if (truth[i * k + b] == res[a]) { ++correct; break; }
            }
            cpu.push_back((thread_cpu() - t0) * 1e9 / nq);
            pops = qgcount::pops; hops = qgcount::hops; est = qgcount::est;
            exact = qgcount::exact; inserts = qgcount::inserts;
        }
        std::sort(cpu.begin(), cpu.end());
        double med = cpu[cpu.size() / 2];
        std::printf("{\"ef\": %zu, \"recall\": %.4f, \"cpu_ns_per_query\": %.0f, \"pops\": %.1f, "
                    "\"hops\": %.1f, \"estimates\": %.1f, \"inserts\": %.1f, \"exact\": %.1f, "
                    "\"ns_per_hop\": %.1f, \"n\": %zu, \"queries\": %zu}\n",
                    ef, double(correct) / (nq * k), med, double(pops) / nq, double(hops) / nq,
                    double(est) / nq, double(inserts) / nq, double(exact) / nq,
                    med / (double(hops) / nq), n, nq);
        std::fflush(stdout);
    }
}
