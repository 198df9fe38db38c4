package collection

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// findsOwn checks read-your-writes: a query by each written vector returns
// its id first (random vectors: no two at distance 0).
func findsOwn(t *testing.T, c *Collection, stage string, ids []uint64, vecs []float32) {
	t.Helper()
	out, dists := make([]ID, 1), make([]float32, 1)
	for i, id := range ids {
		if _, err := c.Query(vecs[i*testDim:(i+1)*testDim], 1, 64, nil, 1, out, dists); err != nil {
			t.Fatal(err)
		}
		if out[0] != IntID(id) || dists[0] != 0 {
			t.Fatalf("%s: query by the vector of %d found %v at %g", stage, id, out[0], dists[0])
		}
	}
}

// checkNearest compares the collection's 5 nearest of random queries with
// the model's, exactly: the collection is small and ef large, so the
// graphs of every segment answer exactly.
func checkNearest(t *testing.T, c *Collection, m model, rng *rand.Rand, stage string) {
	t.Helper()
	const k = 5
	out, dists := make([]ID, k), make([]float32, k)
	type hit struct {
		id uint64
		d  float32
	}
	hits, want := 0, 0
	for range 20 {
		q := randomVectors(rng, 1)
		if _, err := c.Query(q, k, 400, nil, 1, out, dists); err != nil {
			t.Fatal(err)
		}
		var all []hit
		for id, e := range m {
			all = append(all, hit{id, metric.L2.Distance(q, e.vec)})
		}
		slices.SortFunc(all, func(a, b hit) int { return cmp.Compare(a.d, b.d) })
		for _, h := range all[:min(k, len(all))] {
			want++
			if slices.Contains(out, IntID(h.id)) {
				hits++
			}
		}
		if !slices.IsSorted(dists) {
			t.Fatalf("%s: distances not ascending: %v", stage, dists)
		}
	}
	if float64(hits) < 0.97*float64(want) {
		t.Fatalf("%s: recall@%d %d/%d across the segments", stage, k, hits, want)
	}
}

// TestModelAcrossSealMergeReopen runs upserts, overwrites and deletions
// through every state a point can be in (tail, active graph, sealed
// segment before and after its file is written, merged, reloaded) and
// checks after each that the collection equals the model, finds what was
// just written and answers queries as a search of the model would; the
// segment count stays bounded by the merge policy.
func TestModelAcrossSealMergeReopen(t *testing.T) {
	racetest.AnswersOnly(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(24, 2))
	m := model{}
	tuning := Tuning{CheckpointBytes: -1, Threads: 2}
	c := mustCreate(t, dir, tuning)
	defer func() { c.Close() }()
	next := uint64(0)
	maxSegs, merged, idleMerges := 0, int64(0), 0
	for round := range 30 {
		// New points, overwrites of old ones, deletions.
		ids := make([]uint64, 0, 60)
		for range 40 {
			ids = append(ids, next)
			next++
		}
		for range 20 {
			if id := uint64(rng.IntN(int(next))); !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		vecs := randomVectors(rng, len(ids))
		if err := c.Upsert(IntIDs(ids), vecs, nil); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			m[id] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: "{}"}
		}
		findsOwn(t, c, "in the tail", ids, vecs)
		var gone []uint64
		for range 5 {
			id := uint64(rng.IntN(int(next)))
			if _, ok := m[id]; ok && !slices.Contains(gone, id) && !slices.Contains(ids, id) {
				gone = append(gone, id)
				delete(m, id)
			}
		}
		if n, err := c.Delete(IntIDs(gone)); err != nil || n != len(gone) {
			t.Fatalf("Delete(%v) = %d, %v", gone, n, err)
		}
		c.waitBuilt()
		findsOwn(t, c, "in the active graph", ids, vecs)
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		findsOwn(t, c, "sealed", ids, vecs)
		checkModel(t, c, m)
		if round%3 == 2 {
			before := c.Info().Vacuums
			c.lookAndWait() // after writes and a checkpoint: past the bound only
			if round%6 == 5 {
				c.lookAndWait() // idle: the merge down, each merge checkpointed
				idleMerges++
			}
			merged += c.Info().Vacuums - before
			findsOwn(t, c, "after merges", ids, vecs)
			checkModel(t, c, m)
		}
		maxSegs = max(maxSegs, c.Info().Segments)
		checkNearest(t, c, m, rng, "round")
		switch round % 5 {
		case 3:
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = mustOpen(t, dir, tuning)
		case 4:
			c.abandon()
			c = mustOpen(t, dir, tuning)
		default:
			continue
		}
		findsOwn(t, c, "reopened", ids, vecs)
		checkModel(t, c, m)
		checkNearest(t, c, m, rng, "reopened")
	}
	if maxSegs < 2 || merged == 0 {
		t.Fatalf("at most %d segments, %d merges: the test reached no merge", maxSegs, merged)
	}
	// The bound holds at each look (every third round): up to 3 seals
	// past it between looks, and the active graph.
	if maxSegs > maxSegments+4 {
		t.Fatalf("%d segments: the merge policy bounds them to %d sealed at each look", maxSegs, maxSegments)
	}
	t.Logf("at most %d segments, %d merges (%d idle looks)", maxSegs, merged, idleMerges)
}

// TestSealedQuantizedSegmentsShareTheirQuantizer: an SQ8 field's segments
// after a seal code with the ranges of the first put, so a point ranks the
// same whichever segment holds it, and a reopened collection answers as
// before it closed.
func TestSealedQuantizedSegmentsShareTheirQuantizer(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.Quantization = hnsw.QuantSQ8
	c, err := Create(dir, opts, Tuning{CheckpointBytes: -1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	ids := idRange(300)
	vecs := randomVectors(rng, len(ids))
	for part := range 3 {
		lo, hi := part*100, (part+1)*100
		if err := c.Upsert(IntIDs(ids[lo:hi]), vecs[lo*testDim:hi*testDim], nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	q := c.fields.Load().def.index.Quantizer()
	for _, s := range c.fields.Load().def.index.Sealed() {
		if got := s.Index().Quantizer(); got == nil || got.Step != q.Step || !slices.Equal(got.Lo, q.Lo) {
			t.Fatal("a sealed segment has other SQ8 ranges than the field")
		}
	}
	query := randomVectors(rng, 1)
	out, dists := make([]ID, 10), make([]float32, 10)
	if _, err := c.Query(query, 10, 100, nil, 1, out, dists); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	out2, dists2 := make([]ID, 10), make([]float32, 10)
	if _, err := c.Query(query, 10, 100, nil, 1, out2, dists2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, out2) || !slices.Equal(dists, dists2) {
		t.Fatalf("after reopen %v %v, before %v %v", out2, dists2, out, dists)
	}
}

// TestIdleMergeIsDurable: a merge on an idle collection is written by a
// checkpoint of its own as soon as it lands (behind a marker record), so
// a collection abandoned right after it (no Close, no later write) opens
// merged and does not merge again.
func TestIdleMergeIsDurable(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(24, 3))
	m := model{}
	tuning := Tuning{CheckpointBytes: -1, Threads: 2}
	c := mustCreate(t, dir, tuning)
	for round := range 4 {
		ids := make([]uint64, 50)
		for i := range ids {
			ids[i] = uint64(round*50 + i)
		}
		vecs := randomVectors(rng, len(ids))
		if err := c.Upsert(IntIDs(ids), vecs, nil); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			m[id] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: "{}"}
		}
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Info().Segments; got != 4 {
		t.Fatalf("%d segments after 4 checkpoints, want 4 (no merge while writes come)", got)
	}
	before := c.lastCheckpoint.Load()
	c.lookAndWait() // the writes since the previous look: not idle
	c.lookAndWait() // idle: merged down, each merge checkpointed
	if c.Info().Vacuums == 0 || c.Info().Segments > 2 {
		t.Fatalf("idle: %d merges, %d segments; want a merge down to at most 2", c.Info().Vacuums, c.Info().Segments)
	}
	if c.lastCheckpoint.Load() == before {
		t.Fatal("the idle merge was not checkpointed")
	}
	segs := c.Info().Segments
	c.abandon()
	c = mustOpen(t, dir, tuning)
	defer c.Close()
	if got := c.Info().Segments; got != segs {
		t.Fatalf("reopened with %d segments, merged to %d before", got, segs)
	}
	checkModel(t, c, m)
	checkNearest(t, c, m, rng, "reopened")
	c.lookAndWait()
	c.lookAndWait()
	if v := c.Info().Vacuums; v != 0 {
		t.Fatalf("reopened idle collection merged %d times again", v)
	}
}
