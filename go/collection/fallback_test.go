package collection

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// twoCheckpoints writes points, checkpoints, writes more, checkpoints
// again, writes a few more and stops as a crash would: a live snapshot, the
// previous one, and the log since the previous one.
func twoCheckpoints(t *testing.T) (string, model, uint64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1, VacuumRatio: -1})
	rng := rand.New(rand.NewPCG(12, 12))
	m := model{}
	for i := range 15 {
		vec := randomVectors(rng, 1)
		doc := randomDoc(rng)
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), vec, docsOf(t, [][]byte{doc})); err != nil {
			t.Fatal(err)
		}
		m[uint64(i)] = entry{vec: vec, doc: canonical(t, doc)}
		if i == 4 || i == 9 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := c.Info().LastCheckpoint
	c.abandon()
	return dir, m, live
}

// newestSegment is the path of the last segment file of the first field
// in snapshot seq: the one its checkpoint wrote.
func newestSegment(t *testing.T, dir string, seq uint64) string {
	t.Helper()
	m, err := snapshot.ReadManifest(vfs.Default, snapshotPath(dir, seq))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Vectors) == 0 || len(m.Vectors[0].Segments) == 0 {
		t.Fatalf("snapshot %d names no segment", seq)
	}
	segs := m.Vectors[0].Segments
	return filepath.Join(dir, snapshot.SegmentsDir, segs[len(segs)-1].File)
}

// newestStateRun is the state run the checkpoint of seq wrote.
func newestStateRun(t *testing.T, dir string, seq uint64) string {
	t.Helper()
	m, err := snapshot.ReadManifest(vfs.Default, snapshotPath(dir, seq))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.State); n == 0 || m.State[n-1].File != snapshot.StateRunName(seq) {
		t.Fatalf("snapshot %d wrote no state run: %v", seq, m.State)
	}
	return filepath.Join(dir, snapshot.SegmentsDir, snapshot.StateRunName(seq))
}

func flipByte(t *testing.T, path string, off int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off%len(data)] ^= 0x08
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenFallsBackToThePreviousSnapshot: one flipped bit in the segment
// the live checkpoint wrote (index.hnsw before segments), the state run
// it wrote (meta.idx before state runs), MANIFEST or CURRENT made the collection unopenable, and repair could
// not help. The previous snapshot and the log since it hold every point.
// (A segment both snapshots name has no fallback: see package snapshot.)
func TestOpenFallsBackToThePreviousSnapshot(t *testing.T) {
	// Both ways of opening: the damage here is in what Open reads and
	// checks either way (a segment's header, not its deferred vectors:
	// TestDeferredCRCMismatchFailsTheCollection).
	for _, verify := range []bool{false, true} {
		for _, damaged := range []string{"segment", "state", snapshot.ManifestName, snapshot.CurrentName} {
			t.Run(fmt.Sprintf("%s/verify-on-open=%v", damaged, verify), func(t *testing.T) {
				dir, m, live := twoCheckpoints(t)
				path := filepath.Join(snapshotPath(dir, live), damaged)
				switch damaged {
				case snapshot.CurrentName:
					path = filepath.Join(dir, damaged)
				case "segment":
					path = newestSegment(t, dir, live)
				case "state":
					path = newestStateRun(t, dir, live)
				}
				flipByte(t, path, 30)
				c := mustOpen(t, dir, Tuning{VerifyOnOpen: verify})
				fb := c.Info().Recovery.Fallback
				// With CURRENT damaged the newest snapshot that loads is the
				// live one; otherwise it is the previous one.
				if fb == nil || fb.Reason == "" || fb.CurrentBroken != (damaged == snapshot.CurrentName) ||
					(fb.CurrentBroken && fb.To != live) || (!fb.CurrentBroken && (fb.From != live || fb.To >= live)) {
					t.Fatalf("fallback %+v (live snapshot was %d)", fb, live)
				}
				if d := c.Describe()["recovery"].(map[string]any)["fallback"]; d == nil {
					t.Fatal("Describe does not show the fallback")
				}
				checkModel(t, c, m)
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				// The damage was set aside as evidence, CURRENT points at a
				// snapshot that loads, and the next open needs no fallback.
				evidence := snapshotPath(dir, live) + brokenSuffix
				if damaged == snapshot.CurrentName {
					evidence = filepath.Join(dir, snapshot.CurrentName+brokenSuffix)
				}
				if _, err := os.Stat(evidence); err != nil {
					t.Fatalf("no evidence kept: %v", err)
				}
				c = mustOpen(t, dir, Tuning{VerifyOnOpen: verify})
				if fb := c.Info().Recovery.Fallback; fb != nil {
					t.Fatalf("second open fell back again: %+v", fb)
				}
				checkModel(t, c, m)
				if err := c.WaitVerified(); err != nil {
					t.Fatal(err)
				}
				c.Close()
			})
		}
	}
}

// TestCheckpointKeepsExactlyOnePreviousSnapshot: the disk holds the live
// snapshot and one previous one, never more.
func TestCheckpointKeepsExactlyOnePreviousSnapshot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1, VacuumRatio: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 4 {
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), randomVectors(rng, 1), nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		seqs, err := snapshotSeqs(c.fs, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) != 2 || seqs[1] != c.Info().LastCheckpoint || seqs[0] >= seqs[1] {
			t.Fatalf("after checkpoint %d: snapshots %v", i+1, seqs)
		}
	}
}

// TestOpenWithNoSnapshotToFallBackOnFails: damage to the only snapshot is
// still refused as corruption (indexfile.ErrCorrupt, as before).
func TestOpenWithNoSnapshotToFallBackOnFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "format1")
	copyTree(t, filepath.Join("testdata", "format1"), dir)
	flipByte(t, filepath.Join(snapshotPath(dir, 3), indexFileName), 100)
	for _, verify := range []bool{false, true} {
		if _, err := Open(dir, Tuning{VerifyOnOpen: verify}); !errors.Is(err, indexfile.ErrCorrupt) {
			t.Fatalf("VerifyOnOpen %v: got %v, want indexfile.ErrCorrupt", verify, err)
		}
	}
}
