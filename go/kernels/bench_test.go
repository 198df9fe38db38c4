package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchDims are the common embedding sizes; one pair of vectors of each fits
// in L1, so the benchmarks measure the kernels, not memory.
var benchDims = []int{96, 128, 384, 768, 1536}

// benchPaths runs body for every path and every d in benchDims, through
// the exported, dispatching entry points (as the index calls them), and
// reports throughput counting 2·d operations per call (a multiply and an add
// per element; the subtraction of L2 is not counted).
func benchPaths[T float32 | uint8](b *testing.B, unit string, body func(b *testing.B, x, y []T)) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, p := range detectedPaths() {
		restore := setPath(p)
		for _, d := range benchDims {
			x, y := make([]T, d), make([]T, d)
			for i := range x {
				x[i], y[i] = T(rng.IntN(256)), T(rng.IntN(256))
			}
			b.Run(fmt.Sprintf("%s/d=%d", p, d), func(b *testing.B) {
				body(b, x, y)
				b.ReportMetric(2*float64(d)*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
			})
		}
		restore()
	}
}

// Each body calls the kernel directly (not through a func value) so that
// the exported wrapper inlines as it does in the index.

func BenchmarkDot(b *testing.B) {
	benchPaths(b, "GFLOP/s", func(b *testing.B, x, y []float32) {
		var sink float32
		for b.Loop() {
			sink += Dot(x, y)
		}
		_ = sink
	})
}

func BenchmarkL2Squared(b *testing.B) {
	benchPaths(b, "GFLOP/s", func(b *testing.B, x, y []float32) {
		var sink float32
		for b.Loop() {
			sink += L2Squared(x, y)
		}
		_ = sink
	})
}

func BenchmarkL1(b *testing.B) {
	benchPaths(b, "GFLOP/s", func(b *testing.B, x, y []float32) {
		var sink float32
		for b.Loop() {
			sink += L1(x, y)
		}
		_ = sink
	})
}

func BenchmarkDotU8(b *testing.B) {
	benchPaths(b, "GOPS", func(b *testing.B, x, y []uint8) {
		var sink uint32
		for b.Loop() {
			sink += DotU8(x, y)
		}
		_ = sink
	})
}

func BenchmarkL2U8(b *testing.B) {
	benchPaths(b, "GOPS", func(b *testing.B, x, y []uint8) {
		var sink uint32
		for b.Loop() {
			sink += L2U8(x, y)
		}
		_ = sink
	})
}

// BenchmarkL2SquaredRows compares, per path, the distances from one query to
// 16 rows scattered in a block too large for L2 (like an HNSW neighbour list):
// "one" is one L2Squared call per row, "rows" one L2SquaredRows call.
func BenchmarkL2SquaredRows(b *testing.B) {
	benchRows(b, L2SquaredRows, L2Squared)
}

// BenchmarkDotRows is BenchmarkL2SquaredRows for Dot.
func BenchmarkDotRows(b *testing.B) {
	benchRows(b, DotRows, Dot)
}

func benchRows(b *testing.B, rowsKernel func(q, rows []float32, ids []uint32, out []float32), one func(a, b []float32) float32) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, p := range detectedPaths() {
		restore := setPath(p)
		for _, d := range []int{32, 100, 128, 512, 784, 1024} {
			n := (64 << 20) / (4 * d) // 64 MiB of rows
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = rng.Float32()
			}
			q := rows[:d]
			sets := make([][]uint32, 1024)
			for i := range sets {
				sets[i] = make([]uint32, 16)
				for j := range sets[i] {
					sets[i][j] = uint32(rng.IntN(n))
				}
			}
			out := make([]float32, 16)
			b.Run(fmt.Sprintf("%s/d=%d/one", p, d), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					for j, id := range sets[i%len(sets)] {
						out[j] = one(q, rows[int(id)*d:])
					}
				}
			})
			b.Run(fmt.Sprintf("%s/d=%d/rows", p, d), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					rowsKernel(q, rows, sets[i%len(sets)], out)
				}
			})
		}
		restore()
	}
}
