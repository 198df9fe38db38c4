package sparse

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// model is the reference: a map of points, scored by brute force.
type model struct {
	modifier Modifier
	points   map[uint64]Vector
}

func newModel(m Modifier) *model { return &model{modifier: m, points: map[uint64]Vector{}} }

func (m *model) upsert(keys []uint64, vs []Vector) {
	for i, k := range keys {
		m.points[k] = vs[i]
	}
}

func (m *model) delete(keys []uint64) {
	for _, k := range keys {
		delete(m.points, k)
	}
}

// weights applies the modifier by hand: Qdrant's fancy_idf in float32.
func (m *model) weights(q Vector) Vector {
	if m.modifier != ModifierIDF {
		return q
	}
	out := Vector{Indices: q.Indices, Values: make([]float32, len(q.Values))}
	n := float32(len(m.points))
	for i, index := range q.Indices {
		df := float32(0)
		for _, v := range m.points {
			if _, ok := slices.BinarySearch(v.Indices, index); ok {
				df++
			}
		}
		idf := float32(math.Log(float64((n-df+0.5)/(df+0.5) + 1)))
		out.Values[i] = q.Values[i] * idf
	}
	return out
}

// search scores every point with Dot and sorts: the brute-force top k.
func (m *model) search(q Vector, k int, allow []uint64) []Hit {
	w := m.weights(q)
	var hits []Hit
	for key, v := range m.points {
		if allow != nil {
			if _, ok := slices.BinarySearch(allow, key); !ok {
				continue
			}
		}
		if s, ok := Dot(w, v); ok {
			hits = append(hits, Hit{Key: key, Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if a.Key < b.Key {
			return -1
		}
		return 1
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	if hits == nil {
		hits = []Hit{}
	}
	return hits
}

// gen draws random vectors over a vocabulary whose index popularity
// falls off like a Zipf curve (a few long posting lists, many short).
type gen struct {
	rng      *rand.Rand
	vocab    int
	maxNNZ   int
	negative bool // values (and query weights) of both signs
	levels   int  // >0: values from {1..levels}, so scores tie often
}

func (g gen) index() uint32 {
	// Inverse of a 1/x density over [1, vocab]: popular small indices.
	return uint32(math.Exp(g.rng.Float64()*math.Log(float64(g.vocab)))) * 7919
}

func (g gen) value() float32 {
	var v float32
	if g.levels > 0 {
		v = float32(1 + g.rng.IntN(g.levels))
	} else {
		v = float32(g.rng.ExpFloat64())
	}
	if g.negative && g.rng.IntN(3) == 0 {
		v = -v
	}
	return v
}

func (g gen) vector(nnz int) Vector {
	seen := map[uint32]bool{}
	var idx []uint32
	var val []float32
	for len(idx) < nnz {
		i := g.index()
		if seen[i] {
			if len(seen) >= g.vocab/2 {
				break
			}
			continue
		}
		seen[i] = true
		idx, val = append(idx, i), append(val, g.value())
	}
	v, err := Normalize(idx, val)
	if err != nil {
		panic(err)
	}
	return v
}

func (g gen) point() Vector { return g.vector(1 + g.rng.IntN(g.maxNNZ)) }

// checkSame fails unless got equals want exactly: same keys, same order,
// same float32 scores.
func checkSame(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, brute force %d\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: hit %d is %+v, brute force %+v\n got %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

// checkAllPlans runs q through every plan and compares each with the
// model.
func checkAllPlans(t *testing.T, x *Index, m *model, q Vector, k int, allow []uint64, what string) Stats {
	t.Helper()
	want := m.search(q, k, allow)
	got, st, err := x.Search(q, k, allow)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, what+" ("+st.Plan.String()+")", got, want)
	for _, plan := range []Plan{PlanMaxScore, PlanExhaustive, PlanBlockMaxWAND} {
		got, _, err := x.search(q, k, allow, plan)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, what+" (forced "+plan.String()+")", got, want)
	}
	if allow != nil {
		got, _, err := x.search(q, k, allow, PlanAllowed)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, what+" (forced allowed)", got, want)
	}
	return st
}
