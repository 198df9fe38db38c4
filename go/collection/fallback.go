package collection

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// The previous snapshot.
//
// A checkpoint keeps the snapshot it replaces, and the log since it, until
// the next checkpoint's snapshot has been written and verified: so one
// flipped bit in index.hnsw, meta.idx, MANIFEST or CURRENT costs a replay
// from the previous snapshot instead of the collection. Exactly one
// previous snapshot is kept, so snapshots take up to twice their size on
// disk, and the log holds the records of the last two checkpoint
// intervals. A snapshot directory that failed to load is renamed to
// <seq>.broken (a damaged CURRENT is copied to CURRENT.broken), kept as
// evidence and never read again.

// brokenSuffix marks a snapshot directory (or CURRENT) kept as evidence.
const brokenSuffix = ".broken"

// Fallback says that Open could not load the snapshot CURRENT named and
// loaded an older one.
type Fallback struct {
	From   uint64 // the snapshot that failed (0 with CurrentBroken, when CURRENT was unreadable)
	To     uint64 // the snapshot loaded instead
	Reason string // why From could not be loaded
	// CurrentBroken says CURRENT itself was damaged.
	CurrentBroken bool
}

// loaded is a snapshot read from disk.
type loaded struct {
	seq      uint64
	manifest snapshot.Manifest
	fields   *fieldSet
	docs     *meta.Index
	stored   snapshot.Metadata
	ids      *idTable
	expiry   *expiryTable
	runs     []snapshot.StateFile // format 5 (state.go)
}

// loadIDTable reads the snapshot's id table, or makes the empty one for a
// snapshot without (no string id ever).
func loadIDTable(fsys vfs.FS, snapDir string, m snapshot.Manifest) (snapshot.IDTable, error) {
	if m.IDs == "" {
		return snapshot.IDTable{Next: firstStringKey}, nil
	}
	return snapshot.ReadIDTable(fsys, filepath.Join(snapDir, m.IDs))
}

// loadSnapshot reads snapshot seq and checks it whole.
// lazy defers the CRCs of the segments' vectors to the verifier
// (verify.go); without it every byte is checked here.
func loadSnapshot(fsys vfs.FS, dir string, seq uint64, lazy bool) (*loaded, error) {
	snapDir := snapshotPath(dir, seq)
	manifest, err := snapshot.ReadManifest(fsys, snapDir)
	if err != nil {
		return nil, err
	}
	if manifest.Seq != seq {
		return nil, fmt.Errorf("%w: snapshot %s: manifest says seq %d", ErrCorrupt, snapDir, manifest.Seq)
	}
	if _, err := optionsFromSnapshot(manifest); err != nil {
		return nil, err
	}
	stored, table, expiries, runs, err := loadState(fsys, dir, snapDir, manifest)
	if err != nil {
		return nil, err
	}
	fields, err := loadFields(fsys, snapDir, manifest, lazy)
	if err != nil {
		return nil, err
	}
	docs, err := meta.Import(stored.IDs, stored.Offsets, stored.Data)
	if err != nil {
		closeFields(fields.fields)
		return nil, err
	}
	if docs.Len() != manifest.Count {
		closeFields(fields.fields)
		return nil, fmt.Errorf("%w: snapshot %s holds %d documents, manifest says %d",
			ErrCorrupt, snapDir, docs.Len(), manifest.Count)
	}
	if manifest.Format < 3 && fields.fields[0].index.Len() != docs.Len() {
		// Before fields existed every point had the one vector.
		closeFields(fields.fields)
		return nil, fmt.Errorf("%w: snapshot %s holds %d vectors and %d documents, manifest says %d",
			ErrCorrupt, snapDir, fields.fields[0].index.Len(), docs.Len(), manifest.Count)
	}
	if err := checkFieldPoints(fields, docs.Contains, docs.Len()); err != nil {
		closeFields(fields.fields)
		return nil, fmt.Errorf("snapshot %s: %w", snapDir, err)
	}
	// The documents' string keys (2^63 and up, last in MIDS) are exactly
	// the id table's.
	first, _ := slices.BinarySearch(stored.IDs, firstStringKey)
	if !slices.Equal(stored.IDs[first:], table.Keys) {
		closeFields(fields.fields)
		return nil, fmt.Errorf("%w: snapshot %s holds %d documents under string keys, its id table %d",
			ErrCorrupt, snapDir, len(stored.IDs)-first, len(table.Keys))
	}
	ids := importTable(table.Keys, table.Strings, table.Next)
	for i, k := range expiries.Keys {
		if !docs.Contains(k) {
			closeFields(fields.fields)
			return nil, fmt.Errorf("%w: snapshot %s: the expiry table's entry %d names key %d, which holds no point",
				ErrCorrupt, snapDir, i, k)
		}
	}
	expiry := importExpiries(expiries)
	return &loaded{seq: seq, manifest: manifest, fields: fields, docs: docs, stored: stored, ids: ids, expiry: expiry, runs: runs}, nil
}

// damagedSnapshot reports whether err says a snapshot's files are damaged
// or missing, which an older snapshot can stand in for (an I/O error is
// not: it is returned).
func damagedSnapshot(err error) bool {
	return errors.Is(err, snapshot.ErrCorrupt) || errors.Is(err, indexfile.ErrCorrupt) ||
		errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist)
}

// chooseSnapshot loads the snapshot CURRENT names or, if it (or CURRENT)
// is damaged, the newest older one that loads, moving the damaged one
// aside and pointing CURRENT at the one loaded. The fallback is nil if
// none was needed.
func chooseSnapshot(fsys vfs.FS, dir string, lazy bool) (*loaded, *Fallback, error) {
	var fb Fallback
	var failed error
	live, err := snapshot.ReadCurrent(fsys, dir)
	switch {
	case err == nil:
		snap, err := loadSnapshot(fsys, dir, live, lazy)
		if err == nil || !damagedSnapshot(err) {
			return snap, nil, err
		}
		fb, failed = Fallback{From: live, Reason: err.Error()}, err
	case errors.Is(err, snapshot.ErrCorrupt):
		fb, failed = Fallback{CurrentBroken: true, Reason: err.Error()}, err
	default:
		return nil, nil, err
	}
	seqs, err := snapshotSeqs(fsys, dir)
	if err != nil {
		return nil, nil, errors.Join(failed, err)
	}
	for _, seq := range slices.Backward(seqs) {
		if !fb.CurrentBroken && seq >= fb.From {
			continue
		}
		snap, err := loadSnapshot(fsys, dir, seq, lazy)
		if err != nil {
			if damagedSnapshot(err) {
				continue
			}
			return nil, nil, errors.Join(failed, err)
		}
		fb.To = seq
		if err := setAside(fsys, dir, &fb); err != nil {
			closeFields(snap.fields.fields)
			return nil, nil, err
		}
		return snap, &fb, nil
	}
	return nil, nil, fmt.Errorf("%w (and no older snapshot loads to fall back on)", failed)
}

// setAside keeps the damaged snapshot (or CURRENT) as evidence under a
// .broken name and points CURRENT at the fallback, durably. A crash part
// way leaves CURRENT naming the damaged snapshot, or one that is gone: the
// next Open falls back again.
func setAside(fsys vfs.FS, dir string, fb *Fallback) error {
	if fb.CurrentBroken {
		data, err := vfs.ReadFile(fsys, filepath.Join(dir, snapshot.CurrentName))
		if err == nil {
			err = writeEvidence(fsys, filepath.Join(dir, snapshot.CurrentName+brokenSuffix), data)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("collection: keeping the damaged %s: %w", snapshot.CurrentName, err)
		}
	} else {
		from := snapshotPath(dir, fb.From)
		if _, err := fsys.Stat(from); err == nil {
			if err := fsys.Rename(from, freeName(fsys, from+brokenSuffix)); err != nil {
				return fmt.Errorf("collection: setting the damaged snapshot %s aside: %w", from, err)
			}
			if err := fsys.SyncDir(filepath.Dir(from)); err != nil {
				return fmt.Errorf("collection: setting the damaged snapshot %s aside: %w", from, err)
			}
		}
	}
	if err := snapshot.WriteCurrent(fsys, dir, fb.To); err != nil {
		return fmt.Errorf("collection: pointing %s at the fallback snapshot: %w", snapshot.CurrentName, err)
	}
	return nil
}

func writeEvidence(fsys vfs.FS, path string, data []byte) error {
	return vfs.ReplaceFile(fsys, freeName(fsys, path), data)
}

// freeName is path, or path.1, path.2, ...: the first that does not exist.
func freeName(fsys vfs.FS, path string) string {
	name := path
	for n := 1; ; n++ {
		if _, err := fsys.Stat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s.%d", path, n)
	}
}

// snapshotSeqs lists the snapshot directories by seq, ascending, ignoring
// other names (.broken ones among them).
func snapshotSeqs(fsys vfs.FS, dir string) ([]uint64, error) {
	names, err := fsys.ReadDir(filepath.Join(dir, snapshotsDir))
	if err != nil {
		return nil, fmt.Errorf("collection: listing snapshots of %s: %w", dir, err)
	}
	var seqs []uint64
	for _, name := range names {
		if seq, ok := parseSnapshotName(name); ok {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

func parseSnapshotName(name string) (uint64, bool) {
	if len(name) != 16 || strings.ToLower(name) != name {
		return 0, false
	}
	seq, err := strconv.ParseUint(name, 16, 64)
	return seq, err == nil
}

// segmentsOf lists the files of DIR/segments a manifest names: segments
// and state runs.
func segmentsOf(m snapshot.Manifest) []string {
	var out []string
	for _, v := range m.Vectors {
		for _, s := range v.Segments {
			out = append(out, s.File)
		}
	}
	for _, r := range m.State {
		out = append(out, r.File)
	}
	return out
}

// previousSnapshot is the newest snapshot older than live whose manifest
// reads, the one a checkpoint kept; 0 and false if there is none.
func previousSnapshot(fsys vfs.FS, dir string, live uint64) (uint64, bool) {
	seqs, err := snapshotSeqs(fsys, dir)
	if err != nil {
		return 0, false
	}
	for _, seq := range slices.Backward(seqs) {
		if seq >= live {
			continue
		}
		if _, err := snapshot.ReadManifest(fsys, snapshotPath(dir, seq)); err == nil {
			return seq, true
		}
	}
	return 0, false
}

// verifySnapshot reads snapshot seq and the segment files it wrote
// (wrote) back, checking every CRC, before CURRENT may name it. The
// segments written by earlier checkpoints were verified then. The files
// are read through a buffer (indexfile.Verify), never whole: a merged
// segment's file is as large as its graph.
func (c *Collection) verifySnapshot(seq uint64, wrote []string) error {
	for _, path := range wrote {
		if err := indexfile.Verify(c.fs, path); err != nil {
			return fmt.Errorf("verifying snapshot: %w", err)
		}
	}
	snapDir := snapshotPath(c.dir, seq)
	m, err := snapshot.ReadManifest(c.fs, snapDir)
	if err != nil {
		return fmt.Errorf("verifying snapshot: %w", err)
	}
	for _, file := range m.Files {
		if err := indexfile.Verify(c.fs, filepath.Join(snapDir, file.Name)); err != nil {
			return fmt.Errorf("verifying snapshot: %w", err)
		}
	}
	// The state run this checkpoint wrote, if any, is the newest; the
	// older ones were verified by the checkpoints that wrote them.
	if n := len(m.State); n > 0 && m.State[n-1].File == snapshot.StateRunName(seq) {
		path := filepath.Join(c.dir, snapshot.SegmentsDir, m.State[n-1].File)
		r, err := snapshot.ReadStateRun(c.fs, path)
		if err == nil && r.Len() != m.State[n-1].Entries {
			err = fmt.Errorf("%w: %s holds %d entries, the manifest says %d", ErrCorrupt, path, r.Len(), m.State[n-1].Entries)
		}
		if err != nil {
			return fmt.Errorf("verifying snapshot: %w", err)
		}
	}
	return nil
}

// removeStale deletes snapshot directories other than live and prev (if
// keepPrev): the remains of checkpoints that crashed before or after
// switching CURRENT, and older snapshots. .broken evidence stays. It then
// deletes the segment files neither kept manifest names (merged away, or
// written by a checkpoint that crashed).
func (c *Collection) removeStale(live, prev uint64, keepPrev bool) error {
	root := filepath.Join(c.dir, snapshotsDir)
	names, err := c.fs.ReadDir(root)
	if err != nil {
		return fmt.Errorf("collection: open %s: %w", c.dir, err)
	}
	removed := false
	for _, name := range names {
		if strings.Contains(name, brokenSuffix) {
			continue
		}
		if seq, ok := parseSnapshotName(name); ok && (seq == live || (keepPrev && seq == prev)) {
			continue
		}
		if err := c.fs.RemoveAll(filepath.Join(root, name)); err != nil {
			return fmt.Errorf("collection: open %s: %w", c.dir, err)
		}
		removed = true
	}
	if removed {
		if err := c.fs.SyncDir(root); err != nil {
			return fmt.Errorf("collection: open %s: %w", c.dir, err)
		}
	}
	return c.removeStaleSegments(keepPrev)
}

// removeStaleSegments deletes the files of DIR/segments that neither the
// live snapshot nor the previous one (if keepPrev) names (c.liveSegs and
// c.prevSegs, noted when they were loaded or written).
func (c *Collection) removeStaleSegments(keepPrev bool) error {
	segDir := filepath.Join(c.dir, snapshot.SegmentsDir)
	names, err := c.fs.ReadDir(segDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("collection: open %s: %w", c.dir, err)
	}
	keep := map[string]bool{}
	for _, name := range c.liveSegs {
		keep[name] = true
	}
	if keepPrev {
		for _, name := range c.prevSegs {
			keep[name] = true
		}
	}
	removed := false
	for _, name := range names {
		if keep[name] {
			continue
		}
		if err := c.fs.RemoveAll(filepath.Join(segDir, name)); err != nil {
			return fmt.Errorf("collection: open %s: %w", c.dir, err)
		}
		removed = true
	}
	if removed {
		if err := c.fs.SyncDir(segDir); err != nil {
			return fmt.Errorf("collection: open %s: %w", c.dir, err)
		}
	}
	return nil
}
