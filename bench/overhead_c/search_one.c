/*
 * search_one: time single-query searches through strata's C ABI, without Python.
 *
 * bench/bench_overhead.py compiles this file and runs it on the same raw float32 files and the
 * same parameters as its Python measurement, so the two timings differ only by the Python layer
 * (argument checks, cffi). The engine library is loaded with dlopen from the installed package,
 * so both sides run the very same .so.
 *
 *   search_one LIB TRAIN.f32 QUERIES.f32 DIM METRIC K EF M EFC SEED BUILD_THREADS IDS_OUT
 *   search_one LIB --load INDEX QUERIES.f32 DIM K EF IDS_OUT
 *
 * Builds the index (or, with --load, loads a file saved by strata_save: the same graph and codes
 * that the Python side and the Go benchmark load), writes the ids of a first pass over the
 * queries (nq x K int64) to IDS_OUT so the caller can check both sides found the same, prints
 * "ready", then serves rounds: for each number CALLS read from stdin it runs CALLS single-query
 * searches with strata_search_one (cycling through the queries) and prints the wall-clock and
 * the CPU (this thread's) nanoseconds per call. The caller alternates these rounds with its own,
 * so both see the same machine load. EOF ends the program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../capi/strata.h"

typedef int (*create_fn)(int, int64_t, int, int64_t, int64_t, uint64_t, int, strata_handle *,
                         char *, size_t);
typedef int (*add_fn)(strata_handle, float *, int64_t, uint64_t *, uint64_t *, int, char *,
                      size_t);
typedef int (*load_fn)(char *, int, strata_handle *, char *, size_t);
/* strata_search_one: the call Python's single-query fast path makes. */
typedef int (*search_fn)(strata_handle, float *, int64_t, int64_t, int64_t *, float *, char *,
                         size_t);

static float *read_f32(const char *path, size_t *count) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *data = malloc((size_t)bytes);
    if (!data || fread(data, 1, (size_t)bytes, f) != (size_t)bytes) {
        fprintf(stderr, "%s: short read\n", path);
        exit(2);
    }
    fclose(f);
    *count = (size_t)bytes / sizeof(float);
    return data;
}

static void *must_sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check(int rc, const char *what, const char *err) {
    if (rc != STRATA_OK) {
        fprintf(stderr, "%s: status %d: %s\n", what, rc, err);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int loading = argc == 9 && strcmp(argv[2], "--load") == 0;
    if (argc != 13 && !loading) {
        fprintf(stderr,
                "usage: %s LIB TRAIN QUERIES DIM METRIC K EF M EFC SEED BUILD_THREADS IDS_OUT\n"
                "       %s LIB --load INDEX QUERIES DIM K EF IDS_OUT\n",
                argv[0], argv[0]);
        return 2;
    }
    const char *lib_path = argv[1];
    void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    search_fn search = (search_fn)must_sym(lib, "strata_search_one");
    char err[1024] = {0};
    strata_handle h;
    int64_t dim, k, ef, nq;
    float *queries;
    size_t nquery_f;
    const char *ids_path;
    if (loading) {
        load_fn load = (load_fn)must_sym(lib, "strata_load");
        dim = atoll(argv[5]);
        k = atoll(argv[6]);
        ef = atoll(argv[7]);
        ids_path = argv[8];
        check(load(argv[3], 0, &h, err, sizeof err), "load", err);
        queries = read_f32(argv[4], &nquery_f);
    } else {
        dim = atoll(argv[4]);
        int metric = atoi(argv[5]);
        k = atoll(argv[6]);
        ef = atoll(argv[7]);
        int64_t m = atoll(argv[8]), efc = atoll(argv[9]);
        uint64_t seed = strtoull(argv[10], NULL, 10);
        int build_threads = atoi(argv[11]);
        ids_path = argv[12];
        create_fn create = (create_fn)must_sym(lib, "strata_create");
        add_fn add = (add_fn)must_sym(lib, "strata_add");
        size_t ntrain_f;
        float *train = read_f32(argv[2], &ntrain_f);
        queries = read_f32(argv[3], &nquery_f);
        int64_t n = (int64_t)(ntrain_f / (size_t)dim);
        check(create(STRATA_KIND_HNSW, dim, metric, m, efc, seed, 1, &h, err, sizeof err),
              "create", err);
        uint64_t *ids_out = malloc(sizeof(uint64_t) * (size_t)n);
        check(add(h, train, n, NULL, ids_out, build_threads, err, sizeof err), "add", err);
    }
    nq = (int64_t)(nquery_f / (size_t)dim);

    int64_t *ids = malloc(sizeof(int64_t) * (size_t)k);
    float *dists = malloc(sizeof(float) * (size_t)k);
    int64_t *first = malloc(sizeof(int64_t) * (size_t)(nq * k));
    /* First pass over every query: the ids to compare with Python's, and a warm-up. */
    for (int64_t i = 0; i < nq; i++) {
        check(search(h, queries + i * dim, k, ef, first + i * k, dists, err, sizeof err),
              "search", err);
    }
    FILE *f = fopen(ids_path, "wb");
    if (!f || fwrite(first, sizeof(int64_t), (size_t)(nq * k), f) != (size_t)(nq * k)) {
        perror(ids_path);
        return 2;
    }
    fclose(f);
    printf("ready\n");
    fflush(stdout);
    long calls;
    while (scanf("%ld", &calls) == 1 && calls > 0) {
        int64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (long c = 0; c < calls; c++) {
            int64_t i = c % nq;
            int rc = search(h, queries + i * dim, k, ef, ids, dists, err, sizeof err);
            if (rc != STRATA_OK) check(rc, "search", err);
        }
        int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        printf("%.1f %.1f\n", (double)(clock_ns(CLOCK_MONOTONIC) - t0) / (double)calls,
               (double)cpu / (double)calls);
        fflush(stdout);
    }
    return 0;
}
