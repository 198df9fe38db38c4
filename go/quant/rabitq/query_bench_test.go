package rabitq

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkQueryPrepare is the per-query cost before any estimate: the
// rotation, the terms of every centroid and the 8- and 6-bit operands with
// their FastScan tables, at 512 dimensions with the centroid counts of a
// 20k and a 100k index (rabitqClusters: one per 1,000 nodes, at most 64),
// and the qg layout's (PrepareFastFrom, one centroid).
func BenchmarkQueryPrepare(b *testing.B) {
	const dim = 512
	rng := rand.New(rand.NewPCG(5, 6))
	sample := make([]float32, 4000*dim)
	for i := range sample {
		sample[i] = float32(rng.NormFloat64())
	}
	for _, clusters := range []int{20, 64} {
		q, err := NewClustered(dim, InnerProduct, 1, 1, sample, clusters)
		if err != nil {
			b.Fatal(err)
		}
		qq := q.NewQuery()
		qq.EnableFastScan()
		v := sample[:dim]
		b.Run(map[int]string{20: "clusters=20", 64: "clusters=64"}[clusters], func(b *testing.B) {
			runtime.LockOSThread() // cpu-ns/op is this thread's CPU time: steadier than wall time on a shared machine
			defer runtime.UnlockOSThread()
			cpu0 := threadCPUSeconds()
			for b.Loop() {
				qq.Prepare(v)
			}
			b.ReportMetric((threadCPUSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
		})
	}
	// The qg layout's preparation: one centroid (the origin), PrepareFastFrom.
	q, err := New(dim, InnerProduct, 1, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	qq := q.NewQuery()
	qq.EnableFastScan()
	b.Run("qg", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0 := threadCPUSeconds()
		for b.Loop() {
			qq.PrepareFastFrom(sample[:dim])
		}
		b.ReportMetric((threadCPUSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkRotation784 is the rotation of one 784-d vector (fashion-mnist)
// to D = 832 (PaddedDim: the FHT-Kac walk) and to the legacy D = 1,024
// (three Hadamard rounds), and a whole Prepare (rotation, 8- and 6-bit
// query, FastScan tables) at each D, one centroid as in the qg layout.
func BenchmarkRotation784(b *testing.B) {
	const dim = 784
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	for _, padded := range []int{PaddedDim(dim), LegacyPaddedDim(dim)} {
		q, err := NewWithCentroidsPadded(dim, padded, L2, 1, 1, make([]float32, dim))
		if err != nil {
			b.Fatal(err)
		}
		out := make([]float32, padded)
		qq := q.NewQuery()
		qq.EnableFastScan()
		for _, what := range []string{"rotate", "prepare"} {
			b.Run(fmt.Sprintf("%s/D=%d", what, padded), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPUSeconds()
				for b.Loop() {
					if what == "rotate" {
						q.Rotate(v, out)
					} else {
						qq.Prepare(v)
					}
				}
				b.ReportMetric((threadCPUSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// threadCPUSeconds is the CPU time of the calling thread.
func threadCPUSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkEncodeResidual is coding one edge of a quantized graph
// (EncodeResidual: 32 per node of its build) at the padded dimensions of
// 512- and 784-dimensional data, beside referenceEncodeResidual, the loop
// it replaced (the same codes, TestEncodeResidualKeepsItsCodes).
func BenchmarkEncodeResidual(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dim := range []int{512, 784} {
		q, err := New(dim, L2, 1, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		D := q.Padded()
		e := q.NewEncoder()
		ro, ru, bits := make([]float32, D), make([]float32, D), make([]uint64, D/64)
		for i := range ro {
			ro[i], ru[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		for _, impl := range []struct {
			name string
			code func() Factors
		}{
			{"current", func() Factors { return e.EncodeResidual(ro, ru, bits) }},
			{"reference", func() Factors { return referenceEncodeResidual(e, ro, ru, bits) }},
		} {
			b.Run(fmt.Sprintf("%s/d=%d", impl.name, D), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPUSeconds()
				for b.Loop() {
					impl.code()
				}
				b.ReportMetric((threadCPUSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
