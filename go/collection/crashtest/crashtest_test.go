package crashtest

import (
	"errors"
	"github.com/strata-db/strata/go/vfs/memfs"
	"os"
	"regexp"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
)

func TestMain(m *testing.M) {
	RunChildIfAsked()
	os.Exit(m.Run())
}

func testDriver() *Driver { return &Driver{Command: []string{os.Args[0], "-test.run=^$"}} }

// checkTally logs what a test's crashes verified and fails it if any
// failed or none verified an acknowledged write.
func checkTally(t *testing.T, total Tally) {
	t.Helper()
	t.Log(total)
	if len(total.Failures) > 0 {
		t.Fatalf("%d failures", len(total.Failures))
	}
	if total.Acked == 0 {
		t.Fatal("no acknowledged write was verified")
	}
}

// TestKilledWorkloadLosesNoAcknowledgedWrite SIGKILLs workload processes
// at random times, inside WAL and snapshot writes (torn at a byte offset),
// at steps of checkpoints and recoveries, and keeps crashing one directory
// in a chain. Sizes: see tier (ci: 200 + 100 + 100 + chain of 50).
func TestKilledWorkloadLosesNoAcknowledgedWrite(t *testing.T) {
	d := testDriver()
	root := t.TempDir()
	var total Tally
	total.Merge(d.Series(root, tier(4, 200, 200), 1_000, ModeTime, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Series(root, tier(4, 100, 100), 2_000, ModeByte, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Series(root, tier(4, 100, 100), 3_000, ModeStep, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Series(root, tier(1, 10, 10), 4_000, ModeEnd, collection.FsyncNever, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Chain(root+"/chain", tier(8, 50, 50), 5_000, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	checkTally(t, total)
}

// TestKilledInsideAMergeLosesNoAcknowledgedWrite SIGKILLs workloads at
// steps and bytes of the idle merge's checkpoint (its own manifest
// switch, behind a marker record) and its cleanup; first it checks, in
// process, that the workload does merge and persist the merge once idle.
func TestKilledInsideAMergeLosesNoAcknowledgedWrite(t *testing.T) {
	w := RandomCase(12_000, ModeStep, collection.FsyncAlways, hnsw.QuantNone).Workload
	w.Merge, w.Ops = true, 15 // as MergeSeries
	// A KillFS that never kills counts the steps after the writes: the
	// series' step kills (1-40) must all fall inside the merge phase.
	kfs := NewKillFS(memfs.New(), regexp.MustCompile(PatternSnapshot), 1<<62, 1<<62)
	kfs.Disarm()
	w.idle = kfs.Arm
	c, err := w.OpenOrCreate(kfs, "/col")
	if err != nil {
		t.Fatal(err)
	}
	j, _ := NewJournal("", false)
	if err := w.Run(c, j); err != nil {
		t.Fatal(err)
	}
	in := c.Info()
	if in.Vacuums == 0 || in.Seq != in.LastCheckpoint {
		t.Fatalf("the workload did not merge and persist the merge: %d merges, seq %d, checkpoint %d",
			in.Vacuums, in.Seq, in.LastCheckpoint)
	}
	kfs.mu.Lock()
	steps, bytes := kfs.steps, kfs.bytes
	kfs.mu.Unlock()
	if steps < mergeKillSteps || bytes < mergeKillBytes {
		t.Fatalf("the merge phase took %d steps and wrote %d checkpoint bytes: kills at steps up to %d or bytes up to %d may land after it",
			steps, bytes, mergeKillSteps, mergeKillBytes)
	}
	t.Logf("merge phase: %d merges, %d steps, %d checkpoint bytes", in.Vacuums, steps, bytes)
	c.Close()
	d := testDriver()
	total := d.MergeSeries(t.TempDir(), tier(4, 20, 200), 12_000, collection.FsyncAlways, hnsw.QuantNone, testLog{t})
	checkTally(t, total)
}

// TestKilledTwoFieldWorkloadLosesNoPartialWrite SIGKILLs the multi-field
// workload (a dense, a multivector and a sparse field, UpdateVectors and
// DeleteVectors between whole-point upserts): after recovery every
// acknowledged write of each field is there, a partial write has
// changed only its field, and the indexes pass their integrity checks.
func TestKilledTwoFieldWorkloadLosesNoPartialWrite(t *testing.T) {
	d := testDriver()
	d.Fields = true
	root := t.TempDir()
	var total Tally
	total.Merge(d.Series(root, tier(3, 100, 100), 6_000, ModeTime, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Series(root, tier(3, 100, 100), 7_000, ModeByte, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Series(root, tier(2, 50, 100), 8_000, ModeStep, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	total.Merge(d.Chain(root+"/chain", tier(6, 30, 50), 9_000, collection.FsyncAlways, hnsw.QuantNone, testLog{t}))
	checkTally(t, total)
}

// TestVerifyCatchesLostAndPhantomWrites makes sure the checker can fail: a
// journal claiming an acknowledged write the collection lacks is a loss,
// a collection holding a write the journal never attempted a phantom.
func TestVerifyCatchesLostAndPhantomWrites(t *testing.T) {
	w := Workload{Seed: 1, Workers: 2, Ops: 20, Dim: 8, Fsync: collection.FsyncAlways, CheckpointBytes: -1}
	c, events, _, _ := verifiedRun(t, w)
	// The claimed write must leave id 3 present: an upsert that writes it
	// already expired (ExpiresAt) is as good as a delete, and op 999's is
	// one, so whenever the run's last op on id 3 deleted it nothing was lost.
	lostOp := uint64(999)
	for Expired(lostOp, 3) {
		lostOp++
	}
	lost := append(events[:len(events):len(events)],
		Event{Attempt: &Op{ID: lostOp, Worker: 0, Kind: KindUpsert, IDs: []uint64{3}}}, Event{Acked: lostOp})
	if _, _, err := Verify(c, Model{}, lost, Cut{Acked: len(lost), Attempted: len(lost)}); !errors.Is(err, ErrLost) {
		t.Fatalf("acknowledged write missing: %v, want ErrLost", err)
	}
	if _, _, err := Verify(c, Model{}, events, Cut{Acked: 0, Attempted: 0}); !errors.Is(err, ErrPhantom) {
		t.Fatalf("writes never attempted: %v, want ErrPhantom", err)
	}
}

// verifiedRun runs w on a fresh in-memory collection, checks that Verify
// passes what it left untouched, and returns the collection (closed when
// the test ends), the journal's events, the cut of all of them and the
// model Verify built: for tests that the checker fails on a change made
// behind the journal's back.
func verifiedRun(t *testing.T, w Workload) (*collection.Collection, []Event, Cut, Model) {
	t.Helper()
	c, err := w.OpenOrCreate(memfs.New(), "/col")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	j, _ := NewJournal("", false)
	if err := w.Run(c, j); err != nil {
		t.Fatal(err)
	}
	events := j.Events()
	all := Cut{Acked: len(events), Attempted: len(events)}
	model, _, err := Verify(c, Model{}, events, all)
	if err != nil {
		t.Fatalf("untouched run: %v", err)
	}
	return c, events, all, model
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(string(p))
	return len(p), nil
}

// TestVerifyCatchesALostPartialWrite makes sure the two-field checker can
// fail: a multivector value dropped or added behind the journal's back is
// a difference from every state the journal allows.
func TestVerifyCatchesALostPartialWrite(t *testing.T) {
	w := Workload{Seed: 2, Workers: 1, Ops: 40, Dim: 8, Fsync: collection.FsyncAlways, CheckpointBytes: -1, Fields: true}
	c, events, all, model := verifiedRun(t, w)
	// Which points keep a value depends on the order the writer met its
	// ids (a map's): change one point's field behind the journal's back,
	// dropping its value if it has one, else giving it one.
	if len(model) == 0 {
		t.Fatal("the workload left no point")
	}
	var victim uint64
	for id := range model {
		victim = id
		break
	}
	if model[victim].HasExtra {
		if _, err := c.DeleteVectors([]collection.ID{ExternalID(victim)}, []string{ExtraField}); err != nil {
			t.Fatal(err)
		}
	} else {
		extra := collection.FieldValues{Vectors: make([]float32, ExtraDim), Counts: []int{1}}
		if _, err := c.UpdateVectors([]collection.ID{ExternalID(victim)}, map[string]collection.FieldValues{ExtraField: extra}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Verify(c, Model{}, events, all); !errors.Is(err, ErrLost) {
		t.Fatalf("a multivector value changed behind the journal's back: %v, want ErrLost", err)
	}
}

// TestVerifyCatchesAChangedSparseValue makes sure the multi-field checker
// can fail on the sparse field: a sparse value dropped, or replaced by
// another, behind the journal's back is a difference from every state
// the journal allows.
func TestVerifyCatchesAChangedSparseValue(t *testing.T) {
	for _, drop := range []bool{true, false} {
		w := Workload{Seed: 3, Workers: 1, Ops: 40, Dim: 8, Fsync: collection.FsyncAlways, CheckpointBytes: -1, Fields: true}
		c, events, all, model := verifiedRun(t, w)
		var victim uint64
		found := false
		for id, e := range model {
			if e.HasSparse {
				victim, found = id, true
				break
			}
		}
		if !found {
			t.Fatal("the workload left no point with a sparse value")
		}
		var err error
		if drop {
			_, err = c.DeleteVectors([]collection.ID{ExternalID(victim)}, []string{SparseField})
		} else {
			kw := collection.FieldValues{Counts: []int{1}, Indices: []uint32{999}, Vectors: []float32{0.25}}
			_, err = c.UpdateVectors([]collection.ID{ExternalID(victim)}, map[string]collection.FieldValues{SparseField: kw})
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Verify(c, Model{}, events, all); !errors.Is(err, ErrLost) {
			t.Fatalf("drop %v: a sparse value changed behind the journal's back: %v, want ErrLost", drop, err)
		}
	}
}

// TestVerifyCatchesAChangedExpiry makes sure the checker can fail on
// expiring points: a point whose expiry is cleared behind the journal's
// back (a rewrite of it with its own vector and document) differs from
// every state the journal allows, and the workload writes both points
// that expire and points that expired before they were written.
func TestVerifyCatchesAChangedExpiry(t *testing.T) {
	w := Workload{Seed: 4, Workers: 1, Ops: 60, Dim: 8, Fsync: collection.FsyncAlways, CheckpointBytes: -1}
	c, events, all, model := verifiedRun(t, w)
	expired := 0
	for _, ev := range events {
		if op := ev.Attempt; op != nil && op.Kind == KindUpsert {
			for _, id := range op.IDs {
				if Expired(op.ID, id) {
					expired++
				}
			}
		}
	}
	var victim uint64
	found := false
	for id, e := range model {
		if e.Expires != 0 {
			victim, found = id, true
			break
		}
	}
	if !found || expired == 0 {
		t.Fatalf("the workload wrote %d expired points and left none expiring (found %v)", expired, found)
	}
	e := model[victim]
	doc := parseDocument(Document(e.DocOp, victim, 0, e.DocKind))
	if err := c.Upsert([]collection.ID{ExternalID(victim)}, Vector(e.VecOp, victim, w.Dim, nil), []meta.Document{doc}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Verify(c, Model{}, events, all); !errors.Is(err, ErrLost) {
		t.Fatalf("an expiry cleared behind the journal's back: %v, want ErrLost", err)
	}
}
