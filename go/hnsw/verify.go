package hnsw

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/indexfile"
)

// Verify checks the CRCs Load deferred (LoadOptions.DeferCRC), through
// indexfile.File.Verify: pause is called between pieces of 1 MiB and an
// error from it stops the check. A damaged section yields an error
// wrapping indexfile.ErrCorrupt that names the file and the section. It
// is nil for an index with nothing deferred, and errClosed (kind Closed)
// once the index is closed. Close does not wait for a whole Verify, only
// for the piece in hand.
func (x *Index) Verify(pause func() error) error {
	x.closeMu.RLock()
	f, closed := x.file, x.closed
	x.closeMu.RUnlock()
	if closed {
		return errClosed
	}
	if f != nil {
		switch err := f.Verify(pause); {
		case errors.Is(err, indexfile.ErrClosed):
			return errClosed
		case err != nil:
			return fmt.Errorf("hnsw: verify: %w", err)
		}
	}
	if err := x.verifyDeferred(pause); err != nil {
		if errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("hnsw: verify: %w", err)
		}
		return err
	}
	return nil
}

// deferredCheck is the part of the structure check that Load leaves to
// Verify under LoadOptions.DeferCRC: no self links, no duplicate links,
// every parent linking to its child (checkLinkSets, checkTreeLinks).
// Load still runs checkBounds and checkTreeBounds, everything a search
// or an insertion needs to stay inside the arrays, so a damaged link
// fails Load before any query can follow it; what is left decides only
// the quality of searches (a duplicate or a self link is skipped as
// visited) and the invariants an insertion relies on, so every mutation
// that reads links (Add, Compact, Renumber, the RaBitQ build) runs it
// first if Verify has not. It is a random read per node and a stamp per
// link: at 1M nodes most of what the whole check cost Load.
type deferredCheck struct {
	pending atomic.Bool
	mu      sync.Mutex // guards err, and pending's clearing
	err     error      // its result, once run
}

// checkDeferred runs the deferred structure check now if it is pending
// and returns its result, which it keeps. The caller holds closeMu
// shared (and writeMu: it is about to change the graph).
func (x *Index) checkDeferred() error {
	d := &x.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending.Load() {
		g := x.graph.Load()
		d.err = g.checkLinkSets(nil)
		if d.err == nil {
			d.err = g.checkTreeLinks()
		}
		d.pending.Store(false)
	}
	return d.err
}

// verifyDeferred is Verify's pass of the deferred structure check: in
// pieces, holding closeMu shared only during each (so that Close never
// waits for more than a piece), pause called between them (an error from
// it, or Close, leaves the check pending and is returned). A mutation
// that ran the check meanwhile (checkDeferred) has the last word.
func (x *Index) verifyDeferred(pause func() error) error {
	d := &x.deferred
	if d.pending.Load() {
		if err := x.acquire(); err != nil {
			return err
		}
		between := func() error {
			x.closeMu.RUnlock()
			var err error
			if pause != nil {
				err = pause()
			}
			x.closeMu.RLock()
			if x.closed {
				return errClosed
			}
			return err
		}
		g := x.graph.Load()
		err := g.checkLinkSets(between)
		if err == nil {
			if err = between(); err == nil {
				err = g.checkTreeLinks()
			}
		}
		x.closeMu.RUnlock()
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return err // paused for good, or closed
		}
		d.mu.Lock()
		if d.pending.Load() {
			d.err = err
			d.pending.Store(false)
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Unverified is how many bytes Verify has left to check.
func (x *Index) Unverified() uint64 {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	var n uint64
	if x.file != nil {
		n = x.file.Pending()
	}
	if x.deferred.pending.Load() {
		g := x.graph.Load()
		n += uint64(4 * (g.count*g.stride0 + g.upperUsed)) // the links it reads
	}
	return n
}
