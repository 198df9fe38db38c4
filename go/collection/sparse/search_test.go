package sparse

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/internal/racetest"
)

// randomIndex fills an index and its model with n random points of g.
func randomIndex(t *testing.T, g gen, n int, m Modifier) (*Index, *model) {
	t.Helper()
	x, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	ref := newModel(m)
	keys := make([]uint64, n)
	vs := make([]Vector, n)
	for i := range keys {
		keys[i] = uint64(g.rng.IntN(4 * n)) // some keys twice: the later wins
		vs[i] = g.point()
	}
	if err := x.Upsert(keys, vs); err != nil {
		t.Fatal(err)
	}
	ref.upsert(keys, vs)
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	return x, ref
}

// TestPruningEqualsBruteForceOnRandomData prevents MaxScore from dropping
// a point that belongs in the top k (or keeping one that does not), for
// positive data, both modifiers and k from 1 to more than the matches.
func TestPruningEqualsBruteForceOnRandomData(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []Modifier{ModifierNone, ModifierIDF} {
		g := gen{rng: rand.New(rand.NewPCG(1, uint64(m))), vocab: 300, maxNNZ: 30}
		x, ref := randomIndex(t, g, 3000, m)
		for qi := range 60 {
			q := g.vector(1 + qi%12)
			for _, k := range []int{1, 3, 10, 100, 5000} {
				checkAllPlans(t, x, ref, q, k, nil, m.String()+" query "+strconv.Itoa(qi)+" k="+strconv.Itoa(k))
			}
		}
	}
}

// TestPruningStaysExactWithNegativeWeightsAndValues prevents a bound that
// assumes non-negative values (w·max is not the most w·v can be when w or
// v is negative) from pruning a point that belongs in the top k.
func TestPruningStaysExactWithNegativeWeightsAndValues(t *testing.T) {
	for _, m := range []Modifier{ModifierNone, ModifierIDF} {
		g := gen{rng: rand.New(rand.NewPCG(2, uint64(m))), vocab: 200, maxNNZ: 20, negative: true}
		x, ref := randomIndex(t, g, 2000, m)
		for qi := range 80 {
			q := g.vector(1 + qi%10)
			if qi%4 == 0 { // all weights negative: every bound below 0
				for i := range q.Values {
					q.Values[i] = -abs32(q.Values[i])
				}
			}
			for _, k := range []int{1, 10, 50} {
				checkAllPlans(t, x, ref, q, k, nil, m.String()+" query "+strconv.Itoa(qi)+" k="+strconv.Itoa(k))
			}
		}
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// TestTiesRankTheSmallerKeyFirst prevents equal scores from coming back
// in slot or heap order, and pruning from dropping a point that ties the
// k-th score but has a smaller key.
func TestTiesRankTheSmallerKeyFirst(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(3, 3)), vocab: 40, maxNNZ: 4, levels: 2}
	x, ref := randomIndex(t, g, 3000, ModifierNone)
	for qi := range 40 {
		q := g.vector(1 + qi%4)
		for _, k := range []int{1, 7, 30} {
			checkAllPlans(t, x, ref, q, k, nil, "query "+strconv.Itoa(qi)+" k="+strconv.Itoa(k))
		}
	}
	// Identical points inserted in descending key order.
	y, _ := New(ModifierNone)
	v, _ := Normalize([]uint32{5}, []float32{2})
	for key := uint64(100); key > 0; key-- {
		if err := y.Upsert([]uint64{key}, []Vector{v}); err != nil {
			t.Fatal(err)
		}
	}
	hits, _, err := y.Search(v, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Hit{{1, 4}, {2, 4}, {3, 4}}; !slices.Equal(hits, want) {
		t.Fatalf("ties: got %v, want %v", hits, want)
	}
}

// TestQueryReturnsOnlyPointsSharingAnIndex prevents a k larger than the
// matches from padding with points the query has nothing in common with,
// and an empty or unknown query from failing.
func TestQueryReturnsOnlyPointsSharingAnIndex(t *testing.T) {
	x, _ := New(ModifierNone)
	a, _ := Normalize([]uint32{1, 2}, []float32{1, 1})
	b, _ := Normalize([]uint32{3}, []float32{1})
	zero, _ := Normalize([]uint32{2}, []float32{0})
	empty, _ := Normalize(nil, nil)
	if err := x.Upsert([]uint64{10, 11, 12, 13}, []Vector{a, b, zero, empty}); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 4 {
		t.Fatalf("Len %d, want 4 (an empty vector is a point)", x.Len())
	}
	q, _ := Normalize([]uint32{2}, []float32{1})
	hits, _, err := x.Search(q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Hit{{10, 1}, {12, 0}}; !slices.Equal(hits, want) {
		t.Fatalf("got %v, want %v (12 holds index 2 with value 0)", hits, want)
	}
	for _, q := range []Vector{empty, {Indices: []uint32{99}, Values: []float32{1}}} {
		hits, st, err := x.Search(q, 10, nil)
		if err != nil || len(hits) != 0 || st.Plan != PlanEmpty {
			t.Fatalf("query %v: %v, %v, %v; want no hits", q, hits, st, err)
		}
	}
}

// TestDeletedAndReplacedPointsAreNotFound prevents the postings that a
// delete or a replace leaves behind (until compaction) from being scored,
// before and after the compaction that drops them.
func TestDeletedAndReplacedPointsAreNotFound(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(4, 4)), vocab: 100, maxNNZ: 10}
	x, ref := randomIndex(t, g, 3000, ModifierIDF)
	queries := make([]Vector, 30)
	for i := range queries {
		queries[i] = g.vector(1 + i%6)
	}
	check := func(stage string) {
		t.Helper()
		if err := x.CheckIntegrity(); err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		if x.Len() != len(ref.points) {
			t.Fatalf("%s: Len %d, model %d", stage, x.Len(), len(ref.points))
		}
		for i, q := range queries {
			checkAllPlans(t, x, ref, q, 10, nil, stage+" query "+strconv.Itoa(i))
		}
	}
	var keys []uint64
	for k := range ref.points {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Replace a quarter, delete a sixth: dead slots stay below the live
	// ones, so no compaction yet.
	q4, q6 := len(keys)/4, len(keys)/4+len(keys)/6
	var replaced []Vector
	for range keys[:q4] {
		replaced = append(replaced, g.point())
	}
	if err := x.Upsert(keys[:q4], replaced); err != nil {
		t.Fatal(err)
	}
	ref.upsert(keys[:q4], replaced)
	del := keys[q4:q6]
	if n := x.Delete(append(del, 1<<60)); n != len(del) {
		t.Fatalf("Delete counted %d, want %d", n, len(del))
	}
	ref.delete(del)
	check("after replace and delete")
	if x.ndead == 0 {
		t.Fatal("no dead slots: the test no longer checks stale postings")
	}
	// Delete most of the rest: dead slots now outnumber live ones.
	rest := keys[q6 : len(keys)-50]
	x.Delete(rest)
	ref.delete(rest)
	if x.ndead != 0 {
		t.Fatalf("%d dead slots after deleting most points: no compaction ran", x.ndead)
	}
	check("after compaction")
}

// TestAllowListRestrictsEveryPlan prevents a filtered search from
// returning a key outside the allow list, or from missing an allowed one
// that a selective filter pushes into the top k, whether the allowed rows
// are scored directly (short list) or found through the postings.
func TestAllowListRestrictsEveryPlan(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(5, 5)), vocab: 200, maxNNZ: 15, negative: true}
	x, ref := randomIndex(t, g, 3000, ModifierNone)
	var all []uint64
	for k := range ref.points {
		all = append(all, k)
	}
	slices.Sort(all)
	plans := map[Plan]int{}
	for qi := range 60 {
		q := g.vector(1 + qi%8)
		keep := []float64{0, 0.001, 0.01, 0.2, 0.9}[qi%5]
		allow := []uint64{}
		for _, k := range all {
			if g.rng.Float64() < keep {
				allow = append(allow, k)
			}
		}
		allow = append(allow, 1<<62) // unknown keys are ignored
		st := checkAllPlans(t, x, ref, q, 10, allow, "query "+strconv.Itoa(qi))
		plans[st.Plan]++
	}
	if plans[PlanAllowed] == 0 || plans[PlanMaxScore] == 0 {
		t.Fatalf("plans chosen %v: both should have been exercised", plans)
	}
	hits, st, _ := x.Search(g.vector(3), 10, []uint64{})
	if len(hits) != 0 || st.Plan != PlanEmpty {
		t.Fatalf("empty allow list: %v (%v), want nothing", hits, st.Plan)
	}
}

// TestPruningReadsFewerPostingsThanExhaustive prevents a change that keeps
// results exact but stops pruning (every bound too loose, the essential
// split never moving), on data skewed like text.
func TestPruningReadsFewerPostingsThanExhaustive(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(6, 6)), vocab: 2000, maxNNZ: 20}
	x, _ := randomIndex(t, g, 20000, ModifierIDF)
	var pruned, all int64
	for range 50 {
		q := g.vector(6)
		_, a, err := x.search(q, 10, nil, PlanMaxScore)
		if err != nil {
			t.Fatal(err)
		}
		_, b, _ := x.search(q, 10, nil, PlanExhaustive)
		pruned, all = pruned+a.Postings, all+b.Postings
	}
	if pruned*2 > all {
		t.Fatalf("MaxScore read %d postings, exhaustive %d: less than a 2x saving", pruned, all)
	}
	t.Logf("postings read: MaxScore %d, exhaustive %d (%.1fx)", pruned, all, float64(all)/float64(pruned))
}

// TestIDFIsQdrantsFormulaComputedByHand prevents a different IDF (BM25's
// Robertson form, a log base, N counting deleted points) by comparing
// with numbers worked out from Qdrant's fancy_idf on paper.
func TestIDFIsQdrantsFormulaComputedByHand(t *testing.T) {
	x, _ := New(ModifierIDF)
	v := func(idx []uint32, val []float32) Vector {
		out, err := Normalize(idx, val)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// N = 4; index 1 in 1 point, index 2 in 3 points, index 3 in 4 points.
	if err := x.Upsert([]uint64{1, 2, 3, 4, 5}, []Vector{
		v([]uint32{1, 2, 3}, []float32{2, 1, 1}),
		v([]uint32{2, 3}, []float32{1, 1}),
		v([]uint32{2, 3}, []float32{0.5, 1}),
		v([]uint32{3}, []float32{1}),
		v([]uint32{1, 2, 3}, []float32{9, 9, 9}),
	}); err != nil {
		t.Fatal(err)
	}
	x.Delete([]uint64{5}) // its postings stay, but N and df drop
	// idf(df=1) = ln((4-1+0.5)/(1+0.5) + 1) = ln(3.3333333) = 1.2039728
	// idf(df=3) = ln((4-3+0.5)/(3+0.5) + 1) = ln(1.4285714) = 0.35667494
	// idf(df=4) = ln((4-4+0.5)/(4+0.5) + 1) = ln(1.1111111) = 0.10536052
	// key 1: 2·1.2039728 + 1·0.35667494 + 1·0.10536052 = 2.8699811
	// key 2: 0.35667494 + 0.10536052 = 0.46203546
	// key 3: 0.5·0.35667494 + 0.10536052 = 0.28369799
	// key 4: 0.10536052
	// (in real arithmetic; Qdrant's float32 steps move the last digits,
	// hence the 1e-6 tolerance, far below the gap to any other formula)
	q := v([]uint32{1, 2, 3}, []float32{1, 1, 1})
	hits, _, err := x.Search(q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{{1, 2.8699811}, {2, 0.46203546}, {3, 0.28369799}, {4, 0.10536052}}
	if len(hits) != len(want) {
		t.Fatalf("got %v, want %v", hits, want)
	}
	for i := range want {
		if hits[i].Key != want[i].Key || abs32(hits[i].Score-want[i].Score) > 1e-6 {
			t.Fatalf("hit %d: got %v, want %v (all: %v)", i, hits[i], want[i], hits)
		}
	}
}

// TestIDFFollowsUpsertsAndDeletes prevents N or df from going stale (a
// replace counted twice, a delete not counted) by comparing a mixed
// sequence of writes with the model's IDF recomputed from scratch.
func TestIDFFollowsUpsertsAndDeletes(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(7, 7)), vocab: 50, maxNNZ: 8}
	x, ref := randomIndex(t, g, 500, ModifierIDF)
	for round := range 20 {
		keys := []uint64{uint64(g.rng.IntN(2000)), uint64(g.rng.IntN(2000))}
		vs := []Vector{g.point(), g.point()}
		if err := x.Upsert(keys, vs); err != nil {
			t.Fatal(err)
		}
		ref.upsert(keys, vs)
		del := []uint64{uint64(g.rng.IntN(2000)), keys[0]}
		x.Delete(del)
		ref.delete(del)
		checkAllPlans(t, x, ref, g.vector(4), 20, nil, "round "+strconv.Itoa(round))
	}
}

// TestPruningEqualsBruteForceOnPypiSummaries prevents a pruning bug that
// random data does not reach, on the real workload: BM25 weights of 29,000
// pypi-demo summaries, IDF modifier, held-out summaries as queries.
func TestPruningEqualsBruteForceOnPypiSummaries(t *testing.T) {
	racetest.AnswersOnly(t)
	if testing.Short() {
		t.Skip("real corpus")
	}
	c := pypiCorpus(t)
	x := c.build(t, ModifierIDF)
	ref := newModel(ModifierIDF)
	ref.upsert(c.keys, c.docs)
	// The model's IDF scans every point per query index: take a sample.
	qs := c.queries[:40]
	var pruned, all int64
	for i, q := range qs {
		got, st, err := x.Search(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, "query "+strconv.Itoa(i), got, ref.search(q, 10, nil))
		exh, est, _ := x.search(q, 10, nil, PlanExhaustive)
		checkSame(t, "exhaustive query "+strconv.Itoa(i), exh, got)
		pruned, all = pruned+st.Postings, all+est.Postings
	}
	t.Logf("postings read: MaxScore %d, exhaustive %d", pruned, all)
}

// TestBadInputIsAnInvalidArgument prevents a malformed vector or k from
// being stored, panicking, or coming back as another kind of error.
func TestBadInputIsAnInvalidArgument(t *testing.T) {
	nan := float32(0)
	nan /= nan
	inf := float32(math.Inf(1))
	tooMany := make([]uint32, 1<<15+1)
	for i := range tooMany {
		tooMany[i] = uint32(i)
	}
	for name, c := range map[string]struct {
		idx []uint32
		val []float32
	}{
		"duplicate index": {[]uint32{3, 1, 3}, []float32{1, 2, 3}},
		"lengths differ":  {[]uint32{1, 2}, []float32{1}},
		"NaN":             {[]uint32{1}, []float32{nan}},
		"Inf":             {[]uint32{1}, []float32{-inf}},
		"too many":        {tooMany, make([]float32, len(tooMany))},
	} {
		_, err := Normalize(c.idx, c.val)
		if !errors.Is(err, ErrInvalid) || errkind.Of(err) != errkind.Invalid {
			t.Errorf("%s: Normalize gave %v, want an invalid argument", name, err)
		}
		if err := Check(Vector{Indices: c.idx, Values: c.val}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Check gave %v, want ErrInvalid", name, err)
		}
	}
	v, err := Normalize([]uint32{9, 2, 5}, []float32{0.9, 0.2, 0.5})
	if err != nil || !slices.Equal(v.Indices, []uint32{2, 5, 9}) || !slices.Equal(v.Values, []float32{0.2, 0.5, 0.9}) {
		t.Fatalf("Normalize of unsorted input: %v, %v", v, err)
	}
	x, _ := New(ModifierNone)
	good, _ := Normalize([]uint32{1}, []float32{1})
	unsorted := Vector{Indices: []uint32{2, 1}, Values: []float32{1, 1}}
	if err := x.Upsert([]uint64{1, 2}, []Vector{good, unsorted}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Upsert of an unsorted vector: %v", err)
	}
	if x.Len() != 0 {
		t.Fatalf("a failed Upsert stored %d points", x.Len())
	}
	if _, _, err := x.Search(good, 0, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("k=0: %v", err)
	}
	if _, _, err := x.Search(unsorted, 1, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unsorted query: %v", err)
	}
	if _, err := ParseModifier("bm25"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseModifier: %v", err)
	}
}
