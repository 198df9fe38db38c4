package collection

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWritesGoOnWhileACheckpointSeals prevents a checkpoint from holding
// writes while it builds the tails into the graphs and seals them: an
// upsert of new points, an overwrite of rows not built yet and a delete
// are acknowledged while a checkpoint is stopped between its fence and
// its seal; the graphs it sealed hold exactly the writes before the
// fence (the overwritten rows in their old version, the deleted points
// still there), and after a crash and reopen the collection holds every
// write, the later ones replayed from the log.
func TestWritesGoOnWhileACheckpointSeals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(3, 3))
	m := model{}
	upsert := func(from, n int) error {
		ids := make([]ID, n)
		raw := make([][]byte, n)
		vecs := randomVectors(rng, n)
		for i := range ids {
			ids[i] = IntID(uint64(from + i))
			raw[i] = fmt.Appendf(nil, `{"n":%d,"at":%d}`, from+i, len(m))
		}
		if err := c.Upsert(ids, vecs, docsOf(t, raw)); err != nil {
			return err
		}
		for i, id := range ids {
			m[id.Int()] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: canonical(t, raw[i])}
		}
		return nil
	}
	remove := func(from, n int) error {
		ids := make([]ID, n)
		for i := range ids {
			ids[i] = IntID(uint64(from + i))
		}
		if _, err := c.Delete(ids); err != nil {
			return err
		}
		for _, id := range ids {
			delete(m, id.Int())
		}
		return nil
	}
	if err := upsert(0, 300); err != nil {
		t.Fatal(err)
	}
	c.waitIndexed()
	// With the builder stopped, the rows written from here on stay in the
	// tail: the checkpoint builds those before its fence itself, and
	// those after it are left to the tail, deterministically.
	c.stopBuilder()
	if err := upsert(300, 200); err != nil {
		t.Fatal(err)
	}
	atFence := m.clone()

	sealing, release := make(chan struct{}), make(chan struct{})
	c.hooks.checkpointSealing = func() {
		close(sealing)
		<-release
	}
	checkpointed := make(chan error, 1)
	go func() { checkpointed <- c.Checkpoint() }()
	<-sealing
	seq := c.applied.Load()
	writes := []func() error{
		func() error { return upsert(500, 100) }, // new points
		func() error { return upsert(300, 50) },  // rows the seal builds in their old version
		func() error { return remove(0, 10) },    // points in the graphs
	}
	for i, w := range writes {
		acked := make(chan error, 1)
		go func() { acked <- w() }()
		select {
		case err := <-acked:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			close(release)
			t.Fatalf("write %d waited a minute for a checkpoint between its fence and its seal", i)
		}
	}
	close(release)
	if err := <-checkpointed; err != nil {
		t.Fatal(err)
	}
	if got := c.lastCheckpoint.Load(); got != seq {
		t.Fatalf("the checkpoint is of record %d, the last applied at its fence %d", got, seq)
	}

	// What the checkpoint sealed is the state at its fence.
	f := c.fields.Load().def
	if f.index.Active().Len() != 0 {
		t.Fatalf("the active graph holds %d points after the checkpoint; the later writes belong to the tail", f.index.Active().Len())
	}
	keys := slices.Sorted(func(yield func(uint64) bool) {
		for k := range atFence {
			if !yield(k) {
				return
			}
		}
	})
	got := make([]float32, len(keys)*testDim)
	if err := f.index.GetVectors(keys, got); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if !slices.Equal(got[i*testDim:(i+1)*testDim], atFence[k].vec) {
			t.Fatalf("key %d: the sealed graphs hold %v, the write before the fence %v", k, got[i*testDim:(i+1)*testDim], atFence[k].vec)
		}
	}
	for k := uint64(500); k < 600; k++ {
		if f.index.Contains(k) {
			t.Fatalf("key %d, written after the fence, is in the sealed graphs", k)
		}
	}
	checkModel(t, c, m)

	c.abandon()
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	defer c.Close()
	if r := c.recovery; r.SnapshotSeq != seq || r.Replayed != len(writes) {
		t.Fatalf("reopened from snapshot %d with %d records replayed, want %d and %d", r.SnapshotSeq, r.Replayed, seq, len(writes))
	}
	checkModel(t, c, m)
}
