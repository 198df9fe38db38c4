package hnsw

import (
	"errors"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// TestSQ8RerankMatchesFloatRecall is the metamorphic check of issue 4: the
// same data and queries through a float index and an SQ8+rerank index give
// recall within 0.01, and an SQ8 codes-only index stays useful.
func TestSQ8RerankMatchesFloatRecall(t *testing.T) {
	racetest.AnswersOnly(t)
	data := synth.Clustered(testN, testDim, 100, 0.15, 31)
	queries := synth.Clustered(testQueries, testDim, 100, 0.15, 32)
	for _, m := range []metric.Metric{metric.L2, metric.IP, metric.Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			truth := truthIDs(synth.KNN(m.String(), data, queries, testDim, testK), 0)
			recall := map[string]float64{}
			for name, cfg := range map[string]Config{
				"float":  {Dim: testDim, Metric: m, Seed: 5},
				"rerank": {Dim: testDim, Metric: m, Seed: 5, Quantization: QuantSQ8, Rerank: true},
				"codes":  {Dim: testDim, Metric: m, Seed: 5, Quantization: QuantSQ8},
			} {
				x := mustNew(t, cfg)
				if err := x.Add(data, nil, nil, 0); err != nil {
					t.Fatal(err)
				}
				if err := x.CheckIntegrity(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				ids, _ := search(t, x, queries, testK, 64, 0)
				recall[name] = synth.Recall(ids, truth, testK)
			}
			if recall["rerank"] < recall["float"]-0.01 {
				t.Errorf("SQ8+rerank recall %.4f, float %.4f", recall["rerank"], recall["float"])
			}
			if recall["codes"] < 0.8 {
				t.Errorf("SQ8 codes-only recall %.4f < 0.8", recall["codes"])
			}
			t.Logf("recall float %.4f rerank %.4f codes %.4f", recall["float"], recall["rerank"], recall["codes"])
		})
	}
}

func TestSQ8TrainRules(t *testing.T) {
	x := mustNew(t, Config{Dim: 2})
	if err := x.Train([]float32{1, 2}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("train on a float index: %v", err)
	}
	x = mustNew(t, Config{Dim: 2, Quantization: QuantSQ8})
	if x.Trained() {
		t.Fatal("new SQ8 index claims to be trained")
	}
	if err := x.Train([]float32{0, 0, 4, 4}); err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]float32{1, 1, 9, 9}, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := x.Train([]float32{0, 0}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("train after add: %v", err)
	}
	out := make([]float32, 4)
	if err := x.GetVectors([]uint64{0, 1}, out); err != nil {
		t.Fatal(err)
	}
	// Codes-only: decoded values, 9 clamped to the trained maximum 4.
	if out[0] < 0.98 || out[0] > 1.02 || out[2] != 4 {
		t.Fatalf("decoded vectors %v", out)
	}
	if _, err := New(Config{Dim: 2, Rerank: true}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("rerank without quantization: %v", err)
	}
}

// TestEmptyCodesOnlyIndexAnswersNothing keeps a search of an empty SQ8
// index without floats (no quantizer trained yet: a collection's fresh
// active graph) an empty answer, not an error.
func TestEmptyCodesOnlyIndexAnswersNothing(t *testing.T) {
	x, err := New(Config{Dim: 8, Metric: metric.L2, Quantization: QuantSQ8})
	if err != nil {
		t.Fatal(err)
	}
	ids, dists := make([]int64, 3), make([]float32, 3)
	if _, err := x.SearchFiltered(make([]float32, 8), 3, 0, 1, nil, ids, dists); err != nil {
		t.Fatalf("search of an empty SQ8 index: %v", err)
	}
	for _, id := range ids {
		if id != -1 {
			t.Fatalf("an empty index answered %v", ids)
		}
	}
}
