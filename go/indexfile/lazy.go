package indexfile

import (
	"fmt"
	"hash/crc32"
	"sync"
	"unsafe"

	"github.com/strata-db/strata/go/errkind"
)

// ErrClosed is what Verify returns once Close has unmapped the file: the
// sections it had left can no longer be read, and nobody can use them.
var ErrClosed = errkind.New(errkind.Closed, "indexfile: file is closed")

// verifyPiece is how much of a section Verify checksums between two calls
// of its pause function: small enough that a pause (a yield, a check for
// shutdown) comes every fraction of a millisecond.
const verifyPiece = 1 << 20

// lazyState is a File's deferred verification (ReadOptions.DeferCRC).
type lazyState struct {
	mu      sync.RWMutex // held for reading per piece by Verify, for writing by Close
	closed  bool
	path    string
	pending []pendingSection // in file order; Verify drops each it has checked
}

type pendingSection struct {
	entry entry
	data  []byte
	keep  bool // its pages stay resident once checked (Resident, KeepTags)
}

// Pending reports how many bytes of sections Read left for Verify.
func (f *File) Pending() uint64 {
	f.lazy.mu.RLock()
	defer f.lazy.mu.RUnlock()
	var n uint64
	for _, p := range f.lazy.pending {
		n += p.entry.length
	}
	return n
}

// Verify checks the CRC of every section Read deferred, as Read would
// have (the error wraps ErrCorrupt and names the file, the section and
// its offset), reading each through its mapping in pieces of 1 MiB and
// calling pause between pieces; an error from pause stops it and is
// returned. A section found intact is not checked again. After Close it
// returns ErrClosed; Close waits for the piece in hand, never for the
// rest. Safe to call from one goroutine while others use the sections.
//
// Without ReadOptions.Resident (or KeepTags) a checked section's pages are dropped from
// the resident set again (MADV_DONTNEED), as Read drops the pages it
// checks: the check is not a reason to keep them.
func (f *File) Verify(pause func() error) error {
	for {
		f.lazy.mu.RLock()
		if f.lazy.closed {
			f.lazy.mu.RUnlock()
			return ErrClosed
		}
		if len(f.lazy.pending) == 0 {
			f.lazy.mu.RUnlock()
			return nil
		}
		p := f.lazy.pending[0]
		f.lazy.mu.RUnlock()
		crc, err := f.checksum(p, pause)
		if err != nil {
			return err
		}
		if crc != p.entry.crc {
			return fmt.Errorf("%w (file %q)", corruptSection(p.entry.tag, p.entry.offset,
				"crc mismatch: stored %#08x, computed %#08x", p.entry.crc, crc), f.lazy.path)
		}
		f.lazy.mu.Lock()
		if !f.lazy.closed {
			f.lazy.pending = f.lazy.pending[1:]
			if !p.keep {
				if m := f.mappingOf(p.data); m != nil {
					dontNeed(m)
				}
			}
		}
		f.lazy.mu.Unlock()
	}
}

// checksum computes p's CRC piece by piece, each piece under the read
// lock so that Close cannot unmap it meanwhile.
func (f *File) checksum(p pendingSection, pause func() error) (uint32, error) {
	var crc uint32
	for off := 0; off < len(p.data); off += verifyPiece {
		if pause != nil {
			if err := pause(); err != nil {
				return 0, err
			}
		}
		f.lazy.mu.RLock()
		if f.lazy.closed {
			f.lazy.mu.RUnlock()
			return 0, ErrClosed
		}
		crc = crc32.Update(crc, castagnoli, p.data[off:min(len(p.data), off+verifyPiece)])
		f.lazy.mu.RUnlock()
	}
	return crc, nil
}

// Maps reports whether b lies in one of the file's mappings: a section
// left mapped, not read into memory. False once the file is closed.
func (f *File) Maps(b []byte) bool {
	f.lazy.mu.RLock()
	defer f.lazy.mu.RUnlock()
	return f.mappingOf(b) != nil
}

// mappingOf returns the mapping holding b, or nil (a section read into
// memory where mmap is not supported). The caller holds lazy.mu.
func (f *File) mappingOf(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, m := range f.mappings {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
		if at >= start && at < start+uintptr(len(m)) {
			return m
		}
	}
	return nil
}
