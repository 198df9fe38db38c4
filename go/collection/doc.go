// Package collection is strata's database: a durable set of entries, each
// an id (an integer below 2^63 or a string of 1 to 512 bytes of UTF-8, both
// kinds in one collection; see ids.go), float32 vectors in the fields of its schema and a JSON metadata document,
// searched by vector with Mongo-style metadata filters. The Python
// Collection (through the C ABI) and strata-server are both thin doors over
// it.
//
// # Vector fields
//
// A collection's schema is a set of named vector fields (schema.go), each
// with its own dimension, metric, graph parameters, quantization and
// index (fields.go); the unnamed default is the name "". A collection
// created with Options.Dim is the schema of one dense field "", and the
// calls of before fields existed (Upsert, Query, Get) work on that field.
// A point may lack any field; UpsertPoints writes whole points with any
// fields, UpdateVectors and DeleteVectors change some fields of existing
// points, AddVectorField and RemoveVectorField change the schema, and
// QueryField and QueryMulti search one field (Qdrant's using). The filter
// condition meta.HasVector(field) matches the points that have a field. A
// multivector field holds a list of vectors per point, searched by MAX_SIM
// (maxsim.go).
//
// # Sparse fields and hybrid queries
//
// A sparse field (Options.Sparse, AddSparseField; sparse_fields.go) holds
// for some points a sparse vector, in an inverted index of package sparse
// (exact top k by dot product, MaxScore pruning, Qdrant's IDF modifier).
// Sparse and dense names are one name space. Its values are written with
// the other fields' (FieldValues with Indices), read back with
// GetSparseVectors, matched by meta.HasVector, and searched with
// QuerySparse under the collection's filters, whose allow list the index
// takes as it is. QueryFused runs sub-queries of any fields and of the
// BM25 text indexes under one filter and fuses their lists by RRF or DBSF
// as Qdrant does (fusion.go); Fuse alone serves doors that nest them.
//
// # Promises
//
//   - A write (Upsert, UpdateMetadata, Delete) is validated whole before
//     anything happens; invalid input changes nothing.
//   - With FsyncAlways, a write returns only after its log record is on
//     stable storage: it survives a crash of the process, the machine or the
//     power. FsyncBatch and FsyncNever bound the loss as their docs say.
//   - Writes are applied in memory in log order, so the state after a crash
//     and replay equals the state before it, minus at most the writes in
//     flight (never acknowledged).
//   - Queries never wait for writes; a query sees every write acknowledged
//     before it started.
//   - A failed log write, fsync or checkpoint makes the collection refuse
//     further writes (ErrFailed) rather than guess what reached the disk;
//     reopening recovers from the log.
//
// # Write path and group commit
//
//	caller: validate → encode record → queue ──┐
//	logger goroutine:     take every queued request (a group)
//	                      → one log write → one fsync (FsyncAlways)
//	                      → a small group (under 256 KiB): apply it here
//	applier goroutine:    a group of large batches: apply it while the
//	                        logger fsyncs the next one
//	apply:                in sequence order, documents into meta, vectors
//	                        onto each field's mutable tail (package
//	                        segment) → wake the callers → kick the builder
//	builder goroutine:    move tail rows into the fields' graphs, in order,
//	                        in parallel batches (build.go)
//
// Requests queued while a group is logged form the next group, so N
// concurrent writers pay for about one fsync per group instead of N. A
// group of large batches is applied by the applier while the next group's
// fsync runs. A small group is applied by the logger itself (one handoff
// fewer per ack), which then lets the woken writers run before it takes
// the next group, so that N single-row writers share one fsync rather than
// two alternating groups of N/2 (an fsync's kernel CPU time is most of a
// single-row ack's cost), and only then kicks the builder: readied before
// the writers, the builder ran first on their P (with it running,
// single-row acks spent 2-3x longer off the disk: ackbench_test.go). The
// builder adds on half the cores, leaving the rest to acks and queries,
// and yields its P between insertions every 200 us (package hnsw). No graph
// insertion is on the ack path: every query searches the graph and scans
// the tail exactly, so a write is visible the moment it is acknowledged.
// When the builder falls Tuning.TailRows rows (or TailBytes) behind,
// the applier waits for it before waking callers (backpressure).
//
// # Log records
//
// The payload of each WAL record (see package wal for framing, checksums
// and sequence numbers), little-endian:
//
//	op u8 = 1 upsert:       n u32 | dim u32 | ids | vectors [n·dim]f32 | n × (len u32 | JSON document)
//	op u8 = 2 delete:       n u32 | ids
//	op u8 = 3 set metadata: n u32 | ids | n × (len u32 | JSON document)
//	op u8 = 4 text index:   n u32 = 0 | len u32 | JSON {"field": path, "analyzer": name}
//	op u8 = 5 upsert points:  n u32 | ids | fields | n × (len u32 | JSON document)
//	op u8 = 6 update vectors: n u32 | ids | fields
//	op u8 = 7 delete vectors: n u32 | ids | nf u32 | nf × (len u32 | name)
//	op u8 = 8 add field:      n u32 = 0 | len u32 | JSON {"name", "dim", "metric", "M", "ef_construction", "quantization"[, "multivector": "max_sim"]}
//	                          or, a sparse field, JSON {"name", "sparse": "none"|"idf"}
//	op u8 = 9 remove field:   n u32 = 0 | len u32 | JSON {"name": name}
//	op u8 = 10 expire:        n u32 | ids | n × expires i64
//
// where fields, the values of some vector fields for some of the ids, is
//
//	nf u32 | nf × (len u32 | name | kind u8 (0 dense, 1 multivector, 2 sparse) | dim u32 | m u32 |
//	               points [m]u32 | counts [m]u32 (kinds 1, 2) |
//	               kinds 0, 1: vectors [rows·dim]f32
//	               kind 2:     indices [Σ counts]u32 | values [Σ counts]f32)
//
// points are ascending positions into ids, counts the vectors of each
// point (1..limits.MaxMultivectors), rows m for a dense field and
// Σ counts for a multivector one; names are unique in a record (at most
// limits.MaxVectorFields, limits.MaxFieldName bytes each). A sparse
// field (kind 2) has dim 0, counts the coordinates of each point
// (0..limits.MaxSparseNonZeros), and each point's coordinates in the
// form sparse.Normalize gives (indices strictly increasing, values
// finite); the decoder refuses any other as corrupt. Kind 2 is new with
// sparse fields: the logs written before them replay unchanged, and a
// build before them refuses a record that has one (unknown kind). An upsert of
// op 1 writes the field "" of every id and no other field; a collection
// of the field "" alone writes only ops 1-4, as before fields existed.
// Op 5 states whole points: a field not given for an id is dropped. Ops
// 6 and 7 skip ids gone at apply time, as op 3 does. A record is applied
// to the schema as it stands at its place in the log: values for a field
// that does not exist then, or has another kind or dimension (removed
// and added again since the write was validated), are ignored, live and
// in replay alike (apply_fields.go).
//
// The ids section of ops 1-3 and 5-7 has two encodings, told apart by the
// flag 0x80 of the op byte (0x81, 0x82, 0x83, 0x85, 0x86, 0x87):
//
//	untagged (flag clear): [n]u64                      every id an integer
//	tagged   (flag set):   n × (kind u8 | value)       at least one id a string
//	         kind 0 = integer: u64
//	         kind 1 = string:  len u16 | len bytes of UTF-8 (1 <= len <= 512)
//
// A batch of integer ids writes the untagged form, byte for byte the
// records of the builds before string ids; a batch with any string id
// writes the tagged form, and only it: a tagged section without a string
// id is corrupt, so every record has one encoding. Integer ids are below
// 2^63 in both forms. Records hold ids as written: the keys that string
// ids get in memory (ids.go) are handed out again by replay in log order.
//
// # Expiring points
//
// An upsert (op 1 or 5) may give its points expiry times: the flag 0x40
// of the op byte (0x41, 0x45; with tagged ids 0xc1, 0xc5) says the record
// ends, after its documents, with n × expires i64, one per id, Unix
// nanoseconds, 0 for a point that does not expire. The flag is set when
// at least one point expires, and only then (a flagged record where none
// does is corrupt), so records without expiring points are byte for byte
// those of the builds before them, and those builds refuse a flagged one
// (unknown operation). An upsert states the whole point, expiry included:
// one without the flag clears the expiry of the ids it writes. Ops 3, 6
// and 7 keep it. Op 10 is the reaper's delete (reaper.go): its ids with
// the expiry (> 0) each had when the reaper saw it expired; it deletes
// the ids whose expiry is still exactly that one, so that an upsert
// logged between the reaper's look and its record survives, live and in
// replay alike. No record's apply reads the clock for what it changes:
// the expiry table after replay is a function of the log alone (a live
// delete reads it for the count it returns, which leaves out the points
// expired and not reaped yet: gone already, as missing ids). Reads compare expiry
// times with one reading of Tuning.Clock per call and hide every point
// expired by then (expiry.go); the snapshot keeps the table in
// expiry.idx (package snapshot).
//
// A record states the full new state of the ids it touches, so replay needs
// no other context; a set-metadata record for an id that is gone at replay
// time is skipped, as it was when applied live.
//
// # Checkpoints
//
//  0. Wait for the builder (a snapshot holds graphs, never a tail).
//  1. Under the apply lock, for a time in proportion to the records since
//     the previous checkpoint: note the last applied sequence number S,
//     fence each field's tail at it (package segment: later rows wait
//     for the next active graph), freeze the sparse indexes, copy the
//     multivector maps and the state of the keys changed since the
//     previous checkpoint. Writers queue meanwhile.
//  2. With writers going on past the fences: build the rows below each
//     fence, seal each field's active graph (it becomes an immutable
//     segment, an empty graph takes the next inserts), freeze the
//     segments no file holds yet (hnsw.Freeze) and note each segment's
//     deletions since its file; lift the fences. A merge of state runs
//     folds the runs it replaces in from their files (state.go). Then
//     rotate the log, so records after S land in a new segment.
//  3. Write the new segment files and the state run of the keys whose
//     document, string id or expiry changed since the previous
//     checkpoint (DIR/segments/, fsynced, the directory too; state.go),
//     then snapshots/S/ (deletes.NN.idx per field with deletions, a map
//     per multivector field; sparse.NN.idx per sparse field; MANIFEST),
//     fsync each file, the directory and snapshots/. Read the new
//     segment files, the new state run and the snapshot back (every CRC).
//  4. Replace CURRENT (temp, fsync, rename, fsync of the collection dir).
//  5. Remove log segments holding only records <= S, other snapshots and
//     segment and state run files neither the live nor the previous
//     snapshot names.
//
// So the bytes a checkpoint writes are those of the vectors built and
// the points changed since the previous one (plus the segments and state
// runs merges made since), not the collection's; the sparse and map
// files are still written whole (package segment, "What is left").
//
// A crash before step 4 leaves the old snapshot live and a stray directory
// and segment files that Open removes; after it, stray log segments,
// snapshots and segment files that Open (or the next checkpoint) removes.
// Checkpoints run when asked, at Close if the log holds anything new, and
// in the background once the log has grown by Tuning.CheckpointBytes.
//
// The same background loop looks once a second at two kinds of upkeep
// that change only memory: merges of the sealed segments (package
// segment, "Merging": a segment whose tombstones reach Tuning.VacuumRatio
// is rewritten; while writes come nothing else unless a field passes 12
// segments; when no write came since the previous look, segments of one
// size tier and then segments of similar sizes, no merge of several
// producing more than half the field's live keys;
// Info().Merging is set meanwhile), each written by a checkpoint of its
// own right after it (an idle collection logs a no-op marker record for
// it: a delete of no ids), and otherwise a renumbering of the active
// graph for locality (hnsw.Index.Renumber) when its live points have
// grown 1.5x since the last one. Neither touches the log: a crash during
// either recovers as from any other state. Tuning.HoldMerges holds these
// looks back until a test is ready for them (a crash test arms its kill
// point first; the metamorphic test looks at points of its own).
//
// # Recovery
//
// Open reads CURRENT, loads the snapshot it names and the segments its
// manifest lists (checking the manifest's file sizes and every section's
// CRC but those of the segments' vectors, links, ids and codes, which it
// maps and leaves to the background verifier: verify.go), then replays log records after
// S into the tails (no graph insertion; the builder catches up after
// Open). A vector CRC that the verifier finds wrong fails the collection
// (every read and write returns ErrCorrupt naming the segment and
// section; nothing is deleted); Tuning.VerifyOnOpen checks those CRCs
// before Open returns, as every CRC was before, so that the fallback
// below covers them too.
// If CURRENT or that snapshot is damaged, it falls back to the previous
// snapshot, which every checkpoint keeps with the log since it until the
// next one is written and verified, and reports it (Info().Recovery.Fallback;
// see package snapshot, "The previous snapshot": twice the snapshot space).
// Replay must start at S+1 and be gap-free. A torn tail (the last record
// short, zeroed, or failing its CRC with zeroed bytes in it, nothing valid
// after it) is cut off durably and reported in Info().Recovery. Anything
// else refuses to open with ErrCorrupt naming file and offset: a damaged
// record followed by valid ones, a complete last record with a flipped bit,
// and a log that lost records (a segment deleted or emptied, wal/ removed:
// a version 2 manifest says the log keeps wal/HEAD, which names its newest
// segment). Tuning.Repair instead copies the damaged segments to .broken
// files, applies every valid record it can find behind the damage, reports
// the lost sequence numbers (Info().Recovery.Lost, Describe's
// recovery.repaired.lost_seqs), and checkpoints before Open returns, so the
// salvaged state is durable and the damaged segments go.
//
// The directory layout and the snapshot files are specified in package
// snapshot; metadata documents and filters in package meta.
package collection
