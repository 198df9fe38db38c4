/*
 * strata.h - the C ABI of strata, an embedded vector database.
 *
 * This hand-written header is the single source of truth for the ABI:
 *   - capi/*.go include it, so the C compiler checks every declaration below
 *     against the prototype cgo generates for the matching //export function
 *     (which is also why input pointers carry no `const`: cgo emits none);
 *   - python/ffi_build.py hands the text between the CDEF markers to cffi.
 *
 * Conventions, for every function:
 *   - The return value is a status code (enum strata_status); 0 means success.
 *   - The last two parameters are a caller-owned buffer `err` of `errlen`
 *     bytes. On failure a NUL-terminated, possibly truncated, UTF-8 message is
 *     written to it; on success it is left untouched. There is no global
 *     "last error", so any number of threads may call concurrently.
 *   - Indexes are opaque handles. A handle that was never created, or was
 *     freed, yields STRATA_ERR_HANDLE, never a crash.
 *   - Pointers are only used during the call: vectors are copied into the
 *     library on add, and outputs are written into caller-allocated memory
 *     before the call returns. Nothing keeps a pointer after returning.
 *   - Vectors are row-major float32, `dim` floats per row.
 *   - A Go panic inside the library is recovered and reported as
 *     STRATA_ERR_INTERNAL.
 *   - Do not call into the library from a child process created by fork()
 *     after the library was loaded: the Go runtime does not survive fork.
 *
 * The numeric values of the enums are part of the ABI: do not change them.
 */
#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

/* BEGIN CDEF */
typedef uint64_t strata_handle;

enum strata_status {
    STRATA_OK = 0,
    STRATA_ERR_INVALID = 1,   /* bad argument value or shape */
    STRATA_ERR_TYPE = 2,      /* argument of the wrong kind */
    STRATA_ERR_NOT_FOUND = 3, /* unknown id */
    STRATA_ERR_HANDLE = 4,    /* invalid or freed handle */
    STRATA_ERR_CORRUPT = 5,   /* an integrity check failed */
    STRATA_ERR_INTERNAL = 6   /* a bug: recovered panic or unexpected error */
};

enum strata_kind {
    STRATA_KIND_HNSW = 0,
    STRATA_KIND_FLAT = 1
};

enum strata_metric {
    STRATA_METRIC_L2 = 0,     /* squared Euclidean distance */
    STRATA_METRIC_IP = 1,     /* 1 - dot product */
    STRATA_METRIC_COSINE = 2  /* 1 - cosine similarity */
};

/* strata_create makes an empty index and stores its handle in *out.
 * m and ef_construction are used by STRATA_KIND_HNSW only. With has_seed 0
 * the seed is drawn at random. */
int strata_create(int kind, int64_t dim, int metric, int64_t m,
                  int64_t ef_construction, uint64_t seed, int has_seed,
                  strata_handle *out, char *err, size_t errlen);

/* strata_free releases an index. Searches already running finish safely;
 * later calls with the handle fail with STRATA_ERR_HANDLE. */
int strata_free(strata_handle h, char *err, size_t errlen);

/* strata_add inserts n vectors. ids (n values, each <= INT64_MAX, distinct)
 * may be NULL for sequential ids; an id already present has its vector
 * replaced. out_ids (n slots) may be NULL; it receives the ids used.
 * num_threads <= 0 uses every core. A rejected batch changes nothing. */
int strata_add(strata_handle h, float *vectors, int64_t n, uint64_t *ids,
               uint64_t *out_ids, int num_threads, char *err, size_t errlen);

/* strata_search finds the k nearest stored vectors of each of nq queries.
 * out_ids and out_dists hold nq*k values, row-major, nearest first; missing
 * results are id -1 and distance +inf. ef <= 0 means the engine default;
 * it is ignored by STRATA_KIND_FLAT. */
int strata_search(strata_handle h, float *queries, int64_t nq, int64_t k,
                  int64_t ef, int num_threads, int64_t *out_ids,
                  float *out_dists, char *err, size_t errlen);

int strata_len(strata_handle h, int64_t *out, char *err, size_t errlen);
int strata_dim(strata_handle h, int64_t *out, char *err, size_t errlen);
int strata_metric(strata_handle h, int *out, char *err, size_t errlen);

/* strata_progress stores in *out how many vectors adds have stored since the
 * index was created; safe to poll from another thread during strata_add. */
int strata_progress(strata_handle h, int64_t *out, char *err, size_t errlen);

/* strata_check_integrity verifies the index's internal invariants and fails
 * with STRATA_ERR_CORRUPT, describing the first violation, if one is broken. */
int strata_check_integrity(strata_handle h, char *err, size_t errlen);

/* strata_kernel_path and strata_version write a NUL-terminated string into
 * out (outlen bytes): the distance-kernel implementation chosen for this CPU,
 * and the library version. */
int strata_kernel_path(char *out, size_t outlen, char *err, size_t errlen);
int strata_version(char *out, size_t outlen, char *err, size_t errlen);
/* END CDEF */

#endif /* STRATA_H */
