// Package server is strata's native REST door: JSON over HTTP onto the
// collections of one data directory, Prometheus metrics and the
// playground. It is a thin layer over package collection: validation,
// filters and formats live there, so the server and the C ABI answer alike.
//
// # Layout
//
//	<data-dir>/<name>/     one collection directory per name (package collection)
//
// Names match ^[A-Za-z0-9_-]{1,64}$, so a name is always one plain
// directory below the data dir. Package registry holds them: every
// collection found there is opened at start, creates and drops are atomic
// (a crash leaves the whole collection or nothing), and a collection that
// will not open or fails while open is served as "failed" and re-opened by
// itself with backoff, while the others are served. Close checkpoints and
// closes them all.
//
// # Routes
//
//	GET    /health                              {"status": "ok" | "degraded", "collections": n, "failed": n}
//	                                            (no auth, so no names; 200 even when degraded: the others
//	                                            are served; GET /collections names the failed ones)
//	GET    /metrics                             Prometheus text format
//	GET    /collections                         {"collections": [info, ...]}
//	POST   /collections                         {name, dim, metric, M, ef_construction, quantization, fsync, seed,
//	                                             text_fields, text_analyzer} → 201 info
//	GET    /collections/{name}                  info
//	DELETE /collections/{name}                  {"dropped": name}
//	POST   /collections/{name}/upsert           {ids: [id], vectors: [[f32]], metadata: [doc|null], ttl | expires_at} → {"upserted": n}
//	POST   /collections/{name}/query            {vector: [f32] | vectors: [[f32]], k, ef, filter, include, exact}
//	                                            → {"results": [hit] | [[hit]], "stats": {plan, distance_computations, allowed, ef}}
//	                                            {text, vector?, text_field, fusion, k1, b, k, ef, filter, include, exact}
//	                                            → {"results": [texthit]}   (BM25, or hybrid with vector)
//	POST   /collections/{name}/delete           {ids} | {filter} → {"deleted": n}
//	POST   /collections/{name}/metadata         {ids, metadata} → {"updated": n}   (404 if an id is missing)
//	POST   /collections/{name}/get              {ids, include} → {"points": [point]}   (missing ids left out)
//	POST   /collections/{name}/scan             {filter, after, limit, include} → {"points": [point], "next_after": id|null}
//	POST   /collections/{name}/count            {filter} → {"count": n}
//	POST   /collections/{name}/checkpoint       {} → {"checkpoint": seq}
//	POST   /collections/{name}/text_index       {field, analyzer} → {"text_index": field}
//	POST   /collections/{name}/check_integrity  {} → {"ok": true} | {"ok": false, "problem": message}
//	POST   /collections/{name}/reopen           {} → info   (close and open again: recovers a failed collection)
//	POST   /collections/{name}/update_vectors   {ids, vectors: {field: values}} → {"updated": n}   (404 if an id is missing)
//	POST   /collections/{name}/delete_vectors   {ids, vectors: [field]} → {"updated": n}
//	POST   /collections/{name}/add_vector_field {name, spec: fieldspec} → {"added": name}   (409 if taken)
//	POST   /collections/{name}/remove_vector_field {name} → {"removed": name}   (404 if none; sparse too)
//	POST   /collections/{name}/add_sparse_field {name, modifier: "none" | "idf"} → {"added": name}   (409 if taken)
//	POST   /collections/{name}/search           {queries: [subquery], fusion: "rrf" | "dbsf" | null, rrf_k, k, filter,
//	                                             include} → {"results": [scoredhit]}
//	GET    /collections/{name}/points/{id}      [?include=vector] → point
//	GET    /                                    the playground (and its files beside it)
//	GET    /model/{file}                        the playground's sentence encoder (Config.PlaygroundModel; 404 without)
//
//	Named vector fields (fields.go): POST /collections takes "vectors": {field: fieldspec}
//	instead of dim and its options; fieldspec = {dim, metric, M, ef_construction,
//	quantization, multivector: "max_sim"} (collection.ParseVectorFields). An upsert whose
//	"vectors" is an object writes whole points: {field: values}, values one per id, each
//	[f32] (a dense field), [[f32]] (a multivector field) or null (the point lacks it). A
//	query with "using": field searches that field (a multivector query's "vector" is
//	[[f32]], "vectors" a list of them); get's "vectors": [field] adds to each point
//	"vectors": {field: value} for the fields it has.
//
//	Sparse fields (sparse.go): POST /collections takes "sparse_vectors": [name] or {name:
//	{modifier: "none" | "idf"}} (collection.ParseSparseFields). A sparse value is
//	{"indices": [u32], "values": [f32]} (or null), written and read with the dense fields'
//	"vectors" (upsert, update_vectors, get). A query with "using": a sparse field and
//	"sparse": {indices, values} answers {"results": [scoredhit]} by dot product, exact.
//	POST search runs collection.QueryFused: each subquery is one of {"using", "vector"},
//	{"using", "sparse"} or {"text", "text_field"}, with "limit" (default k) and "ef", all
//	under the filter, fused by rrf (rrf_k, default Qdrant's 2) or dbsf; "fusion": null
//	with one subquery answers its own list (collection.Search's scores).
//
//	hit   = {"id", "distance", "metadata", "vector"}   as include asks; default metadata+distances
//	scoredhit = {"id", "score", "metadata"}            score: higher is better
//	texthit = {"id", "score", "distance", "sources", "metadata", "vector"}
//	point = {"id", "metadata", "vector", "expires_at"} default metadata; include "expires_at": Unix seconds or null
//
//	Expiring points: an upsert's "ttl" (seconds from now) or "expires_at" (Unix seconds) is a
//	number for every point or a list of one per point (null: never expires); an expired point
//	is gone for every query, get, scan and count from that moment (collection.Expiry).
//	info  = the keys of strata.Collection.info() with "name" for "path": "count", "dim",
//	        "metric", "M", "ef_construction", "quantization", "fsync", "seq",
//	        "last_checkpoint_seq", "wal_bytes", "fsyncs", "group_commits", "recovery", ...,
//	        and "state" ("ready" or "failed") and "reopens"; a failed one also "error" and
//	        "next_retry". GET of a collection that will not open answers 503 collection_failed
//	        with why; the listing shows it as {"name", "state", "reopens", "error", "next_retry"}
//
// A path is matched as sent, segment by segment after decoding ("%2F" is
// a separator): a "." or ".." segment is a name (refused as one), never
// cleaned away or redirected, and an empty segment ("//", "/collections/",
// ".../points/") matches no route (404 not_found). Another method on a
// route's path answers 405 with Allow.
//
// k defaults to 10 (at most Limits.MaxK); ef 0 means max(k, 64). A filter
// is package meta's filter language. "exact": true raises ef to the number
// of points, which makes the index's planner scan every allowed vector:
// the exact k nearest (over the SQ8 codes for a quantized collection that
// keeps no floats). Padding (fewer than k matches) is left out of results.
//
// A query with "text" runs collection.QueryText over the text index named
// by text_field (needed only when there are several): BM25 alone, or, with
// one "vector", hybrid, fused by "fusion": "rrf" (default) or {"alpha": a}.
// k1 and b are BM25's parameters (default 1.2 and 0.75). A texthit's score
// is BM25 or the fused score (higher is better), its distance is null where
// the vector side did not find it, and sources is "vector", "text" or
// "both". Text indexes are made at creation by text_fields (dotted paths,
// analyzed by text_analyzer: "simple", "stop" or "english", the default)
// or later by POST text_index.
//
// # Errors
//
// Every error is {"error": {"code", "message"}}:
//
//	400 bad_request            not JSON of the route's shape: malformed, truncated, wrong types,
//	                           unknown fields, a string (even "NaN") where a number belongs, bad names,
//	                           a body that is not UTF-8 or holds a lone surrogate escape (\ud800)
//	401 unauthorized           Config.APIKey set and the key missing or wrong (Bearer or api-key)
//	403 forbidden              a write from a browser page of another origin, or a Host outside
//	                           Config.Hosts (package guard: cross-site requests, DNS rebinding)
//	404 collection_not_found   no collection of that name
//	404 point_not_found        GET points/{id} or metadata for an id that does not exist
//	404 not_found              no such route
//	405 method_not_allowed     the route exists, the method does not (Allow lists the methods)
//	409 collection_exists      POST /collections over an existing name or directory
//	413 payload_too_large      body over Limits.MaxBodyBytes
//	415 unsupported_media_type a body whose Content-Type is not JSON (none is read as JSON)
//	422 invalid_argument       JSON of the right shape the engine refuses: wrong dimension,
//	                           non-finite or out-of-float32 values, negative or duplicate ids,
//	                           dim, M, ef_construction, k or ef out of the engine's range
//	                           (package limits; the message is the engine's), invalid
//	                           documents or filters (an integer beyond ±2^53 among them:
//	                           refused, not rounded)
//	422 limit_exceeded         the answer asked for is past Limits.MaxResults or MaxAnswerBytes
//	                           (the message names the strata-server flag that raises it)
//	503 collection_failed      the collection refuses writes after an I/O failure, or will not
//	                           open (both are retried by themselves; see POST .../reopen)
//	503 unavailable            the server is shutting down
//	507 insufficient_storage   the disk or quota is full (ENOSPC, EDQUOT)
//	503 resource_exhausted     out of file descriptors or memory (EMFILE, ENFILE, ENOMEM)
//	503 read_only              the data directory's file system is read-only (EROFS)
//	503 permission_denied      the OS refused access to the data directory (EACCES, EPERM)
//	500 internal               a bug, a damaged file or an unexplained I/O error
//
// The status comes from the error's kind (package errkind): classify in
// errors.go is the one table. Limits.MaxK (--max-k) is this server's own
// policy on the size of one answer, below the engine's limits.MaxK.
//
// A refused request changes nothing: bodies are decoded and checked whole
// before the engine is called, and the engine validates a write whole
// before logging it.
//
// # Decoding
//
// Vectors and ids are read straight from the JSON text by numberReader
// (numbers.go), not by encoding/json's reflection: the request struct is
// decoded with the vectors left as raw bytes, then each number is parsed
// in place. See BenchmarkDecodeQuery for the difference. A plain decimal
// with no exponent whose digits form an integer below 2^23 (any number
// printed with 6 significant digits) is read by jsonnum.ShortFloat with one exact
// float32 division, strconv's own exact path, at a quarter of the cost;
// everything else goes through strconv.ParseFloat(s, 32).
// The answers of the hot routes are written by hand (appendResults),
// tested against encoding/json. An answer (query, get, scan) past 256 KiB
// is streamed as it is written, without a Content-Length (answer.go), so
// the server holds about that much of it at a time; every request passes
// package guard first, which the Qdrant door shares (Server.Guard).
package server
