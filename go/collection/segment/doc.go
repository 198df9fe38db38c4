// Package segment holds the storage units of a collection's vector
// fields. This first step is the mutable tail; the sealed segments, the
// manifest that lists them and their merges come next (the plan below).
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
// # Checkpoints, reopen
//
// A checkpoint drains the tails first: it waits for the builder without
// any lock, then under the apply lock builds what came meanwhile (at most
// the bound), and writes the graphs as before, so the snapshot format is
// unchanged and holds no tail. Reopen loads the snapshot and replays the
// log after it into the tails (no graph insertion on Open); the builder
// catches up in the background (Info().TailRows, Built; Describe's
// tail_rows and built_rows).
//
// # The plan: sealed segments
//
//   - Seal: when a tail reaches its bound it is frozen (a new tail takes the
//     writes) and becomes an immutable flat segment: keys, vectors (+ SQ8
//     codes), tombstones of older segments' keys, written once to its own
//     file (magic, version, CRC per section, fuzzed reader) and fsynced. A
//     checkpoint is then "seal + manifest" and writes only what changed,
//     instead of draining into one graph.
//   - Build: the builder turns a sealed flat segment into a graph segment
//     (HNSW + vectors/codes + ids, the indexfile sections, mmap'd) in the
//     background; until it lands the flat segment is scanned exactly, as
//     the tail is now. The View rule generalises: newer segments hide the
//     keys of older ones, each segment's tombstones are a bitmap.
//   - Manifest: a versioned, CRC'd list of live segments switched with the
//     CURRENT protocol; Open maps the segments and replays the log after
//     the manifest into a fresh tail.
//   - Merge: a tiered policy merges small graph segments and rewrites
//     those whose tombstones pass a ratio, replacing today's whole-graph
//     vacuum; old files go once the manifest no longer names them.
package segment
