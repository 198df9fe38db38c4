package collection

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-db/strata/go/metric"
)

// BenchmarkQueryWithExpiredPoints measures what expired points cost a
// query before the reaper deletes them (every read then filters them out,
// as a filtered query would) against none expired and against after the
// reap: 20k points of 32 dimensions, k = 10, one query per op.
func BenchmarkQueryWithExpiredPoints(b *testing.B) {
	const n, dim = 20_000, 32
	clock := newFakeClock()
	c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: FsyncNever},
		Tuning{Clock: clock.now, ReapInterval: -1, ReapBatch: n})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = float32(rng.NormFloat64())
	}
	ids := make([]ID, n)
	ttls := make([]float64, n)
	for i := range ids {
		ids[i] = IntID(uint64(i))
		ttls[i] = math.NaN()
		if i%100 == 0 { // 1 % expire after 10 s
			ttls[i] = 10
		}
	}
	for from := 0; from < n; from += 1000 {
		if err := c.UpsertExpiring(ids[from:from+1000], vecs[from*dim:(from+1000)*dim], nil, Expiry{TTL: ttls[from : from+1000]}); err != nil {
			b.Fatal(err)
		}
	}
	c.waitBuilt()
	out, dists := make([]ID, 10), make([]float32, 10)
	query := func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			q := vecs[(i%n)*dim : (i%n+1)*dim]
			if _, err := c.Query(q, 10, 0, nil, 1, out, dists); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none-expired", query)
	clock.advance(10 * time.Second)
	b.Run("1pct-awaiting-reaper", query)
	if err := c.Reap(); err != nil {
		b.Fatal(err)
	}
	if c.expiry.len() != 0 {
		b.Fatalf("%d expiring points left after the reap", c.expiry.len())
	}
	b.Run("after-reap", query)
}
