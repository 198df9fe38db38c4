// Package flat is an exact, brute-force vector index with the same Go API as
// package hnsw. Every search compares the query with every stored vector, so
// its answers are the ground truth that approximate indexes are measured
// against, and it is the right choice for small collections.
//
// Storage is pointer-free so the garbage collector has nothing to scan:
//
//	vectors  []float32          row r is vectors[r*dim : (r+1)*dim]
//	ids      []uint64           ids[r] is the id of row r
//	rows     map[uint64]uint32  id -> row
//
// Guarantees:
//   - Vectors are copied on Add (and normalised for the cosine metric); the
//     caller's slices are never kept.
//   - A batch is checked in full before anything changes: a rejected batch
//     (wrong shape, NaN or infinity, duplicate id in the batch, id > MaxInt64)
//     leaves the index as it was. Adding an id that is already stored
//     replaces its vector (upsert).
//   - Results are ordered by (distance, id) ascending, so ties are broken the
//     same way whatever the thread count or insertion order; rows missing
//     when fewer than k vectors exist are padded with id -1 and distance +Inf.
//   - Searches may run concurrently with each other and with Add; a search
//     sees either none or all of a batch.
package flat
