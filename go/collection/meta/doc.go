// Package meta holds the metadata of a collection: one JSON document per
// id, a filter language in the style of MongoDB's query documents, and an
// inverted index that turns a filter into the set of matching ids without
// reading documents.
//
// # Documents
//
// A document is a JSON object (RFC 8259, UTF-8) whose values are strings,
// numbers, true/false, null, nested objects, or lists of scalars:
//
//	{"title": "Dune", "year": 1965, "tags": ["sf", "classic"],
//	 "stock": {"shop": 3, "web": null}, "signed": false}
//
// Rules, each checked by ParseDocument with an error naming the key path:
//   - keys are non-empty, contain no '.', and do not start with '$', so that
//     every key is reachable by a dotted filter path;
//   - a key appears at most once in an object (duplicates are an error, not
//     "last one wins");
//   - lists hold only scalars (string, number, bool, null): no lists of
//     objects and no nested lists; an empty list is fine;
//   - objects and lists nest at most MaxDocumentDepth (32) levels, the
//     document itself being level 1;
//   - the JSON text is at most MaxDocumentBytes (1 MiB).
//
// Numbers are IEEE-754 float64, and a value never changes silently on the
// way in: an integer literal beyond ±2^53 (9007199254740993), which a
// float64 would round, is an error saying to send it as a string or as a
// float (9007199254740993.0, read as the nearest float64); integers up to
// ±2^53 are exact. A number outside the float64 range (1e400) is an
// error. Filters (ParseFilter, ParseNumber) follow the same rule.
// Strings are UTF-8; invalid bytes are an error. The top level must be
// an object; a batch given to ParseDocuments is a JSON list whose entries
// are documents or null, null meaning "no metadata", the empty document {}.
//
// The canonical encoding (Document.JSON, Index.Get, Index.Export) is compact
// JSON with object keys sorted by byte order, numbers in the shortest form
// that reads back as the same float64 (as encoding/json writes them: 1,
// 0.5, 1e-7, -0, except that beyond 2^53 the exponent form is used,
// 1.5e+18, so that no output looks like an integer input would refuse),
// and strings with only '"', '\\' and control characters escaped. Parsing
// the canonical encoding gives the same document back, and encoding that
// gives the same bytes.
//
// Stored form. The index persists documents in this encoding (the WAL and
// snapshots of package collection hold them), with no version of its own:
// versions before the 2^53 rule wrote numbers up to 1e21 as integer digits
// (123456789012345680000). ReadDocument, the reader for stored data (Import,
// log replay), accepts those as the float64 they were and writes them back
// in the exponent form; ParseDocument, the reader for input, refuses them.
// Both forms are plain JSON numbers, so the change needs no format version.
//
// # Filters
//
// A filter is a JSON object; empty input, null and {} match every document.
// Each key of a filter object is either a field path or a logical operator,
// and all of them must hold (implicit $and):
//
//	{"year": {"$gte": 1960, "$lt": 1970}, "tags": "sf", "stock.shop": {"$gt": 0}}
//
// A field path is a document key, or keys joined by '.' reaching into nested
// objects ("stock.shop"). There is no positional indexing: a path that runs
// into a list or a scalar before its end is missing.
//
// A field's condition is either a value, meaning $eq, or an object of
// operators ({"$gt": 1, "$lt": 5}), all of which must hold. An object with
// no '$' key is a value to compare with ({"stock": {"shop": 3, "web": null}});
// an object mixing '$' keys and other keys is an error.
//
//	{"f": v}                 same as {"f": {"$eq": v}}
//	{"f": {"$eq": v}}        f equals v (see Equality)
//	{"f": {"$ne": v}}        not {"f": {"$eq": v}}
//	{"f": {"$gt": v}}        f > v; also $gte, $lt, $lte; v is a number or a string
//	{"f": {"$in": [v, ...]}} f equals one of the values
//	{"f": {"$nin": [v, ...]}} not {"f": {"$in": [...]}}
//	{"f": {"$exists": b}}    f is present (any value, null included) iff b
//	{"f": {"$not": {ops}}}   not {"f": {ops}}; ops is an operator object
//	{"$and": [q, ...]}       every query q holds; the list must be non-empty
//	{"$or":  [q, ...]}       at least one holds
//	{"$nor": [q, ...]}       none holds
//	{"$not": q}              q does not hold
//
// Equality, range and membership follow MongoDB:
//   - A number equals a number of the same value (1 == 1.0, -0 == 0); a
//     string equals the same string; a bool equals the same bool. Values of
//     different types are never equal or ordered: a bool is not a number,
//     "1" is not 1, and {"f": {"$gt": 5}} never matches a string.
//   - Strings are ordered by bytes (UTF-8 code point order).
//   - A list field matches $eq, $in and the range operators when any of its
//     elements does: {"tags": "sf"} matches {"tags": ["sf", "classic"]}.
//     Each operator looks at the list separately, so {"f": {"$gt": 1, "$lt": 5}}
//     matches [0, 10]. $eq with a list operand also matches a field that is
//     that exact list (same elements in the same order).
//   - An object operand equals an object field with the same keys and equal
//     values; key order does not matter.
//   - null matches a field that is null, a list holding null, or a missing
//     field. Hence {"f": {"$ne": null}} means "present, and neither null nor a
//     list holding null".
//   - The negative forms ($ne, $nin, $not, $nor, $exists: false) are exact
//     complements: they match documents where the field is missing or holds
//     another type. {"tags": {"$ne": "sf"}} rejects ["sf", "classic"].
//
// A filter is rejected, with an error naming where ("at \"$or[1].year\""),
// for: an unknown operator; an operator other than $and, $or, $nor, $not at
// the top level; $and, $or, $nor without a non-empty list of objects; $in or
// $nin without a list; $exists without true or false; a range operator with
// an object, list, bool or null operand; a field-level $not without an
// object of operators; an empty field path or path part, or a part starting
// with '$'; duplicate keys; nesting deeper than 64 levels.
//
// # The filter tree
//
// ParseFilter compiles the language above into a tree, and so do other
// filter languages: the Qdrant door builds the tree directly with the
// constructors of tree.go instead of writing JSON for ParseFilter. One
// tree, one reference evaluator (Filter.Match, Filter.MatchID), one
// evaluator over postings (Index.Select, Count, IDsAfter):
//
//	All(), None()              everything, nothing
//	And(f...), Or(f...), Not(f) as $and, $or, $not; And() is All, Or() None
//	AtLeast(k, f...)           at least k of the filters hold (Qdrant's
//	                           min_should); k <= 0 is All, k > len(f) None
//	IDs(id...)                 the document's id is one of these (has_id)
//	Eq(p, v), In(p, v...)      $eq and $in with a scalar operand
//	Exists(p)                  $exists: true
//	Within(p, Bounds)          a number, or one element of a list, inside
//	                           every given bound ([0, 10] is not within
//	                           (1, 5), unlike {"$gt": 1, "$lt": 5}); no bound
//	                           is any number
//	Except(p, v...)            a value other than null, or one element of a
//	                           list, equal to none of v; missing, null, [] and
//	                           objects do not match
//	Words(p, text)             a string (or element) holding every word of
//	                           text: lower-cased, split at every rune that
//	                           is neither a letter nor a digit
//	ValuesCount(p, Bounds)     the number of values inside the bounds: a
//	                           list counts its elements, missing counts 0,
//	                           any other value (null too) 1
//	IsEmpty(p)                 missing, null, or a list of nulls only ([] too)
//	IsNull(p)                  null itself (a list holding null is not)
//
// Paths are checked once by ParsePath; operands are Scalars (Number,
// String, Bool, Null, ParseNumber). At-least-k is evaluated with k+1
// bitsets (reached[j]: slots that j of the filters seen so far match), so
// it costs O(n·k) bitset operations, not a $or over every k-subset.
// Except and Words visit the path's distinct values, not its
// documents; ValuesCount reads back only the documents holding a list there.
//
// # Index
//
// Every id of a collection has a document in the Index (maybe {}), so the
// Index is also the set of live ids, and a negation is a complement within
// it. Ids map to dense uint32 slots (freed slots are reused). For each
// dotted path the index keeps postings, sets of slots:
//
//	path "year"   exists  {0 1 2 5}      any value, null and lists included
//	              nulls   {5}            null, or a list holding null
//	              trues / falses         booleans
//	              lists / objects        value is a list / an object
//	              nums    1965 → {0}     one per distinct number (-0 is 0),
//	                      1984 → {1 2}   in a map for $eq and in key order
//	              strs    "sf" → {...}   for ranges; likewise strings
//
// List elements are indexed under the list's path like single values.
// Postings are sorted slices while small and roaring bitmaps beyond 32
// slots. Each path's distinct numbers and strings are kept in key order
// (new keys wait in a short unsorted list until merged), so a range is a
// binary search and a union of the postings it covers.
//
// A filter is evaluated bottom-up into dense bitsets over slots: leaves OR
// postings together ($in over its values, a range over its keys), $and and
// $or intersect and unite, negations complement within the live slots.
// On a path that holds no lists, a document has one value there, so the
// range conditions of one $and on that path fold into one interval, and an
// interval covering most keys is computed as "has a number (string) here"
// minus the keys outside it. $eq with a list or object operand, which
// postings cannot answer exactly, narrows candidates with postings and tests
// each with Filter.Match on the stored document.
//
// Matching slots become ascending ids through a list of (id, slot) pairs in
// id order: writers append to it when ids arrive in ascending order and
// otherwise leave the fix-up (dropping deleted ids, merging out-of-order
// ones) to the next reader. While slots also ascend with ids, which is the
// case for an index filled with increasing ids, ids are read off the result
// bitset directly.
//
// Filter.Match is the reference evaluator, written directly from this
// specification; the tests check that Index.Select agrees with it.
//
// # Concurrency
//
// Index methods are safe for concurrent use: writers (Put, PutBatch, Delete)
// hold a lock exclusively, readers share it. Documents and Filters are
// immutable.
package meta
