package wal

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"path/filepath"
	"strconv"

	"github.com/strata-db/strata/go/vfs"
)

// HeadName is the file in a log directory that names its newest segment.
const HeadName = "HEAD"

// The HEAD line; see the package doc. Do not change.
const (
	headPrefix = "strata-wal-head 1 "
	headLen    = len(headPrefix) + 16 + 1 + 8 + 1
)

// EncodeHead returns the HEAD line naming the segment of seq.
func EncodeHead(seq uint64) []byte {
	body := fmt.Sprintf("%s%016x", headPrefix, seq)
	return fmt.Appendf(nil, "%s %08x\n", body, crc32.Checksum([]byte(body), castagnoli))
}

// DecodeHead parses a HEAD line; anything but a valid version 1 line fails
// with ErrCorrupt.
func DecodeHead(data []byte) (uint64, error) {
	if len(data) != headLen || string(data[:len(headPrefix)]) != headPrefix ||
		data[headLen-10] != ' ' || data[headLen-1] != '\n' {
		return 0, fmt.Errorf("%w: %s is not a version 1 line (%d bytes)", ErrCorrupt, HeadName, len(data))
	}
	seq, err1 := parseLowerHex(data[len(headPrefix) : len(headPrefix)+16])
	crc, err2 := parseLowerHex(data[headLen-9 : headLen-1])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%w: %s holds a malformed number", ErrCorrupt, HeadName)
	}
	if uint32(crc) != crc32.Checksum(data[:headLen-10], castagnoli) {
		return 0, fmt.Errorf("%w: %s checksum mismatch", ErrCorrupt, HeadName)
	}
	if seq == 0 {
		return 0, fmt.Errorf("%w: %s names seq 0", ErrCorrupt, HeadName)
	}
	return seq, nil
}

// parseLowerHex accepts lowercase hex digits only, so every value has
// exactly one encoding.
func parseLowerHex(b []byte) (uint64, error) {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, fmt.Errorf("not lowercase hex: %q", b)
		}
	}
	return strconv.ParseUint(string(b), 16, 64)
}

// readHead returns the segment dir/HEAD names; ok is false if there is no
// HEAD (a log written before HEAD existed, or an empty directory).
func readHead(fs vfs.FS, dir string) (seq uint64, ok bool, err error) {
	path := filepath.Join(dir, HeadName)
	f, err := fs.Open(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("wal: opening %q: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("wal: stat of %q: %w", path, err)
	}
	if fi.Size() != int64(headLen) {
		return 0, false, fmt.Errorf("%w: in file %q: %d bytes, a HEAD line has %d", ErrCorrupt, path, fi.Size(), headLen)
	}
	data := make([]byte, headLen)
	if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
		return 0, false, fmt.Errorf("wal: reading %q: %w", path, err)
	}
	seq, err = DecodeHead(data)
	if err != nil {
		return 0, false, fmt.Errorf("%w (in file %q)", err, path)
	}
	return seq, true, nil
}

// writeHead points dir/HEAD at the segment of seq: temp file, fsync,
// rename, fsync of dir.
func writeHead(fs vfs.FS, dir string, seq uint64) error {
	path := filepath.Join(dir, HeadName)
	if err := vfs.ReplaceFile(fs, path, EncodeHead(seq)); err != nil {
		return fmt.Errorf("wal: replacing %q: %w", path, err)
	}
	return nil
}
