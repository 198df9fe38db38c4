package collection

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

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
						if err := c.Upsert([]uint64{id}, vecs[row:row+128], nil); err != nil {
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
