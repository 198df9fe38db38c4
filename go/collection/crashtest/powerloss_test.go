package crashtest

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// batchLossBound is how old an acknowledged write must be for FsyncBatch
// to owe it to a power loss: many BatchIntervals (2 ms), so a slow machine
// does not fail the test, and still far less than the whole run.
const batchLossBound = 300 * time.Millisecond

// lowerBound says which acknowledgements bind after a power loss at the
// moment cutAt, with the first acked events of events seen before it.
func lowerBound(fsync collection.Fsync, events []Event, acked int, cutAt time.Time) func(int) bool {
	if fsync == collection.FsyncAlways {
		return nil
	}
	// Everything acknowledged before a checkpoint began is in its snapshot.
	attemptAt := map[uint64]int{}
	lastCheckpoint := 0
	for i, ev := range events[:acked] {
		if ev.Attempt != nil {
			if ev.Attempt.Kind == KindCheckpoint {
				attemptAt[ev.Attempt.ID] = i
			}
		} else if at, ok := attemptAt[ev.Acked]; ok {
			lastCheckpoint = max(lastCheckpoint, at)
		}
	}
	return func(i int) bool {
		if i < lastCheckpoint {
			return true
		}
		return fsync == collection.FsyncBatch && events[i].At.Before(cutAt.Add(-batchLossBound))
	}
}

// powerLoss runs a workload on memfs and, while it runs, cuts the power
// cuts times (CrashClone keeping none or a random prefix of the unsynced
// operations), recovering and verifying each.
func powerLoss(t *testing.T, seed uint64, fsync collection.Fsync, quant hnsw.Quantization, cuts int) Tally {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	fs := memfs.NewWithOptions(memfs.Options{WriteUnit: 512})
	w := Workload{Seed: seed, Workers: 3, Ops: 80, Dim: 8, Quant: quant, Fsync: fsync,
		CheckpointEvery: 15 * time.Millisecond, CheckpointBytes: 16 << 10, SegmentBytes: 8 << 10, Readers: 1}
	c, err := w.OpenOrCreate(fs, "/col")
	if err != nil {
		t.Fatal(err)
	}
	j, _ := NewJournal("", false)
	done := make(chan error, 1)
	var finished atomic.Bool
	go func() {
		err := w.Run(c, j)
		finished.Store(true)
		done <- err
	}()
	var tally Tally
	seen := 0
	for cut := range cuts {
		// Each cut waits for the workload to have moved on since the last
		// one (or to have finished), so that however slow the machine, the
		// cuts do not all fall before the first write.
		for len(j.Events()) <= seen && !finished.Load() {
			time.Sleep(100 * time.Microsecond)
		}
		seen = len(j.Events())
		time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
		cutAt := time.Now()
		acked := len(j.Events())
		var keep func(int) bool
		kept := "none"
		if cut%2 == 1 {
			n := rng.IntN(len(fs.Pending()) + 1)
			keep, kept = memfs.KeepPrefix(n), "a prefix"
		}
		clone := fs.CrashClone(keep)
		events := j.Events()
		cutSpec := Cut{Acked: acked, Attempted: len(events), Lower: lowerBound(fsync, events, acked, cutAt)}
		got, err := collection.Open("/col", collection.Tuning{FS: clone, CheckpointBytes: -1})
		if err != nil {
			t.Fatalf("seed %d fsync %s cut %d (keeping %s of the unsynced operations): recovery: %v", seed, fsync, cut, kept, err)
		}
		_, rep, err := Verify(got, Model{}, events, cutSpec)
		got.Close()
		if err != nil {
			t.Fatalf("seed %d fsync %s quant %s cut %d (keeping %s of the unsynced operations): %v", seed, fsync, quant, cut, kept, err)
		}
		tally.add(rep)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return tally
}

// TestPowerLossKeepsEveryAcknowledgedWrite cuts the power during a
// concurrent workload under each fsync policy: FsyncAlways loses no
// acknowledged write; FsyncBatch only those of the last moments; FsyncNever
// only those since the last checkpoint.
func TestPowerLossKeepsEveryAcknowledgedWrite(t *testing.T) {
	runs := tier(2, 10, 60)
	var total Tally
	for _, fsync := range []collection.Fsync{collection.FsyncAlways, collection.FsyncBatch, collection.FsyncNever} {
		for seed := range uint64(runs) {
			total.Merge(powerLoss(t, seed+1, fsync, hnsw.QuantNone, 12))
		}
	}
	checkTally(t, total)
}

// TestPowerLossSQ8KeepsEveryAcknowledgedWrite is the same with SQ8.
func TestPowerLossSQ8KeepsEveryAcknowledgedWrite(t *testing.T) {
	runs := tier(2, 10, 60)
	var total Tally
	for seed := range uint64(runs) {
		total.Merge(powerLoss(t, seed+1, collection.FsyncAlways, hnsw.QuantSQ8, 12))
	}
	checkTally(t, total)
	if total.Kills != 12*runs {
		t.Fatalf("%d power cuts verified, want %d", total.Kills, 12*runs)
	}
}
