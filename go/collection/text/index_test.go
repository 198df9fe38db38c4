package text

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func search(t *testing.T, x *Index, q string, k int, allow []uint64) []Hit {
	t.Helper()
	hits, err := x.Search(q, k, Params{}, allow)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func near(a float32, b float64) bool { return math.Abs(float64(a)-b) < 1e-6 }

// The expected scores are worked out by hand from the formula in the
// package comment (N = 3, avgdl = 8/3, df(cat) = 2).
func TestBM25MatchesHandComputedScores(t *testing.T) {
	x := NewIndex(mustAnalyzer(t, AnalyzerSimple))
	x.Put(1, "the cat sat")
	x.Put(2, "the cat cat dog")
	x.Put(3, "dog")
	hits := search(t, x, "cat", 10, nil)
	if len(hits) != 2 || hits[0].ID != 2 || hits[1].ID != 1 ||
		!near(hits[0].Score, 0.25753623520314284) || !near(hits[1].Score, 0.2032448126468046) {
		t.Fatalf("hits %+v", hits)
	}
	// After deleting 1: N = 2, avgdl = 2.5, df(cat) = 1.
	if n := x.Delete([]uint64{1, 99}); n != 1 {
		t.Fatalf("Delete counted %d", n)
	}
	hits = search(t, x, "cat", 10, nil)
	if len(hits) != 1 || hits[0].ID != 2 || !near(hits[0].Score, 0.37066694147590656) {
		t.Fatalf("after delete: %+v", hits)
	}
}

func TestRepeatedQueryTermCountsTwice(t *testing.T) {
	x := NewIndex(mustAnalyzer(t, AnalyzerSimple))
	x.Put(1, "cat dog")
	x.Put(2, "bird")
	one, two := search(t, x, "cat", 1, nil), search(t, x, "cat cat", 1, nil)
	if !near(two[0].Score, 2*float64(one[0].Score)) {
		t.Fatalf("cat: %v, cat cat: %v", one[0].Score, two[0].Score)
	}
}

func TestQueryWithoutIndexedTermsFindsNothing(t *testing.T) {
	x := NewIndex(mustAnalyzer(t, AnalyzerEnglish))
	x.Put(1, "vector database")
	for _, q := range []string{"", "the and of", "zebra", "!!!"} {
		if hits := search(t, x, q, 5, nil); len(hits) != 0 {
			t.Fatalf("%q found %+v", q, hits)
		}
	}
}

func TestReplaceAndEmptyTextRemoveOldTerms(t *testing.T) {
	x := NewIndex(mustAnalyzer(t, AnalyzerSimple))
	x.Put(1, "alpha beta")
	x.Put(1, "gamma")
	if hits := search(t, x, "alpha", 5, nil); len(hits) != 0 {
		t.Fatalf("old text still found: %+v", hits)
	}
	if hits := search(t, x, "gamma", 5, nil); len(hits) != 1 {
		t.Fatalf("new text not found: %+v", hits)
	}
	x.Put(1, "   ")
	if x.Len() != 0 {
		t.Fatalf("empty text still counted: N = %d", x.Len())
	}
}

func TestAllowListRestrictsHits(t *testing.T) {
	x := NewIndex(mustAnalyzer(t, AnalyzerSimple))
	for id := uint64(0); id < 100; id++ {
		x.Put(id, strings.Repeat("go ", int(id%7)+1))
	}
	allow := []uint64{90, 3, 50} // unsorted on purpose
	hits := search(t, x, "go", 10, allow)
	if len(hits) != 3 {
		t.Fatalf("hits %+v", hits)
	}
	for _, h := range hits {
		if !slices.Contains(allow, h.ID) {
			t.Fatalf("id %d not allowed", h.ID)
		}
	}
	if hits := search(t, x, "go", 10, []uint64{}); len(hits) != 0 {
		t.Fatalf("empty allow list found %+v", hits)
	}
}

func TestSearchRejectsBadInput(t *testing.T) {
	x := NewIndex(mustAnalyzer(t, AnalyzerSimple))
	x.Put(1, "a")
	bad := []struct {
		q string
		k int
		p Params
	}{
		{strings.Repeat("x", MaxQueryBytes+1), 1, Params{}},
		{strings.Repeat("x ", MaxQueryTerms+1), 1, Params{}},
		{"a", 0, Params{}},
		{"a", 1, Params{K1: -1}},
		{"a", 1, Params{B: 2}},
		{"a", 1, Params{K1: math.NaN()}},
	}
	for _, c := range bad {
		if _, err := x.Search(c.q, c.k, c.p, nil); err == nil {
			t.Errorf("no error for k=%d params=%+v query of %d bytes", c.k, c.p, len(c.q))
		}
	}
}

// model is the index's specification in a few lines: the texts of live
// ids, scored from scratch.
type model map[uint64][]string

func (m model) search(q []string, k int, k1, b float64) []Hit {
	n, total := 0.0, 0.0
	df := map[string]float64{}
	for _, terms := range m {
		if len(terms) == 0 {
			continue
		}
		n++
		total += float64(len(terms))
		seen := map[string]bool{}
		for _, t := range terms {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	var hits []Hit
	for id, terms := range m {
		score, matched := 0.0, false
		for _, qt := range q {
			tf := 0.0
			for _, t := range terms {
				if t == qt {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			matched = true
			idf := math.Log(1 + (n-df[qt]+0.5)/(df[qt]+0.5))
			score += idf * tf / (tf + k1*(1-b+b*float64(len(terms))/(total/n)))
		}
		if matched {
			hits = append(hits, Hit{id, float32(score)})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return hits[:min(k, len(hits))]
}

// Random puts and deletes, enough to pass several compactions, must score
// like the model at every step.
func TestIndexMatchesModelThroughDeletesAndCompactions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := mustAnalyzer(t, AnalyzerSimple)
	x := NewIndex(a)
	m := model{}
	words := []string{"go", "rust", "vector", "db", "index", "fast", "slow", "search", "text", "bm25"}
	compactions, prevDead := 0, 0
	for step := 0; step < 20000; step++ {
		id := uint64(rng.IntN(1500))
		switch rng.IntN(10) {
		case 0, 1, 2, 3:
			x.Delete([]uint64{id})
			delete(m, id)
		default:
			var b strings.Builder
			for range rng.IntN(6) {
				b.WriteString(words[rng.IntN(len(words))] + " ")
			}
			x.Put(id, b.String())
			if terms := a.Terms(b.String()); len(terms) > 0 {
				m[id] = terms
			} else {
				delete(m, id)
			}
		}
		if x.dead < prevDead {
			compactions++
		}
		prevDead = x.dead
		if step%997 == 0 {
			q := []string{words[rng.IntN(len(words))], words[rng.IntN(len(words))]}
			got := search(t, x, strings.Join(q, " "), 20, nil)
			want := m.search(q, 20, DefaultK1, DefaultB)
			if len(got) != len(want) {
				t.Fatalf("step %d: %d hits, model %d", step, len(got), len(want))
			}
			for i := range got {
				// Same score within float32 rounding; the id may differ only
				// between near-ties.
				if math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
					t.Fatalf("step %d hit %d: %+v, model %+v", step, i, got[i], want[i])
				}
			}
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction happened: the test does not cover it")
	}
	if st := x.Stats(); st.Docs != len(m) {
		t.Fatalf("N = %d, model %d", st.Docs, len(m))
	}
}

func TestFuseRRFAndWeighted(t *testing.T) {
	vec := []Neighbor{{1, 0.1}, {2, 0.2}, {3, 0.5}}
	txt := []Hit{{3, 9}, {4, 5}, {1, 1}}
	rrf := Fuse(vec, txt, 10, Fusion{})
	// 1: 1/61 + 1/63; 3: 1/63 + 1/61 (tie, smaller id first); 2: 1/62; 4: 1/62.
	ids := []uint64{}
	for _, h := range rrf {
		ids = append(ids, h.ID)
	}
	if !slices.Equal(ids, []uint64{1, 3, 2, 4}) {
		t.Fatalf("rrf order %v", ids)
	}
	if rrf[0].Sources != FromVector|FromText || rrf[2].Sources != FromVector || rrf[3].Sources != FromText {
		t.Fatalf("sources %+v", rrf)
	}
	if !near(rrf[0].Score, 1.0/61+1.0/63) || !math.IsNaN(float64(rrf[3].Distance)) || rrf[3].BM25 != 5 {
		t.Fatalf("rrf %+v", rrf)
	}
	w := Fuse(vec, txt, 2, Fusion{Weighted: true, Alpha: 0.25})
	// 3: 0.25·0 + 0.75·1 = 0.75; 1: 0.25·1 + 0.75·0 = 0.25; 4: 0.75·0.5 = 0.375.
	if len(w) != 2 || w[0].ID != 3 || !near(w[0].Score, 0.75) || w[1].ID != 4 || !near(w[1].Score, 0.375) {
		t.Fatalf("weighted %+v", w)
	}
	if err := (Fusion{Weighted: true, Alpha: 1.5}).Check(); err == nil {
		t.Fatal("alpha 1.5 accepted")
	}
}
