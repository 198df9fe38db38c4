package hnsw

import (
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// qgFixture is an index of the qg layout over the first n rows of a real
// set, with the exact neighbours of its first nq queries.
type qgFixture struct {
	rabitqFixture
}

func newQGFixture(t *testing.T, set string, m metric.Metric, n, nq int) *qgFixture {
	t.Helper()
	data, err := loadSweepSet(set, n)
	if err != nil {
		t.Skipf("real data not available: %v", err)
	}
	f := &qgFixture{rabitqFixture{dim: data.Dim, k: 10}}
	f.data = data.Train
	f.queries = data.Queries[:nq*data.Dim]
	x, err := New(Config{Dim: f.dim, Metric: m, Seed: 3, RaBitQBits: 1, RaBitQLayout: LayoutQG})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, len(f.data)/f.dim)
	for i := range ids {
		ids[i] = uint64(i)
	}
	if err := x.Add(f.data, ids, nil, 0); err != nil {
		t.Fatal(err)
	}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	f.x = x
	f.truth = exactTruth(f.data, f.queries, f.dim, f.k, m)
	return f
}

// TestQGRecall is issue 22's same-algorithm check for the qg layout on
// real data: at equal ef the quantized graph must reach the float HNSW
// graph's recall within recallSlack.
func TestQGRecall(t *testing.T) {
	f := newQGFixture(t, "pypi-use512", metric.Cosine, 5000/raceHalve, 200)
	rq := f.x.rabitq.Load()
	if rq == nil || rq.qg == nil {
		t.Fatal("the index has no quantized graph")
	}
	for _, ef := range []int{16, 32, 64, 128} {
		_, recall, st := f.search(t, ef, nil)
		f.x.rabitq.Store(nil)
		_, floatRecall, fst := f.search(t, ef, nil)
		f.x.rabitq.Store(rq)
		t.Logf("ef %d: qg recall %.4f, %d distances; float %.4f, %d", ef, recall, st.DistanceComputations, floatRecall, fst.DistanceComputations)
		if recall < floatRecall-recallSlack {
			t.Errorf("ef %d: recall %.4f, want >= %.4f (float %.4f)", ef, recall, floatRecall-recallSlack, floatRecall)
		}
	}
	_ = synth.Recall
}
