package collection

import (
	"sync"
	"syscall"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// BenchmarkIntegerUpsert and BenchmarkIntegerQuery time the integer-id
// path (string ids must not slow it down): batches of 100 upserts without
// fsync into a growing 32-d collection, and single queries (k=10, ef=64)
// on a 20k x 32 one, built once per process.
func BenchmarkIntegerUpsert(b *testing.B) {
	const dim, batch = 32, 100
	c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: FsyncNever}, Tuning{CheckpointBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	data := synth.Clustered(10*batch, dim, 20, 0.3, 5)
	ids := make([]uint64, batch)
	next := uint64(0)
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		for j := range ids {
			ids[j] = next
			next++
		}
		at := (i % 10) * batch * dim
		if err := c.Upsert(benchIDs(ids), data[at:at+batch*dim], nil); err != nil {
			b.Fatal(err)
		}
	}
}

var benchQuery struct {
	once    sync.Once
	c       *Collection
	queries []float32
}

func BenchmarkIntegerQuery(b *testing.B) {
	const n, dim = 20_000, 32
	benchQuery.once.Do(func() {
		c, err := Create(b.TempDir()+"/q", Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: FsyncNever}, Tuning{CheckpointBytes: -1})
		if err != nil {
			b.Fatal(err)
		}
		data := synth.Clustered(n, dim, 50, 0.3, 7)
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = uint64(i)
		}
		for at := 0; at < n; at += 1000 {
			if err := c.Upsert(benchIDs(ids[at:at+1000]), data[at*dim:(at+1000)*dim], nil); err != nil {
				b.Fatal(err)
			}
		}
		benchQuery.c, benchQuery.queries = c, synth.Clustered(1000, dim, 50, 0.3, 8)
	})
	c, queries := benchQuery.c, benchQuery.queries
	out, dists := benchOut(10), make([]float32, 10)
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		qi := i % 1000
		if _, err := c.Query(queries[qi*dim:(qi+1)*dim], 10, 64, nil, 1, out, dists); err != nil {
			b.Fatal(err)
		}
	}
}

func benchIDs(ids []uint64) []ID { return IntIDs(ids) }
func benchOut(k int) []ID        { return make([]ID, k) }

// reportCPU reports the process's CPU time per op (user + system, every
// thread): steadier than wall time on a machine shared with other work.
func reportCPU(b *testing.B) func() {
	cpu := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op") }
}
