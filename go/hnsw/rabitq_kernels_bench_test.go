package hnsw

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
)

// BenchmarkRaBitQKernelBandwidth runs each kernel a RaBitQ search calls on
// codes spread over 256 MiB (far beyond the caches), in the order a search
// reads them (32 random codes at a time, prefetched as the search does),
// and reports codes/s, the GB/s of code bytes read, and that as a fraction
// of the one-thread streaming bandwidth measured in the same run
// (streamReadGBps): how far each kernel is from the memory's physical
// limit, all in the calling thread's CPU time. D = 512:
//
//	bitdot-rows   kernels.BitDotU8Rows: 1-bit code rows (88 bytes, the row layout)
//	fastscan32    kernels.FastScan32: one neighbour block of 32 codes (2 KiB of codes)
//	dotu8         kernels.DotU8: a byte extended code (512 bytes)
//	planes3       the codes-only refinement: 1-bit code + 2 bit planes (3 bits, 192 bytes)
//
//	go test ./go/hnsw -run '^$' -bench RaBitQKernelBandwidth -benchtime 2s
func BenchmarkRaBitQKernelBandwidth(b *testing.B) {
	const dim, words, total = 512, 512 / 64, 256 << 20
	rng := rand.New(rand.NewPCG(5, 6))
	q := make([]uint8, dim)
	for i := range q {
		q[i] = uint8(rng.UintN(256))
	}
	random := func(n int) []uint32 {
		ids := make([]uint32, 32*1024)
		for i := range ids {
			ids[i] = uint32(rng.IntN(n))
		}
		return ids
	}
	bandwidth := streamReadGBps()
	// One 256 MiB array of random words, viewed as each kernel's codes.
	pool := make([]uint64, total/8)
	for i := range pool {
		pool[i] = rng.Uint64()
	}
	poolBytes := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(pool))), total)
	report := func(b *testing.B, codes, bytesPerCode float64, cpu float64) {
		gbps := codes * bytesPerCode / cpu / 1e9
		b.ReportMetric(codes/cpu, "codes/s")
		b.ReportMetric(gbps, "GB/s")
		b.ReportMetric(gbps/bandwidth, "of-stream")
		b.ReportMetric(bandwidth, "stream-GB/s")
	}
	// Each sub-benchmark runs on its own goroutine: lock it to its thread,
	// whose CPU time threadCPU reads.
	b.Run("bitdot-rows", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		stride := words + rowFactorWords
		n := total / (8 * stride)
		rows := pool[:n*stride]
		ids, out := random(n), make([]uint32, 32)
		cpu0, done := threadCPU(), 0
		for b.Loop() {
			batch := ids[done%len(ids):][:32]
			kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(rows)), uintptr(stride)*8, batch, (stride*8+63)/64)
			kernels.BitDotU8Rows(q, rows, stride, batch, out)
			done += 32
		}
		report(b, float64(done), float64(8*stride), threadCPU()-cpu0)
	})
	b.Run("fastscan32", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		blockBytes := 4 * dim // the codes of one block of 32
		n := total / blockBytes
		blocks := poolBytes[:n*blockBytes]
		lut := make([]uint8, 16*dim/4)
		for i := range lut {
			lut[i] = uint8(rng.UintN(64))
		}
		ids := random(n)
		var out [32]uint32
		cpu0, done := threadCPU(), 0
		for b.Loop() {
			id := ids[done/32%(len(ids)-1):][:2] // this block, and the next to prefetch
			kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(blocks)), uintptr(blockBytes), id[1:], blockPrefetchLines)
			kernels.FastScan32(lut, blocks[int(id[0])*blockBytes:][:blockBytes], &out)
			done += 32
		}
		report(b, float64(done), float64(blockBytes)/32, threadCPU()-cpu0)
	})
	b.Run("dotu8", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		n := total / dim
		ex := poolBytes[:n*dim]
		ids := random(n)
		var sink uint32
		cpu0, done := threadCPU(), 0
		for b.Loop() {
			batch := ids[done%len(ids):][:32]
			kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(ex)), dim, batch, dim/64)
			for _, id := range batch {
				sink += kernels.DotU8(ex[int(id)*dim:][:dim], q)
			}
			done += 32
		}
		_ = sink
		report(b, float64(done), dim, threadCPU()-cpu0)
	})
	for _, bits := range []int{3} {
		b.Run(fmt.Sprintf("planes%d", bits), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// The planes' refinement reads the node's code row and its planes.
			stride := words + rowFactorWords
			per := (bits - 1) * words
			n := total / (8 * (stride + per))
			rows, planes := pool[:n*stride], pool[n*stride:n*(stride+per)]
			ids := random(n)
			var sink uint32
			cpu0, done := threadCPU(), 0
			for b.Loop() {
				batch := ids[done%len(ids):][:32]
				kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(planes)), uintptr(per)*8, batch, (per*8+63)/64)
				kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(rows)), uintptr(stride)*8, batch, (stride*8+63)/64)
				for _, id := range batch {
					sink += planeDot(rows, planes, words, stride, bits, q, id)
				}
				done += 32
			}
			_ = sink
			report(b, float64(done), float64(8*(stride+per)), threadCPU()-cpu0)
		})
	}
}
