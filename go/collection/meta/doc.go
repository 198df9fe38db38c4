// Package meta holds the metadata of a collection: one JSON document per
// id, a filter language in the style of MongoDB's query documents, and an
// inverted index that turns a filter into the set of matching ids without
// reading documents.
//
// # Documents
//
// A document is any JSON object (RFC 8259, UTF-8): its values are strings,
// numbers, true/false, null, objects and lists, and lists may hold any of
// them, objects and lists included:
//
//	{"title": "Dune", "year": 1965, "tags": ["sf", "classic"],
//	 "stock": {"shop": 3, "web": null}, "signed": false,
//	 "reviews": [{"by": "ann", "stars": 5}, {"by": "bo", "stars": 3}],
//	 "grid": [[1, 2], [3]]}
//
// Rules, each checked by ParseDocument with an error naming the key path:
//   - keys are non-empty, contain no '.', and do not start with '$', so that
//     every key is reachable by a dotted filter path;
//   - a key appears at most once in an object (duplicates are an error, not
//     "last one wins"); these rules hold in objects inside lists too, and
//     an error names the position: key "k" in "reviews[1]";
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
// Versions that allowed only scalars in lists wrote a subset of today's
// documents, read unchanged.
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
// objects ("stock.shop"). As in MongoDB, a path reaches through lists: a
// key applied to a list reaches that key in each element that is an
// object ("reviews.stars" reaches 5 and 3 above), one list level per key
// (the objects of a list of lists are not reached: "grid" elements are
// lists), and a part that is a list position (decimal digits, no leading
// zero: "0", "12") also reaches the element there ("reviews.0.by" is
// "ann", "grid.1" is [3]). A path that reaches nothing is missing. The
// values a path reaches are what its condition tests, and a condition
// holds when it holds for one of them (each operator separately, as for
// the elements of a list below).
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
//	{"f": {"$elemMatch": q}} f is a list with one element satisfying all of q
//	                         at once: q of operators ({"$gte": 80, "$lt":
//	                         85}) tests the element itself; q with field
//	                         paths or $and/$or/$nor tests each element that
//	                         is an object, paths relative to it
//	{"f": {"$size": n}}      f is a list of n elements (n an integer >= 0)
//	{"f": {"$all": [v, ...]}} f equals every v in the sense of $eq (a list
//	                         holding them all); an item {"$elemMatch": q}
//	                         stands for an element matching q; [] matches
//	                         nothing
//	{"f": {"$type": t}}      f, or an element of its list, is of type t:
//	                         "string", "bool", "null", "object", "array",
//	                         "number"; "int" or "long" (an integral number,
//	                         2 or 2.0), "double" or "decimal" (a number with
//	                         a fraction, 2.5); BSON's codes (1 double, 2
//	                         string, 3 object, 4 array, 8 bool, 10 null, 16
//	                         int, 18 long, 19 decimal); a list of types is
//	                         any of them; BSON's other names ("date", ...)
//	                         match nothing
//	{"f": {"$regex": r}}     f is a string, or a list holding one, in which
//	                         the regular expression r (Go's RE2 syntax, at
//	                         most 4096 bytes) matches somewhere: "ab" is a
//	                         substring test, "^ab" a prefix; "$options" in
//	                         the same object adds flags: "i" case-insensitive,
//	                         "m" multi-line ^ and $, "s" . matching newline
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
//     matches [0, 10] ($elemMatch is the one-element form). Only one level
//     is opened: {"grid": 1} does not match [[1, 2], [3]], {"grid": [3]} does.
//   - A list operand equals a list of equal elements in the same order; an
//     object operand equals an object with the same keys and equal values,
//     key order not mattering. Either matches a field that is such a value
//     or a list holding one: {"reviews": {"by": "bo", "stars": 3}} matches.
//   - null matches a field that is null, a list holding null, or a missing
//     field. Hence {"f": {"$ne": null}} means "present, and neither null nor a
//     list holding null".
//   - The negative forms ($ne, $nin, $not, $nor, $exists: false) are exact
//     complements: they match documents where the field is missing or holds
//     another type. {"tags": {"$ne": "sf"}} rejects ["sf", "classic"].
//
// MongoDB differs in two corners: {"a.b": null} there also matches a list
// a of objects one of which lacks b, where here it does not when another
// element has a non-null b (null matches when nothing is reached, or null
// is); and MongoDB's object equality depends on key order, which documents
// here do not keep.
//
// A filter is rejected, with an error naming where ("at \"$or[1].year\""),
// for: an unknown operator; an operator other than $and, $or, $nor, $not at
// the top level; $and, $or, $nor without a non-empty list of objects; $in or
// $nin without a list; $exists without true or false; $regex without a
// string that compiles, or $options without $regex or with another flag; a range operator with
// an object, list, bool or null operand; a field-level $not without an
// object of operators; $elemMatch without a non-empty object; $size
// without a non-negative integer; $all without a list; $type without a
// known type; an empty field path or path part, or a part starting with
// '$'; duplicate keys; nesting deeper than 64 levels.
//
// # The filter tree
//
// ParseFilter compiles the language above into a tree, and so do other
// filter languages: the Qdrant door builds the tree directly with the
// constructors of tree.go instead of writing JSON for ParseFilter. One
// tree, one reference evaluator (Filter.Match, Filter.MatchID), one
// evaluator over postings (Index.Select, Count, IDsAfter).
//
// A leaf's path is a dotted path (ParsePath), reaching through lists as
// above, or an explicit path of steps (NewPath: Key, At, Elements), which
// enters a list only where a step says so: Key("a"), Elements(), Key("b")
// is Qdrant's "a[].b", and Key("a"), Key("b") reaches nothing when a is a
// list. Either way, the conditions below test each value reached and, for
// the value conditions (Eq to Words), the elements of a list reached:
//
//	All(), None()              everything, nothing
//	And(f...), Or(f...), Not(f) as $and, $or, $not; And() is All, Or() None
//	AtLeast(k, f...)           at least k of the filters hold (Qdrant's
//	                           min_should); k <= 0 is All, k > len(f) None
//	IDs(id...)                 the document's id is one of these (has_id)
//	HasVector(field)           the point has a value in that vector field
//	                           (has_vector); holds for no document until
//	                           Filter.BindVectors makes it the field's ids
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
//	AnyWord(p, text)           the same with one word of text enough
//	                           (Qdrant's text_any)
//	Phrase(p, text)            the same with text's words consecutive and
//	                           in order (Qdrant's phrase)
//	DatetimeRange(p, TimeBounds) a string (or element) that ParseDatetime
//	                           reads (Qdrant's formats; no zone is UTC) as
//	                           an instant inside every bound, compared at
//	                           microsecond precision
//	GeoBoundingBox(p, tl, br)  a geo point (an object with numbers at "lat"
//	GeoRadius(p, c, metres)    and "lon"), or one element of a list, strictly
//	GeoPolygon(p, ext, holes)  inside the box (across the antimeridian
//	                           when tl.Lon > br.Lon), closer than the radius
//	                           (haversine, EarthRadius), or inside the
//	                           exterior ring and no hole (boundaries are
//	                           outside), as qdrant-client's local mode
//	ValuesCount(p, Bounds)     a value whose count is inside the bounds: a
//	                           list counts its elements, null 0, any other
//	                           value 1; a missing path counts 0
//	IsEmpty(p)                 every value reached null or [] (or none)
//	IsNull(p)                  a value null, or a list holding null
//	ElemMatch(p, f)            a list with an element f matches ($elemMatch);
//	                           f's paths start at the element, and an empty
//	                           path is the element itself
//	Nested(p, f)               ElemMatch over the elements that are objects
//	                           (Qdrant's nested condition)
//	Size(p, n)                 a list of n elements ($size)
//
// $all compiles to an And of Eq (and ElemMatch), $type to a type leaf,
// $regex to a regex leaf (evaluated like Words, over the path's distinct
// strings).

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
// route, the exact way from the root to a value, the index keeps
// postings, sets of slots:
//
//	route "year"  exists  {0 1 2 5}      any value, null and lists included
//	              nulls   {5}            null, or a list holding null
//	              trues / falses         booleans
//	              lists                  value is a list
//	              objects / nested       an object / -, or a list holding one
//	                                     / a list
//	              nums    1965 → {0}     one per distinct number (-0 is 0),
//	                      1984 → {1 2}   in a map for $eq and in key order
//	              strs    "sf" → {...}   for ranges; likewise strings
//	              datetimes / times      strings ParseDatetime reads, and
//	                                     one posting per instant (µs), in
//	                                     key order for DatetimeRange
//
// The scalar elements of a list are indexed at the list's route like
// single values. Its objects and lists are values at the route of its
// elements, the route followed by a part "$" (no key is "$"), and so are
// theirs in turn: {"reviews": [{"stars": 5}], "grid": [[1]]} has routes
// reviews, reviews.$, reviews.$.stars, grid and grid.$. A dotted path
// stands for the routes that enter at most one list after each key and do
// not end entering one: "reviews.stars" is reviews.stars and
// reviews.$.stars, and the index keeps that list of routes per dotted
// path, so a leaf unites the postings of its routes. An explicit path is
// one route, Elements being "$".
//
// Postings are sorted slices while small and roaring bitmaps beyond 32
// slots. Each path's distinct numbers and strings are kept in key order
// (new keys wait in a short unsorted list until merged), so a range is a
// binary search and a union of the postings it covers.
//
// A filter is evaluated bottom-up into dense bitsets over slots: leaves OR
// postings together ($in over its values, a range over its keys), $and and
// $or intersect and unite, negations complement within the live slots.
// On a path of one route that enters and holds no lists, a document has
// one value there, so the range conditions of one $and on that path fold
// into one interval, and an interval covering most keys is computed as
// "has a number (string) here" minus the keys outside it.
//
// What postings cannot answer exactly is answered by reading documents:
// candidates from postings, each decoded from its stored JSON (what
// BenchmarkParseDocument measures, a few microseconds for a small
// document) and tested with the reference evaluator. That is:
//   - $eq with a list or object operand: the slots holding a list,
//     narrowed by the operand's elements, or an object with its keys;
//   - $size: the slots holding a list at the path;
//   - $elemMatch and Nested: the same, narrowed by each positive condition
//     of the query ($eq and $in of scalars, ranges, $exists, Words) on the
//     element itself or on one key of it, so that {"reviews":
//     {"$elemMatch": {"by": "ann", "stars": 5}}} reads only the documents
//     with an element by ann and an element with 5 stars;
//   - the geo conditions: the slots holding an object at the path (or a
//     list holding one), narrowed by the numeric postings of its "lat" and
//     "lon" keys to the shape's bounding box (a radius bounds latitude
//     only): these postings are the geo index;
//   - IsEmpty and ValuesCount on a path through a list of objects: the
//     slots where the path is present; ValuesCount elsewhere only for the
//     slots holding a list there;
//   - a list position in a path ("a.0.b", At) and an explicit path ending
//     in Elements: the slots where the path up to that step is present.
//
// Their cost grows with the number of candidates, not of matches; a
// selective condition beside them in an $and does not narrow what they
// read.
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
