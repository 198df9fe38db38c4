package indexfile

import (
	"encoding/binary"
	"hash/crc32"
)

// On-disk constants of format version 1. Do not change: files written with
// them must stay readable. A change to the layout needs a new version.
const (
	// magic opens every file.
	magic = "STRATAIX"
	// Version is the format version this package writes and reads.
	Version = 1

	headerSize = 32 // bytes of the fixed header
	// maxHeaderSize bounds the header length a reader accepts from any
	// version, so that a damaged length cannot make it read much.
	maxHeaderSize = 4096
	entrySize     = 32 // bytes per section table entry
	// Alignment is the alignment of every payload's offset in the file,
	// and so of mapped sections in memory: a cache line, and more than
	// any element type needs.
	Alignment = 64

	// Header field offsets.
	offMagic     = 0
	offVersion   = 8
	offHeaderLen = 12
	offFlags     = 16
	offCount     = 20
	offTableCRC  = 24
	offHeaderCRC = 28

	// Section table entry field offsets.
	offEntryTag      = 0
	offEntryFlags    = 4
	offEntryOffset   = 8
	offEntryLength   = 16
	offEntryCRC      = 24
	offEntryReserved = 28
)

// castagnoli is the CRC-32C table; the hardware instruction is used where
// the CPU has one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

// header is the decoded fixed header.
type header struct {
	flags    uint32
	count    uint32
	tableCRC uint32
}

func (h header) encode(b []byte) {
	copy(b[offMagic:], magic)
	le.PutUint32(b[offVersion:], Version)
	le.PutUint32(b[offHeaderLen:], headerSize)
	le.PutUint32(b[offFlags:], h.flags)
	le.PutUint32(b[offCount:], h.count)
	le.PutUint32(b[offTableCRC:], h.tableCRC)
	le.PutUint32(b[offHeaderCRC:], crc32.Checksum(b[:offHeaderCRC], castagnoli))
}

// entry is a decoded section table entry.
type entry struct {
	tag      uint32
	flags    uint32
	offset   uint64
	length   uint64
	crc      uint32
	reserved uint32
}

func (e entry) encode(b []byte) {
	le.PutUint32(b[offEntryTag:], e.tag)
	le.PutUint32(b[offEntryFlags:], e.flags)
	le.PutUint64(b[offEntryOffset:], e.offset)
	le.PutUint64(b[offEntryLength:], e.length)
	le.PutUint32(b[offEntryCRC:], e.crc)
	le.PutUint32(b[offEntryReserved:], e.reserved)
}

func decodeEntry(b []byte) entry {
	return entry{
		tag:      le.Uint32(b[offEntryTag:]),
		flags:    le.Uint32(b[offEntryFlags:]),
		offset:   le.Uint64(b[offEntryOffset:]),
		length:   le.Uint64(b[offEntryLength:]),
		crc:      le.Uint32(b[offEntryCRC:]),
		reserved: le.Uint32(b[offEntryReserved:]),
	}
}

// tableEnd is where the section table of a file with count sections ends.
func tableEnd(count uint32) uint64 { return headerSize + uint64(count)*entrySize }

// alignUp rounds off up to a multiple of Alignment. Callers keep off far
// below 2^64 (it is bounded by a file size), so it cannot wrap.
func alignUp(off uint64) uint64 { return (off + Alignment - 1) &^ (Alignment - 1) }
