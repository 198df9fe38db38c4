package collection

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// holdBuilder stops the builder from moving the field ""'s rows into its
// graph until the returned function is called: the tail grows meanwhile.
func (c *Collection) holdBuilder() func() {
	f := c.fields.Load().def
	f.buildMu.Lock()
	return f.buildMu.Unlock
}

// nearest queries c for the k nearest to q and returns the ids.
func nearest(t *testing.T, c *Collection, q []float32, k int, f *meta.Filter) ([]ID, []float32) {
	t.Helper()
	ids, dists := make([]ID, k), make([]float32, k)
	if _, err := c.Query(q, k, 0, f, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	return ids, dists
}

// TestQueryFindsAnAcknowledgedWriteBeforeTheBuilder: an upsert is
// acknowledged before its graph insertion; a query right after it must
// find it exactly (distance 0 to itself), from the tail.
func TestQueryFindsAnAcknowledgedWriteBeforeTheBuilder(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	upsertRandom(t, c, rng, model{}, idRange(500))
	release := c.holdBuilder()
	for i := range 50 {
		v := randomVectors(rng, 1)
		id := uint64(1000 + i)
		if err := c.Upsert(IntIDs([]uint64{id}), v, nil); err != nil {
			t.Fatal(err)
		}
		ids, dists := nearest(t, c, v, 1, nil)
		if ids[0] != IntID(id) || dists[0] != 0 {
			t.Fatalf("write %d: nearest %v at %v, want itself at 0", i, ids[0], dists[0])
		}
	}
	if n := c.Info().TailRows; n < 50 {
		t.Fatalf("the tail holds %d rows with the builder held, want >= 50", n)
	}
	release()
	c.waitIndexed()
	if n := c.Info().TailRows; n != 0 {
		t.Fatalf("%d rows left in the tail after the builder caught up", n)
	}
}

// TestOverwriteInTheTailNeverReturnsTheOldVersion: a point in the graph
// overwritten (and one overwritten twice in the tail) is returned once, at
// its new vector, before and after the builder indexes it.
func TestOverwriteInTheTailNeverReturnsTheOldVersion(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	m := model{}
	upsertRandom(t, c, rng, m, idRange(300))
	c.waitIndexed()
	old := m[7].vec
	release := c.holdBuilder()
	upsertRandom(t, c, rng, m, []uint64{7})
	upsertRandom(t, c, rng, m, []uint64{8})
	upsertRandom(t, c, rng, m, []uint64{8})
	check := func(when string) {
		ids, _ := nearest(t, c, old, 300, nil)
		seen := map[ID]int{}
		for _, id := range ids {
			seen[id]++
		}
		for id, n := range seen {
			if n > 1 && !id.IsNone() {
				t.Fatalf("%s: %v returned %d times", when, id, n)
			}
		}
		for _, id := range []uint64{7, 8} {
			got, d := nearest(t, c, m[id].vec, 1, nil)
			if got[0] != IntID(id) || d[0] != 0 {
				t.Fatalf("%s: the new vector of %d finds %v at %v", when, id, got[0], d[0])
			}
		}
		if ids[0] == IntID(7) {
			if _, d := nearest(t, c, old, 1, nil); d[0] == 0 {
				t.Fatalf("%s: point 7 returned at its old vector", when)
			}
		}
		_, _, vec, err := c.Get(IntIDs([]uint64{7}), true)
		if err != nil || !slices.Equal(vec, m[7].vec) {
			t.Fatalf("%s: Get(7) = %v (%v), want the new vector", when, vec, err)
		}
	}
	check("in the tail")
	release()
	c.waitIndexed()
	check("after the build")
	checkModel(t, c, m)
}

// TestDeleteOfATailRowIsNotResurrectedByTheBuilder: a point written and
// deleted while the builder holds its put must stay deleted once the
// builder has indexed the batch.
func TestDeleteOfATailRowIsNotResurrectedByTheBuilder(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	m := model{}
	upsertRandom(t, c, rng, m, idRange(200))
	release := c.holdBuilder()
	upsertRandom(t, c, rng, m, []uint64{500, 501})
	v := m[500].vec
	if _, err := c.Delete(IntIDs([]uint64{500, 3})); err != nil {
		t.Fatal(err)
	}
	delete(m, 500)
	delete(m, 3)
	for _, when := range []string{"in the tail", "after the build"} {
		ids, _ := nearest(t, c, v, 10, nil)
		if slices.Contains(ids, IntID(500)) || slices.Contains(ids, IntID(3)) {
			t.Fatalf("%s: a deleted point is returned: %v", when, ids)
		}
		if n, _ := c.Count(meta.HasVector("")); n != len(m) {
			t.Fatalf("%s: has_vector counts %d points, want %d", when, n, len(m))
		}
		release = func() {}
		if when == "in the tail" {
			c.fields.Load().def.buildMu.Unlock()
			c.waitIndexed()
		}
	}
	release()
	if c.fields.Load().def.index.Contains(500) {
		t.Fatal("the graph holds the deleted point 500")
	}
	checkModel(t, c, m)
}

// TestRecallWithALargeTail: with thousands of rows unindexed, recall@10
// at the default ef stays >= 0.95 (the tail is scanned exactly), with and
// without a filter, and on an SQ8 field.
func TestRecallWithALargeTail(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, quant := range []hnsw.Quantization{hnsw.QuantNone, hnsw.QuantSQ8} {
		opts := testOptions()
		opts.Quantization = quant
		c, err := Create(t.TempDir(), opts, Tuning{CheckpointBytes: -1, TailRows: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 8))
		m := model{}
		upsertRandom(t, c, rng, m, idRange(3000))
		c.waitIndexed()
		release := c.holdBuilder()
		for at := 3000; at < 6000; at += 500 {
			ids := make([]uint64, 500)
			for i := range ids {
				ids[i] = uint64(at + i)
			}
			upsertRandom(t, c, rng, m, ids)
		}
		upsertRandom(t, c, rng, m, idRange(300)) // overwrites of graph points
		if n := c.Info().TailRows; n < 3000 {
			t.Fatalf("tail of %d rows, want >= 3000", n)
		}
		hits, want := 0, 0
		for range 30 {
			q := randomVectors(rng, 1)
			truth := exactNearest(m, q, 10)
			got, _ := nearest(t, c, q, 10, nil)
			for _, id := range got {
				if slices.Contains(truth, id) {
					hits++
				}
			}
			want += len(truth)
		}
		release()
		if r := float64(hits) / float64(want); r < 0.95 {
			t.Errorf("%v: recall@10 %.3f with a large tail, want >= 0.95", quant, r)
		}
		if quant == hnsw.QuantNone { // SQ8 returns its reconstructions
			checkModel(t, c, m)
		}
		c.Close()
	}
}

// exactNearest is the model's k nearest ids to q (squared L2).
func exactNearest(m model, q []float32, k int) []ID {
	type cand struct {
		id uint64
		d  float32
	}
	var all []cand
	for id, e := range m {
		var d float32
		for i, x := range e.vec {
			d += (x - q[i]) * (x - q[i])
		}
		all = append(all, cand{id, d})
	}
	slices.SortFunc(all, func(a, b cand) int {
		if a.d < b.d {
			return -1
		}
		if a.d > b.d {
			return 1
		}
		return 0
	})
	out := make([]ID, 0, k)
	for _, c := range all[:min(k, len(all))] {
		out = append(out, IntID(c.id))
	}
	return out
}

// TestQueriesWritesBuilderAndCheckpointsConcurrently: writers overwrite
// and delete, readers query and Get, checkpoints run: every answer names
// a point that exists at most once, and every acknowledged write of a
// reader's own is found by its next query (run under -race).
func TestQueriesWritesBuilderAndCheckpointsConcurrently(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: 64 << 10, TailRows: 512})
	defer c.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	upsertRandom(t, c, rng, model{}, idRange(1000))
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for i := range 200 {
				// Each writer its own ids (overwriting the graph's 0..999 for
				// w 0), so no other writer deletes what it then looks for.
				id := uint64(w*10000 + rng.IntN(1500))
				v := randomVectors(rng, 1)
				if err := c.Upsert(IntIDs([]uint64{id}), v, nil); err != nil {
					errs <- err.Error()
					return
				}
				ids, dists := make([]ID, 5), make([]float32, 5)
				if _, err := c.Query(v, 5, 0, nil, 1, ids, dists); err != nil {
					errs <- err.Error()
					return
				}
				seen := map[ID]bool{}
				for _, x := range ids {
					if !x.IsNone() && seen[x] {
						errs <- "a point returned twice: " + x.String()
						return
					}
					seen[x] = true
				}
				if w == 0 && i%10 == 0 {
					if _, err := c.Delete(IntIDs([]uint64{id})); err != nil {
						errs <- err.Error()
						return
					}
				} else if !seen[IntID(id)] {
					errs <- "a query missed the write it followed: " + IntID(id).String()
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 5 {
			if err := c.Checkpoint(); err != nil {
				errs <- err.Error()
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

// TestAllowedCountsTheTailsRows: a filtered query's stats.Allowed is the
// number of points the filter lets through, wherever they are: rows in
// the tail count once (overwrites of graph points too), deleted ones not
// at all. It counted only the graph's (a sharded collection summed 162
// where 500 were allowed).
func TestAllowedCountsTheTailsRows(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	upsertRandom(t, c, rng, model{}, idRange(300))
	c.waitIndexed()
	release := c.holdBuilder()
	defer release()
	// 100 new points, 50 overwrites of graph points, 20 deletes of graph
	// points, all in the tail.
	for i := range 100 {
		if err := c.Upsert(IntIDs([]uint64{uint64(1000 + i)}), randomVectors(rng, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), randomVectors(rng, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	var gone []uint64
	for i := range 20 {
		gone = append(gone, uint64(100+i))
	}
	if _, err := c.Delete(IntIDs(gone)); err != nil {
		t.Fatal(err)
	}
	if c.Info().TailRows == 0 {
		t.Fatal("the tail is empty with the builder held")
	}
	among := make([]ID, 0, 400)
	for i := range 300 { // every id the collection ever held
		among = append(among, IntID(uint64(i)))
	}
	for i := range 100 {
		among = append(among, IntID(uint64(1000+i)))
	}
	ids, dists := make([]ID, 10), make([]float32, 10)
	stats, err := c.QueryAmong(randomVectors(rng, 1), 10, 0, nil, among, 1, ids, dists)
	if err != nil {
		t.Fatal(err)
	}
	if want := 300 - 20 + 100; stats.Allowed != want {
		t.Fatalf("stats.Allowed = %d, want %d (280 graph points left, 100 tail points)", stats.Allowed, want)
	}
}

// TestAllowedStaysExactWhileTheBuilderMovesTheTail: a filtered query's
// stats.Allowed corrects the graph's count by the tail's keys only when
// no key came or went in the graph during the search (Graphs.Changes);
// while the builder moves rows it counts each allowed key. Either way it
// is the number of allowed points, whatever the builder does meanwhile.
func TestAllowedStaysExactWhileTheBuilderMovesTheTail(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	upsertRandom(t, c, rng, model{}, idRange(2000))
	c.waitIndexed()
	release := c.holdBuilder()
	// 500 new points and 300 overwrites, one write each (one row each).
	for i := range 800 {
		id := uint64(5000 + i)
		if i >= 500 {
			id = uint64(i - 500)
		}
		if err := c.Upsert(IntIDs([]uint64{id}), randomVectors(rng, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	among := make([]ID, 0, 3000)
	for i := range 1000 { // half the old ids, every new one
		among = append(among, IntID(uint64(2*i)))
	}
	for i := range 500 {
		among = append(among, IntID(uint64(5000+i)))
	}
	want := 1000 + 500
	ids, dists := make([]ID, 10), make([]float32, 10)
	query := func() int {
		stats, err := c.QueryAmong(randomVectors(rng, 1), 10, 0, nil, among, 1, ids, dists)
		if err != nil {
			t.Fatal(err)
		}
		return stats.Allowed
	}
	if got := query(); got != want {
		t.Fatalf("stats.Allowed = %d with the builder held, want %d", got, want)
	}
	release()
	for c.Info().TailRows > 0 {
		if got := query(); got != want {
			t.Fatalf("stats.Allowed = %d while the builder moves the tail, want %d", got, want)
		}
	}
	c.waitIndexed()
	if got := query(); got != want {
		t.Fatalf("stats.Allowed = %d once built, want %d", got, want)
	}
}

// TestTailQueryAllocations prevents a query over a graph and a tail of
// overwrites from allocating per hidden key again: while writes overwrite
// points the tail hides more keys than maxHiddenExtra, so every query
// lists them for the graph to deny; the list is the search's pooled
// scratch, not a new one per query (it was over half of what a 30 %
// overwrite allocated, TestSegmentBenchOverwrite at 100k), and so is
// each graph segment's set of the nodes it may return (hnsw).
func TestTailQueryAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: allocations are not the code's")
	}
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	upsertRandom(t, c, rng, model{}, idRange(2000))
	c.waitIndexed()
	release := c.holdBuilder()
	defer release()
	allocs := func(overwrites int) float64 {
		over := idRange(overwrites)
		if err := c.Upsert(IntIDs(over), randomVectors(rng, len(over)), nil); err != nil {
			t.Fatal(err)
		}
		q := randomVectors(rng, 1)
		ids, dists := make([]ID, 10), make([]float32, 10)
		return testing.AllocsPerRun(50, func() {
			if _, err := c.Query(q, 10, 0, nil, 1, ids, dists); err != nil {
				t.Fatal(err)
			}
		})
	}
	few := allocs(2 * maxHiddenExtra) // past maxHiddenExtra: the graph denies them
	many := allocs(1500)
	if many > few+1 {
		t.Errorf("a query hiding 1,500 tail keys allocates %.0f times, one hiding %d %.0f: something allocates per hidden key",
			many, 2*maxHiddenExtra, few)
	}
	if many > 0.5 { // a collection emptying the pools may cost a run one
		t.Errorf("a query over a graph and a tail of overwrites allocates %.1f times, want 0", many)
	}
	t.Logf("allocations per query: %.0f (%d hidden keys), %.0f (1,500)", few, 2*maxHiddenExtra, many)
}

// TestTiesComeInOneOrderAtEverySegmentState: points at equal distances
// from a query (duplicate vectors) come back in one order whether they
// sit in the tail, in the active graph, in a sealed segment, split among
// these, or in the segments of a reopened collection: ties go by key
// everywhere (hnsw orderTies, the segments' merge, the tail's scan and
// its merge with the graphs). Seen from LangChain's MMR, whose pick among
// tied candidates changed when the builder moved a row between two calls.
func TestTiesComeInOneOrderAtEverySegmentState(t *testing.T) {
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			opts := testOptions()
			opts.Metric = m
			dir := t.TempDir()
			c, err := Create(dir, opts, Tuning{CheckpointBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { c.Close() }()
			rng := rand.New(rand.NewPCG(3, 4))
			dup := randomVectors(rng, 1)
			put := func(ids ...uint64) {
				t.Helper()
				vecs := randomVectors(rng, len(ids))
				for i, id := range ids {
					if id >= 1000 {
						copy(vecs[i*testDim:], dup)
					}
				}
				if err := c.Upsert(IntIDs(ids), vecs, nil); err != nil {
					t.Fatal(err)
				}
			}
			put(idRange(200)...)
			put(1004, 1000, 1002)
			c.waitIndexed()
			if err := c.Checkpoint(); err != nil { // a sealed segment
				t.Fatal(err)
			}
			put(1003)
			c.waitIndexed() // the active graph
			release := c.holdBuilder()
			put(1005, 1001) // the tail
			const k = 8
			want, _ := nearest(t, c, dup, k, nil)
			// The six copies first, by key: an integer id is its own key.
			if !slices.Equal(want[:6], IntIDs([]uint64{1000, 1001, 1002, 1003, 1004, 1005})) {
				t.Fatalf("nearest %v: want the six copies first, ids ascending", want)
			}
			check := func(when string) {
				t.Helper()
				got, dists := nearest(t, c, dup, k, nil)
				if !slices.Equal(got, want) {
					t.Fatalf("%s: nearest %v (distances %v), want %v as before", when, got, dists, want)
				}
			}
			check("again")
			release()
			c.waitIndexed()
			check("tail built")
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			check("checkpointed")
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if c, err = Open(dir, Tuning{CheckpointBytes: -1}); err != nil {
				t.Fatal(err)
			}
			check("reopened")
		})
	}
}
