package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
)

// The on-disk format; see the package doc. Do not change these: logs
// written with them must stay readable.
const (
	magic = "STRATWAL"
	// version is the segment format a Writer writes: 2, written ahead
	// (zeros after the last record are unused space, not a torn tail).
	// Replay reads versions 1 (segments that end at their last frame)
	// and 2.
	version       = 2
	versionAppend = 1

	// zeroFillBytes is how far past its records a Writer keeps a
	// segment's bytes written with zeros, so that the fdatasync of an
	// Append has no extent or size change to commit but once per this
	// many bytes (see Writer.fill).
	zeroFillBytes = 1 << 20

	headerSize      = 16 // magic, version, reserved
	frameHeaderSize = 16 // length, crc, seq

	// MaxPayload is the largest record payload, in bytes.
	MaxPayload = 256 << 20

	// DefaultSegmentBytes is WriterOptions.SegmentBytes when it is 0.
	DefaultSegmentBytes = 64 << 20

	segmentSuffix  = ".wal"
	segmentNameLen = 16 + len(segmentSuffix)
)

var le = binary.LittleEndian

// castagnoli is the CRC-32C table; the hardware instruction is used where
// the CPU has one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentName is the file name of the segment whose first record is seq.
// Names have a fixed width, so sorting them sorts segments by sequence.
func segmentName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, segmentSuffix) }

// parseSegmentName returns the sequence number a segment file is named
// for; ok is false for names that are not segments (which the log
// ignores).
func parseSegmentName(name string) (seq uint64, ok bool) {
	if len(name) != segmentNameLen || name[16:] != segmentSuffix {
		return 0, false
	}
	for _, c := range []byte(name[:16]) {
		switch {
		case '0' <= c && c <= '9':
			seq = seq<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			seq = seq<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return seq, true
}

// segmentFile is a segment found in the log directory.
type segmentFile struct {
	seq  uint64 // the sequence number it is named for
	path string
}

// appendHeader appends a segment header.
func appendHeader(b []byte) []byte {
	b = append(b, magic...)
	b = le.AppendUint32(b, version)
	return le.AppendUint32(b, 0)
}

// checkHeader returns what is wrong with a segment header, or "". A
// header with the right magic and a later version is not damaged but
// unreadable, which newer reports; version 0 never existed, so it is
// damage (a header torn after the magic).
func checkHeader(h []byte) (problem string, newer bool) {
	switch v := le.Uint32(h[8:]); {
	case string(h[:8]) != magic:
		if allZero(h) {
			return "zeroed segment header", false
		}
		return fmt.Sprintf("bad magic %q", h[:8]), false
	case v > version:
		return fmt.Sprintf("format version %d, this build reads versions %d and %d", v, versionAppend, version), true
	case v != version && v != versionAppend:
		return fmt.Sprintf("bad format version %d", v), false
	case le.Uint32(h[12:]) != 0:
		return fmt.Sprintf("reserved header field is %#x, not 0", le.Uint32(h[12:])), false
	}
	return "", false
}

// appendFrame appends one record's frame.
func appendFrame(b []byte, seq uint64, payload []byte) []byte {
	at := len(b)
	b = le.AppendUint32(b, uint32(len(payload)))
	b = le.AppendUint32(b, 0) // the CRC, once seq is in place
	b = le.AppendUint64(b, seq)
	// frameCRC's, over the seq bytes just appended: its own 8-byte array
	// escapes to the heap (one allocation per record logged).
	le.PutUint32(b[at+4:], crc32.Update(crc32.Checksum(b[at+8:at+16], castagnoli), castagnoli, payload))
	return append(b, payload...)
}

// frameCRC is the CRC-32C of seq (little-endian) followed by payload, so a
// frame moved to the wrong place in the log fails its check.
func frameCRC(seq uint64, payload []byte) uint32 {
	var s [8]byte
	le.PutUint64(s[:], seq)
	return crc32.Update(crc32.Checksum(s[:], castagnoli), castagnoli, payload)
}

// zeroBlock is compared against, so that checking a long run of zeros
// (the unused end of a preallocated segment) runs at memory speed.
var zeroBlock [4096]byte

func allZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeroBlock))
		if !bytes.Equal(b[:n], zeroBlock[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

func segmentPath(dir string, seq uint64) string { return filepath.Join(dir, segmentName(seq)) }
