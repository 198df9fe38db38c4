package collection

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/strata-db/strata/go/collection/segment"
	"github.com/strata-db/strata/go/collection/snapshot"
)

// Checkpoint writes a snapshot of everything applied so far, reads it back,
// switches CURRENT to it and deletes the snapshot before the one it
// replaces and the log segments only that one needed: the replaced
// snapshot and the log since it stay, to fall back on (fallback.go).
// Writes and queries go on meanwhile: only copying the index in memory
// holds writes back. A failed checkpoint fails the collection (ErrFailed):
// what CURRENT names after a failed rename or directory fsync is unknown.
func (c *Collection) Checkpoint() error {
	c.closeMu.RLock()
	defer c.closeMu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	return c.checkpoint()
}

func (c *Collection) checkpoint() error {
	if err := c.failed(); err != nil {
		return err
	}
	c.checkpointMu.Lock()
	defer c.checkpointMu.Unlock()
	began := time.Now()

	if c.applied.Load() == c.lastCheckpoint.Load() {
		return nil
	}
	// A snapshot holds graphs only: the tails are built first, by the
	// builder while writes go on, then what came meanwhile up to the
	// fence (freezeFields).
	c.waitBuilt()
	c.applyMu.Lock()
	seq := c.applied.Load()
	if seq == c.lastCheckpoint.Load() {
		c.applyMu.Unlock()
		return nil
	}
	// Under applyMu only what is O(records since the previous
	// checkpoint): the fence of each field's tail at seq, the copies of
	// what apply changes in place. The graphs are built to the fences
	// and sealed after, while writes go on past them.
	steps := startSteps(c.hooks.checkpointLocked)
	set, frozen := fenceFields(c.fields.Load())
	steps.done("fence")
	frozenSp := freezeSparse(set)
	steps.done("freeze_sparse")
	state := c.freezeState()
	steps.done("freeze_state")
	c.applyMu.Unlock()
	steps.report()
	err := c.freezeFields(seq, frozen, c.tuning.Threads)
	c.kickBuilder() // the rows past the fences wait for it
	if err == nil {
		err = c.foldState(&state)
	}
	if err != nil {
		return c.fail(fmt.Errorf("checkpoint: %w", err))
	}

	// Later records go to a new segment, so that once the snapshot is
	// durable every older segment holding only records <= seq can go.
	c.walMu.Lock()
	rotating := startSteps(c.hooks.checkpointLocked)
	walBytes := c.log.Bytes()
	err = c.log.Rotate()
	rotating.done("wal_rotate")
	c.walMu.Unlock()
	rotating.report()
	var wrote, segs []string
	var runs []snapshot.StateFile
	if err == nil {
		wrote, segs, runs, err = c.writeSnapshot(seq, set, frozen, frozenSp, &state)
	}
	if err == nil {
		// What CURRENT names must load: read it back first (fallback.go).
		err = c.verifySnapshot(seq, wrote)
	}
	if err == nil {
		err = snapshot.WriteCurrent(c.fs, c.dir, seq)
	}
	if err != nil {
		return c.fail(fmt.Errorf("checkpoint: %w", err))
	}
	prev := c.lastCheckpoint.Load() // kept, with the log since it, to fall back on
	c.lastCheckpoint.Store(seq)
	c.prevSegs, c.liveSegs = c.liveSegs, segs
	c.noteState(&state, runs)
	c.checkpointAt.Store(time.Now().UnixNano())
	c.walAtSnapshot.Store(walBytes)

	// Cleanup: a crash from here on leaves files that Open removes.
	// walAtSnapshot is the log size when this checkpoint began; the removed
	// segments leave the count too, so that Bytes() - walAtSnapshot stays
	// "bytes logged since", which the next background checkpoint waits for.
	// (Without this the threshold grew by the log's size at every
	// checkpoint, and so did the log recovery replays.)
	c.walMu.Lock()
	removing := startSteps(c.hooks.checkpointLocked)
	before := c.log.Bytes()
	err = c.log.RemoveThrough(prev)
	c.walAtSnapshot.Add(c.log.Bytes() - before)
	removing.done("wal_remove")
	c.walMu.Unlock()
	removing.report()
	if err == nil {
		err = c.removeStale(seq, prev, true)
	}
	if err != nil {
		return c.fail(fmt.Errorf("checkpoint cleanup: %w", err))
	}
	took := time.Since(began)
	c.stats.Checkpoints.Add(1)
	c.stats.CheckpointNanos.Add(int64(took))
	if o := c.tuning.Observer; o != nil {
		o.Checkpoint(took)
	}
	// The snapshot is durable: fields of mmap placement drop the memory
	// copies of the segments it wrote for their files' mappings. A failure
	// loses nothing (the copy stays, the next checkpoint tries again), so
	// it is reported without failing the collection.
	switched, err := c.mapSegments(set)
	if switched {
		// The copies are garbage now; without this the Go runtime keeps
		// their pages resident for minutes (NOTES: 1 GiB after 3 s idle).
		debug.FreeOSMemory()
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// fenceFields fences every field of set (vectorField.fence) for the
// snapshot of the last applied record; the caller holds applyMu (or has
// not started the loops yet).
func fenceFields(set *fieldSet) (*fieldSet, []frozenField) {
	frozen := make([]frozenField, len(set.fields))
	for i, f := range set.fields {
		frozen[i] = f.fence()
	}
	return set, frozen
}

// freezeFields builds the fenced fields' tails to their fences and seals
// their active graphs (vectorField.freeze) for the snapshot of seq; the
// caller holds checkpointMu, not applyMu. The new segment files are
// named seq-N (N counting from 0 across the fields).
func (c *Collection) freezeFields(seq uint64, frozen []frozenField, threads int) error {
	n := 0
	name := func() string { n++; return fmt.Sprintf("%016x-%04x.hnsw", seq, n-1) }
	if h := c.hooks.checkpointSealing; h != nil {
		h()
	}
	var first error
	for i := range frozen {
		// Every fence is lifted, the later ones after a failure too.
		if err := frozen[i].field.freeze(&frozen[i], threads, name); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// freezeSparse copies the sparse fields' state; the caller holds applyMu.
func freezeSparse(set *fieldSet) []frozenSparse {
	out := make([]frozenSparse, len(set.sparse))
	for i, f := range set.sparse {
		out[i] = frozenSparse{field: f, frozen: f.index.Freeze()}
	}
	return out
}

// writeSnapshot writes snapshots/<seq>/, the new segment files and the
// new state run, and makes them durable: every file fsynced, then
// DIR/segments, the snapshot directory and its parent. It returns the
// segment files it wrote (paths), the files of DIR/segments the manifest
// names (names) and its state runs. The manifest is format 5 (segments
// and state runs) whatever the schema.
func (c *Collection) writeSnapshot(seq uint64, set *fieldSet, frozen []frozenField, frozenSp []frozenSparse,
	state *pendingState) (wrote, segs []string, runs []snapshot.StateFile, err error) {
	dir := snapshotPath(c.dir, seq)
	// A directory of this name is the remains of a crashed checkpoint of
	// the same state (CURRENT never names an incomplete one).
	if err := c.fs.RemoveAll(dir); err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	if err := c.fs.MkdirAll(dir); err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	segDir := filepath.Join(c.dir, snapshot.SegmentsDir)
	if err := c.fs.MkdirAll(segDir); err != nil {
		return nil, nil, nil, fmt.Errorf("segments %s: %w", segDir, err)
	}
	files, vectors, wrote, err := saveFields(c.fs, segDir, dir, frozen)
	if err != nil {
		return nil, nil, nil, err
	}
	if runs, err = c.writeState(segDir, seq, state); err != nil {
		return nil, nil, nil, err
	}
	sparseFiles, err := saveSparse(c.fs, dir, frozenSp)
	if err != nil {
		return nil, nil, nil, err
	}
	files = append(files, sparseFiles...)
	m := snapshot.Manifest{Format: 5, WALHead: true, Seq: seq, Fsync: c.opts.Fsync.String(), Count: state.count,
		Vectors: vectors, Sparse: manifestSparse(set.sparse), State: runs}
	m.TextFields, m.TextAnalyzers = c.text.manifest()
	for _, name := range files {
		info, err := c.fs.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("snapshot %s: %w", dir, err)
		}
		m.Files = append(m.Files, snapshot.File{Name: name, Size: info.Size()})
	}
	var total int64
	for _, f := range m.Files {
		total += f.Size
	}
	for _, v := range m.Vectors {
		for _, s := range v.Segments {
			total += s.Size
		}
	}
	for _, r := range runs {
		total += r.Size
	}
	c.snapshotBytes.Store(total)
	if err := snapshot.WriteManifest(c.fs, dir, m); err != nil {
		return nil, nil, nil, err
	}
	if err := c.fs.SyncDir(filepath.Dir(dir)); err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	return wrote, segmentsOf(m), runs, nil
}

// checkpointLoop runs the automatic checkpoints the committer asks for.
func (c *Collection) checkpointLoop() {
	defer c.wg.Done()
	// Tombstones grow with overwrites and deletions, not with log volume: a
	// small collection under overwrites reaches the vacuum ratio long
	// before 64 MiB of log, so the loop also looks once a second.
	tick := time.NewTicker(vacuumCheckInterval)
	defer tick.Stop()
	for {
		var looked chan struct{}
		select {
		case <-c.stop:
			return
		case <-c.checkpointKick:
			if !c.mergesHeld() {
				c.look()
			}
		case looked = <-c.lookNow: // a test's own look: no hold stops it
			if !c.look() {
				close(looked)
				continue
			}
		case <-tick.C:
			if c.mergesHeld() || !c.look() {
				continue
			}
		}
		// A failure is recorded in c.failure and reported by the next
		// write; there is no caller to return it to here. After a merge
		// the checkpoint is the merge's own manifest switch, and the loop
		// looks again at once: merges land one at a time, each durable.
		for c.checkpoint() == nil && c.merged {
			c.merged = false
			c.lookCheckpoints = c.stats.Checkpoints.Load() // its own: still idle
			select {
			case <-c.stop:
				return
			default:
			}
			if !c.look() {
				break
			}
		}
		c.merged = false
		c.merging.Store(false) // the last merge's checkpoint has run
		c.lookCheckpoints = c.stats.Checkpoints.Load()
		if looked != nil {
			close(looked)
		}
	}
}

// mergesHeld reports whether Tuning.HoldMerges still holds the loop's
// own looks back.
func (c *Collection) mergesHeld() bool {
	select {
	case <-c.tuning.HoldMerges:
		return false
	default:
		return c.tuning.HoldMerges != nil
	}
}

// look is the checkpoint loop's periodic look: a vacuum if tombstones
// crowd the index (it reports whether one ran: its snapshot, the compacted
// index on disk too, follows), else a renumbering if the graph has grown.
func (c *Collection) look() bool {
	c.waitBuilt() // the tombstones and growth in the tails count once built
	// Idle: nothing applied since the previous look, so a merge down
	// (segment.MergePolicy.Idle) competes with no write. A checkpoint
	// that another caller ran since, or runs now, is no idleness: a
	// client that checkpoints between batches of an ingest writes
	// nothing while it waits for it (TestSegmentBench merged during its
	// ingest so).
	seq, ckpts := c.applied.Load(), c.stats.Checkpoints.Load()
	free := c.checkpointMu.TryLock()
	if free {
		c.checkpointMu.Unlock()
	}
	idle := seq == c.lookSeq && ckpts == c.lookCheckpoints && free
	c.lookSeq, c.lookCheckpoints = seq, ckpts
	if c.vacuum(idle) {
		c.merged = true
		// The merge is persisted now, by the checkpoint that follows, not
		// by the next one the log would call for; a checkpoint needs a
		// record newer than the live snapshot, so an idle collection logs
		// a marker (markMerge). A failure fails the collection; the
		// checkpoint then reports it.
		if c.applied.Load() == c.lastCheckpoint.Load() {
			_ = c.markMerge()
			c.lookSeq = c.applied.Load() // the marker is no write: still idle
		}
		return true
	}
	c.renumber()
	return false
}

// vacuum merges sealed segments (segment.Graphs.Plan: a segment whose
// tombstones reach Tuning.VacuumRatio is rewritten alone; while writes
// come, nothing else until a field holds more than MaxSegments; idle,
// Factor segments of one size tier become one, then all but at most two)
// and reports whether it did; the checkpoint loop then checkpoints, which
// writes the merged segment. One merge runs per look, so that each is
// durable before the next starts. Writes and searches go on meanwhile
// (the build holds no lock). Only the checkpoint loop calls it, so one
// runs at a time.
func (c *Collection) vacuum(idle bool) bool {
	// A merge copies vectors into a new file with new CRCs: it waits
	// until the verifier (verify.go) has checked the old ones.
	if c.tuning.VacuumRatio < 0 || c.failed() != nil || !c.verified() {
		return false
	}
	policy := mergePolicyOf(c)
	policy.Idle = idle
	// A background rebuild leaves half the cores to the requests it runs
	// beside (the server load test's writes stalled for tens of ms while a
	// vacuum took both cores).
	threads := c.tuning.Threads
	if threads <= 0 {
		threads = max(1, runtime.NumCPU()/2)
	}
	merged := 0
	const maxMergesPerLook = 1 // each is persisted before the next (look)
	for _, f := range c.fields.Load().fields {
		// The active graph's own overwrites count too: a crowded one is
		// sealed, for the policy to rewrite.
		if a := f.index.Active(); crowded(a.Tombstones(), a.Len(), c.tuning.VacuumRatio) {
			f.buildMu.Lock()
			err := f.index.SealActive()
			f.buildMu.Unlock()
			if err != nil {
				continue
			}
		}
		policy.MaxMergedKeys = mergeBudget(f.index.Len(), f.Dim, f.M)
		for merged < maxMergesPerLook {
			srcs, _ := f.index.Plan(policy)
			if srcs == nil {
				break
			}
			began := time.Now()
			c.merging.Store(true)
			// Merge fails only on a closed index, which Close does after
			// this loop has stopped, or a field removed meanwhile: there
			// is nothing to report.
			srcs = f.index.MapSources(srcs, c.mergeSourceLoader(f))
			err := f.index.Merge(srcs, threads)
			if err != nil {
				c.merging.Store(false)
				break
			}
			// merging stays set until the checkpoint that writes the merge
			// has run (checkpointLoop): until then the merge has not
			// landed on disk, and a reader of Info waiting for the merges
			// to settle (TestSegmentBench's waitSteady) took a checkpoint
			// of several seconds at 1M for a steady state.
			merged++
			c.stats.Vacuums.Add(1)
			c.stats.VacuumNanos.Add(int64(time.Since(began)))
		}
	}
	return merged > 0
}

// markMerge logs a record that changes nothing (a delete of no ids, which
// every build reads and applies as nothing), so that the checkpoint after
// a merge on an idle collection has a sequence number of its own: a
// snapshot is named for the last record it holds, and the live one's
// name is taken. Only the checkpoint loop calls it.
func (c *Collection) markMerge() error {
	_, err := c.submit(record{op: opDelete}, nil)
	return err
}

// mergePolicyOf is the collection's merge policy (package segment).
func mergePolicyOf(c *Collection) segment.MergePolicy {
	return segment.MergePolicy{Factor: mergeFactor, MaxSegments: maxSegments,
		TombstoneRatio: c.tuning.VacuumRatio, MinTombstones: vacuumMinTombstones}
}

// mergeBudget is the most live keys a merge of several segments of a
// field holding live keys of dim floats and m links may produce
// (segment.MergePolicy.MaxMergedKeys): mergeBudgetShare of the field, and
// at least the keys whose vectors and level-0 links (2m of 4 bytes) fill
// mergeBudgetMinBytes.
func mergeBudget(live, dim, m int) int {
	if m <= 0 {
		m = 16
	}
	perKey := 4*max(dim, 1) + 8*m
	return max(mergeBudgetMinBytes/perKey, int(mergeBudgetShare*float64(live)))
}

// crowded reports whether dead tombstones among live keys call for a
// rewrite (Tuning.VacuumRatio, vacuumMinTombstones).
func crowded(dead, live int, ratio float64) bool {
	return ratio >= 0 && dead >= vacuumMinTombstones && float64(dead) >= ratio*float64(dead+live)
}

// renumber puts the index's nodes in breadth-first order
// (hnsw.Index.Renumber) once the live points are at least renumberGrowth
// times as many as at the index's last renumbering (by a vacuum, a large
// upsert or this; none since open counts as 0). A collection
// grows by upserts too small for hnsw.Index.Add to renumber after, so
// without this its graph stays in arrival order and a search's vectors lie
// scattered in memory (BenchmarkSearchOneReorder, 100k x 128: the
// breadth-first order takes 0.91-0.95x the time). Overwrites add nodes too,
// but only tombstones, which the next vacuum drops and renumbers anyway
// (counting them renumbered a 172k-node graph for 160 ms under an
// overwrite load). Writes wait while the graph is copied (12-57 ms at 100k
// x 128, BenchmarkRenumber); searches do not. Only the checkpoint loop
// calls it.
func (c *Collection) renumber() {
	if c.failed() != nil {
		return
	}
	for _, f := range c.fields.Load().fields {
		done, err := f.index.Renumber(renumberGrowth)
		if err != nil || !done {
			continue // not grown enough yet, or closed: Close stops this loop first
		}
		c.stats.Renumbers.Add(1)
	}
}

// stepTimer times the steps a checkpoint runs under applyMu (or walMu)
// for testHooks.checkpointLocked; without the hook it reads no clock.
type stepTimer struct {
	hook     func(from, to time.Time, steps []checkpointStep)
	from, at time.Time
	steps    []checkpointStep
}

// startSteps starts the first step; the caller has just taken the lock.
func startSteps(hook func(from, to time.Time, steps []checkpointStep)) stepTimer {
	t := stepTimer{hook: hook}
	if hook != nil {
		t.from = time.Now()
		t.at = t.from
	}
	return t
}

// done ends the step of that name.
func (t *stepTimer) done(name string) {
	if t.hook == nil {
		return
	}
	now := time.Now()
	t.steps = append(t.steps, checkpointStep{name: name, took: now.Sub(t.at)})
	t.at = now
}

// report passes the steps to the hook once the lock is released.
func (t *stepTimer) report() {
	if t.hook != nil {
		t.hook(t.from, t.at, t.steps)
	}
}
