package indexfile

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/strata-db/strata/go/vfs"
)

// Section is one named payload. Data is written as is; to store a typed
// slice, pass BytesOf(slice).
type Section struct {
	Tag  uint32
	Data []byte
}

// writeChunk is how much of a payload is checksummed and then written at a
// time, so that the bytes are still in cache when the writer copies them.
const writeChunk = 1 << 20

// Write writes sections, in order, to a new file that atomically replaces
// path: a temporary file in the same directory is written, fsynced, closed
// and renamed over path, and the directory is fsynced.
//
// If a step before the rename fails, the temporary file is removed and path
// is untouched. If the directory fsync fails, path already holds the new
// file but the rename may not survive a crash: after a crash path holds
// either the old or the new file, each complete. The caller must not change
// the sections' data during Write.
func Write(fs vfs.FS, path string, sections []Section) (err error) {
	if uint64(len(sections)) > math.MaxUint32 {
		return fmt.Errorf("%w: %d sections", ErrInvalid, len(sections))
	}
	seen := make(map[uint32]bool, len(sections))
	for _, s := range sections {
		if seen[s.Tag] {
			return fmt.Errorf("%w: section %q appears twice", ErrInvalid, TagName(s.Tag))
		}
		seen[s.Tag] = true
	}

	var suffix [8]byte
	for i := range suffix {
		suffix[i] = byte(rand.Uint32())
	}
	tmp := path + ".tmp-" + hex.EncodeToString(suffix[:])
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("indexfile: creating %q: %w", tmp, err)
	}
	closed, renamed := false, false
	defer func() {
		if err == nil || renamed {
			return
		}
		if !closed {
			f.Close()
		}
		if rerr := fs.Remove(tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("indexfile: removing temporary file: %w", rerr))
		}
	}()

	if err := writeContents(f, sections); err != nil {
		return fmt.Errorf("indexfile: writing %q: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("indexfile: fsync %q: %w", tmp, err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("indexfile: closing %q: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("indexfile: renaming %q to %q: %w", tmp, path, err)
	}
	renamed = true // the temporary name is gone: nothing to remove
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("indexfile: fsync directory of %q (the new file is in place but may not be durable): %w", path, err)
	}
	return nil
}

// writeContents streams the payloads after room left for the header and
// table, checksumming each chunk just before writing it, then writes the
// header and table, which hold the checksums, at the start of the file.
func writeContents(f vfs.File, sections []Section) error {
	count := uint32(len(sections))
	prefix := make([]byte, tableEnd(count))
	table := prefix[headerSize:]

	w := bufio.NewWriterSize(f, writeChunk)
	var zeros [Alignment]byte
	if _, err := w.Write(prefix); err != nil {
		return err
	}
	end := tableEnd(count)
	for i, s := range sections {
		off := alignUp(end)
		if _, err := w.Write(zeros[:off-end]); err != nil {
			return err
		}
		var crc uint32
		for data := s.Data; len(data) > 0; {
			chunk := data[:min(len(data), writeChunk)]
			data = data[len(chunk):]
			crc = crc32.Update(crc, castagnoli, chunk)
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		length := uint64(len(s.Data))
		entry{tag: s.Tag, offset: off, length: length, crc: crc}.encode(table[i*entrySize:])
		end = off + length
	}
	if err := w.Flush(); err != nil {
		return err
	}
	header{count: count, tableCRC: crc32.Checksum(table, castagnoli)}.encode(prefix)
	_, err := f.WriteAt(prefix, 0)
	return err
}
