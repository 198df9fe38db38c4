package collection

import (
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// BenchmarkQueryOne measures one query per call on one thread against a
// 20,000 x 64 single-field collection (ef 64, k 10): the query path's own
// cost, for before/after comparisons of the collection layer.
func BenchmarkQueryOne(b *testing.B) {
	const n, dim = 20_000, 64
	c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: FsyncNever}, Tuning{CheckpointBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseForDrop()
	data := synth.Clustered(n, dim, 100, 0.3, 31)
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = IntID(uint64(i))
	}
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(ids[at:at+1000], data[at*dim:(at+1000)*dim], nil); err != nil {
			b.Fatal(err)
		}
	}
	queries := synth.Clustered(1000, dim, 100, 0.3, 32)
	outIDs, outDists := make([]ID, 10), make([]float32, 10)
	b.ResetTimer()
	for i := range b.N {
		q := queries[(i%1000)*dim : (i%1000+1)*dim]
		if _, err := c.Query(q, 10, 64, nil, 1, outIDs, outDists); err != nil {
			b.Fatal(err)
		}
	}
}
