// Package sparse is the inverted index of a collection's sparse vector
// field: points keyed by uint64 (the collection's internal keys), each a
// sparse vector, searched for the exact top k by dot product with dynamic
// pruning, optionally with Qdrant's IDF modifier.
//
// # Vectors
//
// A sparse vector is a list of (index uint32, value float32). Normalize
// turns what a caller gives into the stored form: sorted by index (input
// in any order is accepted), indices strictly increasing (a duplicate
// index is an error, not summed or overwritten), values finite (NaN and
// ±Inf are errors), at most limits.MaxSparseNonZeros coordinates. Zeros
// are kept. An empty vector is a valid point that no query finds. Errors
// wrap ErrInvalid (kind errkind.Invalid) and name the position.
//
// # Scores and ties
//
// The score of point v for query q is
//
//	score(q, v) = float32( Σ_{i in q ∩ v, increasing i} float64(q_i) · float64(v_i) )
//
// (each product is exact in float64; the sum runs in increasing index
// order and is rounded to float32 once). This is Dot; every plan of Search
// returns exactly these scores, bit for bit. The candidates of a query are
// the points that share at least one index with it, whatever the values
// (as in Qdrant: a point with no common index is not a result, even when
// the top k is not full). Search returns the k best candidates by score,
// descending; equal scores rank the smaller key first. Fewer than k
// candidates give fewer than k hits.
//
// # The IDF modifier
//
// With ModifierIDF, each query weight is multiplied, before scoring, by
// Qdrant's "fancy" IDF (lib/segment VectorQueryContext: fancy_idf,
// remap_idf_weights), in float32 arithmetic as Qdrant does:
//
//	idf(i)  = ln( (N − df(i) + 0.5) / (df(i) + 0.5) + 1 )
//	q'_i    = q_i · idf(i)
//
// where N is the number of points in the index (Len) and df(i) the number
// of them whose vector holds index i (an explicit zero counts), both kept
// current by every upsert and delete. The ln is computed in float64 and
// rounded to float32. Live statistics are what qdrant-client's local mode
// uses; the Qdrant server reads them from its sparse index, which goes on
// counting a deleted point until the segment is optimised. On the
// pypi-demo corpus the local mode's ten scores equal this package's
// position by position within 1e-5 (bench/bench_sparse.py --qdrant). Document vectors holding BM25's term-frequency
// part, tf·(k1+1)/(tf + k1·(1 − b + b·|d|/avgdl)), and queries holding 1
// per term (fastembed's Bm25 model) then score as BM25 (with Qdrant's,
// i.e. Lucene's, IDF).
//
// # Search
//
// Search picks one of two plans; both are exact.
//
// PlanMaxScore is MaxScore (Turtle and Flood 1995; document at a time, as
// PISA and Lucene describe it). Each query index's posting list has a
// bound, the most weight·value can be over its entries: max(w·maxVal,
// w·minVal), so it is right for negative weights and values alike. Lists
// are sorted by bound. The shortest lists with the highest bounds are
// merged first to find a threshold that k points are known to reach
// (their partial sums, plus the most negative the other lists could add).
// Then, with θ the larger of that and the k-th score so far, the longest
// prefix of lists whose points cannot reach θ is non-essential (for a
// point in only those lists the bound is the sum of their positive
// bounds, or, when all are ≤ 0, the largest of them); only points of the
// essential lists are enumerated, and for each the non-essential lists are
// probed (galloping seek within the block that would hold the point), the
// largest bound first, while the score so far plus the bounds left can
// still reach θ; those bounds are per block of 64 postings (the block's
// own max and min), tighter than the list's. Every bound is compared with
// a margin (10^-6 of the scores' magnitude, far above the error of summing
// in another order and of rounding to float32), and a point that survives
// is summed again in index order, as Dot does, before it is offered to the
// top k: pruning only ever drops points that cannot enter, and the scores
// are exactly Dot's. With many negative bounds the prefix stays empty and
// the plan degrades to scoring every candidate, which stays exact.
//
// PlanAllowed scores the allowed points from their stored rows, one by
// one, when an allow list is short (fewer than a quarter of the query
// lists' postings).
//
// Why MaxScore: it was measured against block-max WAND (Ding and Suel
// 2011, implemented here with the same bounds, seed and margin as
// PlanBlockMaxWAND, which Search never picks) and against exhaustive
// term-at-a-time scoring of every posting, on BM25 weights of the
// pypi-demo summaries with held-out summaries as queries (7.2 terms on
// average), k = 10, one query at a time, the plans alternating per query
// (BenchmarkSparseReport via bench/bench_sparse.py; two runs of 3 rounds
// each on a shared 2-core machine at load 28-39, the medians of the
// rounds, bench/results/sparse/sparse-20261201T184937Z-daf318c.json and
// sparse-20261201T191435Z-5d6471b.json):
//
//	corpus                  plan         p50 µs          postings read per query
//	29,000 real summaries   MaxScore         92 / 90       2,637
//	                        BMW              94 / 84       3,635
//	                        exhaustive       83 / 87       4,387
//	300,000 synthetic       MaxScore        591 / 618     21,838
//	                        BMW             977 / 1,175   34,647
//	                        exhaustive   10,848 / 12,203  43,679
//
// The likely reason (not measured separately): BM25 weights of short
// documents vary little within a block (one short document in a block of
// 64 lifts its bound to nearly the list's), so the block bounds that
// BMW's pivoting relies on seldom skip, while
// MaxScore's split removes the long lists of common terms from
// enumeration whatever the blocks hold, and costs no cursor sorting per
// point. On the small corpus every plan reads a few thousand postings and
// the accumulator of exhaustive scoring fits in cache: the three are
// within the runs' noise of each other. At 300,000 points MaxScore is
// 1.6-1.9x faster than BMW, 18-20x faster than exhaustive scoring, and
// 47-59x faster than a scipy.sparse CSR product over all documents.
//
// # Filters
//
// Search takes allow, the ascending list of keys that may be returned,
// which is what the collection's filter (meta.Index.Select) produces and
// the other indexes (hnsw.Filter.Allow, text.Index.Search) take. It is not
// converted: MaxScore checks a point against it by binary search only
// after the point's essential score passed the bound, so a filter costs
// nothing for the points pruning drops.
//
// # Storage and concurrency
//
// Points live in a forward store (per slot: key, row of indices and
// values) and in one posting list per index (slots ascending, values).
// Upsert appends a new slot (a replaced point's old slot becomes dead);
// Delete marks the slot dead and updates df at once. Postings of dead
// slots stay until a compaction rewrites store and lists, once dead slots
// outnumber live ones (and 1024): O(1) amortised per delete.
//
// The index is safe for concurrent use: Upsert and Delete take the write
// lock, Search, Get, Len and Freeze share the read lock. A collection
// applies writes one group at a time under its apply lock and lets
// queries run meanwhile; a query sees a group entirely or not at all
// only if the collection applies it with one Upsert or Delete call.
// Freeze, called under the collection's apply lock, returns the contents
// in O(slots/64) (the store is append-only between compactions, and a
// compaction builds new arrays rather than rewriting the old ones), and
// the snapshot is then written from it without holding any lock.
//
// # Use by a collection
//
// A collection holds one Index per named sparse field (New(modifier),
// the modifier from the field's schema, ParseModifier for its name) and
// drives it as it drives its other indexes:
//
//   - validate a write before logging it: Normalize each point's
//     (indices, values), and log the normalised form;
//   - apply under the apply lock: Upsert(keys, vectors) for the points
//     that carry the field (one call per applied group, so a query sees
//     the group whole), Delete(keys) for deleted points and for points
//     written without the field; replay does the same;
//   - query: Normalize the query vector, then Search(q, k, allow) with
//     allow the filter's meta.Index.Select result (nil: no filter);
//   - read back a point's vector with Get (with_vectors);
//   - checkpoint: Freeze under the apply lock, then Frozen.Write (or put
//     Frozen.Sections in the collection's own container) outside it; on
//     open, Read (or FromFile) and replay the log after the snapshot.
//
// Errors are ErrInvalid (errkind.Invalid) for bad input and ErrCorrupt
// (errkind.Corrupt) for a bad file; a door maps them by kind.
//
// # Snapshot file, version 1
//
// An indexfile container (magic, version, CRC-32C of header, table and
// every section, 64-byte aligned payloads; see package indexfile) with
// five sections, all integers little-endian:
//
//	SPPR  params, 24 bytes
//	         0  version   uint32  1
//	         4  modifier  uint32  0 none, 1 idf
//	         8  count     uint64  points, N
//	        16  nonzeros  uint64  coordinates of all points, Z
//	SPKY  keys       N × uint64   in slot order
//	SPST  row starts (N+1) × uint64, starts[0] = 0, non-decreasing, starts[N] = Z;
//	                 row r is coordinates [starts[r], starts[r+1])
//	SPIX  indices    Z × uint32   strictly increasing within each row
//	SPVL  values     Z × float32  finite
//
// Only live points are written, in slot order; the posting lists are
// rebuilt on load (one pass over the rows), so the file holds each
// coordinate once. Read checks every count against its section's length
// before allocating, every row as Check does, and that no key appears
// twice; any fault is an error wrapping ErrCorrupt that names it. Writing
// what Read returned gives the same bytes.
package sparse
