package collection

import (
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/vfs"
)

// State runs: the documents, string ids and expiry times on disk.
//
// The applier notes the keys whose document, string id or expiry it
// changes (noteChanged: every upsert, delete and set-metadata); a
// checkpoint writes the current state of those keys, and of the keys of
// the runs it merges, as one new state run (package snapshot, "State
// runs"), and the manifest lists the runs. So a checkpoint writes in
// proportion to what changed since the previous one, not to the
// collection. The runs merge in size tiers as the graph segments do
// (planStateMerge): stateMergeFactor runs of one tier (floor(log4(entries
// + 1))) become one of the next, so a key is rewritten about
// log4(N/changed) times over its life and a snapshot lists about 3 runs
// per tier. The checkpoint copies the changed keys' state under applyMu
// and folds the runs it merges in from their files after it (foldState);
// a merge that reaches the oldest run leaves the deleted entries out.

// stateMergeFactor is how many runs of one size tier are merged into one.
const stateMergeFactor = 4

// pendingState is what a checkpoint writes of the state: run replaces
// runs[from:] (nothing is written when write is false: no key changed
// and nothing to merge). Until foldState has run, run holds the changed
// keys alone when fold is set, and runs[from:] are still to be folded in.
type pendingState struct {
	write bool
	fold  bool
	run   snapshot.StateRun
	from  int
	count int // live documents
}

// noteChanged records keys whose state the applier changed; the caller
// holds applyMu (or is Open's replay).
func (c *Collection) noteChanged(keys []uint64) {
	c.changed = append(c.changed, keys...)
}

// freezeState takes the changed keys and copies their state, which is
// what the checkpoint writes unless it merges runs: then foldState, out
// of the lock, folds the runs it replaces in from their files (a key not
// changed since the previous checkpoint holds the state its newest run
// gives it). The caller holds applyMu, for a time in proportion to the
// keys changed (the whole state was copied here when the merge reached
// the oldest run: 105 ms at 200k, TestCheckpointPauseBench).
func (c *Collection) freezeState() pendingState {
	slices.Sort(c.changed)
	changed := slices.Clone(slices.Compact(c.changed))
	c.changed = c.changed[:0]
	st := pendingState{count: c.meta.Len(), from: planStateMerge(c.runs, len(changed))}
	if c.stateWhole {
		// The loaded snapshot's state is in files of before runs: written
		// whole once, from memory.
		st.from, st.write, st.run = 0, true, c.wholeState()
		return st
	}
	if len(changed) == 0 && st.from == len(c.runs) {
		return st
	}
	st.write, st.fold, st.run = true, st.from < len(c.runs) || st.from == 0, c.stateOf(changed)
	return st
}

// foldState folds into the pending run the runs it replaces,
// runs[from:], read back from their files, newest entry winning; a fold
// that reaches the oldest run leaves the deleted entries out. The caller
// holds checkpointMu (runs stay), not applyMu.
func (c *Collection) foldState(st *pendingState) error {
	if !st.fold {
		return nil
	}
	runs := make([]snapshot.StateRun, 0, len(c.runs)-st.from+1)
	for _, r := range c.runs[st.from:] {
		read, err := snapshot.ReadStateRun(c.fs, filepath.Join(c.dir, snapshot.SegmentsDir, r.File))
		if err != nil {
			return fmt.Errorf("state run %s: %w", r.File, err)
		}
		runs = append(runs, read)
	}
	st.run = snapshot.FoldStateRuns(append(runs, st.run), st.from == 0)
	st.fold = false
	return nil
}

// wholeState is every live point's state, ascending by key.
func (c *Collection) wholeState() snapshot.StateRun {
	ids, offsets, data := c.meta.Export()
	strKeys, strs, next := c.ids.export()
	exp := c.expiry.export()
	r := snapshot.StateRun{Keys: ids, Deleted: make([]byte, len(ids)), Offsets: offsets, Data: data,
		Strings: make([]string, len(ids)), Expires: make([]int64, len(ids)), Next: next}
	s, e := 0, 0
	for i, k := range ids {
		if s < len(strKeys) && strKeys[s] == k {
			r.Strings[i] = strs[s]
			s++
		}
		if e < len(exp.Keys) && exp.Keys[e] == k {
			r.Expires[i] = exp.At[e]
			e++
		}
	}
	return r
}

// stateOf is the state of keys (ascending): a deleted entry for a key
// that holds no point.
func (c *Collection) stateOf(keys []uint64) snapshot.StateRun {
	r := snapshot.StateRun{Keys: keys, Deleted: make([]byte, len(keys)), Offsets: make([]uint64, 1, len(keys)+1),
		Strings: make([]string, len(keys)), Expires: make([]int64, len(keys)), Next: c.ids.nextKey()}
	for i, k := range keys {
		doc, ok := c.meta.Get(k)
		if !ok {
			r.Deleted[i] = 1
		} else {
			r.Data = append(r.Data, doc...)
			if k >= firstStringKey {
				r.Strings[i], _ = c.ids.name(k)
			}
			r.Expires[i] = c.expiry.get(k)
		}
		r.Offsets = append(r.Offsets, uint64(len(r.Data)))
	}
	return r
}

// writeState writes the pending run into segDir (fsynced; the caller
// fsyncs the directory) and returns the manifest's list of runs.
func (c *Collection) writeState(segDir string, seq uint64, st *pendingState) ([]snapshot.StateFile, error) {
	if !st.write {
		return slices.Clone(c.runs), nil
	}
	files := slices.Clone(c.runs[:st.from])
	name := snapshot.StateRunName(seq)
	path := filepath.Join(segDir, name)
	if err := snapshot.WriteStateRun(c.fs, path, st.run); err != nil {
		return nil, err
	}
	info, err := c.fs.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("state run %s: %w", path, err)
	}
	return append(files, snapshot.StateFile{File: name, Size: info.Size(), Entries: st.run.Len()}), nil
}

// noteState records, once CURRENT names the snapshot, the runs it lists.
func (c *Collection) noteState(st *pendingState, files []snapshot.StateFile) {
	if !st.write {
		return
	}
	c.runs = append(slices.Clone(c.runs[:st.from]), files[len(files)-1])
	c.stateWhole = false
}

// planStateMerge returns from: a checkpoint with changed keys replaces
// runs[from:] and them by one run. It merges while the new run and the
// newest runs of its tier or below are stateMergeFactor or more.
func planStateMerge(runs []snapshot.StateFile, changed int) int {
	from, merged := len(runs), changed
	for from > 0 {
		tier := stateTier(merged)
		j := from
		for j > 0 && stateTier(runs[j-1].Entries) <= tier {
			j--
		}
		if from-j+1 < stateMergeFactor {
			break
		}
		for ; from > j; from-- {
			merged += runs[from-1].Entries
		}
	}
	return from
}

// stateTier is floor(log4(n+1)).
func stateTier(n int) int { return (bits.Len(uint(n+1)) - 1) / 2 }

// loadState reads the state a snapshot holds: its state runs (format 5),
// merged, or meta.idx, ids.idx and expiry.idx of the formats before. It
// returns the runs too.
func loadState(fsys vfs.FS, dir, snapDir string, m snapshot.Manifest) (snapshot.Metadata, snapshot.IDTable, snapshot.Expiries, []snapshot.StateFile, error) {
	var none snapshot.Expiries
	if m.Format < 5 {
		table, err := loadIDTable(fsys, snapDir, m)
		if err != nil {
			return snapshot.Metadata{}, table, none, nil, err
		}
		stored, err := snapshot.ReadMetadata(fsys, filepath.Join(snapDir, metaFileName))
		if err != nil {
			return stored, table, none, nil, err
		}
		if m.Expiry != "" {
			e, err := snapshot.ReadExpiries(fsys, filepath.Join(snapDir, m.Expiry))
			return stored, table, e, nil, err
		}
		return stored, table, none, nil, nil
	}
	contents := make([]snapshot.StateRun, len(m.State))
	for i, f := range m.State {
		path := filepath.Join(dir, snapshot.SegmentsDir, f.File)
		info, err := fsys.Stat(path)
		if err != nil {
			return snapshot.Metadata{}, snapshot.IDTable{}, none, nil, fmt.Errorf("%w: %s: state run %s: %v", ErrCorrupt, snapDir, f.File, err)
		}
		if info.Size() != f.Size {
			return snapshot.Metadata{}, snapshot.IDTable{}, none, nil, fmt.Errorf("%w: %s: state run %s is %d bytes, manifest says %d",
				ErrCorrupt, snapDir, f.File, info.Size(), f.Size)
		}
		r, err := snapshot.ReadStateRun(fsys, path)
		if err != nil {
			return snapshot.Metadata{}, snapshot.IDTable{}, none, nil, err
		}
		if r.Len() != f.Entries {
			return snapshot.Metadata{}, snapshot.IDTable{}, none, nil, fmt.Errorf("%w: %s: state run %s holds %d entries, manifest says %d",
				ErrCorrupt, snapDir, f.File, r.Len(), f.Entries)
		}
		contents[i] = r
	}
	stored, table, exp, err := snapshot.MergeStateRuns(contents)
	if err != nil {
		err = fmt.Errorf("%s: %w", snapDir, err)
	}
	return stored, table, exp, slices.Clone(m.State), err
}
