package hnsw

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/internal/testdata"
	"github.com/strata-db/strata/go/metric"
)

// Benchmarks build one index of benchN clustered vectors (override with
// STRATA_BENCH_N / STRATA_BENCH_DIM) and reuse it across benchmarks.
var (
	benchOnce    sync.Once
	benchIndex   *Index
	benchQueries []float32
	benchDim     = envInt("STRATA_BENCH_DIM", 128)
	benchN       = envInt("STRATA_BENCH_N", 20000)
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		data := testdata.Clustered(benchN, benchDim, 200, 0.3, 11)
		benchQueries = testdata.Clustered(1000, benchDim, 200, 0.3, 12)
		x, err := New(Config{Dim: benchDim, Metric: metric.L2, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Add(data, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
		benchIndex = x
	})
}

// BenchmarkSearchOne is one single-threaded query at ef=64, k=10, the unit
// that bench/bench_overhead.py compares with the Python call.
func BenchmarkSearchOne(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	ids := make([]int64, 10)
	dists := make([]float32, 10)
	nq := len(benchQueries) / benchDim
	var ndis int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := benchQueries[(i%nq)*benchDim : (i%nq+1)*benchDim]
		st, err := x.SearchFiltered(q, 10, 64, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		ndis += st.DistanceComputations
	}
	b.ReportMetric(float64(ndis)/float64(b.N), "dist/op")
}

// BenchmarkBuild measures parallel construction of benchN vectors.
func BenchmarkBuild(b *testing.B) {
	data := testdata.Clustered(benchN, benchDim, 200, 0.3, 11)
	for b.Loop() {
		x, _ := New(Config{Dim: benchDim, Seed: 1})
		if err := x.Add(data, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}
