/*
 * search_one: time single-query searches through strata's C ABI, without Python.
 *
 * bench/bench_overhead.py compiles this file and runs it on the index file and the queries its
 * Python side searches, so the two timings differ only by the Python layer (argument checks,
 * cffi). The engine library is loaded with dlopen from the installed package (or another build's,
 * for an A/B), so both sides can run the very same .so.
 *
 *   search_one LIB INDEX QUERIES.f32 DIM K EF IDS_OUT
 *
 * Loads INDEX (a file saved by strata_save) with strata_load, writes the ids of a first pass over
 * the queries (nq x K int64) to IDS_OUT so the caller can check both sides found the same, prints
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
#include <time.h>

#include "../../capi/strata.h"

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
    if (argc != 8) {
        fprintf(stderr, "usage: %s LIB INDEX QUERIES DIM K EF IDS_OUT\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    load_fn load = (load_fn)must_sym(lib, "strata_load");
    search_fn search = (search_fn)must_sym(lib, "strata_search_one");
    int64_t dim = atoll(argv[4]), k = atoll(argv[5]), ef = atoll(argv[6]);
    const char *ids_path = argv[7];
    char err[1024] = {0};
    strata_handle h;
    check(load(argv[2], 0, &h, err, sizeof err), "load", err);
    size_t nquery_f;
    float *queries = read_f32(argv[3], &nquery_f);
    int64_t nq = (int64_t)(nquery_f / (size_t)dim);

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
