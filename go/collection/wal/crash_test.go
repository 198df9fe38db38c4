package wal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/vfs/memfs"
)

// powerLossScript drives a writer through appends, syncs, rotations and
// removals on a memfs that tears writes every 5 bytes, and after every step
// calls check with what must survive a crash then.
func powerLossScript(t *testing.T, check func(fs *memfs.FS, checkpoint, synced, appended uint64, step string)) {
	rng := rand.New(rand.NewPCG(5, 6))
	fs := memfs.NewWithOptions(memfs.Options{WriteUnit: 5})
	w, err := NewWriter(fs, logDir, 1, WriterOptions{SegmentBytes: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var checkpoint, synced uint64
	for step := range 150 {
		var what string
		switch r := rng.IntN(10); {
		case r < 6:
			n := 1 + rng.IntN(3)
			var batch [][]byte
			for i := range n {
				batch = append(batch, payloadFor(w.NextSeq()+uint64(i)))
			}
			if _, err := w.Append(batch); err != nil {
				t.Fatal(err)
			}
			what = fmt.Sprintf("append %d", n)
		case r < 9:
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			synced = w.NextSeq() - 1
			what = "sync"
		default:
			// A checkpoint covers only synced records.
			checkpoint = synced
			if err := w.RemoveThrough(checkpoint); err != nil {
				t.Fatal(err)
			}
			what = fmt.Sprintf("remove through %d", checkpoint)
		}
		check(fs, checkpoint, synced, w.NextSeq()-1, fmt.Sprintf("step %d (%s)", step, what))
	}
}

// TestSyncedRecordsSurvivePowerLoss cuts the power after every step of
// the script, keeping every prefix of the writes not yet synced: Replay
// must succeed with every synced record, no record that was not appended,
// and must leave a log the next writer can continue.
func TestSyncedRecordsSurvivePowerLoss(t *testing.T) {
	crashes := 0
	powerLossScript(t, func(fs *memfs.FS, checkpoint, synced, appended uint64, step string) {
		pending := len(fs.Pending())
		for k := 0; k <= pending; k++ {
			crashes++
			c := fs.CrashClone(memfs.KeepPrefix(k))
			recs, info, err := replayAll(c, logDir, checkpoint, ReplayOptions{})
			if err != nil {
				t.Fatalf("%s, keeping %d of %d pending: %v", step, k, pending, err)
			}
			// The log may hold nothing after the checkpoint.
			end := max(checkpoint, info.LastSeq)
			if end < synced || end > appended {
				t.Fatalf("%s, keeping %d of %d pending: log ends at %d, synced %d, appended %d",
					step, k, pending, info.LastSeq, synced, appended)
			}
			if err := recordsAre(recs, checkpoint+1, end); err != nil {
				t.Fatalf("%s, keeping %d of %d pending: %v", step, k, pending, err)
			}
			w, err := NewWriter(c, logDir, end+1, WriterOptions{SegmentBytes: 120})
			if err != nil {
				t.Fatalf("%s, keeping %d: NewWriter: %v", step, k, err)
			}
			appendRange(t, w, end+1, end+3, 3)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs, _, err = replayAll(c, logDir, checkpoint, ReplayOptions{})
			if err != nil || recordsAre(recs, checkpoint+1, end+3) != nil {
				t.Fatalf("%s, keeping %d: the continued log replays as %d records, %v", step, k, len(recs), err)
			}
		}
	})
	t.Logf("%d simulated power losses", crashes)
}

// TestReorderedWritesNeverYieldWrongRecords keeps random subsets of the
// pending writes, as a disk that reorders them may: Replay may refuse the
// log as corrupt, but must never lose a synced record or return one that
// was not written, and Repair must always recover the synced records.
func TestReorderedWritesNeverYieldWrongRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	refused := 0
	powerLossScript(t, func(fs *memfs.FS, checkpoint, synced, appended uint64, step string) {
		for range 10 {
			mask := rng.Uint64()
			keep := func(op int) bool { return mask>>(op%64)&1 == 1 }
			c := fs.CrashClone(keep)
			recs, info, err := replayAll(c, logDir, checkpoint, ReplayOptions{})
			switch {
			case errors.Is(err, ErrCorrupt):
				refused++
				recs, info, err = replayAll(c, logDir, checkpoint, ReplayOptions{Repair: true})
				if err != nil {
					t.Fatalf("%s, mask %x: repair: %v", step, mask, err)
				}
			case err != nil:
				t.Fatalf("%s, mask %x: %v", step, mask, err)
			}
			end := max(checkpoint, info.LastSeq)
			if end < synced || end > appended {
				t.Fatalf("%s, mask %x: log ends at %d, synced %d, appended %d", step, mask, info.LastSeq, synced, appended)
			}
			// Repair may salvage unsynced records behind a lost one; it
			// must say which it lost, and none of them may be synced.
			if err := salvagedAre(recs, info, checkpoint+1, end, info.Lost...); err != nil {
				t.Fatalf("%s, mask %x: %v", step, mask, err)
			}
			for _, r := range info.Lost {
				if r.From <= synced {
					t.Fatalf("%s, mask %x: repair lost %v, but records through %d were synced", step, mask, r, synced)
				}
			}
		}
	})
	if refused == 0 {
		t.Fatal("no reordering produced a refused log; the test does not reach Repair")
	}
}
