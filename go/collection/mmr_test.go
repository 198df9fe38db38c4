package collection

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// mmrReference is LangChain's maximal_marginal_relevance over the given
// candidate rows (rank order), in float64 and plain loops, with the
// metric's similarity: the indexes of the picks, in pick order.
func mmrReference(m metric.Metric, query []float64, rows [][]float64, lambda float64, k int) []int {
	sim := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			switch m {
			case metric.L2:
				s -= (a[i] - b[i]) * (a[i] - b[i])
			case metric.Manhattan:
				s -= math.Abs(a[i] - b[i])
			default:
				s += a[i] * b[i]
			}
		}
		return s
	}
	var picks []int
	for len(picks) < min(k, len(rows)) {
		best, bestScore := -1, math.Inf(-1)
		for i, r := range rows {
			if slices.Contains(picks, i) {
				continue
			}
			score := sim(query, r)
			if len(picks) > 0 {
				redundant := math.Inf(-1)
				for _, p := range picks {
					redundant = max(redundant, sim(r, rows[p]))
				}
				score = lambda*score - (1-lambda)*redundant
			}
			if best < 0 || score > bestScore {
				best, bestScore = i, score
			}
		}
		picks = append(picks, best)
	}
	return picks
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func TestMMRPicksWhatTheGreedyReferencePicks(t *testing.T) {
	for _, m := range []metric.Metric{metric.L2, metric.IP, metric.Cosine, metric.Manhattan} {
		t.Run(m.String(), func(t *testing.T) {
			opts := testOptions()
			opts.Metric = m
			c, err := Create(filepath.Join(t.TempDir(), "c"), opts, Tuning{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rng := rand.New(rand.NewPCG(7, uint64(m)))
			const n = 400
			vecs := randomVectors(rng, n)
			ids := make([]ID, n)
			for i := range ids {
				ids[i] = IntID(uint64(i))
			}
			if err := c.Upsert(ids, vecs, nil); err != nil {
				t.Fatal(err)
			}
			for trial := range 20 {
				q := randomVectors(rng, 1)
				k, fetchK := 1+rng.IntN(8), 10+rng.IntN(40)
				lambda := []float64{0, 0.25, 0.5, 0.9, 1}[trial%5]
				// The candidates are the plain query's fetchK nearest.
				cand, candDists := make([]ID, fetchK), make([]float32, fetchK)
				if _, err := c.Query(q, fetchK, 0, nil, 1, cand, candDists); err != nil {
					t.Fatal(err)
				}
				_, _, stored, err := c.Get(cand, true)
				if err != nil {
					t.Fatal(err)
				}
				rows := make([][]float64, fetchK)
				for i := range rows {
					rows[i] = float64s(stored[i*testDim : (i+1)*testDim])
				}
				qn := slices.Clone(q)
				if m.NeedsNormalize() {
					metric.Normalize(qn)
				}
				want := mmrReference(m, float64s(qn), rows, lambda, k)

				got, dists := make([]ID, k), make([]float32, k)
				if _, err := c.QueryMMR("", q, k, 0, MMR{Lambda: lambda, FetchK: fetchK}, nil, nil, 1, got, dists); err != nil {
					t.Fatal(err)
				}
				for p, i := range want {
					if got[p] != cand[i] {
						t.Fatalf("k=%d fetch_k=%d lambda=%g: pick %d is %v, the reference picks %v (all: %v)", k, fetchK, lambda, p, got[p], cand[i], got)
					}
					if d := candDists[i]; math.Abs(float64(dists[p]-d)) > 1e-4*max(1, math.Abs(float64(d))) {
						t.Fatalf("pick %d (%v): distance %g, the query's %g", p, got[p], dists[p], d)
					}
				}
			}
		})
	}
}

func TestMMRSkipsNearDuplicatesThatAPlainQueryReturns(t *testing.T) {
	c := mustCreate(t, filepath.Join(t.TempDir(), "c"), Tuning{})
	defer c.Close()
	axis := func(i int, scale float32) []float32 {
		v := make([]float32, testDim)
		v[i] = scale
		return v
	}
	// Five copies of one point next to the query, and two points a little
	// further away in other directions.
	var vecs []float32
	var ids []ID
	for i := range 5 {
		v := axis(0, 1)
		v[1] = float32(i) * 1e-3
		vecs = append(vecs, v...)
		ids = append(ids, StringID("copy-"+string(rune('a'+i))))
	}
	vecs = append(vecs, axis(2, 1)...)
	vecs = append(vecs, axis(3, 1)...)
	ids = append(ids, StringID("other-2"), StringID("other-3"))
	if err := c.Upsert(ids, vecs, nil); err != nil {
		t.Fatal(err)
	}
	q := axis(0, 0.6)
	plain, plainDists := make([]ID, 3), make([]float32, 3)
	if _, err := c.Query(q, 3, 0, nil, 1, plain, plainDists); err != nil {
		t.Fatal(err)
	}
	for _, id := range plain {
		if id.Str()[:4] != "copy" {
			t.Fatalf("the plain query should find three copies, found %v", plain)
		}
	}
	got, dists := make([]ID, 3), make([]float32, 3)
	if _, err := c.QueryMMR("", q, 3, 0, MMR{Lambda: 0.5}, nil, nil, 1, got, dists); err != nil {
		t.Fatal(err)
	}
	if got[0] != StringID("copy-a") || !slices.Contains(got[1:], StringID("other-2")) || !slices.Contains(got[1:], StringID("other-3")) {
		t.Fatalf("MMR picked %v, want copy-a then the two others", got)
	}
	if dists[0] != plainDists[0] {
		t.Fatalf("the first pick's distance is %g, the plain query's %g", dists[0], plainDists[0])
	}
}

func TestMMRWithLambdaOneIsThePlainQuery(t *testing.T) {
	c := mustCreate(t, filepath.Join(t.TempDir(), "c"), Tuning{})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	vecs := randomVectors(rng, 200)
	ids := make([]ID, 200)
	for i := range ids {
		ids[i] = IntID(uint64(i))
	}
	if err := c.Upsert(ids, vecs, nil); err != nil {
		t.Fatal(err)
	}
	q := randomVectors(rng, 1)
	want, wantDists := make([]ID, 10), make([]float32, 10)
	if _, err := c.Query(q, 10, 40, nil, 1, want, wantDists); err != nil {
		t.Fatal(err)
	}
	got, dists := make([]ID, 10), make([]float32, 10)
	if _, err := c.QueryMMR("", q, 10, 40, MMR{Lambda: 1, FetchK: 40}, nil, nil, 1, got, dists); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("lambda 1 gave %v, the plain query %v", got, want)
	}
}

func TestMMRKeepsToTheFilterAndPadsShortAnswers(t *testing.T) {
	c := mustCreate(t, filepath.Join(t.TempDir(), "c"), Tuning{})
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	vecs := randomVectors(rng, 50)
	ids := make([]ID, 50)
	docs := make([][]byte, 50)
	for i := range ids {
		ids[i] = IntID(uint64(i))
		docs[i] = []byte(`{"keep":false}`)
	}
	docs[3], docs[17], docs[40] = []byte(`{"keep":true}`), []byte(`{"keep":true}`), []byte(`{"keep":true}`)
	if err := c.Upsert(ids, vecs, docsOf(t, docs)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete([]ID{IntID(40)}); err != nil {
		t.Fatal(err)
	}
	f, err := meta.ParseFilter([]byte(`{"keep": true}`))
	if err != nil {
		t.Fatal(err)
	}
	got, dists := make([]ID, 5), make([]float32, 5)
	if _, err := c.QueryMMR("", vecs[3*testDim:4*testDim], 5, 0, MMR{Lambda: 0.5}, f, nil, 1, got, dists); err != nil {
		t.Fatal(err)
	}
	if got[0] != IntID(3) || got[1] != IntID(17) {
		t.Fatalf("MMR with the filter found %v, want 3 then 17", got[:2])
	}
	for p := 2; p < 5; p++ {
		if !got[p].IsNone() || !math.IsInf(float64(dists[p]), 1) {
			t.Fatalf("result %d is %v at %g, want padding", p, got[p], dists[p])
		}
	}
	empty, _ := meta.ParseFilter([]byte(`{"keep": "neither"}`))
	if _, err := c.QueryMMR("", vecs[:testDim], 5, 0, MMR{Lambda: 0.5}, empty, nil, 1, got, dists); err != nil {
		t.Fatal(err)
	}
	if !got[0].IsNone() {
		t.Fatalf("a filter matching nothing found %v", got[0])
	}
}

func TestMMRRefusesBadArguments(t *testing.T) {
	c := mustCreate(t, filepath.Join(t.TempDir(), "c"), Tuning{})
	defer c.Close()
	q := make([]float32, testDim)
	out, dists := make([]ID, 4), make([]float32, 4)
	for name, call := range map[string]func() error{
		"lambda below 0": func() error { return mmrErr(c.QueryMMR("", q, 4, 0, MMR{Lambda: -0.1}, nil, nil, 1, out, dists)) },
		"lambda above 1": func() error { return mmrErr(c.QueryMMR("", q, 4, 0, MMR{Lambda: 1.5}, nil, nil, 1, out, dists)) },
		"lambda NaN":     func() error { return mmrErr(c.QueryMMR("", q, 4, 0, MMR{Lambda: math.NaN()}, nil, nil, 1, out, dists)) },
		"fetch_k below k": func() error {
			return mmrErr(c.QueryMMR("", q, 4, 0, MMR{Lambda: 0.5, FetchK: 3}, nil, nil, 1, out, dists))
		},
		"k 0": func() error {
			return mmrErr(c.QueryMMR("", q, 0, 0, MMR{Lambda: 0.5}, nil, nil, 1, out[:0], dists[:0]))
		},
		"short query": func() error { return mmrErr(c.QueryMMR("", q[1:], 4, 0, MMR{Lambda: 0.5}, nil, nil, 1, out, dists)) },
		"two queries": func() error {
			return mmrErr(c.QueryMMR("", append(q, q...), 4, 0, MMR{Lambda: 0.5}, nil, nil, 1, out, dists))
		},
		"short outputs": func() error {
			return mmrErr(c.QueryMMR("", q, 4, 0, MMR{Lambda: 0.5}, nil, nil, 1, out[:3], dists[:3]))
		},
		"no such field": func() error { return mmrErr(c.QueryMMR("dense", q, 4, 0, MMR{Lambda: 0.5}, nil, nil, 1, out, dists)) },
	} {
		if err := call(); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("%s: got %v, want an invalid-input error", name, err)
		}
	}
}

func mmrErr(_ any, err error) error { return err }
