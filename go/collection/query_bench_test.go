package collection

import (
	"fmt"
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

// BenchmarkQueryRealVsGraph measures one query per call on 30,000 rows of
// pypi-use512 (512-d, cosine, string ids, ef 64, k 4) once the builder has
// moved every row into the graph, through Collection.Query and through the
// same graph's SearchFiltered: the difference is what the collection layer
// (tail view, filter planning, key -> id mapping) adds to a search.
func BenchmarkQueryRealVsGraph(b *testing.B) {
	const n, k, ef = 30_000, 4, 64
	set, err := synth.LoadRealSet("pypi-use512", n)
	if err != nil {
		b.Skip("shared data absent:", err)
	}
	dim := set.Dim
	c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.Cosine, Seed: 1, Fsync: FsyncNever}, Tuning{CheckpointBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseForDrop()
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = StringID(fmt.Sprintf("pkg-%d", i))
	}
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(ids[at:at+1000], set.Train[at*dim:(at+1000)*dim], nil); err != nil {
			b.Fatal(err)
		}
	}
	c.waitIndexed()
	nq := len(set.Queries) / dim
	query := func(i int) []float32 { return set.Queries[(i%nq)*dim : (i%nq+1)*dim] }
	b.Run("collection", func(b *testing.B) {
		outIDs, outDists := make([]ID, k), make([]float32, k)
		var ndis int64
		for i := range b.N {
			stats, err := c.Query(query(i), k, ef, nil, 1, outIDs, outDists)
			if err != nil {
				b.Fatal(err)
			}
			ndis += stats.DistanceComputations
		}
		b.ReportMetric(float64(ndis)/float64(b.N), "dists/op")
	})
	b.Run("graph", func(b *testing.B) {
		vf, err := c.queriedField("", false)
		if err != nil {
			b.Fatal(err)
		}
		keys, dists := make([]int64, k), make([]float32, k)
		var ndis int64
		for i := range b.N {
			stats, err := vf.index.SearchFiltered(query(i), k, ef, 1, nil, keys, dists)
			if err != nil {
				b.Fatal(err)
			}
			ndis += stats.DistanceComputations
		}
		b.ReportMetric(float64(ndis)/float64(b.N), "dists/op")
	})
}
