package snapshot

import (
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strconv"

	"github.com/strata-db/strata/go/vfs"
)

// CurrentName is the file naming the live snapshot.
const CurrentName = "CURRENT"

const (
	currentPrefix = "strata-current 1 "
	currentLen    = len(currentPrefix) + 16 + 1 + 8 + 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeCurrent returns the CURRENT line naming snapshot seq.
func EncodeCurrent(seq uint64) []byte {
	body := fmt.Sprintf("%s%016x", currentPrefix, seq)
	return fmt.Appendf(nil, "%s %08x\n", body, crc32.Checksum([]byte(body), castagnoli))
}

// DecodeCurrent parses a CURRENT line.
func DecodeCurrent(data []byte) (uint64, error) {
	if len(data) != currentLen || string(data[:len(currentPrefix)]) != currentPrefix ||
		data[currentLen-10] != ' ' || data[currentLen-1] != '\n' {
		return 0, fmt.Errorf("%w: CURRENT is not a version 1 line (%d bytes)", ErrCorrupt, len(data))
	}
	body := data[:currentLen-10]
	seq, err1 := parseHex(data[len(currentPrefix) : len(currentPrefix)+16])
	crc, err2 := parseHex(data[currentLen-9 : currentLen-1])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%w: CURRENT holds a malformed number", ErrCorrupt)
	}
	if uint32(crc) != crc32.Checksum(body, castagnoli) {
		return 0, fmt.Errorf("%w: CURRENT checksum mismatch", ErrCorrupt)
	}
	return seq, nil
}

// parseHex accepts lowercase hex digits only, so every value has exactly
// one encoding.
func parseHex(b []byte) (uint64, error) {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, fmt.Errorf("not lowercase hex: %q", b)
		}
	}
	return strconv.ParseUint(string(b), 16, 64)
}

// ReadCurrent reads dir/CURRENT. A missing file fails with an error
// matching fs.ErrNotExist.
func ReadCurrent(fs vfs.FS, dir string) (uint64, error) {
	data, err := readSmall(fs, filepath.Join(dir, CurrentName), currentLen)
	if err != nil {
		return 0, err
	}
	return DecodeCurrent(data)
}

// WriteCurrent points dir/CURRENT at snapshot seq: temp file, fsync,
// rename, fsync of dir.
func WriteCurrent(fs vfs.FS, dir string, seq uint64) error {
	return replaceFile(fs, dir, CurrentName, EncodeCurrent(seq))
}

// replaceFile atomically replaces dir/name with data (vfs.ReplaceFile).
func replaceFile(fs vfs.FS, dir, name string, data []byte) error {
	target := filepath.Join(dir, name)
	if err := vfs.ReplaceFile(fs, target, data); err != nil {
		return fmt.Errorf("snapshot: write %s: %w", target, err)
	}
	return nil
}

// readSmall reads a whole file of at most limit bytes; a larger file is
// corrupt (these files are tiny, and a huge one must not be allocated).
func readSmall(fs vfs.FS, path string, limit int) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: read %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("snapshot: read %s: %w", path, err)
	}
	if info.Size() > int64(limit) {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrCorrupt, path, info.Size(), limit)
	}
	data := make([]byte, info.Size())
	if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("snapshot: read %s: %w", path, err)
	}
	return data, nil
}
