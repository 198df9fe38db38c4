package collection

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
)

// TestBackgroundCheckpointVacuumsTombstones: an overwrite-heavy collection
// must not keep every overwritten vector forever. Once tombstones pass the
// ratio, the collection compacts the index and checkpoints, so both memory
// and the snapshot lose them, and nothing live changes.
func TestBackgroundCheckpointVacuumsTombstones(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, tuning := range []Tuning{
		// Checkpoints are kicked by log volume: a tiny threshold makes every
		// group kick one, and the vacuum runs before it.
		{CheckpointBytes: 1, Threads: 2},                  // default ratio 0.2
		{CheckpointBytes: 1, VacuumRatio: -1, Threads: 2}, // never
		// No checkpoint by volume: the once-a-second look finds them.
		{CheckpointBytes: -1, Threads: 2},
	} {
		dir := t.TempDir()
		ratio := tuning.VacuumRatio
		c := mustCreate(t, dir, tuning)
		rng := rand.New(rand.NewPCG(3, 4))
		m := model{}
		// Each write reaches the graph before the next: one build batch
		// drops the rows a later row of the same key superseded, so a
		// builder behind both the 3,000 and their 1,200 overwrites left 404
		// tombstones, not 1,500 (under load, on main too).
		upsert := func(ids []uint64) { upsertRandom(t, c, rng, m, ids); c.waitIndexed() }
		ids := idRange(3000)
		upsert(ids)
		// Overwrite 1,200 and delete 300: 1,500 tombstones of 4,500 nodes.
		upsert(ids[:1200])
		if _, err := c.Delete(IntIDs(ids[2700:])); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids[2700:] {
			delete(m, id)
		}
		// One more small write kicks a checkpoint after the tombstones exist.
		upsert([]uint64{5000})
		// Whether or not a kicked checkpoint vacuumed already, the loop's
		// look does once it is done (or, with vacuums off, does not). The
		// look counts the graph's tombstones: wait for the builder to have
		// put the deletions' there first (under load it lagged, and the look
		// saw 404 of 1,500 and did not vacuum).
		c.waitIndexed()
		c.lookAndWait()
		// A checkpoint at an unchanged sequence number writes nothing, and
		// the kicked one may have run before the builder had put the
		// deletions' tombstones in the graph, so before the vacuum: a write
		// after the look makes the checkpoint below write the compacted
		// index.
		upsert([]uint64{5001})
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		in := c.Info()
		// The vacuum may run between the overwrites and the deletions (each
		// group kicks a checkpoint), leaving fewer tombstones than trigger one.
		if ratio >= 0 && (in.Vacuums < 1 || in.Tombstones >= vacuumMinTombstones) {
			t.Fatalf("default ratio: %d vacuums, %d tombstones; want >= 1 and < %d", in.Vacuums, in.Tombstones, vacuumMinTombstones)
		}
		if ratio < 0 && (in.Vacuums != 0 || in.Tombstones != 1500) {
			t.Fatalf("vacuum off: %d vacuums, %d tombstones; want 0 and 1500", in.Vacuums, in.Tombstones)
		}
		checkModel(t, c, m)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// The snapshot holds the compacted index.
		c = mustOpen(t, dir, tuning)
		if got, want := c.Info().Tombstones, in.Tombstones; got != want {
			t.Errorf("after reopen: %d tombstones, want %d", got, want)
		}
		checkModel(t, c, m)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashAfterVacuumRecoversEverything: a vacuum changes only memory and
// then checkpoints; a crash after it (with writes after the checkpoint,
// and writes racing the rebuild) must recover the model from the
// compacted snapshot and the log.
func TestCrashAfterVacuumRecoversEverything(t *testing.T) {
	racetest.AnswersOnly(t)
	dir := t.TempDir()
	tuning := Tuning{CheckpointBytes: -1, Threads: 2}
	c := mustCreate(t, dir, tuning)
	rng := rand.New(rand.NewPCG(7, 8))
	m := model{}
	upsert := func(ids []uint64) { upsertRandom(t, c, rng, m, ids) }
	ids := idRange(4000)
	upsert(ids)
	// Keep overwriting in small groups while the checkpoint loop vacuums
	// (asked once the tombstones pass the ratio: 1,000 of 5,000 nodes),
	// and for 20 groups after it, so writes race the rebuild and follow
	// its snapshot.
	var looked <-chan struct{}
	for group, after := 1, 0; after < 20; group++ {
		lo := rng.IntN(len(ids) - 100)
		upsert(ids[lo : lo+100])
		if group == 12 {
			looked = c.startLook()
		}
		if c.Info().Vacuums > 0 {
			after++
			continue
		}
		select {
		case <-looked:
			if in := c.Info(); in.Vacuums == 0 {
				t.Fatalf("the checkpoint loop looked and did not vacuum: %+v", in)
			}
		default:
		}
	}
	if _, err := c.Delete(IntIDs(ids[:50])); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:50] {
		delete(m, id)
	}
	c.abandon()
	c = mustOpen(t, dir, tuning)
	defer c.Close()
	checkModel(t, c, m)
}

// upsertRandom writes random vectors (empty documents) for ids into c and
// records them in m.
func upsertRandom(t *testing.T, c *Collection, rng *rand.Rand, m model, ids []uint64) {
	t.Helper()
	vecs := randomVectors(rng, len(ids))
	if err := c.Upsert(IntIDs(ids), vecs, nil); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		m[id] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: "{}"}
	}
}

// idRange is the ids 0 .. n-1.
func idRange(n int) []uint64 {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	return ids
}
