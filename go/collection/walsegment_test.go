package collection

import (
	"encoding/binary"
	"os"
	"testing"
)

// trimWALSegment cuts the log segment at path to the end of its records
// plus zeros bytes of the zeros after them, and returns what is left. A
// segment the writer has not finished is preallocated (package wal,
// format 2): megabytes of zeros that a test tearing or flipping every
// byte need not visit, and that would make each copy of the collection
// copy them.
func trimWALSegment(t *testing.T, path string, zeros int) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := 16
	for end+16 <= len(data) {
		length := int(binary.LittleEndian.Uint32(data[end:]))
		if binary.LittleEndian.Uint64(data[end+8:]) == 0 || end+16+length > len(data) {
			break // zeros: the unused end
		}
		end += 16 + length
	}
	end = min(len(data), end+zeros)
	if err := os.Truncate(path, int64(end)); err != nil {
		t.Fatal(err)
	}
	return data[:end]
}
