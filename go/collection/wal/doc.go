// Package wal is strata's write-ahead log: numbered records, each framed
// with its sequence number and a CRC-32C, appended to a directory of
// segment files. A Writer appends and fsyncs; Replay reads the log back
// after a restart, cuts off a tail torn by a crash, and refuses (or, with
// Repair, salvages what it can and cuts off) anything else that is damaged.
//
// # Format, versions 1 and 2
//
// A log is a directory. Its segments are the files named %016x.wal (16
// lowercase hex digits) after the sequence number of their first record;
// other files in the directory are ignored. All integers are
// little-endian; CRC-32C is the Castagnoli CRC.
//
//	segment header, 16 bytes
//	   0  magic     [8]byte  "STRATWAL"
//	   8  version   uint32   2 (1 in segments written before preallocation)
//	  12  reserved  uint32   0
//
//	frame, 16 + length bytes, repeated to the end of the records
//	   0  length    uint32   payload bytes, at most MaxPayload (256 MiB)
//	   4  crc       uint32   CRC-32C of seq (8 bytes) followed by payload
//	   8  seq       uint64   sequence number
//	  16  payload   [length]byte
//
//	0000000000000001.wal                           0000000000000005.wal
//	+--------+---------+---------+-----+---------+ +--------+---------+----
//	| header | frame 1 | frame 2 | ... | frame 4 | | header | frame 5 | ...
//	+--------+---------+---------+-----+---------+ +--------+---------+----
//	0        16
//
// A version 1 segment ends at its last frame: the writer appended to it,
// and any bytes after the last valid frame are a torn tail. A version 2
// segment is written ahead: the writer keeps the 1 MiB after the records
// (zeroFillBytes, at most to SegmentBytes) written with zeros, and writes
// records in place over them, so that the fdatasync of a record changes
// neither the file's size nor its extents except once per half MiB (measured on ext4 with BenchmarkFsync in package
// collection: see the modes there). Zeros from a frame boundary to the
// end of the file are the segment's unused end, not damage: Replay stops
// there and cuts nothing. A crash during an Append leaves some of its
// bytes over the zeros: a torn frame followed by zeros, cut off as in
// version 1. A version 2 segment the writer finished
// (rotated away from, or closed) is cut to the end of its records, so it
// looks like version 1 but for the version field; one left by a crash
// keeps its zeros. Frames are the same in both versions. Files are never
// recycled, so the bytes after the records are zeros or bytes of a torn
// write, never stale frames of an earlier use (which would need a per-file
// salt in every frame, as pebble's recyclable records have). A build that
// reads only version 1 refuses a version 2 segment (ErrVersion) rather
// than cut its zeros off as a torn tail.
//
//	0000000000000005.wal, version 2, after a crash
//	+--------+---------+---------+-----------------------------------+
//	| header | frame 5 | frame 6 | zeros (written ahead, <= 1 MiB)   |
//	+--------+---------+---------+-----------------------------------+
//	                             ^ the end of the log
//
// # HEAD, and how segments are created (log directory version 2)
//
// Segments have the format above in both log directory versions (a
// directory version is not a segment version). A version 2 log
// directory also holds HEAD, one line of ASCII, 44 bytes including the
// newline, naming the newest segment:
//
//	"strata-wal-head 1 " seq(16 lowercase hex) " " crc(8 lowercase hex) "\n"
//
// crc is the CRC-32C of the bytes before the space that precedes it. A
// writer creates a segment by writing and fsyncing its header under the
// name %016x.wal.tmp, renaming it into place and fsyncing the directory;
// then it replaces HEAD (temp, fsync, rename, directory fsync) before any
// record goes in. So in a log with HEAD a file with a segment's name always
// holds a whole header, and HEAD names a segment that exists:
//
//	wal/0000000000000001.wal   header | frames 1..4
//	wal/0000000000000005.wal   header | frames 5..
//	wal/HEAD                   "strata-wal-head 1 0000000000000005 <crc>"
//
// A log without HEAD (version 1, written before HEAD existed) is read as
// before; the first Writer on it adds HEAD. Old readers ignore HEAD and the
// temporary names (they are not segment names), so they still read a
// version 2 log. A caller that knows its log has HEAD (package collection
// records it in its checkpoint) passes ReplayOptions.RequireHead, so that a
// removed or emptied log directory is corruption, not an empty log.
//
// Sequence numbers are consecutive across the whole log, starting at any
// number from 1; a segment's first record has the number in its name. The
// CRC covers the sequence number, so a frame that lands in the wrong
// place fails its check. The header has no CRC: its fields are constants.
// A segment may hold no frames (the writer created it and crashed, or
// nothing was appended yet); such segments take no part in numbering.
//
// # Promises
//
// Append writes each batch with one write call (and, once per half MiB,
// a second one of zeros after it) and does not sync; Sync makes the
// records durable with fdatasync (fsync where there is none), which is
// enough because reading them back needs no metadata that changed: the
// zeros were written before, and any size or extent change they made is
// committed by the first fdatasync after them. After Sync returns, every
// record appended before it survives a crash. Records appended since the last Sync may survive or not: a crash
// can keep any prefix of their bytes, and Replay then keeps exactly the
// records whose frames are complete. (A disk that persists a later block
// without an earlier one leaves a valid frame after a damaged one, which
// Replay reports as corruption rather than guess.) Rotate fsyncs a
// segment before the next one is created, so only the last segment can be
// torn by a crash. New segments and removals are made durable with a
// directory fsync.
//
// A failed write or fsync poisons the Writer (ErrPoisoned): the page cache
// may have dropped the data, so it must not be retried; reopen the log
// with Replay. A failed Append may have written some of its records, whole:
// Replay returns them, so a caller must not assume a failed batch is
// absent from the log.
//
// Replay verifies every frame and passes records after a given sequence
// number to a callback, in order (with ReplayOptions.SkipCovered it does
// not read the segments that hold only records at or before that number,
// and VerifyCovered checks those later). It tells two kinds of damage
// apart:
//
//   - A torn tail: in the last segment, a final frame that is short,
//     zeroed (in version 1; in version 2 only when bytes other than zeros
//     follow), has an impossible length, or is complete but fails its CRC
//     while ending in a zero byte or holding a zeroed 512-byte-aligned
//     block (what a crash that persisted the length but not all the
//     bytes leaves), with no valid frame that could continue the log
//     anywhere after it; or, in a log without HEAD, a last segment whose
//     header is short, zeroed or wrong, with no valid frame in it. This is
//     what a crash during an unsynced Append or during segment creation
//     leaves. Replay cuts it off durably (truncating the file, or removing
//     a segment with a torn header), reports it in ReplayInfo, and
//     succeeds.
//   - Anything else: a bad frame with a valid one after it, damage in a
//     segment that is not the last, a complete last frame whose CRC fails
//     with no zeroed byte at its end or block in it (its bits changed
//     after it was written: a bit flip, not a torn write), a gap or
//     misordered sequence number, a bad or short header in a segment that
//     is not the last or in any segment of a log with HEAD (a segment
//     emptied to 0 bytes), a segment that HEAD names missing (the newest
//     segment deleted), HEAD missing where RequireHead says there is one
//     (the log directory removed). Replay fails with an error wrapping
//     ErrCorrupt that names the file and offset, and changes nothing.
//
// With ReplayOptions.Repair, Replay instead keeps evidence and salvages
// (as etcd's wal.Repair keeps a .broken copy): it copies every segment from
// the damage on to %016x.wal.broken (or .broken.1, ...: never over an
// earlier copy) and fsyncs the copies; then it passes on every valid frame
// after the damage whose sequence number is greater than the last one
// passed on, resynchronising on the next valid frame after each damaged
// stretch and across segments; it reports the sequence numbers it could not
// pass on in ReplayInfo.Lost (exact between salvaged records; open-ended
// where the log ends in damage, except a single complete damaged frame at
// the very end, whose seq is then reported); and finally it cuts the log at
// the damage (later segments removed newest first, the damaged one
// truncated or removed, HEAD pointed at the newest segment left), so that
// it replays cleanly. The records salvaged after the damage are then only
// in memory and in the .broken copies: the caller must checkpoint them
// and start its Writer after ReplayInfo.LastSeq. A crash before that loses
// them from the log, and the next repair reports them lost.
//
// Whether a valid frame follows the damage is decided by scanning every
// later offset of the segment for a frame whose CRC holds and whose
// sequence number could continue the log: greater than the last good one
// by at most 1 + (distance from the damage)/16, since frames take at least
// 16 bytes. Replay never returns a record that is not exactly as written:
// everything it passes on has a valid CRC over its sequence number and
// payload, and sequence numbers it passes on are consecutive.
//
// A log whose first record comes after the first one asked for (records
// were removed before a checkpoint covered them) fails with ErrCorrupt;
// Repair reports the missing ones lost. A segment of a newer format version
// fails with ErrVersion and is never repaired.
//
// # Using the log
//
// On start: Replay(after = the last sequence number in the checkpoint);
// then NewWriter(nextSeq = max(after, ReplayInfo.LastSeq) + 1) (after a
// Repair, checkpoint the salvaged records at once). Sync the
// log before writing a checkpoint that covers its records: a checkpoint
// ahead of the durable log would make the next segment leave a gap. Once a
// checkpoint covering seq is durable, RemoveThrough(seq) deletes the
// segments it made unnecessary.
package wal
