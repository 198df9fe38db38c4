//go:build unix

package indexfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

var errNoMmap = errors.New("indexfile: mmap not supported")

// mapRange maps the pages covering [off, off+length) of fd read-only and
// returns the whole mapping (for unmap) and the slice of it holding the
// range.
func mapRange(fd uintptr, off, length uint64) (mapping, data []byte, err error) {
	page := uint64(os.Getpagesize())
	start := off &^ (page - 1)
	m, err := unix.Mmap(int(fd), int64(start), int(off+length-start), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return m, m[off-start:][:length:length], nil
}

func unmap(m []byte) error { return unix.Munmap(m) }

// dontNeed drops the mapping's pages from the resident set. For a
// read-only file mapping this loses nothing: they are read again from the
// page cache (or the file) on the next access. It is advice, so its error
// is ignored.
func dontNeed(m []byte) { _ = unix.Madvise(m, unix.MADV_DONTNEED) }

// randomAccess turns the kernel's readahead off for the mapping
// (MADV_RANDOM): a fault reads its page alone. Advice: its error is
// ignored.
func randomAccess(m []byte) { _ = unix.Madvise(m, unix.MADV_RANDOM) }
