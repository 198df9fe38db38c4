package collection

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/strata-db/strata/go/collection/wal"
	"github.com/strata-db/strata/go/errkind"
)

// Verification after Open (issue 24: reopen in constant time).
//
// Open maps each segment's float vectors, links, ids, levels and SQ8
// codes (all but a few bytes a row of its file) and leaves their CRCs
// unchecked (hnsw.LoadOptions.DeferCRC); the rest of the file (header,
// section table, padding, flags, the tree, RaBitQ codes) and every other
// file of the snapshot are read and checked as before, and the links pass
// hnsw's bounds check, so a search never follows a link out of bounds.
// Open also replays the log from the snapshot on, leaving unread the
// older segments kept for a fallback on the previous snapshot
// (wal.ReplayOptions.SkipCovered). One goroutine then checks, in the
// background, 1 MiB at a time with a yield between pieces (verifyLoop),
// what Open checked before: the deferred CRCs (indexfile.File.Verify),
// the rest of each graph's structure check (self and duplicate links,
// the tree: hnsw's deferredCheck) and every record of those older log
// segments (wal.VerifyCovered). Until it is done, queries are answered from
// vectors not yet checked; Info().Verification says "pending". If a CRC
// does not match, the collection fails: every read and write then
// returns an error wrapping ErrCorrupt (kind Corrupt) that names the
// field, segment file and section (or the log segment and offset),
// checkpoints and merges stop (a merge
// would otherwise copy the damaged vectors into a new file with a good
// CRC), nothing is deleted, and Info().Verification is "failed". Merges
// wait for the verifier: they rewrite segments only once every CRC is
// known good.
//
// Tuning.VerifyOnOpen (and Tuning.Repair, which must see every record
// of the log) checks everything before Open returns, as before;
// a damaged segment then fails Open (or Open falls back on the previous
// snapshot, fallback.go), which is what to do after a "failed".

// Verification states, Info().Verification.
const (
	VerifyVerified = "verified" // every CRC checked (or none deferred)
	VerifyPending  = "pending"  // the verifier is checking the segments
	VerifyFailed   = "failed"   // a CRC did not match: the collection refuses reads and writes
)

// verifyState is the verifier's state. Its zero value is "verified": a
// created collection, or one opened with VerifyOnOpen, has nothing left.
type verifyState struct {
	pending atomic.Bool
	damage  atomic.Pointer[error]
	done    chan struct{} // closed when verifyLoop returns; nil if it never ran
}

// errVerifyStopped is how verifyLoop's pause stops it at Close.
var errVerifyStopped = errors.New("collection: verification stopped by Close")

// skipCoveredLog says whether Open leaves the log segments the snapshot
// covers to the verifier (wal.ReplayOptions.SkipCovered): unless
// VerifyOnOpen or Repair asks for every record to be checked now.
func (c *Collection) skipCoveredLog() bool { return !c.tuning.VerifyOnOpen && !c.tuning.Repair }

// startVerifier starts verifyLoop if Open deferred any CRC.
func (c *Collection) startVerifier() {
	if c.tuning.VerifyOnOpen || (c.unverified() == 0 && !c.logUnchecked) {
		return
	}
	c.verify.pending.Store(true)
	c.verify.done = make(chan struct{})
	c.wg.Add(1)
	go c.verifyLoop()
}

// verifyLoop checks the deferred CRCs of every field's segments.
func (c *Collection) verifyLoop() {
	defer c.wg.Done()
	defer close(c.verify.done)
	pause := func() error {
		select {
		case <-c.stop:
			return errVerifyStopped
		default:
		}
		runtime.Gosched() // low priority: let requests run between pieces
		return nil
	}
	for _, f := range c.fields.Load().fields {
		err := f.index.Verify(pause)
		switch {
		case err == nil:
		case errors.Is(err, errVerifyStopped):
			return // still pending: the collection is closing
		case errkind.Of(err) == errkind.Closed:
			// The field was removed meanwhile: nobody reads it any more.
		default:
			c.damaged(fmt.Errorf("%w: vector field %q: %w; the collection refuses reads and writes "+
				"(nothing was deleted; reopen with VerifyOnOpen to fall back on the previous snapshot)",
				ErrCorrupt, f.Name, err))
			return
		}
	}
	// The log segments the snapshot covers, which Open did not read: a
	// fallback on the previous snapshot would replay them.
	var err error
	if c.logUnchecked {
		err = wal.VerifyCovered(c.fs, filepath.Join(c.dir, walDir), c.recovery.SnapshotSeq, pause)
	}
	switch {
	case err == nil:
	case errors.Is(err, errVerifyStopped):
		return
	default:
		c.damaged(fmt.Errorf("%w: the log before snapshot %d: %w; the collection refuses reads and writes "+
			"(nothing was deleted; reopen with VerifyOnOpen to refuse the log, or Repair to salvage it)",
			ErrCorrupt, c.recovery.SnapshotSeq, err))
		return
	}
	c.verify.pending.Store(false)
	if c.logUnchecked {
		// Reading the log left its frames' buffers as garbage (a record of
		// 5,000 rows of 512-d is 10 MiB): give their pages back, as Open
		// does for its own (the 100k x 512 collection of
		// bench_collection_memory.py kept 20 MiB more anonymous memory).
		debug.FreeOSMemory()
	}
}

// damaged records a failed verification: alive returns err from now on
// and fail stops checkpoints, merges and the builder.
func (c *Collection) damaged(err error) {
	c.verify.damage.CompareAndSwap(nil, &err)
	c.fail(err)
	c.verify.pending.Store(false)
}

// damage is the verification's error, or nil.
func (c *Collection) damage() error {
	if p := c.verify.damage.Load(); p != nil {
		return *p
	}
	return nil
}

// verification is Info().Verification.
func (c *Collection) verification() string {
	switch {
	case c.verify.damage.Load() != nil:
		return VerifyFailed
	case c.verify.pending.Load():
		return VerifyPending
	}
	return VerifyVerified
}

// verified reports whether every deferred CRC has been checked and
// matched: merges wait for it.
func (c *Collection) verified() bool { return c.verification() == VerifyVerified }

// unverified is how many bytes of segment files the verifier has left.
func (c *Collection) unverified() uint64 {
	var n uint64
	for _, f := range c.fields.Load().fields {
		n += f.index.Unverified()
	}
	return n
}

// WaitVerified waits for the background verification Open started, and
// returns its error (wrapping ErrCorrupt) if a CRC did not match, or
// ErrClosed if the collection closed first. It returns at once when
// nothing was deferred.
func (c *Collection) WaitVerified() error {
	if done := c.verify.done; done != nil {
		<-done
	}
	if err := c.damage(); err != nil {
		return err
	}
	if c.verify.pending.Load() {
		return ErrClosed
	}
	return nil
}
