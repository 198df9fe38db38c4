package collection

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// multiSet makes a collection in dir of n points of 2-12 vectors each
// (their counts drawn from seed) in a multivector field "tokens" of
// metric m, waits until they are in its graph, and returns it with the
// points. It closes the collection when the test ends.
func multiSet(t *testing.T, dir string, m metric.Metric, n, dim int, seed uint64) (*Collection, []multiPoint) {
	t.Helper()
	c, err := Create(dir, Options{Vectors: []VectorField{{Name: "tokens", Dim: dim, Metric: m, Multivector: MaxSim}}, Seed: 1},
		Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rng := rand.New(rand.NewPCG(seed, seed))
	pool := synth.Clustered(n*12, dim, 60, 0.3, 5)
	points := make([]multiPoint, n)
	ids := make([]uint64, n)
	var counts []int
	var rows []float32
	at := 0
	for i := range n {
		cnt := 2 + rng.IntN(11)
		ids[i] = uint64(i)
		points[i] = multiPoint{id: uint64(i), rows: pool[at*dim : (at+cnt)*dim]}
		at += cnt
		counts = append(counts, cnt)
		rows = append(rows, points[i].rows...)
	}
	if err := c.UpsertPoints(IntIDs(ids), map[string]FieldValues{"tokens": {Vectors: rows, Counts: counts}}, nil); err != nil {
		t.Fatal(err)
	}
	c.waitIndexed()
	return c, points
}

// maxSimRecall runs nq queries of 4 vectors at ef and returns the mean
// recall@k against the exact MAX_SIM and the plans the queries took.
func maxSimRecall(t *testing.T, c *Collection, points []multiPoint, dim, k, ef, nq int) (float64, map[hnsw.Plan]int) {
	t.Helper()
	queries := synth.Clustered(nq*4, dim, 60, 0.3, 9)
	ids, dists := make([]ID, k), make([]float32, k)
	plans := map[hnsw.Plan]int{}
	total := 0.0
	for q := range nq {
		query := queries[q*4*dim : (q+1)*4*dim]
		stats, err := c.QueryMulti("tokens", query, k, ef, nil, nil, 1, ids, dists)
		if err != nil {
			t.Fatal(err)
		}
		plans[stats.Plan]++
		total += recallOf(ids, exactMaxSim(metric.Cosine, query, dim, points, k))
	}
	return total / float64(nq), plans
}

// TestMaxSimOverFewVectorsIsExact: a field of at most exactMaxSimRows
// vectors scores every point (one pass costs about what the graph
// searches would), so even a small ef finds the exact top k (it fetched
// ef nearest vectors per query vector and missed points).
func TestMaxSimOverFewVectorsIsExact(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, k, nq = 16, 10, 20
	c, points := multiSet(t, t.TempDir(), metric.Cosine, 300, dim, 5) // about 2,100 vectors
	recall, plans := maxSimRecall(t, c, points, dim, k, k, nq)
	if recall != 1 || plans[hnsw.PlanExact] != nq {
		t.Fatalf("recall@%d at ef %d over %d points: %.3f, plans %v; want 1 and every query exact", k, k, len(points), recall, plans)
	}
}

// TestMaxSimAtEfOfThePointCountIsExact: ef at least the point count (a
// door's exact flag: the point count + 1) scores every point; as a graph
// budget it counted points where the graph holds vectors and missed
// points whose vectors all lie beyond that many.
func TestMaxSimAtEfOfThePointCountIsExact(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, k, nq = 16, 10, 20
	c, points := multiSet(t, t.TempDir(), metric.Cosine, 800, dim, 5) // about 5,600 vectors: past exactMaxSimRows
	// Every point at ef 801: at most 801 nearest vectors per
	// query vector held the candidates.
	if recall, plans := maxSimRecall(t, c, points, dim, 800, c.Len()+1, nq); recall != 1 || plans[hnsw.PlanExact] != nq {
		t.Fatalf("recall@800 (every point) at ef = points + 1: %.4f, plans %v; want 1 and every query exact", recall, plans)
	}
	// Below the point count the graph gives the candidates: recall per
	// ef (the default is 64), at least 0.95 from the default on.
	for _, ef := range []int{10, 32, 64, 128} {
		recall, plans := maxSimRecall(t, c, points, dim, k, ef, nq)
		t.Logf("MAX_SIM recall@%d at ef %d: %.3f (plans %v)", k, ef, recall, plans)
		if plans[hnsw.PlanGraph] != nq {
			t.Fatalf("ef %d: plans %v, want the graph for every query", ef, plans)
		}
		if ef >= hnsw.DefaultEfSearch && recall < 0.95 {
			t.Errorf("MAX_SIM recall@%d at ef %d: %.3f, want >= 0.95", k, ef, recall)
		}
	}
}
