// Package indexfile is the container in which strata saves an index: a
// header, a table of sections, and the sections' payloads, each payload
// checked by its own CRC-32C and aligned so that it can be memory-mapped and
// used in place as []float32, []uint32 or []uint64.
//
// # Format, version 1
//
// All integers are little-endian. Offsets are from the start of the file.
//
//	header, 32 bytes
//	   0  magic      [8]byte  "STRATAIX"
//	   8  version    uint32   1
//	  12  headerLen  uint32   32
//	  16  flags      uint32   0
//	  20  count      uint32   number of sections
//	  24  tableCRC   uint32   CRC-32C of the section table
//	  28  headerCRC  uint32   CRC-32C of header bytes [0, 28)
//
//	section table, count entries of 32 bytes, from offset 32
//	   0  tag        uint32   four-character code, unique in the file
//	   4  flags      uint32   0
//	   8  offset     uint64   where the payload starts, a multiple of 64
//	  16  length     uint64   payload bytes
//	  24  crc        uint32   CRC-32C of the payload
//	  28  reserved   uint32   0
//
//	+--------+---------------------+-----+-----------+-----+-----------+
//	| header | section table       | pad | payload 0 | pad | payload 1 | ...
//	+--------+---------------------+-----+-----------+-----+-----------+
//	0        32       32+32*count  ^ offset 0        ^ offset 1        ^ end of file
//
// Each payload starts at the first multiple of 64 at or after the end of
// what precedes it (the table, or the previous payload), so sections are in
// table order, never overlap and leave no gaps other than zero padding
// (pad, 0 to 63 zero bytes). The file ends where the last payload ends;
// with no sections, where the table ends. CRC-32C is the Castagnoli CRC.
//
// The layout is canonical: a file is a function of its sections alone, so
// writing what was read gives a byte-identical file. Because of that, and
// because padding must be zero, every byte of a file is checked by a reader:
// the header and the table by their CRCs, payloads by theirs, padding by
// being zero, the length by the last section's end.
//
// Every future version keeps magic, version and header length at offsets
// 0, 8 and 12, and ends its header (of at most 4096 bytes) with the CRC-32C
// of the rest of the header. A reader therefore verifies the header before
// believing its version, and can tell a newer file (ErrVersion) from a
// damaged one (ErrCorrupt).
//
// # Guarantees
//
// Write replaces a file atomically: it writes a temporary file next to the
// target, fsyncs it, renames it over the target and fsyncs the directory.
// If any step before the rename fails, the temporary file is removed and
// the old file is untouched. A crash (or a failing remove) can leave a
// temporary file named path + ".tmp-" + random hex behind; it is never
// read, and it is safe to delete.
//
// Read verifies everything listed above before returning (but see
// "Deferred CRCs"), and never trusts
// a length from the file before comparing it with the file's size, so a
// corrupt file costs no more memory than its own size. A corrupt file
// yields an error wrapping ErrCorrupt that names the header, the section
// table, or the section (by tag) and the offset; a file from a newer
// format version yields ErrVersion.
//
// A file of 32 MiB of sections or more is read and checksummed in 8 MiB
// pieces by GOMAXPROCS goroutines, the pieces' CRCs combined into the
// section's (zlib's crc32_combine), so that one large file loads on every
// core; the error reported is still that of the first damaged section in
// file order. Every byte is still read and checked before Read returns:
// a load costs time proportional to the file (reading 673 MB into memory
// is most of a 1M x 128 segment's load).
//
// # Memory-mapped sections
//
// Sections whose tags are listed in ReadOptions.MmapTags are mapped
// read-only from the file (MAP_SHARED) instead of copied into memory. Their
// CRC is verified through the mapping, which reads every page once; the
// pages are then dropped from the process's resident set with
// MADV_DONTNEED, and fault back in from the page cache as they are used.
// Pages of a mapped file are clean and shared with the page cache, so the
// kernel can reclaim them under memory pressure, unlike heap memory. On
// tmpfs the file itself is memory, so mapping saves a copy but not the
// memory of the file.
//
// # Deferred CRCs
//
// With ReadOptions.DeferCRC, Read maps the MmapTags sections and does not
// checksum them: it still checks the header, the table, the layout, the
// padding and the CRC of every section it copies, so what it returns is
// sound apart from the mapped payloads, whose bytes nobody has looked at
// yet. File.Verify then checks their CRCs (the same check, the same
// errors, naming the file) in pieces of 1 MiB, calling a pause function
// between pieces, while the caller already uses the sections; Close may
// come meanwhile (Verify then returns ErrClosed and reads no unmapped
// page). This is what lets a collection's Open return without reading
// its segments' vectors (go/collection, verify.go): the caller must
// treat a Verify error as its data being damaged, since it may have used
// the bytes already. ReadOptions.Resident keeps the checked pages in the
// resident set (memory="ram"); without it they are dropped as above.
//
// Slices of mapped sections are read-only (writing to one kills the
// process) and become invalid when File.Close unmaps them; using one after
// Close is a fault, not a Go error. Replacing the file with Write while it
// is mapped is safe, since the rename leaves the mapped inode alone, but
// truncating or rewriting the mapped file in place is not.
//
// Typed views of sections (BytesOf, ViewAs) use the host's byte order, so
// this package builds only on little-endian hosts.
package indexfile
