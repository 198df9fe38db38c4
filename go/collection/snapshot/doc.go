// Package snapshot holds the small files that say which state of a
// collection is durable: the manifest of one snapshot and the CURRENT file
// that names the live snapshot, plus the metadata file written beside the
// index file of every snapshot.
//
// # Directory of a collection
//
//	DIR/
//	  LOCK                        flock(2)-ed by the one process that has it open
//	  CURRENT                     names the live snapshot (format below)
//	  wal/%016x.wal               write-ahead log segments (package wal)
//	  wal/HEAD                    names the newest segment (package wal; manifest version 2)
//	  segments/%016x-%04x.hnsw   format 4: a sealed graph segment (package hnsw's index file),
//	                              named for the checkpoint that wrote it and a counter; written
//	                              once, named by the manifests of one or more snapshots
//	  segments/%016x.state        format 5: a state run (documents, string ids, expiry times of
//	                              the points changed in one interval), named for its checkpoint
//	  snapshots/%016x/            one snapshot, named for the last sequence number it contains
//	      index.hnsw              the HNSW index (package hnsw, container of package indexfile)
//	                              of the one dense field "" (manifest formats 1 and 2)
//	      vectors.NN.hnsw         format 3: the index of the NN-th vector field (by name; a dense "" is index.hnsw)
//	      deletes.NN.idx          format 4: the keys deleted from the NN-th vector field's segments (below)
//	      vectors.NN.map          format 3: the node-to-point map of a multivector field (below)
//	      sparse.NN.idx           format 3: the inverted index of the NN-th sparse field (by name;
//	                              package sparse's snapshot file)
//	      meta.idx                formats 1-4: ids and metadata documents (indexfile container, below)
//	      ids.idx                 formats 1-4: string ids and their keys, once the collection has had one
//	      expiry.idx              formats 1-4: expiry times of the points that expire, when one does
//	      MANIFEST                parameters and file sizes (format below)
//	  snapshots/%016x/            the previous snapshot, kept to fall back on
//	  snapshots/%016x.broken/     a snapshot that failed to load, kept as evidence (never read)
//	  CURRENT.broken              a damaged CURRENT, kept as evidence (never read)
//	  wal/*.wal.broken            copies of damaged log segments made by a repair (package wal)
//
// # The previous snapshot
//
// A checkpoint writes the new snapshot, reads it back (every CRC), and only
// then points CURRENT at it; it keeps the snapshot it replaces, and the log
// segments since that one, and deletes everything older. Exactly one
// previous snapshot is kept: snapshots take up to twice their size on disk,
// and the log holds the records of the last two checkpoint intervals. If
// CURRENT, or a file of the snapshot it names, fails its checks, Open loads
// the newest older snapshot that passes them (with CURRENT damaged, the
// newest that passes), replays the log since it, renames the damaged
// snapshot to <seq>.broken (or copies CURRENT to CURRENT.broken), points
// CURRENT at the snapshot it loaded, and reports the fallback
// (collection.Recovery.Fallback, Describe's recovery.fallback).
//
// # CURRENT, version 1
//
// One line of ASCII, 49 bytes including the newline:
//
//	"strata-current 1 " seq(16 lowercase hex) " " crc(8 lowercase hex) "\n"
//
// crc is the CRC-32C (Castagnoli) of the bytes before the space that precedes
// it. CURRENT is only ever replaced whole (temp + fsync + rename + fsync of
// DIR), so a reader sees either the old or the new line; anything else is
// corruption.
//
// # MANIFEST, versions 1, 2 and 3
//
// A JSON object on one line, a newline, then "crc32c:" and the 8-hex CRC-32C
// of the JSON bytes, and a newline. The object's fields are those of
// Manifest; unknown fields are rejected so that a newer writer's manifest is
// never half-understood. Version 2 ("format":2) adds "wal_head":true: the
// collection's log keeps wal/HEAD (package wal), so a log directory without
// one was removed or emptied. Version 3 ("format":3, wal_head set) has a
// vector schema: "vectors" lists the fields sorted by name, each with
// its parameters and the files of its index ("index_file") and, for a
// multivector field ("multivector":"max_sim"), of its map ("map_file");
// the single-vector parameters (dim, metric, M, ef_construction,
// quantization) are then absent. Readers accept all three versions;
// writers write 2 for a collection of the one dense field "" (so a
// collection that never used named fields stays readable by the builds
// before them) and 3 otherwise. A dense field "" is in index.hnsw in
// format 3 too. A format 3 manifest may add "sparse", the sparse vector
// fields sorted by name (names distinct from the dense fields'), each
// {"name", "modifier": "none"|"idf", "file"}; absent means none, so the
// manifests written before sparse fields read unchanged, and a build
// before them refuses a manifest that has them (unknown field).
//
// # meta.idx
//
// An indexfile container (see package indexfile) with three sections:
//
//	"MIDS"  []uint64  ids, strictly ascending
//	"MOFF"  []uint64  len(ids)+1 offsets into MDAT, starting at 0, non-decreasing, ending at len(MDAT)
//	"MDAT"  []byte    the documents' canonical JSON, concatenated
//
// MIDS holds keys: an integer id is its own key; a string id's key is
// 2^63 or more, and ids.idx names it.
//
// # ids.idx
//
// An indexfile container (every section CRC'd) with four sections, written
// once the collection has handed out a key to a string id and named by
// the manifest's "ids" field ("ids.idx"; the file is listed in "files"
// too). A manifest without "ids" means no string id was ever written, as
// in every snapshot before string ids, whose collections open unchanged;
// a build that predates the field refuses the manifest (unknown field).
//
//	"IKEY"  []uint64  keys of the live string ids, strictly ascending, each in [2^63, next)
//	"IOFF"  []uint64  len(keys)+1 offsets into IDAT, from 0, non-decreasing, ending at len(IDAT)
//	"IDAT"  []byte    the string ids, concatenated (each 1-512 bytes of UTF-8, no two equal)
//	"INXT"  []uint64  one value, next: the key the collection hands out next (>= 2^63)
//
// The string keys of MIDS (its keys from 2^63 up) must equal IKEY.
//
// # expiry.idx
//
// An indexfile container with two sections, written when a point of the
// snapshot has an expiry time, and named by the manifest's "expiry" field
// ("expiry.idx"; listed in "files" too). A manifest without "expiry"
// means no point expires, as in every snapshot before expiring points,
// which open unchanged; a build that predates the field refuses the
// manifest (unknown field) rather than bring expired points back.
//
//	"EKEY"  []uint64  keys of the expiring points (as MIDS), strictly ascending
//	"EXAT"  []int64   their expiry times, Unix nanoseconds, each > 0
//
// Every key of EKEY holds a document in meta.idx.
//
// # vectors.NN.map
//
// An indexfile container with four sections: the vectors of Points[i] are
// the index nodes labelled Labels[Offsets[i]:Offsets[i+1]], in order.
//
//	"VMPT"  []uint64  points (keys, as MIDS), strictly ascending
//	"VMOF"  []uint64  len(points)+1 offsets into VMLB, starting at 0, strictly increasing
//	                  (every point has a vector), ending at len(VMLB)
//	"VMLB"  []uint64  node labels, unique, each below VMNX
//	"VMNX"  []uint64  one value: the label the field hands out next
//
// Open checks that the index holds exactly the labels of the map.
//
// Every file of a snapshot is written and fsynced, then the snapshot
// directory and its parent are fsynced, before CURRENT may name it.
//
// # MANIFEST, version 4: segments
//
// Format 4 is format 3 (wal_head set, the schema in "vectors") with each
// vector field's index in graph segments (package segment) instead of an
// index file: "index_file" is absent and "segments" lists the field's
// sealed segments, oldest first, each {"file", "size", "live",
// "deleted"}: a file name of segments/ (16 lowercase hex digits, '-', 4
// of them, ".hnsw"; each named once in the manifest), its size in bytes,
// the live keys it holds once its deleted keys are removed, and how many
// those are. "deletes_file" (deletes.NN.idx, one of "files") is present
// exactly when some segment has deleted keys. Segment files are not in
// "files": they live outside the snapshot directory, shared by the
// snapshots that name them. A field without segments (nothing built yet)
// lists none. Every collection writes format 4 since segments, the one
// field "" too (listed in "vectors"); readers accept 1 to 4, and a
// snapshot of formats 1-3 is converted at the first checkpoint after Open.
// A build before segments refuses format 4 (unknown format).
//
// A checkpoint writes the segments that have no file yet (the graph
// built since the previous checkpoint, and merged segments), reads them
// back, and then the snapshot directory; after CURRENT is switched it
// deletes the segment files that neither the live nor the previous
// snapshot names, and Open does the same (a crashed checkpoint's files).
// The previous snapshot shares the segments it has in common with the
// live one: a damaged segment file that both name cannot be fallen back
// from (Open fails with ErrCorrupt naming it), where a damaged file of
// the live snapshot alone (its newest segments, meta.idx, MANIFEST,
// CURRENT) still is.
//
// # deletes.NN.idx
//
// An indexfile container with two sections:
//
//	"DOFF"  []uint64  len(segments)+1 offsets into DKEY, from 0, non-decreasing, ending at len(DKEY)
//	"DKEY"  []uint64  the keys deleted from segment i since its file was written:
//	                  DKEY[DOFF[i]:DOFF[i+1]], strictly ascending
//
// Each snapshot writes every segment's deletions since its file, not just
// the new ones, so one deletes file and the segment files give the field.
//
// # MANIFEST, version 5: state runs
//
// Format 5 is format 4 with the documents, string ids and expiry times in
// state runs instead of meta.idx, ids.idx and expiry.idx (absent, as are
// "ids" and "expiry"): "state" lists the runs, oldest first, each
// {"file", "size", "entries"}: a file name of segments/ (16 lowercase hex
// digits and ".state", each named once), its size in bytes and its
// entries. No runs: no point was ever written. Every collection writes
// format 5 since state runs; readers accept 1 to 5, and the first
// checkpoint after opening a snapshot of formats 1-4 writes its state as
// one run. A build before state runs refuses format 5 (unknown format).
// Like segments, runs live outside the snapshot directory, are written
// once and read back before CURRENT names a manifest listing them, are
// shared by the snapshots that name them and are deleted once neither
// kept snapshot does.
//
// # State runs
//
// A run holds, for each key whose document, string id or expiry changed
// in the interval it covers (the collection notes them as it applies
// writes), its state at the snapshot that wrote it. The state is the
// runs folded oldest to newest, the newest entry of a key winning
// (MergeStateRuns); a deleted entry removes the key. An indexfile
// container with eight sections, SSOF and SSTR absent when no entry has
// a string id, SEXP when none expires:
//
//	"SKEY"  []uint64  keys (as MIDS), strictly ascending
//	"SDEL"  []byte    per key: 0 live, 1 deleted (then no document, string or expiry)
//	"SOFF"  []uint64  len(keys)+1 offsets into SDAT, from 0, non-decreasing, ending at len(SDAT)
//	"SDAT"  []byte    the live keys' documents, canonical JSON, concatenated
//	"SSOF"  []uint64  len(keys)+1 offsets into SSTR, as SOFF
//	"SSTR"  []byte    per key its string id (1-512 bytes of UTF-8) if it is live and 2^63 or
//	                  more, else nothing
//	"SEXP"  []int64   per key its expiry time, Unix nanoseconds, 0 for none
//	"SNXT"  []uint64  one value: the key handed out next to a new string id (>= 2^63,
//	                  above every string key of the run, never less than the previous run's)
//
// The runs merge in size tiers (package collection, state.go), so a
// snapshot lists about three runs per tier of floor(log4(entries+1)); a
// merge that reaches the oldest run writes the whole state, without
// deleted entries.
package snapshot
