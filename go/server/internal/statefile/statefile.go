// Package statefile reads and writes the small state files the server's
// doors keep beside the collections (the Qdrant door's aliases and
// payload index declarations): one JSON document, checksummed, replaced
// whole and durably through package vfs.
//
// # Format
//
//	offset 0   magic    "STRATAST" (8 bytes)
//	offset 8   version  u8 = 1
//	offset 9   reserved 3 bytes, zero
//	offset 12  length   u32 LE, bytes of JSON that follow (at most MaxLen)
//	offset 16  crc      u32 LE, CRC-32C (Castagnoli) of the JSON
//	offset 20  JSON     length bytes
//
// Nothing follows the JSON. Do not change the constants: files written
// by one version are read by the next.
//
// A file is replaced by vfs.ReplaceFile (temporary file, fsync, rename,
// fsync of the directory), so a crash leaves the old content or the new,
// never a mixture. A file that does not decode (a bad magic, version,
// length or checksum) is an error matching ErrCorrupt, which the caller
// reports rather than silently starting empty; a missing file matches
// fs.ErrNotExist.
package statefile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/vfs"
)

const (
	magic     = "STRATAST"
	version   = 1
	headerLen = 20
	// MaxLen bounds the JSON of one file: state files are small (a table
	// of aliases, a collection's index declarations).
	MaxLen = 16 << 20
)

// ErrCorrupt marks a state file that does not decode.
var ErrCorrupt = errkind.New(errkind.Corrupt, "statefile: corrupt state file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the file holding doc.
func Encode(doc []byte) []byte {
	out := make([]byte, headerLen, headerLen+len(doc))
	copy(out, magic)
	out[8] = version
	binary.LittleEndian.PutUint32(out[12:], uint32(len(doc)))
	binary.LittleEndian.PutUint32(out[16:], crc32.Checksum(doc, castagnoli))
	return append(out, doc...)
}

// Decode returns the JSON a file holds.
func Decode(data []byte) ([]byte, error) {
	if len(data) < headerLen || string(data[:8]) != magic {
		return nil, fmt.Errorf("%w: not a state file (%d bytes)", ErrCorrupt, len(data))
	}
	if data[8] != version || data[9] != 0 || data[10] != 0 || data[11] != 0 {
		return nil, fmt.Errorf("%w: version %d (this build reads %d)", ErrCorrupt, data[8], version)
	}
	n := binary.LittleEndian.Uint32(data[12:])
	if n > MaxLen || int(n) != len(data)-headerLen {
		return nil, fmt.Errorf("%w: length %d, %d bytes follow the header", ErrCorrupt, n, len(data)-headerLen)
	}
	doc := data[headerLen:]
	if crc32.Checksum(doc, castagnoli) != binary.LittleEndian.Uint32(data[16:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return doc, nil
}

// Read returns the JSON of the file name.
func Read(fsys vfs.FS, name string) ([]byte, error) {
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	doc, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, name)
	}
	return doc, nil
}

// Write replaces the file name with doc, durably.
func Write(fsys vfs.FS, name string, doc []byte) error {
	if len(doc) > MaxLen {
		return fmt.Errorf("statefile: %s: %d bytes of state, at most %d", name, len(doc), MaxLen)
	}
	if err := vfs.ReplaceFile(fsys, name, Encode(doc)); err != nil {
		return fmt.Errorf("statefile: write %s: %w", name, err)
	}
	return nil
}
