package collection

import (
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// BenchmarkBatchUpsert measures the apply path of a single-field
// collection: 20,000 x 128 rows upserted in batches of 500 into a fresh
// collection (fsync "never", so the index insert, not the disk, is timed).
// Reports rows/s.
func BenchmarkBatchUpsert(b *testing.B) {
	const n, dim, batch = 20_000, 128, 500
	data := synth.Clustered(n, dim, 100, 0.3, 21)
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = IntID(uint64(i))
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: FsyncNever}, Tuning{CheckpointBytes: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for at := 0; at < n; at += batch {
			if err := c.Upsert(ids[at:at+batch], data[at*dim:(at+batch)*dim], nil); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		c.CloseForDrop()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
