// Package qdrant serves Qdrant's REST API over strata's collections, so
// that the real qdrant-client works against strata-server unchanged
// (strata-server --qdrant-addr), and its gRPC API (--qdrant-grpc-addr;
// see # gRPC). It translates Qdrant's shapes into
// collection calls; there is no second engine. It listens on its own
// port, so its routes never meet the native ones.
//
// # Routes
//
//	GET    /                                   {"title": "qdrant - vector search engine", "version": Version}
//	GET    /metrics, /telemetry                the server's Prometheus series (Config.Metrics); app and collections (telemetry.go)
//	GET    /collections                        get_collections
//	GET    /collections/{name}/exists          collection_exists
//	PUT    /collections/{name}                 create_collection (one unnamed vector, also as {"": ...}, or named vectors,
//	                                           dense or multivector max_sim; sparse_vectors with modifier none or idf;
//	                                           m, ef_construct; scalar int8 → sq8)
//	GET    /collections/{name}                 get_collection (points_count, config, status)
//	DELETE /collections/{name}                 delete_collection (false for a missing one)
//	PATCH  /collections/{name}                 update_collection (update.go: settings kept and reported, metadata)
//	POST   /collections/aliases                update_collection_aliases (aliases.go: create, delete, rename)
//	GET    /aliases, /collections/{name}/aliases   get_aliases, get_collection_aliases
//	PUT    /collections/{name}/index           create_payload_index (reported in payload_schema; every field is indexed already)
//	DELETE /collections/{name}/index/{field}   delete_payload_index
//	POST   /collections/{name}/facet           facet (key, filter, limit; counts are exact)
//	PUT    /collections/{name}/points          upsert ({points} or {batch}; wait is always met)
//	POST   /collections/{name}/points          retrieve
//	GET    /collections/{name}/points/{id}     one point
//	POST   /collections/{name}/points/delete   delete ({points} or {filter})
//	POST   /collections/{name}/points/batch    batch_update_points (batch.go: every update operation, in order)
//	POST   /collections/{name}/points/payload  set_payload (key: a nested path);  PUT: overwrite_payload
//	POST   /collections/{name}/points/payload/delete   delete_payload (nested keys)
//	POST   /collections/{name}/points/payload/clear    clear_payload (every payload op: {points} or {filter})
//	POST   /collections/{name}/points/scroll   scroll (offset, limit, filter, order_by on numbers and datetimes)
//	POST   /collections/{name}/points/count    count
//	POST   /collections/{name}/points/query    query_points (a vector, a sparse vector or a point id; nearest, recommend,
//	                                           discover, context, sample: random, nearest with mmr (examples.go), order_by
//	                                           (queryorder.go); prefetch with {fusion: rrf|dbsf}, {rrf: {k, weights}},
//	                                           a re-scoring vector, a formula (formula.go) or order_by; no query: in id order)
//	POST   /collections/{name}/points/query/batch   query_batch_points
//	POST   /collections/{name}/points/search[/batch]  the older search API
//	POST   /collections/{name}/points/recommend[/batch], /discover[/batch]  the older APIs (recommend.go)
//	POST   /collections/{name}/points/{query,search,recommend}/groups  groups (groups.go)
//	POST   /collections/{name}/points/search/matrix/{pairs,offsets}    the distance matrix (matrix.go)
//	POST   /collections/{name}/snapshots   create_snapshot (snapshots.go; wait is always met)
//	GET    /collections/{name}/snapshots   list_snapshots;  GET, DELETE .../snapshots/{file}: download, delete_snapshot
//	PUT    /collections/{name}/snapshots/recover   recover_snapshot (a file:// of the snapshot dir, or this server's URL)
//	POST   /collections/{name}/snapshots/upload    recover from a multipart upload (up to MaxBodyBytes)
//	POST   /snapshots                       create_full_snapshot (snapshots_full.go); GET: list_full_snapshots
//	GET, DELETE /snapshots/{file}            download, delete_full_snapshot
//	PUT    /collections/{name}/points/vectors  update_vectors (some named vectors of existing points)
//	POST   /collections/{name}/points/vectors/delete  delete_vectors (named vectors of the selected points)
//
// Every answer is {"result": ..., "status": "ok", "time": seconds}; every
// error is {"status": {"error": message}, "time": seconds} with 400 (bad
// or unsupported input: the message names the construct), 401 (api-key),
// 403 (a write from a browser page of another origin, a Host outside the
// allowed ones), 404 (collection, point or route), 409 (collection
// exists), 413, 415 (a body that is not JSON), 422 (an answer past the
// server's limits: the message names the flag), 503 (the collection
// refuses writes after an I/O failure, or the OS is out of file
// descriptors, read-only or refusing access), 507 (the disk is full) or
// 500 (a bug, a damaged file). The status comes from the error's kind
// (package errkind; status in errors.go); out-of-range parameters (m,
// ef_construct, hnsw_ef, size) are the engine's to refuse (package
// limits), with its message. Fields this door does not know are refused,
// never ignored. Every request passes the native server's package guard
// first (Config.Guard): one admission, one set of limits and one set of
// request metrics for both doors. A batch's answer is checked whole
// against the limits before any search runs, and sent one search at a
// time.
//
// # Expiring points (strata's extension)
//
// An upsert's point may carry "strata_ttl" (seconds from now) or
// "strata_expires_at" (Unix seconds), and a batch the lists "strata_ttl" /
// "strata_expires_at" (a number or null per point): one of the two per
// request. Qdrant has neither field and its clients never send them (a
// Qdrant server refuses them), so an application that sends them knows it
// talks to strata; the point then expires as collection.Expiry says, gone
// for every read from that moment (expiry.go).
//
// # Scores
//
// strata's distances become Qdrant's scores: Cosine 1 − (1 − cos) = cos,
// Dot 1 − (1 − dot) = dot (higher is better), Euclid √(squared L2), lower
// is better. score_threshold keeps scores ≥ it (Cosine, Dot) or ≤ it
// (Euclid). offset skips ranks of limit+offset results; hnsw_ef raises
// ef; exact scans every allowed vector.
//
// # Named vectors
//
// "vectors" at creation is one unnamed vector's parameters or an object
// of names to them (each with its own size, distance, hnsw_config,
// quantization_config and multivector_config {"comparator": "max_sim"});
// they become the collection's vector fields (collection.VectorField). A
// point's "vector" is a list (the unnamed vector), a list of lists (an
// unnamed multivector) or an object of names to either, and a point has
// exactly the fields it names. query takes "using", search a NamedVector
// {"name", "vector"}; a multivector field is queried with a list of
// vectors, scored by MAX_SIM (Σ over the query's vectors of the best Dot
// or Cosine similarity; for Euclid the square root of the Σ of the least
// squared distances, lower better, as qdrant-client's local mode). Records
// show an object of names to vectors unless the collection holds the one
// unnamed dense vector (then a list, as before named vectors); a
// with_vector list of names answers every field. has_vector filters by
// field.
//
// # Sparse vectors and hybrid queries
//
// "sparse_vectors" at creation names sparse fields, each {"modifier":
// "none" | "idf", "index": {...}} (the index settings are storage choices,
// accepted and ignored); they become the collection's sparse fields
// (collection.SparseField), and get_collection lists them back. A sparse
// field's value in a point is {"indices": [...], "values": [...]} (any
// order; records answer it sorted by index, as Qdrant does); query
// answers one with "using" the field and a SparseVector (or {"nearest":
// SparseVector}), scored by dot product (with the IDF modifier as Qdrant
// computes it). "prefetch" (one Prefetch or a list, nested to any depth up
// to 8) runs sub-queries, each with its own using, query, filter, limit
// (default 10), params and score_threshold; the level above fuses their
// lists ({"fusion": "rrf" | "dbsf"}, {"rrf": {"k": n, "weights": [...]}}: the engine's
// collection.Fuse, Qdrant's formulas), re-scores their candidates with a
// vector query or a formula (score boosting: formula.go, evaluated as
// qdrant-client's local mode does) or orders them (order_by). Each level's filter applies to every level below it, and
// offset to the main query only. Lists are fused in Qdrant's scores (an
// Euclid list by its distances), as qdrant-client's local mode fuses
// them; tests/test_langchain_qdrant.py runs langchain-qdrant's SPARSE and
// HYBRID modes against both and compares ids and scores.
//
// # Ids and payloads
//
// Point ids are unsigned integers below 2^63 or UUIDs, in every spelling
// Qdrant's uuid crate parses (32 hex digits, hyphenated, braced,
// urn:uuid:; either case), stored as strata string ids in canonical form
// and answered so (lowercase, hyphenated): see ids.go. Other strings are
// a 400, integers from 2^63 up too. has_id takes both kinds. Collections
// are created with one unnamed vector, spelled {size, distance} or
// {"": {size, distance}} (get_collection answers the form it was given,
// as Qdrant does: the map form is kept in the collection's settings
// statefile); sparse_vectors may be {} (none). Payloads are
// strata documents, any JSON object: keys with '.' or a leading '$' are
// refused with a 400.
//
// # Filters
//
// A Qdrant filter is translated into meta's filter tree (see meta's
// package doc) and nothing else: meta's index evaluates it from postings,
// for search, scroll, count and selection alike. must → And, should → Or
// (empty: no restriction), must_not → And of Not, min_should → AtLeast
// (min_count of the conditions), has_id → IDs; match value/any → Eq/In,
// except → Except (a value outside the list: objects do, a missing field
// and null do not), text → Words (every word of the query, lower-cased and
// split at non-alphanumerics, among the words of a string value: Qdrant's
// default word tokenizer; a query without words matches nothing), range →
// Within (all bounds on one element), values_count → ValuesCount (list
// length, 0 for missing or null, 1 for another value), is_empty → IsEmpty
// (missing, null or []), is_null → IsNull (null, or a list holding null),
// nested → Nested (one object of the list at the key matching the filter
// as a whole, its keys relative to the object). Keys are explicit meta
// paths with Qdrant's meaning: "a.b" is b of the object a, nothing when a
// is a list; "a[].b" is b of each object in the list a, "a[0]" the first
// element, "a[]" each element; values_count, is_empty and is_null look at
// each value a key reaches (a list, an element) and match and range also
// at the elements of a list reached. These meanings are qdrant-client's
// local mode's (tests/test_qdrant.py compares random filters over
// payloads with lists of objects with it). Match operands are strings,
// integers (within ±2^53) and bools, as in Qdrant. text_any → AnyWord,
// phrase → Phrase (same tokenizer); a range of strings → DatetimeRange
// (meta.ParseDatetime: Qdrant's formats, no zone is UTC); geo_bounding_box,
// geo_radius and geo_polygon → meta's geo conditions on {lon, lat}
// objects, with Qdrant's checks of the condition (coordinates in range,
// closed rings of at least 4 points). match prefix/substring answer 400
// naming the construct. has_vector takes dense and sparse fields alike.
//
// Request bodies must be UTF-8 without lone surrogate escapes
// (meta.CheckJSONText), and payload integers must lie within ±2^53: either
// would otherwise change on the way in, and is refused with a 400.
//
// Payload edits (set, overwrite, delete keys, clear) read each point's
// document and write it back: a concurrent write to the same point in
// between is overwritten. They mean what qdrant-client's local mode does
// (meta.Document.Merge, SetAt, DeleteAt): a null in set_payload removes the
// key, and an id list naming a missing point writes the others, then
// answers 404 for the first missing id.
//
// Payload indexes change no answer (meta's postings index every key); the
// door keeps their declarations with the collection (state.go, a
// statefile in its directory) and reports them in payload_schema with the
// points holding a value of their type. Every collection route resolves
// an alias (aliases.go; the table is a statefile in the data dir). upsert
// takes update_filter and update_mode, update_vectors update_filter
// (conditional.go).
//
// Distances: Cosine, Dot (similarities, higher first), Euclid (the
// unsquared distance) and Manhattan (metric.Manhattan, the L1 distance),
// lower first.
//
// # gRPC
//
// Handler.GRPCServer serves Qdrant's Collections, Points, Snapshots
// (Create, List, Delete) and Qdrant (HealthCheck) services from Qdrant's published .proto files (package
// qdrantpb, generated code committed). Each call is one function of the
// Handler shared with REST (func (h *Handler) call(ctx, name, *request)
// (answer, error), the REST routes being decode JSON → call → encode): a
// protobuf request is translated into the JSON form of the same Qdrant
// request (grpcin.go: ids, vectors, payloads, filters, queries) and
// answered by the same code, so ids, filters (meta's tree, compiled by
// compileFilter), limits, scores and messages are the REST door's. The
// answers are shaped back into protobuf (grpcout.go). Payload doubles are
// passed as JSON numbers with a fraction or an exponent, integers as
// integers, so that 1.5e18 stays a float. Two dense vectors skip JSON,
// as the largest part of the translation's cost: an upserted point's
// (pointStruct.dense) and a plain nearest query's (queryRequest.nearest,
// without prefetch or lookup_from), checked finite and then read as
// their JSON form would be (TestGRPCNearestAnswersAsItsJSON).
//
// Served: collections Create (named, sparse, multivector; HNSW and int8
// quantization settings), Get, List, Delete, CollectionExists; points
// Upsert, Delete (ids or filter), Get, SetPayload, OverwritePayload,
// DeletePayload, ClearPayload, UpdateVectors, DeleteVectors,
// CreateFieldIndex, DeleteFieldIndex, Search, SearchBatch, Query,
// QueryBatch (prefetch, fusion, nearest by vector or id, recommend,
// discover, context, sample), Recommend[Batch] and Discover[Batch] (as
// recommend, discover and context queries), Scroll, Count, Facet; and
// the calls REST gained since, each through its REST function: Update of
// a collection (PATCH's updateCollection; Get reports what it accepted),
// QueryGroups, SearchGroups, RecommendGroups, UpdateBatch (each
// operation translated into its call's request and bound to it, all
// before runBatch runs any), update_filter and update_mode of Upsert and
// update_filter of UpdateVectors, UpdateAliases, ListAliases,
// ListCollectionAliases, SearchMatrixPairs, SearchMatrixOffsets.
// Formula (grpcformula.go), order_by, MMR, rrf weights and lookup_from
// in a prefetch are translated like the rest. Refused with
// InvalidArgument naming the construct: inference objects (document,
// image, object), relevance feedback, shard_key_selector. Payload index parameters are reported back for text indexes
// only.
// Unimplemented: shard keys, cluster calls, vector names, shard snapshots.
//
// Every call but HealthCheck needs the guard's API key, read from the
// "api-key" metadata (as qdrant-client sends it) or "authorization:
// Bearer <key>"; a message is at most the guard's MaxBodyBytes in and
// MaxAnswerBytes out, and answers are checked against its limits before
// the work, as over REST. An error's code comes from its REST status (one
// taxonomy: errors.go then grpcCode): 400 InvalidArgument, 401
// Unauthenticated, 403 PermissionDenied, 404 NotFound, 409 AlreadyExists,
// 413, 422 and 507 ResourceExhausted, 503 Unavailable, else Internal; the
// message is the REST one. A panic is recovered in the interceptor
// (Internal), never crossing to the client as a dropped connection.
// Requests are counted in the guard's metrics with door "qdrant-grpc".
package qdrant
