package crashtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/vfs"
)

// LiveOnlySegment returns the path of a segment file that snapshot live
// of dir names and none of the snapshots older does, or "".
func LiveOnlySegment(fsys vfs.FS, dir string, live uint64, older []string) string {
	m, err := snapshot.ReadManifest(fsys, filepath.Join(dir, "snapshots", fmt.Sprintf("%016x", live)))
	if err != nil {
		return ""
	}
	shared := map[string]bool{}
	for _, name := range older {
		if o, err := snapshot.ReadManifest(fsys, filepath.Join(dir, "snapshots", name)); err == nil {
			for _, v := range o.Vectors {
				for _, s := range v.Segments {
					shared[s.File] = true
				}
			}
		}
	}
	for _, v := range m.Vectors {
		for _, s := range slices.Backward(v.Segments) {
			if !shared[s.File] {
				return filepath.Join(dir, snapshot.SegmentsDir, s.File)
			}
		}
	}
	return ""
}

// CheckFallback checks the invariant the previous snapshot exists for: in
// any state a crash leaves (checkpoint cleanup included), at most two
// snapshots are left once recovered, and damage to the snapshot CURRENT
// names costs no acknowledged write, since Open falls back to the previous
// snapshot and replays the log since it. It works on a copy of dir and
// skips the damage when there is no previous snapshot yet (only snapshot
// 0 was ever written).
func CheckFallback(dir string, base Model, events []Event, cut Cut) error {
	check := dir + ".fallback"
	os.RemoveAll(check)
	defer os.RemoveAll(check)
	if err := copyTree(dir, check); err != nil {
		return err
	}
	live, err := snapshot.ReadCurrent(vfs.Default, check)
	if err != nil {
		return fmt.Errorf("%w: reading CURRENT: %v", ErrLost, err)
	}
	names, err := os.ReadDir(filepath.Join(check, "snapshots"))
	if err != nil {
		return err
	}
	var older []string
	for _, e := range names {
		var seq uint64
		if _, err := fmt.Sscanf(e.Name(), "%016x", &seq); err != nil || len(e.Name()) != 16 || seq >= live {
			continue
		}
		if _, err := snapshot.ReadManifest(vfs.Default, filepath.Join(check, "snapshots", e.Name())); err == nil {
			older = append(older, e.Name())
		}
	}
	if len(older) == 0 {
		return nil
	}
	// The damage lands in a file the live snapshot alone has: the newest
	// segment, which its checkpoint wrote (one both snapshots name has no
	// fallback, package snapshot), else its state run, else its MANIFEST.
	index := filepath.Join(check, "snapshots", fmt.Sprintf("%016x", live), snapshot.ManifestName)
	if run := filepath.Join(check, snapshot.SegmentsDir, snapshot.StateRunName(live)); fileExists(run) {
		index = run
	}
	if seg := LiveOnlySegment(vfs.Default, check, live, older); seg != "" {
		index = seg
	}
	data, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	data[30] ^= 0x10 // in the header, which its CRC covers
	if err := os.WriteFile(index, data, 0o644); err != nil {
		return err
	}
	c, err := collection.Open(check, collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		return fmt.Errorf("%w: live snapshot %d damaged, previous ones %v: recovery did not fall back: %v", ErrLost, live, older, err)
	}
	defer c.Close()
	info := c.Info()
	if info.Recovery.Fallback == nil {
		return fmt.Errorf("%w: live snapshot %d damaged, but Open reports no fallback", ErrLost, live)
	}
	left, err := os.ReadDir(filepath.Join(check, "snapshots"))
	if err != nil {
		return err
	}
	kept := slices.DeleteFunc(left, func(e os.DirEntry) bool { return filepath.Ext(e.Name()) != "" })
	if len(kept) > 2 {
		return fmt.Errorf("%w: %d snapshots left after recovery, want the live one and at most one previous", ErrLost, len(kept))
	}
	if _, _, err := Verify(c, base, events, cut); err != nil {
		return fmt.Errorf("after falling back from snapshot %d: %w", live, err)
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
