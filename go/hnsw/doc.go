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
//
// # Concurrency
//
// Add batches are serialised by Index.writeMu, and inside a batch nodes are
// inserted in parallel with one lock per node stripe, as in hnswlib.
// Searches take no lock: link lists are read and written with atomic
// 32-bit loads and stores, a node's vector is written before any link to it
// is published, and a node is admitted to search results only once its flag
// says its insertion is complete. Growing the arrays copies them into a new
// graph that is swapped in atomically; a search that started on the old
// graph finishes on it, since the old arrays are never written again.
package hnsw
