package hnsw

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// TestManhattanGraphFindsTheL1Neighbours prevents a graph over the l1
// metric from being built or searched with another metric's kernel: its
// answers must be the brute-force L1 neighbours (recall) with their exact
// L1 distances.
func TestManhattanGraphFindsTheL1Neighbours(t *testing.T) {
	racetest.AnswersOnly(t)
	const n, dim, k, nq = 2000, 12, 10, 40
	rng := rand.New(rand.NewPCG(7, 1))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	x, err := New(Config{Dim: dim, Metric: metric.Manhattan, M: 12, EfConstruction: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add(data, ids, nil, 1); err != nil {
		t.Fatal(err)
	}
	l1 := func(a, b []float32) float64 { return synth.Distance("l1", a, b) }
	hits := 0
	for range nq {
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		order := synth.KNN("l1", data, q, dim, k)[0]
		outIDs, outDists := make([]int64, k), make([]float32, k)
		if err := x.Search(q, k, 200, 1, outIDs, outDists); err != nil {
			t.Fatal(err)
		}
		for i, id := range outIDs {
			want := l1(q, data[int(id)*dim:(int(id)+1)*dim])
			if math.Abs(float64(outDists[i])-want) > 1e-4*want {
				t.Fatalf("id %d: distance %v, L1 is %v", id, outDists[i], want)
			}
			if slices.Contains(order[:k], int(id)) {
				hits++
			}
		}
	}
	if recall := float64(hits) / (nq * k); recall < 0.95 {
		t.Fatalf("recall@%d %.3f against brute-force L1, want >= 0.95", k, recall)
	}
}

func TestManhattanRefusesCodes(t *testing.T) {
	if _, err := New(Config{Dim: 8, Metric: metric.Manhattan, Quantization: QuantSQ8}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("l1 with sq8: %v, want ErrInvalidArgument", err)
	}
	if _, err := New(Config{Dim: 8, Metric: metric.Manhattan, RaBitQBits: 1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("l1 with rabitq: %v, want ErrInvalidArgument", err)
	}
}
