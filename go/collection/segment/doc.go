// Package segment holds the storage units of a collection's vector
// fields: the mutable tail (step 1 of issue 24), the graph segments a
// field's rows move into, sealed at each checkpoint and merged in the
// background (step 2, "Graph segments" below), and what is left (the
// end).
//
// # The mutable tail
//
// A Tail is one vector field's acknowledged values not yet in the field's
// graph, in apply order: rows of (key, vector) for a put, (key, no
// vector) for a tombstone. The write path is
//
//	validate → log → fsync (group commit) → Tail.Append / Tail.Remove → wake the caller
//
// and no graph work is on it: a builder goroutine (go/collection,
// build.go) takes the rows in order (Next), adds the batch's puts to the
// graph in one parallel insert and removes its tombstones, then Advance
// drops the rows. The tail stores floats (normalised for cosine, as the
// graph stores them) for every field, quantized ones too.
//
// Who may do what:
//
//   - One appender (the collection's applier) calls Append and Remove.
//     Rows, once published, never change, except the atomic word saying
//     which later row superseded them.
//   - Readers take a View (Read) and hold it for the whole read. A view is
//     the rows [built, n) at that moment; while any view is open the
//     builder cannot Advance, so a graph searched during the view reflects
//     every row below built and nothing newer than the view's rows.
//   - The rule of every read: a key that has a row in the view is the
//     view's (its last row in the view: a vector, or nothing for a
//     tombstone); the graph's version of it, stale or equal, is never
//     returned (View.Hides). Every other key is the graph's. So the newest
//     write wins, a deleted point is never resurrected by the builder, and
//     a point is never returned twice.
//   - A search scans the view's live rows exactly (Scan, the field's metric
//     through go/kernels, or the quantized graph's code distance so that a
//     row ranks alike before and after it is built) and merges them with
//     the graph's results. The graph is asked for Extra more results, the
//     number of tail keys that hid a graph version when they came; past a
//     bound the collection passes them to the graph as a deny list.
//
// # Bounds
//
// The exact scan costs one distance per tail row per query, so the tail
// is bounded (collection.Tuning.TailRows, TailBytes; 8192 rows or 16 MiB):
// once the builder is that far behind, the applier waits for it before
// waking the callers (backpressure, never an unbounded scan). Replay on
// Open does not wait: a reopened collection may start with a longer tail,
// which the builder works off in the background while queries scan it and
// writers wait.
//
// # Graph segments
//
// The builder moves tail rows into the field's active graph (Graphs:
// one hnsw.Index taking inserts). A checkpoint seals it (Graphs.Seal):
// the active graph becomes an immutable sealed segment, written once to
// its own file DIR/segments/<seq>-<n>.hnsw (package hnsw's format in
// package indexfile's container, fsynced, read back before CURRENT names
// it), and an empty active graph takes the next inserts. So a checkpoint
// writes the graph of the rows built since the previous one, not the
// field's whole graph; the manifest of each snapshot (package snapshot,
// format 4) lists each field's segments, oldest first.
//
// Rules:
//
//   - A key is live in at most one segment. Graphs.Add removes a key from
//     the sealed segment holding it before inserting it into the active
//     graph (an overwrite), Remove removes it wherever it is; both run
//     under one mutex (the builder's), before the tail advances past the
//     rows, so a reader (holding a tail view, which hides those keys)
//     never sees a key twice or a gap.
//   - A sealed segment takes no insert, only removals: its tombstones. The
//     keys removed since its file was written are kept (Graph.deleted)
//     and each snapshot writes them to the field's deletes file, so the
//     segment file is never rewritten for a deletion; Open removes them
//     again from the loaded graph.
//   - The segments of a field share one SQ8 quantizer (hnsw.Index.SetQuantizer
//     on each new graph), so code distances compare across segments and
//     with the tail.
//   - Reads load the segment list with one atomic load (copy on write)
//     and never wait. A search (Graphs.SearchFiltered) searches every
//     segment with live keys with the same filter (each plans its own
//     filter: exact for few allowed, the graph otherwise), then merges the
//     per-segment top k by distance. Its stats sum the distance
//     computations and Allowed; its plan is the graph's if any segment
//     took its graph. One segment with keys: the search is that graph's,
//     unchanged.
//
// # Merging
//
// The checkpoint loop's periodic look (collection, checkpoint.go) runs
// the merge policy (MergePolicy, Graphs.Plan; at most 16 merges a look):
//
//   - a segment whose tombstones are at least Tuning.VacuumRatio of its
//     nodes (and at least 1,000) is rewritten alone; an active graph that
//     crowded is sealed first (a sealed segment without a file yet);
//   - otherwise, 4 segments of one size tier (tier: floor(log4(live+1)))
//     are merged into one;
//   - otherwise, past 8 sealed segments, the 4 smallest are merged;
//   - otherwise, if no write was applied since the previous look (idle:
//     MergePolicy.Idle), the segments are merged down: with three or more
//     holding live keys, all but the largest into one, and all of them
//     into one once the others hold as many live keys as the largest.
//     An idle collection so settles at one segment, or the largest and
//     one smaller, and the largest is rebuilt only when that at least
//     doubles it; what it costs is the rebuild of the smaller ones after
//     each checkpoint that sealed something (TestSegmentBench).
//
// A merge (Graphs.Merge) reads the sources' live keys and vectors and
// builds a new graph holding no lock (writes, the builder and queries go
// on; it uses half the cores); then, under the mutex, it removes from the
// new graph the keys the builder removed from the sources meanwhile and
// replaces the sources by it in one state swap. The merged segment has no
// file until the next checkpoint writes it; the old files go once no kept
// snapshot names them. This is the whole-graph vacuum of before, done per
// segment: hnsw.Index.Compact is no longer called. Tuning.VacuumRatio < 0
// turns merging off (segments then accumulate, one per checkpoint and
// field). Tiers bound the segment count by about 3 per tier, so
// log4(N/seal size) tiers, and MaxSegments caps it while writes go on;
// idle, a collection holds one or two. Each segment costs a query one
// graph search (the per-segment top k are merged), so the count is what
// query speed depends on: TestSegmentQueryBench measures 1, 3 and 9.
// Searching the segments one after another with the k-th or ef-th
// distance found so far as a bound (Lucene's way across segments) was
// tried and dropped: it cut the second segment's distance computations
// to 0.53-0.68x, but recall@10 fell from 0.97 to 0.76-0.84 (2 x 2,000
// points, ef 24), since an HNSW
// search must pass through far nodes before it reaches near ones.
//
// # Reopen
//
// Open loads each segment file (hnsw.Load: the float vectors are read
// into memory, or mapped for a field of mmap placement, below), removes
// its deleted keys, checks its live count against the manifest and that no key is
// live in two segments, and starts an empty active graph with the
// segments' quantizer; then it replays the log after the snapshot into
// the tail. A snapshot of formats 1-3 (one index file) is loaded as the
// active graph, which the first checkpoint seals into a segment: old
// collections are converted then.
//
// # What is left (the end of issue 24)
//
//   - The sparse and multivector-map files, and each field's deletes
//     file, are still rewritten whole at every checkpoint; the graphs are
//     per segment and the documents, string ids and expiry times in state
//     runs (package snapshot, "State runs"; meta.idx, 1.6 MB a checkpoint
//     at 100k points without documents, before them).
//   - Merges run in the checkpoint loop at half the cores: under load they
//     lag behind frequent checkpoints, and until the collection is idle
//     queries pay for every segment (TestSegmentQueryBench).
//   - A merge is written by the next checkpoint, and a checkpoint needs
//     a log record newer than the live snapshot: a collection merged
//     down while idle and closed before any write loads its old segments
//     again at Open and merges them again.
//   - No crash test kills the process with a log tail longer than the
//     tail bound (the large-tail case left from step 1).
//   - A merge holds its sources' vectors in memory while it builds
//     (copied out of their mappings for a field of mmap placement), and
//     the merged segment stays in memory until a checkpoint writes it
//     (the next one with a record to write).
//   - An SQ8 field re-scores with float vectors (hnsw Config.Rerank) by
//     default, so memory="mmap" maps them and only the codes and graph
//     are resident; a codes-only field (collection.VectorField.CodesOnly,
//     every SQ8 field before rescoring) maps nothing. Codes (0.25 of the
//     float bytes) and graph (about 0.08 at M 16) alone are 0.33: the
//     issue's 0.35 leaves 0.02 for ids, documents and the runtime, which
//     take more (collection, memory.go; bench_collection_memory.py).
//     A query cannot turn rescoring off (only the field can).
//   - Sealing happens at checkpoints (every Tuning.CheckpointBytes of
//     log), not at a row count of its own.
//   - A segment file damaged when both kept snapshots name it has no
//     fallback (package snapshot, "The previous snapshot").
//
// # Memory placement (memory="mmap")
//
// A field of mmap placement (collection.MemoryMmap) keeps its sealed
// segments' float vectors in their files, memory-mapped read-only
// (hnsw.LoadOptions.MmapVectors, package indexfile): Open loads them so,
// and after a checkpoint has made the files it wrote durable, MapSealed
// loads each from its file and puts it in the place of the segment's
// memory copy (removing first the keys deleted since the file was
// written; a merge's sources are left alone). The tail and the active
// graph stay in memory: both are bounded. Links, ids, flags and SQ8 codes
// are read into memory as before; only the floats are mapped (of an SQ8
// field too, whose segments keep them for rescoring).
//
// Mapped pages are clean page cache: under memory pressure the kernel
// drops them and a query that needs one reads it from the file again (a
// disk read on the query's path, not an error). The answers do not
// change: the same file is searched the same way (the tests compare ids
// and distances with a ram collection, and after dropping the pages with
// posix_fadvise DONTNEED).
//
// A segment leaves a state when a merge replaces it or MapSealed swaps in
// its mapped copy, while a reader may still be searching it. Reads that
// touch vectors (SearchFiltered, GetVectors, IDs, CheckIntegrity) pin the
// sealed segments of the state they load; a replaced segment is retired,
// and its index is closed (unmapped) by whoever lets go of it last, the
// retire itself if no reader holds it (mapped.go).
//
// # The mutable tail, at checkpoints and reopen
//
// A checkpoint drains the tails first: it waits for the builder without
// any lock, then under the apply lock builds what came meanwhile (at most
// the bound), and seals the active graphs, so a snapshot holds no tail.
// Reopen loads the segments and replays the log after the snapshot into
// the tails (no graph insertion on Open); the builder catches up in the
// background (Info().TailRows, Built; Describe's tail_rows and
// built_rows).
package segment
