package collection

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// BenchmarkSingleUpsert measures single-row upserts with fsync="always"
// from 1 and 8 goroutines: group commit should turn the 8 writers' fsyncs
// into a few per group. Reports rows/s and fsyncs per row.
func BenchmarkSingleUpsert(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(map[int]string{1: "writers=1", 8: "writers=8"}[writers], func(b *testing.B) {
			opts := Options{Dim: 128, Metric: metric.L2, Seed: 1}
			c, err := Create(b.TempDir(), opts, Tuning{CheckpointBytes: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			vecs := make([]float32, 128*1024)
			for i := range vecs {
				vecs[i] = float32(rng.NormFloat64())
			}
			var next atomic.Uint64
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / writers
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range per {
						id := next.Add(1)
						row := int(id%1024) * 128
						if err := c.Upsert(IntIDs([]uint64{id}), vecs[row:row+128], nil); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			in := c.Info()
			b.ReportMetric(float64(per*writers)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(in.Syncs)/float64(per*writers), "fsyncs/row")
		})
	}
}

// BenchmarkQueryOversubscribed is the in-process side of strata-server's
// --gomaxprocs choice: 32 goroutines query a 100k x 128 collection (ef=64,
// the load test's query cell) with nothing else on the machine. Run it with
// -cpu 2,4 on a 2-core machine: the gap is what more threads than cores
// cost a server that has the cores to itself.
func BenchmarkQueryOversubscribed(b *testing.B) {
	const n, dim = 100_000, 128
	c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.L2, Seed: 1}, Tuning{CheckpointBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	data := synth.Clustered(n, dim, 200, 0.3, 11)
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(IntIDs(ids[at:at+1000]), data[at*dim:(at+1000)*dim], nil); err != nil {
			b.Fatal(err)
		}
	}
	queries := synth.Clustered(1000, dim, 200, 0.3, 12)
	var next atomic.Int64
	b.SetParallelism(32 / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		outIDs := make([]ID, 10)
		outDists := make([]float32, 10)
		for pb.Next() {
			qi := int(next.Add(1)) % 1000
			if _, err := c.Query(queries[qi*dim:(qi+1)*dim], 10, 64, nil, 1, outIDs, outDists); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
