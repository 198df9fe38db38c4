// Package qdrant serves Qdrant's REST API over strata's collections, so
// that the real qdrant-client works against strata-server unchanged
// (strata-server --qdrant-addr). It translates Qdrant's shapes into
// collection calls; there is no second engine. It listens on its own
// port, so its routes never meet the native ones.
//
// # Routes
//
//	GET    /                                   {"title": "qdrant - vector search engine", "version": Version}
//	GET    /collections                        get_collections
//	GET    /collections/{name}/exists          collection_exists
//	PUT    /collections/{name}                 create_collection (one unnamed vector; m, ef_construct; scalar int8 → sq8)
//	GET    /collections/{name}                 get_collection (points_count, config, status)
//	DELETE /collections/{name}                 delete_collection
//	PUT    /collections/{name}/index           create_payload_index (accepted: every field is indexed already)
//	PUT    /collections/{name}/points          upsert ({points} or {batch}; wait is always met)
//	POST   /collections/{name}/points          retrieve
//	GET    /collections/{name}/points/{id}     one point
//	POST   /collections/{name}/points/delete   delete ({points} or {filter})
//	POST   /collections/{name}/points/payload  set_payload;  PUT: overwrite_payload
//	POST   /collections/{name}/points/payload/delete   delete_payload (top-level keys)
//	POST   /collections/{name}/points/scroll   scroll (offset, limit, filter, order_by)
//	POST   /collections/{name}/points/count    count
//	POST   /collections/{name}/points/query    query_points ({nearest} or a vector; no query: by id)
//	POST   /collections/{name}/points/query/batch   query_batch_points
//	POST   /collections/{name}/points/search[/batch]  the older search API
//
// Every answer is {"result": ..., "status": "ok", "time": seconds}; every
// error is {"status": {"error": message}, "time": seconds} with 400 (bad
// or unsupported input: the message names the construct), 401 (api-key),
// 403 (a write from a browser page of another origin, a Host outside the
// allowed ones), 404 (collection, point or route), 409 (collection
// exists), 413, 415 (a body that is not JSON), 422 (an answer past the
// server's limits: the message names the flag), 503 (the collection
// refuses writes after an I/O failure) or 500 (a bug). Fields this door
// does not know are refused, never ignored. Every request passes the
// native server's package guard first (Config.Guard): one admission, one
// set of limits and one set of request metrics for both doors. A batch's
// answer is checked whole against the limits before any search runs, and
// sent one search at a time.
//
// # Scores
//
// strata's distances become Qdrant's scores: Cosine 1 − (1 − cos) = cos,
// Dot 1 − (1 − dot) = dot (higher is better), Euclid √(squared L2), lower
// is better. score_threshold keeps scores ≥ it (Cosine, Dot) or ≤ it
// (Euclid). offset skips ranks of limit+offset results; hnsw_ef raises
// ef; exact scans every allowed vector.
//
// # Ids and payloads
//
// Point ids are unsigned integers below 2^63. UUID ids are refused with
// a 400 rather than hashed: a hash would need the UUID kept in the
// payload, where filters and payload calls would see it. Payloads are
// strata documents: keys with '.' or a leading '$' and lists of objects
// are refused with a 400.
//
// # Filters
//
// must → $and, should → $or (empty: no restriction), must_not → $nor,
// min_should → a $or over the choices of min_count conditions; match
// value/any → $eq/$in, one-sided range → $gt/$gte/$lt/$lte, nested keys
// as dotted paths. Where meta's meaning differs on lists or does not
// exist, a meta superset selects candidates and each candidate document
// is checked with Qdrant's meaning: a range with two bounds (one element
// within both), except (one value outside the list; a missing field does
// not match), text (every word of the query, lower-cased and split at
// non-alphanumerics, among the words of a string value: Qdrant's default
// word tokenizer), values_count (list length, 1 for a scalar, 0 missing),
// is_empty (missing, null, [] or nulls only), is_null (the value null).
// has_id is an id list. A filter of meta conditions only is one meta
// filter; any other is evaluated into an id list (work linear in the
// collection) and passed to Collection.QueryAmong. geo_*, nested,
// has_vector, datetime ranges, match phrase/prefix/text_any and
// key[] projections answer 400 naming the construct.
//
// Payload edits (set, overwrite, delete keys) read each point's document
// and write it back: a concurrent write to the same point in between is
// overwritten.
package qdrant
