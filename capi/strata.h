/*
 * strata.h - the C ABI of strata, an embedded vector database.
 *
 * This hand-written header is the single source of truth for the ABI:
 *   - the Go files of capi/ include it, so the C compiler checks every declaration below
 *     against the prototype cgo generates for the matching //export function
 *     (which is also why input pointers carry no `const`: cgo emits none);
 *   - python/ffi_build.py hands the text between the CDEF markers to cffi,
 *     which compiles it into strata._ffi (the types) and strata._calls (the
 *     functions: `int` or `void` strata_* declarations, one per statement).
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

/* Every status but STRATA_OK is one kind of the engine's error taxonomy
 * (package go/errkind), and every kind has exactly one status:
 *   invalid, too large -> STRATA_ERR_INVALID; wrong type -> STRATA_ERR_TYPE;
 *   id not found -> STRATA_ERR_NOT_FOUND; closed -> STRATA_ERR_HANDLE;
 *   corrupt (or a format version this build cannot read) -> STRATA_ERR_CORRUPT;
 *   a bug -> STRATA_ERR_INTERNAL; other OS errors -> STRATA_ERR_IO;
 *   no such file -> STRATA_ERR_NO_FILE; locked -> STRATA_ERR_LOCKED;
 *   failed -> STRATA_ERR_FAILED; exists -> STRATA_ERR_EXISTS; and the
 *   environment's four: STRATA_ERR_NO_SPACE, STRATA_ERR_EXHAUSTED,
 *   STRATA_ERR_READ_ONLY, STRATA_ERR_PERMISSION.
 * The message written into err names the cause (file, offset, limit). */
enum strata_status {
    STRATA_OK = 0,
    STRATA_ERR_INVALID = 1,   /* bad argument value or shape */
    STRATA_ERR_TYPE = 2,      /* argument of the wrong kind */
    STRATA_ERR_NOT_FOUND = 3, /* unknown id */
    STRATA_ERR_HANDLE = 4,    /* invalid or freed handle */
    STRATA_ERR_CORRUPT = 5,   /* an integrity check failed */
    STRATA_ERR_INTERNAL = 6,  /* a bug: recovered panic or unexpected error */
    STRATA_ERR_IO = 7,        /* the operating system refused a file operation */
    STRATA_ERR_NO_FILE = 8,   /* the file does not exist */
    STRATA_ERR_LOCKED = 9,    /* the collection is open elsewhere */
    STRATA_ERR_FAILED = 10,   /* a write, fsync or checkpoint failed: the collection refuses writes */
    STRATA_ERR_EXISTS = 11,   /* a collection already exists there */
    STRATA_ERR_NO_SPACE = 12, /* the disk or quota is full (ENOSPC, EDQUOT) */
    STRATA_ERR_EXHAUSTED = 13, /* out of file descriptors or memory (EMFILE, ENFILE, ENOMEM) */
    STRATA_ERR_READ_ONLY = 14, /* the file system is read-only (EROFS) */
    STRATA_ERR_PERMISSION = 15 /* the operating system refused access (EACCES, EPERM) */
};

enum strata_kind {
    STRATA_KIND_HNSW = 0,
    STRATA_KIND_FLAT = 1
};

enum strata_metric {
    STRATA_METRIC_L2 = 0,     /* squared Euclidean distance */
    STRATA_METRIC_IP = 1,     /* 1 - dot product */
    STRATA_METRIC_COSINE = 2, /* 1 - cosine similarity */
    STRATA_METRIC_L1 = 3      /* Manhattan distance: sum of |a[i] - b[i]| */
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

/* strata_search_one is strata_search for one query (dim floats) on the
 * caller's thread: out_ids and out_dists hold k values. It is the shortest
 * path through the ABI, for latency-bound callers. */
int strata_search_one(strata_handle h, float *query, int64_t k, int64_t ef,
                      int64_t *out_ids, float *out_dists, char *err, size_t errlen);

int strata_len(strata_handle h, int64_t *out, char *err, size_t errlen);
int strata_dim(strata_handle h, int64_t *out, char *err, size_t errlen);
int strata_metric(strata_handle h, int *out, char *err, size_t errlen);

/* strata_progress stores in *out how many vectors adds have stored since the
 * index was created; safe to poll from another thread during strata_add. */
int strata_progress(strata_handle h, int64_t *out, char *err, size_t errlen);

/* strata_check_integrity verifies the index's internal invariants and fails
 * with STRATA_ERR_CORRUPT, describing the first violation, if one is broken. */
int strata_check_integrity(strata_handle h, char *err, size_t errlen);

enum strata_quantization {
    STRATA_QUANT_NONE = 0,    /* float32 vectors */
    STRATA_QUANT_SQ8 = 1,     /* 8-bit scalar quantization */
    STRATA_QUANT_RABITQ = 2,  /* float32 vectors plus RaBitQ codes that graph searches run on */
    STRATA_QUANT_RABITQ_QG = 3, /* STRATA_QUANT_RABITQ with 1-bit codes searched as a quantized
                                  graph (SymphonyQG's layout): bits 0 or 1, rerank 1 */
    STRATA_QUANT_RABITQ_ROWS = 4 /* STRATA_QUANT_RABITQ with 1-bit codes searched one code row per
                                  neighbour, no per-edge neighbour records, refined with the
                                  float vectors (which may be memory-mapped): bits 0 or 1,
                                  rerank 1 */
};

enum strata_plan {
    STRATA_PLAN_GRAPH = 0,    /* HNSW traversal, admitting only allowed ids */
    STRATA_PLAN_EXACT = 1,    /* exact scan of the allowed vectors */
    STRATA_PLAN_EMPTY = 2     /* nothing to search */
};

/* What an HNSW index was built with, and its current state. */
typedef struct {
    int64_t dim;
    int metric;
    int64_t m;
    int64_t ef_construction;
    int quantization;
    int rerank;             /* SQ8 or RaBitQ: float vectors are kept (0: codes only) */
    int trained;            /* 0 until an SQ8 index has its ranges */
    int64_t len;            /* live vectors */
    int64_t tombstones;     /* removed or replaced vectors compact() would reclaim */
    int mmapped;            /* float vectors are memory-mapped from a file */
    int rabitq_bits;        /* STRATA_QUANT_RABITQ: bits of the re-ranking codes (1: none) */
    /* Memory of each part, in bytes, for `nodes` stored vectors (live ones
     * and tombstones): divide by nodes for bytes per vector. */
    int64_t nodes;
    int64_t graph_bytes;         /* links and per-node bookkeeping */
    int64_t float_bytes;         /* float32 vectors (in the file when mmapped) */
    int64_t sq8_bytes;           /* SQ8 codes and their terms */
    int64_t rabitq_code_bytes;   /* current RaBitQ codes: 1-bit, plus extended */
    int64_t rabitq_factor_bytes; /* their per-vector factors */
    int64_t rabitq_block_bytes;  /* level-0 neighbour records (neighbours' codes beside each node's links) */
} strata_info;

/* How a search call was answered (the same for every query of the call). */
typedef struct {
    int64_t distance_computations;
    int plan;
    int64_t allowed;        /* live vectors the filter let through */
    int64_t ef_search;      /* candidate list size used (widened for filters) */
    int64_t refinements;    /* RaBitQ: 1-bit estimates refined (extended code or float), all queries */
} strata_search_stats;

/* The functions below need an HNSW index (STRATA_KIND_HNSW); called with a
 * flat index they fail with STRATA_ERR_TYPE. */

/* strata_create_hnsw is strata_create for HNSW with quantization
 * (enum strata_quantization) and, for SQ8, rerank (keep float vectors and
 * re-rank candidates with them). For STRATA_QUANT_RABITQ, bits is the width
 * of the re-ranking codes (0: the engine's default; 1: 1-bit codes only,
 * re-ranked with the float vectors). With rerank 1 the float vectors are
 * kept; the codes are fitted on the first add and kept current by every
 * add, remove and compact. With rerank 0 the index is codes-only: bits in
 * 2..8 (0: 3), the graph is built by the one add it takes, whose float
 * vectors are then dropped; searches re-rank with the extended codes and
 * report their estimated distances; a later add, compact and get_vectors
 * fail with STRATA_ERR_INVALID. bits must be 0 for other quantizations. */
int strata_create_hnsw(int64_t dim, int metric, int64_t m, int64_t ef_construction,
                       uint64_t seed, int has_seed, int quantization, int rerank,
                       int bits, strata_handle *out, char *err, size_t errlen);

int strata_info_get(strata_handle h, strata_info *out, char *err, size_t errlen);

/* strata_search_filtered is strata_search restricted to ids in allow
 * (n_allow ids; n_allow < 0 means no allow list) and not in deny (n_deny
 * ids). stats may be NULL. */
int strata_search_filtered(strata_handle h, float *queries, int64_t nq, int64_t k,
                           int64_t ef, int num_threads, uint64_t *allow,
                           int64_t n_allow, uint64_t *deny, int64_t n_deny,
                           int64_t *out_ids, float *out_dists,
                           strata_search_stats *stats, char *err, size_t errlen);

/* strata_remove tombstones n ids; an unknown id fails the call with
 * STRATA_ERR_NOT_FOUND (and removes nothing) unless missing_ok. */
int strata_remove(strata_handle h, uint64_t *ids, int64_t n, int missing_ok,
                  int64_t *out_removed, char *err, size_t errlen);

int strata_contains(strata_handle h, uint64_t id, int *out, char *err, size_t errlen);

/* strata_get_vectors copies the stored vectors of n ids into out (n*dim). */
int strata_get_vectors(strata_handle h, uint64_t *ids, int64_t n, float *out,
                       char *err, size_t errlen);

/* strata_ids writes up to cap live ids into out and their total number into
 * *out_n; call again with a larger buffer if *out_n > cap. */
int strata_ids(strata_handle h, uint64_t *out, int64_t cap, int64_t *out_n,
               char *err, size_t errlen);

/* strata_compact rebuilds the graph without tombstones; searches continue. */
int strata_compact(strata_handle h, int num_threads, char *err, size_t errlen);

/* strata_train learns SQ8 ranges from n sample vectors, before the first add. */
int strata_train(strata_handle h, float *sample, int64_t n, char *err, size_t errlen);

/* strata_save writes the index to path (NUL-terminated UTF-8) atomically. */
int strata_save(strata_handle h, char *path, char *err, size_t errlen);

/* strata_load reads an index saved by strata_save. With mmap_vectors the
 * float vectors stay in the file, memory-mapped, until strata_free.
 * A damaged file fails with STRATA_ERR_CORRUPT naming section and offset. */
int strata_load(char *path, int mmap_vectors, strata_handle *out, char *err, size_t errlen);

/* strata_kernel_path and strata_version write a NUL-terminated string into
 * out (outlen bytes): the distance-kernel implementation chosen for this CPU,
 * and the library version. */
int strata_kernel_path(char *out, size_t outlen, char *err, size_t errlen);
int strata_version(char *out, size_t outlen, char *err, size_t errlen);

/* The most results one query may ask for (the engine's limits.MaxK). Every
 * other bound is checked by the engine only; this one is exported for
 * bindings that allocate k-sized outputs before calling. */
enum strata_limit { STRATA_MAX_K = 1048576 };

/* strata_check_k fails with STRATA_ERR_INVALID, and the engine's message,
 * if k is outside [1, STRATA_MAX_K]: a binding asks it before allocating
 * outputs for a k it is not sure of. */
int strata_check_k(int64_t k, char *err, size_t errlen);
/* ---- Collections: durable ids + vectors + JSON metadata (go/collection) ----
 *
 * Collection handles come from strata_col_create/strata_col_open and are
 * released by strata_col_close (not strata_free). Metadata crosses the ABI
 * as JSON: a write takes one JSON array of documents per batch (objects, or
 * null for {}); results come back as a JSON array in a strata_buffer that
 * the library allocated and the caller releases with strata_buffer_free.
 * Filters are JSON objects in the Mongo-style language of go/collection/meta;
 * a NULL filter (length 0) matches everything. */

typedef struct {
    char *data;
    size_t len;
} strata_buffer;

void strata_buffer_free(strata_buffer *b);

/* Ids. A point's id is an integer in [0, 2^63) or a string (1 to 512 bytes
 * of UTF-8); both kinds may live in one collection. The engine checks them.
 *
 * In: a call taking n ids reads n uint64 values from ids and, with strs
 * NULL, takes every one as an integer id (the path of integer-only
 * callers, unchanged). With strs not NULL, id i is
 *   kinds[i] == STRATA_ID_INT:    the integer ids[i];
 *   kinds[i] == STRATA_ID_STRING: the string bytes[offsets[i] .. offsets[i+1])
 *                                 (ids[i] is ignored);
 * kinds holds n bytes, offsets n+1 values from offsets[0] == 0, not
 * decreasing (an integer id spans no bytes), bytes offsets[n] bytes of
 * UTF-8 strings concatenated (Arrow's layout for a string column).
 *
 * Out: a call answering ids writes them to its int64/uint64 output when
 * every id of the answer is an integer, exactly as before string ids, and
 * sets out_id_json (if not NULL) to len 0. When the answer holds a string
 * id it writes every id of the answer to out_id_json as a JSON array of
 * numbers, strings and null (query padding) in the order of the numeric
 * output, which is then left unspecified; the caller frees the buffer with
 * strata_buffer_free. Without out_id_json such an answer fails with
 * STRATA_ERR_INVALID. */
enum strata_id_kind {
    STRATA_ID_INT = 0,
    STRATA_ID_STRING = 1
};

typedef struct {
    uint8_t *kinds;
    char *bytes;
    int64_t *offsets;
} strata_id_strings;

/* strata_check_ids fails with STRATA_ERR_INVALID, and the engine's message,
 * if one of n ids is not one a write accepts (the limits of the ids above):
 * a binding that splits a batch over several collections (strata.ray) asks
 * it first so that a bad id refuses the whole batch. Duplicates are not
 * checked. */
int strata_check_ids(uint64_t *ids, int64_t n, strata_id_strings *strs, char *err, size_t errlen);

enum strata_fsync {
    STRATA_FSYNC_ALWAYS = 0,  /* fsync before every acknowledgement (group commit) */
    STRATA_FSYNC_BATCH = 1,   /* fsync in the background every 10 ms */
    STRATA_FSYNC_NEVER = 2    /* leave it to the OS until a checkpoint or close */
};

/* strata_col_create makes a new collection in the directory path. m and
 * ef_construction 0 pick the defaults (16, 200). */
int strata_col_create(char *path, int64_t dim, int metric, int64_t m, int64_t ef_construction,
                      int quantization, int fsync, uint64_t seed, strata_handle *out,
                      char *err, size_t errlen);

/* strata_col_open opens and recovers a collection. fsync < 0 keeps the policy
 * it was created with. flags is a sum of STRATA_OPEN_* bits (0: none). With
 * STRATA_OPEN_REPAIR (1, what a true "repair" argument always passed), a
 * corrupt record in the middle of the log truncates the log there instead of
 * failing with STRATA_ERR_CORRUPT. With STRATA_OPEN_VERIFY (2) every byte of
 * the segment files is checked before the call returns; without it the
 * mapped segments' CRCs are checked in the background after it returns, and a
 * mismatch then fails every call on the collection with STRATA_ERR_CORRUPT
 * (go/collection, verify.go). */
enum strata_open_flag {
    STRATA_OPEN_REPAIR = 1,
    STRATA_OPEN_VERIFY = 2
};
int strata_col_open(char *path, int fsync, int flags, strata_handle *out, char *err, size_t errlen);

/* strata_col_close finishes queued writes, checkpoints if needed and releases
 * the handle and the directory lock. */
int strata_col_close(strata_handle h, char *err, size_t errlen);

int strata_col_exists(char *path, int *out, char *err, size_t errlen);
int strata_col_drop(char *path, char *err, size_t errlen);

/* strata_col_upsert inserts or replaces n entries; meta (meta_len bytes) is a
 * JSON array of n documents, or NULL for empty documents. Returns once the
 * write is durable per the fsync policy and visible to queries. */
int strata_col_upsert(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs, float *vectors,
                      char *meta, size_t meta_len, char *err, size_t errlen);

/* strata_col_update_metadata replaces the documents of n existing ids. */
int strata_col_update_metadata(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                               char *meta, size_t meta_len, int64_t *out_count, char *err, size_t errlen);

/* strata_col_delete removes n ids, or with n < 0 every entry matching the
 * filter where; *out_count receives how many existed. */
int strata_col_delete(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                      char *where, size_t where_len,
                      int64_t *out_count, char *err, size_t errlen);

/* strata_col_query: strata_search with a metadata filter. out_meta, if not
 * NULL, receives a JSON array of nq*k documents (null for padding). */
int strata_col_query(strata_handle h, float *queries, int64_t nq, int64_t k, int64_t ef,
                     int num_threads, char *where, size_t where_len, int64_t *out_ids,
                     strata_buffer *out_id_json, float *out_dists, strata_buffer *out_meta, strata_search_stats *stats,
                     char *err, size_t errlen);

/* strata_col_query_mmr answers one query (dim floats at vector) by maximal
 * marginal relevance: fetch_k candidates (0: max(k, 20)) nearest to it
 * among the entries matching where, then k of them picked greedily, each
 * maximising lambda * sim(query, d) - (1 - lambda) * max sim(d, picked),
 * lambda in [0, 1] (go/collection/mmr.go). out_ids and out_dists (k each)
 * receive the picks in pick order with their distances to the query,
 * padded with -1 and +inf; out_meta, if not NULL, their documents. */
int strata_col_query_mmr(strata_handle h, float *vector, int64_t k, int64_t fetch_k, double lambda,
                         int64_t ef, int num_threads, char *where, size_t where_len, int64_t *out_ids,
                         strata_buffer *out_id_json, float *out_dists, strata_buffer *out_meta,
                         char *err, size_t errlen);

/* strata_col_get looks up n ids: the *out_n that exist go to out_found (n
 * slots) in request order, their documents to out_meta (a JSON array) and,
 * if out_vectors is not NULL, their vectors to out_vectors (n*dim slots). */
int strata_col_get(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                   uint64_t *out_found, strata_buffer *out_id_json, int64_t *out_n, float *out_vectors, strata_buffer *out_meta,
                   char *err, size_t errlen);

int strata_col_count(strata_handle h, char *where, size_t where_len, int64_t *out,
                     char *err, size_t errlen);

/* strata_col_scan_ids writes up to limit matching ids, in scan order (integers
 * ascending, then strings by bytes) and after a given id, into out (or
 * out_id_json, see Ids); *out_n receives how many. has_after 0 starts at the
 * beginning, 1 after the integer after, 2 after the string of after_len bytes
 * at after_str. */
int strata_col_scan_ids(strata_handle h, char *where, size_t where_len, uint64_t after,
                        int has_after, char *after_str, size_t after_len, int64_t limit,
                        uint64_t *out, strata_buffer *out_id_json, int64_t *out_n,
                        char *err, size_t errlen);

int strata_col_checkpoint(strata_handle h, char *err, size_t errlen);

/* strata_col_export checkpoints and writes the collection as one snapshot
 * archive (a tar stream; package collection, archive.go) to path, durably
 * (temporary file, fsync, rename). Writes go on meanwhile. *seq (if not NULL)
 * is the archive's snapshot sequence number. */
int strata_col_export(strata_handle h, char *path, uint64_t *seq, char *err, size_t errlen);
/* strata_col_restore makes a new collection at path (which must not exist:
 * STRATA_ERR_EXISTS) from the archive file; a bad archive fails with
 * STRATA_ERR_INVALID and leaves nothing at path. Open it with strata_col_open. */
int strata_col_restore(char *archive, char *path, uint64_t *seq, char *err, size_t errlen);
int strata_col_check_integrity(strata_handle h, char *err, size_t errlen);

/* strata_col_info returns the collection's state as a JSON object. */
int strata_col_info(strata_handle h, strata_buffer *out, char *err, size_t errlen);

/* ---- Vector fields: named dense and multivector fields (go/collection) ----
 *
 * A collection's schema is a set of named vector fields, the unnamed default
 * being the name "" (the field the calls above read and write). Each field
 * has its own dimension, metric and index; a point may lack any field. The
 * schema crosses the ABI as JSON (parsed by go/collection/schema_json.go):
 *
 *   {"vectors": {"<name>": {"dim": 50, "metric": "cosine", "M": 16,
 *                           "ef_construction": 200, "quantization": "sq8",
 *                           "multivector": "max_sim"}, ...},
 *    "sparse_vectors": ["keywords", ...] or {"keywords": {"modifier": "idf"}, ...},
 *    "fsync": "always" | "batch" | "never", "seed": 42}
 *
 * dim is required, the rest optional (metric "cosine", M 16, ef_construction
 * 200, quantization "none", a dense field); an unknown key is refused.
 * sparse_vectors (optional) names the sparse fields, each with modifier
 * "none" (the default) or "idf" (Qdrant's IDF modifier); their names share
 * one name space with the dense fields'.
 *
 * Vector values cross as one strata_field_values per field, in columns: the
 * positions (into the call's n ids) of the points that have a value, and
 * their floats row-major. A multivector field (a list of vectors per point,
 * scored by MAX_SIM) adds how many vectors each of those points has. The
 * library reads the arrays during the call only. A sparse field's values
 * are coordinates: counts[i] of them for the i-th point of points (0 is an
 * empty vector), their indices in indices and their values in values
 * (n_values of each, a point's coordinates in any order). indices is the
 * last member, and NULL (what a zero-initialised struct holds) for a dense
 * or multivector field, so source written before sparse fields, which
 * zero-initialises the struct or names its members, compiles unchanged and
 * keeps its meaning. A binary built against the older header must be
 * rebuilt: the struct grew, so an array of them has a new stride. */
typedef struct {
    char *name;         /* the field's name, name_len bytes of UTF-8 ("" the default field) */
    size_t name_len;
    int64_t n_points;   /* how many points have a value; -1: every point of the call, in order */
    int64_t *points;    /* n_points ascending positions into the ids (NULL when n_points is -1) */
    int64_t *counts;    /* multivector fields: the vectors of each point (n_points values, or n
                           with -1); NULL for a dense field */
    float *values;      /* the vectors, n_values floats: rows of the field's dim */
    int64_t n_values;
    const uint32_t *indices; /* sparse fields: n_values indices (values their values); else NULL */
} strata_field_values;

/* strata_col_create_schema makes a new collection in the directory path
 * with the schema schema (schema_len bytes of JSON, above). */
int strata_col_create_schema(char *path, char *schema, size_t schema_len, strata_handle *out,
                             char *err, size_t errlen);

/* strata_col_upsert_points inserts or replaces n whole points: their ids,
 * documents (meta: a JSON array of n, or NULL for {}) and the values of
 * nfields fields (fields[i] names a field once); a point gets exactly the
 * fields given for it, losing any other it had. */
int strata_col_upsert_points(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                             strata_field_values *fields, int64_t nfields, char *meta, size_t meta_len,
                             char *err, size_t errlen);

/* Expiring points. strata_col_upsert_expiring and
 * strata_col_upsert_points_expiring are strata_col_upsert and
 * strata_col_upsert_points with a time to live: ttl (seconds from now) or
 * expires_at (Unix seconds), at most one of them non-NULL, holding n_expiry
 * values, 1 (for every point) or n; NaN means that point never expires.
 * Negative or infinite values fail with STRATA_ERR_INVALID. An expired
 * point is absent from every read from the moment it expires; a
 * background reaper deletes it through the log. strata_col_expires_at
 * writes each id's expiry (Unix seconds) into out (n doubles), NaN where
 * the id has none, is absent or has expired; strata_col_reap runs one
 * pass of the reaper now. */
int strata_col_upsert_expiring(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs, float *vectors,
                               char *meta, size_t meta_len, double *ttl, double *expires_at, int64_t n_expiry,
                               char *err, size_t errlen);
int strata_col_upsert_points_expiring(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                                      strata_field_values *fields, int64_t nfields, char *meta, size_t meta_len,
                                      double *ttl, double *expires_at, int64_t n_expiry, char *err, size_t errlen);
int strata_col_expires_at(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs, double *out,
                          char *err, size_t errlen);
int strata_col_reap(strata_handle h, char *err, size_t errlen);

/* strata_col_update_vectors replaces the given fields' values of n existing
 * points, leaving their other fields and documents; an id that does not
 * exist fails with STRATA_ERR_NOT_FOUND before anything is written.
 * *out_count receives how many points were updated. */
int strata_col_update_vectors(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                              strata_field_values *fields, int64_t nfields, int64_t *out_count,
                              char *err, size_t errlen);

/* strata_col_delete_vectors drops the values of the fields named in names
 * (a JSON array of strings, names_len bytes) from n existing points. */
int strata_col_delete_vectors(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                              char *names, size_t names_len, int64_t *out_count, char *err, size_t errlen);

/* strata_col_add_vector_field adds the empty field name with spec (one
 * field's JSON, as in the schema); STRATA_ERR_EXISTS if the name is taken.
 * strata_col_remove_vector_field removes a field and its index;
 * STRATA_ERR_NOT_FOUND if there is none. Both are durable when they return. */
int strata_col_add_vector_field(strata_handle h, char *name, size_t name_len, char *spec, size_t spec_len,
                                char *err, size_t errlen);
int strata_col_remove_vector_field(strata_handle h, char *name, size_t name_len, char *err, size_t errlen);

/* strata_col_query_field is strata_col_query over the field query->name:
 * query->n_points queries (points NULL), each one row of the field's dim for
 * a dense field, or query->counts[i] rows for the i-th query of a multivector
 * field (scored by MAX_SIM). Outputs as strata_col_query: n_points * k. */
int strata_col_query_field(strata_handle h, strata_field_values *query, int64_t k, int64_t ef,
                           int num_threads, char *where, size_t where_len, int64_t *out_ids,
                           strata_buffer *out_id_json, float *out_dists, strata_buffer *out_meta,
                           strata_search_stats *stats, char *err, size_t errlen);

/* strata_col_get_vectors reads the field name of n ids: out_counts[i]
 * (n slots) receives how many vectors id i has there (0: none, or no such
 * id; 1 for a dense field), and out_vectors the vectors of the ids that have
 * some, in request order (normalised for cosine), as float32 bytes the
 * caller frees with strata_buffer_free. */
int strata_col_get_vectors(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                           char *name, size_t name_len, int64_t *out_counts, strata_buffer *out_vectors,
                           char *err, size_t errlen);

/* strata_col_query_mmr_field is strata_col_query_mmr over the dense field
 * name: vector holds n_values floats (the field's dim). */
int strata_col_query_mmr_field(strata_handle h, char *name, size_t name_len, float *vector, int64_t n_values,
                               int64_t k, int64_t fetch_k, double lambda, int64_t ef, int num_threads,
                               char *where, size_t where_len, int64_t *out_ids, strata_buffer *out_id_json,
                               float *out_dists, strata_buffer *out_meta, char *err, size_t errlen);

/* ---- Sparse fields and fused queries (go/collection: sparse_fields.go, fusion.go) ----
 *
 * A sparse field holds for some points a sparse vector (uint32 indices,
 * float values) in an inverted index scored by dot product (with the IDF
 * modifier if the field has it), exact. Its values are written with
 * strata_col_upsert_points and strata_col_update_vectors (a
 * strata_field_values with indices), dropped with strata_col_delete_vectors,
 * and the field is removed with strata_col_remove_vector_field.
 *
 * A scored answer (strata_col_query_sparse, strata_col_search) has up to k
 * hits, best first (higher scores are better): *out_n receives how many,
 * out_ids and out_scores (k slots each) their ids and scores, out_id_json
 * (if the answer holds a string id) the ids as JSON, out_meta (if not NULL)
 * their documents as a JSON array. */

/* strata_col_add_sparse_field adds the empty sparse field name, modifier
 * "none" (or NULL) or "idf"; STRATA_ERR_EXISTS if the name is taken. */
int strata_col_add_sparse_field(strata_handle h, char *name, size_t name_len, char *modifier,
                                char *err, size_t errlen);

/* strata_col_query_sparse finds the k points of the sparse field name with
 * the largest dot product with the query (nnz coordinates: indices, values),
 * among those matching where. Only points sharing an index with the query
 * are found, so fewer than k may come back. */
int strata_col_query_sparse(strata_handle h, char *name, size_t name_len, uint32_t *indices,
                            float *values, int64_t nnz, int64_t k, char *where, size_t where_len,
                            int64_t *out_ids, strata_buffer *out_id_json, double *out_scores,
                            int64_t *out_n, strata_buffer *out_meta, char *err, size_t errlen);

/* strata_col_get_sparse_vectors reads the sparse field name of n ids:
 * out_counts[i] (n slots) receives id i's number of coordinates (-1: no
 * value, or no such id), out_indices and out_values the coordinates of the
 * ids that have one, in request order, each sorted by index, as uint32 and
 * float32 bytes the caller frees with strata_buffer_free. */
int strata_col_get_sparse_vectors(strata_handle h, uint64_t *ids, int64_t n, strata_id_strings *strs,
                                  char *name, size_t name_len, int64_t *out_counts, strata_buffer *out_indices,
                                  strata_buffer *out_values, char *err, size_t errlen);

/* One ranked list of a fused query: exactly one of a vector (n_vector
 * floats: a dense field's dim, or rows of a multivector field's dim), a
 * sparse vector (indices not NULL: nnz coordinates) or a text (not NULL: a
 * BM25 query of the text index on the metadata field named by field, ""
 * for the collection's only one). The list holds the limit best points;
 * ef is a graph field's candidate list (0: max(limit, 64)). */
typedef struct {
    char *field;
    size_t field_len;
    float *vector;
    int64_t n_vector;
    const uint32_t *indices;
    float *sparse_values;
    int64_t nnz;
    char *text;
    size_t text_len;
    int64_t limit;
    int64_t ef;
} strata_sub_query;

/* strata_col_search runs nsubs sub-queries, each among the points matching
 * where, and fuses their lists (fusion STRATA_FUSION_RRF with constant rrf_k,
 * 0 picking Qdrant's 2, or STRATA_FUSION_DBSF) into the k best, or with
 * STRATA_FUSION_NONE returns one sub-query's own list (k long, its limit
 * ignored) scored as go/collection/fusion.go says (dense: the similarity,
 * l2 minus the distance; sparse: the dot product; text: BM25). */
int strata_col_search(strata_handle h, strata_sub_query *subs, int64_t nsubs, int fusion, double rrf_k,
                      int64_t k, int num_threads, char *where, size_t where_len, int64_t *out_ids,
                      strata_buffer *out_id_json, double *out_scores, int64_t *out_n,
                      strata_buffer *out_meta, char *err, size_t errlen);

/* strata_fuse fuses nlists ranked lists given in a row (lens[i] entries
 * each, best first; ids with strs as in the writes; scores their scores)
 * as strata_col_search does, into at most limit entries: out_pos receives
 * each one's position in the row (its first appearance), out_scores its
 * fused score, *out_n how many. For a door that gathers lists itself (a
 * sharded collection). */
int strata_fuse(int64_t nlists, int64_t *lens, uint64_t *ids, strata_id_strings *strs, double *scores,
                int fusion, double rrf_k, int64_t limit, int64_t *out_pos, double *out_scores,
                int64_t *out_n, char *err, size_t errlen);

/* ---- Full-text and hybrid queries (go/collection/text) ----
 *
 * A text index is BM25 over one string metadata field (a dotted path),
 * analyzed by "simple" (Unicode words, case folded), "stop" (plus English
 * stop words) or "english" (plus Snowball stemming; the default). */

enum strata_text_source {
    STRATA_FROM_VECTOR = 1,  /* bits of out_sources */
    STRATA_FROM_TEXT = 2
};

enum strata_fusion {
    STRATA_FUSION_NONE = -1,     /* strata_col_search: one sub-query's own list */
    STRATA_FUSION_RRF = 0,       /* reciprocal rank fusion (strata_col_query_text: k = 60) */
    STRATA_FUSION_WEIGHTED = 1,  /* strata_col_query_text: alpha * vector + (1 - alpha) * text, min-max normalised */
    STRATA_FUSION_DBSF = 2       /* strata_col_search, strata_fuse: distribution-based score fusion */
};

/* strata_col_create_text_index indexes field in every existing and future
 * document; analyzer NULL picks "english". Durable when it returns. */
int strata_col_create_text_index(strata_handle h, char *field, char *analyzer, char *err, size_t errlen);

/* strata_col_query_text runs one BM25 query over field (NULL: the only text
 * index), or with vector (dim floats, not NULL) a hybrid query fused as
 * fusion says. k1 < 0 and b < 0 pick Lucene's 1.2 and 0.75. Up to k hits,
 * best first, go to out_ids, out_scores (fused score; BM25 for text only),
 * out_dists (vector distance, NaN where the vector side did not find the
 * hit) and out_sources (strata_text_source bits); *out_n receives how many.
 * out_meta, if not NULL, receives their documents as a JSON array. */
int strata_col_query_text(strata_handle h, float *vector, char *text, size_t text_len, char *field,
                          int64_t k, int64_t ef, int num_threads, char *where, size_t where_len,
                          int fusion, double alpha, double k1, double b, int64_t *out_ids,
                          strata_buffer *out_id_json, float *out_scores, float *out_dists, uint8_t *out_sources, int64_t *out_n,
                          strata_buffer *out_meta, char *err, size_t errlen);

/* strata_text_analyze returns the terms analyzer (NULL: "english") makes of
 * text, as a JSON array of strings: the terms an index and a query see. */
int strata_text_analyze(char *analyzer, char *text, size_t text_len, strata_buffer *out,
                        char *err, size_t errlen);
/* END CDEF */

#endif /* STRATA_H */
