package collection

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/vfs"
)

// TestCheckpointWritesOnlyTheChangedState prevents a checkpoint from
// rewriting every document: after a large first checkpoint, one that
// follows a few writes writes a state run of those keys alone, and the
// runs, merged in tiers across many checkpoints and reopens, always give
// back exactly the model.
func TestCheckpointWritesOnlyTheChangedState(t *testing.T) {
	racetest.AnswersOnly(t)
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(24, 5))
	m := model{}
	upsert := func(ids []uint64) {
		t.Helper()
		vecs := randomVectors(rng, len(ids))
		raw := make([][]byte, len(ids))
		for i := range raw {
			raw[i] = randomDoc(rng)
		}
		if err := c.Upsert(IntIDs(ids), vecs, docsOf(t, raw)); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			m[id] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: canonical(t, raw[i])}
		}
	}
	const n = 2000
	all := make([]uint64, n)
	for i := range all {
		all[i] = uint64(i)
	}
	upsert(all)
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	manifest := func() snapshot.Manifest {
		t.Helper()
		mf, err := snapshot.ReadManifest(vfs.Default, snapshotPath(dir, c.lastCheckpoint.Load()))
		if err != nil {
			t.Fatal(err)
		}
		return mf
	}
	for round := range 60 {
		touched := map[uint64]bool{}
		var ids []uint64
		for range 1 + rng.IntN(20) {
			id := uint64(rng.IntN(n + 200))
			if !touched[id] {
				touched[id] = true
				ids = append(ids, id)
			}
		}
		upsert(ids)
		var gone []uint64
		for range rng.IntN(4) {
			id := uint64(rng.IntN(n + 200))
			gone = append(gone, id)
			touched[id] = true
			delete(m, id)
		}
		if _, err := c.Delete(IntIDs(gone)); err != nil {
			t.Fatal(err)
		}
		before := len(manifest().State)
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		runs := manifest().State
		newest := runs[len(runs)-1]
		// Without a merge, the new run holds the keys the round touched.
		if len(runs) == before+1 && newest.Entries != len(touched) {
			t.Fatalf("round %d: the new state run holds %d entries, the round touched %d keys", round, newest.Entries, len(touched))
		}
		if newest.Entries > n/2 && len(runs) > 1 {
			t.Fatalf("round %d: a run of %d entries beside older runs %v", round, newest.Entries, runs)
		}
		if len(runs) > 3*6 {
			t.Fatalf("round %d: %d state runs: the tiers do not merge", round, len(runs))
		}
		if round%9 == 8 {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
			checkModel(t, c, m)
		}
	}
	if len(manifest().State) < 2 {
		t.Fatalf("state runs %v: every checkpoint rewrote the whole state", manifest().State)
	}
	checkModel(t, c, m)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPlanStateMergeKeepsTiers(t *testing.T) {
	var runs []snapshot.StateFile
	for i := range 200 {
		from := planStateMerge(runs, 10)
		entries := 10
		for _, r := range runs[from:] {
			entries += r.Entries
		}
		if from == 0 {
			entries = 1000 + 10*i // a whole run: the collection's live keys
		}
		runs = append(runs[:from:from], snapshot.StateFile{Entries: entries})
		for j := 1; j < len(runs); j++ {
			if stateTier(runs[j].Entries) > stateTier(runs[j-1].Entries) {
				t.Fatalf("checkpoint %d: run %d of tier %d after one of tier %d: %v", i, j,
					stateTier(runs[j].Entries), stateTier(runs[j-1].Entries), runs)
			}
		}
		if len(runs) > 12 {
			t.Fatalf("checkpoint %d: %d runs", i, len(runs))
		}
	}
}
