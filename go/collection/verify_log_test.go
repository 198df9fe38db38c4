package collection

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/errkind"
)

// coveredLogCollection writes 600 points in single-row records over
// several log segments, checkpoints, writes 20 more and stops as a crash
// would: the first segments hold only records the snapshot covers.
func coveredLogCollection(t *testing.T) (string, model, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1, VacuumRatio: -1, SegmentBytes: 16 << 10})
	rng := rand.New(rand.NewPCG(24, 1))
	m := model{}
	for i := range 620 {
		vec := randomVectors(rng, 1)
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), vec, nil); err != nil {
			t.Fatal(err)
		}
		m[uint64(i)] = entry{vec: vec, doc: "{}"}
		if i == 599 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.abandon()
	segs := walSegments(t, dir)
	if len(segs) < 3 {
		t.Fatalf("the log has %d segments, want 3 or more", len(segs))
	}
	return dir, m, segs
}

// TestOpenSkipsTheCoveredLog: Open reads the log from the snapshot, not
// from the oldest segment kept for a fallback, so a record damaged in a
// covered segment no longer fails it; the verifier then finds the damage
// (ErrCorrupt naming the segment; reads and writes refused, nothing
// deleted), as Open found it before, and VerifyOnOpen still refuses to
// open. An intact collection reopens with every point and ends verified.
func TestOpenSkipsTheCoveredLog(t *testing.T) {
	dir, m, _ := coveredLogCollection(t)
	c := mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	if err := c.WaitVerified(); err != nil {
		t.Fatalf("intact log: %v", err)
	}
	if r := c.Info().Recovery; r.Replayed != 20 {
		t.Fatalf("replayed %d records, want the 20 after the snapshot", r.Replayed)
	}
	checkModel(t, c, m)
	c.abandon()

	segs := walSegments(t, dir)
	flipByte(t, segs[0], 16+16+2) // the first record's payload
	before := listTree(t, dir)
	c, err := Open(dir, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatalf("Open read the covered log: %v", err)
	}
	err = c.WaitVerified()
	if !errors.Is(err, ErrCorrupt) || errkind.Of(err) != errkind.Corrupt ||
		!strings.Contains(err.Error(), filepath.Base(segs[0])) || !strings.Contains(err.Error(), "log before snapshot") {
		t.Fatalf("WaitVerified: %v, want ErrCorrupt naming the log segment", err)
	}
	if in := c.Info(); in.Verification != VerifyFailed {
		t.Fatalf("verification %q", in.Verification)
	}
	if err := c.Upsert(IntIDs([]uint64{1}), m[0].vec, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Upsert after a failed verification: %v", err)
	}
	if err := c.Close(); err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	if after := listTree(t, dir); !sameNames(before, after) {
		t.Fatalf("files changed:\nbefore %v\nafter  %v", before, after)
	}
	if c, err := Open(dir, Tuning{CheckpointBytes: -1, VerifyOnOpen: true}); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			c.Close()
		}
		t.Fatalf("VerifyOnOpen of a damaged covered log: %v, want ErrCorrupt", err)
	}
}
