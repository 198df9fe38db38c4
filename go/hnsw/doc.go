// Package hnsw is strata's approximate nearest-neighbour index: a
// Hierarchical Navigable Small World graph (Malkov & Yashunin, 2016) with
// the neighbour-selection heuristic, distances as hnswlib reports them
// (see package metric), and stable uint64 ids chosen by the caller.
//
// # Memory layout
//
// Nothing the GC must scan grows with the index. A graph is a handful of
// flat arrays indexed by an internal node number (uint32):
//
//	vectors  []float32  node i at [i*dim, (i+1)*dim)
//	level0   []uint32   node i at [i*stride0, (i+1)*stride0): count, then 2·M neighbour slots
//	upper    []uint32   levels 1..L of node i start at upperStart[i]; each level is
//	                    count, then M neighbour slots
//	levels   []uint8    top level of each node
//	labels   []uint64   caller's id of each node
//	flags    []uint32   flagReady | flagDeleted (atomic)
//	parent   []uint32   each node's pinned in-link of the level-0 spanning tree (tree.go)
//	codes    []uint8    SQ8 only: node i at [i*dim, (i+1)*dim)
//	shares   []float32  SQ8 only: each code's inner-product term (package sq8)
//	rank     []uint32   once renumbered: each node's position in insertion order
//
// Node numbers are internal. An Add of at least 16,384 nodes that is at
// least half of the graph, every Compact of that size and Renumber renumber
// the graph in breadth-first order of level 0 from the entry point, so nodes a
// search reaches together sit together in memory (a copy swapped in like a
// grown graph; ids, answers and the insertion order IDs reports do not
// change). rank keeps that insertion order.
//
// Ids map to nodes through a dense slice for ids below about twice the
// live count and a map above. Arrays of several MiB are advised onto
// transparent huge pages.
//
// # Searching
//
// A search descends the upper levels greedily and runs the ef-bounded best-first
// search on level 0, prefetching the rows of a node's unvisited neighbours
// before measuring them (on graphs too large for L2). Without an id filter
// and for ef up to 512 the candidates live in one sorted list instead of a
// frontier heap beside a result heap (searchList). Filters (allow/deny id
// lists) are compiled once per call into a bitset: an allow list the
// caller marks sorted (Filter.Sorted) is intersected with a table of the
// index's ids in order (filter_keys.go), instead of looking up each id:
// built when a sealed segment is sealed (Index.SealKeys), else once the
// ids did not change between two filtered searches. A
// filtered level-0 search measures only admitted nodes (filter_search.go,
// after ACORN-1): expanding a node gathers its admitted neighbours and,
// through each neighbour the filter rejects, that neighbour's admitted
// neighbours, up to 2M nodes (a rejected node whose list it read to the
// end is not read again in that search: it would add nothing); where none
// lie within two hops it routes, measuring the rejected neighbours. A query whose neighbourhood (two hops
// from the end of the descent) holds under half of the admitted share the
// filter predicts (a filter correlated with the data, far from the query),
// or whose search is left with fewer than k results, or passes the
// fallback's cost in distances, is answered by the fallback: the exact
// scan of the admitted vectors or the routing search at widened ef,
// whichever the cost model prefers. A planner scans the admitted vectors
// exactly instead when that is cheaper (choosePlan: selected <
// ef·2M·(1 + (1−p)·(1 + 1/(p·2M))) for a fraction p admitted). RaBitQ traversals route through every node on
// their 1-bit estimates, with ef widened by 1/p² (capped) and the scan chosen
// when selected² < ef·2M·n. On an SQ8 graph distances are computed on codes
// with integer kernels and, with Rerank, the candidates are re-ranked with
// float vectors.
//
// # RaBitQ codes
//
// BuildRaBitQ codes a float graph with package rabitq (rabitq_codes.go):
// each node's 1-bit code and factors share one row of a flat array in node
// order, optionally beside a 2-8-bit extended code, and each node gets a
// record in SymphonyQG's layout (rabitq_blocks.go): its own extended code,
// then its level-0 neighbours' ids, 1-bit codes packed for FastScan and
// factors, 32 to a block. While the graph is unchanged, graph searches
// then traverse by 1-bit estimates (one contiguous read of the expanded
// node's record and one kernels.FastScan32 per 32 neighbours), refine a
// neighbour (extended code, or float vector) only when its lower bound can
// still beat the k-th refined distance, and finally measure with the float
// vectors only the refined candidates whose lower bound can still enter
// the top k (rabitq_search.go). An index of Config.RaBitQBits = 1 with
// at least 256 coded dimensions searches its blocks as SymphonyQG does
// instead (rabitq_expanded.go): the traversal is ordered by 1-bit
// estimates, and only the node it expands is measured, with its float
// vector prefetched a hop ahead, about one float read per hop instead of
// one per promising neighbour. Any Add, Compact or Renumber drops codes
// built by hand from use (Remove does not: tombstones keep their links); an
// index created with Config.RaBitQBits keeps them current itself, coding
// each Add's new nodes and rebuilding the records (rabitq_keep.go). Save writes
// them while they are current (rabitq_persist.go). An index created with
// Config.RaBitQCodesOnly keeps no float vectors: its one Add builds the
// graph on them, codes them and drops them, and searches re-rank with the
// extended codes, held as bit planes beside the 1-bit codes, about a fifth
// of a float index's memory at 3 bits (rabitq_codesonly.go).
//
// An index of Config.RaBitQLayout = LayoutQG (1 bit) searches a quantized
// graph instead of the HNSW graph (rabitq_qg.go, SymphonyQG's layout): the
// HNSW build's level-0 links filled to degree 32 from the links' links, no
// upper levels (the medoid is the entry), one 64-byte-aligned row per node
// holding its float vector, its 32 neighbour ids, their 1-bit codes
// relative to the node (rabitq/residual.go) in FastScan order and their
// factors, so a hop is one contiguous read; the search is SymphonyQG's
// loop: a sorted buffer of ef estimates whose expanded entries keep their
// slots, each node it expands measured exactly. It is
// rebuilt whole by each Add and Compact and saved as section RBQG (the
// ids; the rows are recomputed on Load).
//
// An index of Config.RaBitQLayout = LayoutRows (1 bit) keeps the code rows
// and no records: the traversal reads each neighbour's row (88 bytes at
// D = 512) and refines with the float vector, so that with
// LoadOptions.MmapVectors the resident part is the graph and the rows,
// the vectors staying in the page cache (section RBQL says so).
//
// # Persistence
//
// Save writes the arrays as sections of a go/indexfile container (CRC-32C per
// section, atomic replace); a renumbered graph adds the optional section
// RANK, which older files lack and Load then takes as identity. The
// level-0 spanning tree is the section PRNT; files written before it (with
// an ignored INDG section of in-degrees instead) get the tree rebuilt from
// their links on load. Current RaBitQ codes are the optional sections
// RBQP, RBQC, RBQR, RBQN (the neighbour records) and, with extended codes,
// RBQX and RBQF, or for a codes-only index RBQB in place of RBQX and
// VECS (rabitq_persist.go); files without them load with no
// codes, files with codes but no RBQN with the records rebuilt. Load validates the graph's
// structure before use and can leave the float vectors memory-mapped in
// the file.
//
// # Reachability
//
// Every node stays reachable from the entry point at level 0, whatever
// pruning does: a pinned spanning tree of level-0 links (tree.go) is never
// pruned, and an insertion whose node no neighbour adopted forces a link
// from its nearest neighbour in the tree. CheckIntegrity verifies both.
//
// # Concurrency
//
// Add batches are serialised by Index.writeMu, and inside a batch nodes are
// inserted in parallel with one lock per node stripe, as in hnswlib, in an
// order that puts vectors close in space one after another, so that each
// insertion finds the rows the previous one read still in cache
// (insertorder.go).
// Searches take no lock: link lists are read and written with atomic
// 32-bit loads and stores, a node's vector is written before any link to it
// is published, and a node is admitted to search results only once its flag
// says its insertion is complete. Growing the arrays copies them into a new
// graph that is swapped in atomically; a search that started on the old
// graph finishes on it, since the old arrays are never written again.
package hnsw
