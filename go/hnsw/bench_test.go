package hnsw

import (
	"encoding/binary"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// Benchmarks build one index and reuse it. By default it holds benchN
// clustered vectors; bench/bench_overhead.py instead passes its own data so
// the Go and Python timings search the same graph:
//
//	STRATA_BENCH_TRAIN, STRATA_BENCH_QUERIES  raw little-endian float32 rows
//	STRATA_BENCH_DIM, _N, _METRIC, _K, _EF, _M, _EFC, _SEED, _BUILD_THREADS
//	STRATA_BENCH_INDEX  an index file saved by Index.Save (or strata.Index.save):
//	                    loaded instead of building one from STRATA_BENCH_TRAIN, so
//	                    that every side searches the very same graph and codes
var (
	benchOnce    sync.Once
	benchIndex   *Index
	benchQueries []float32
	benchDim     = envInt("STRATA_BENCH_DIM", 128)
	benchN       = envInt("STRATA_BENCH_N", 20000)
	benchK       = envInt("STRATA_BENCH_K", 10)
	benchEf      = envInt("STRATA_BENCH_EF", 64)
)

// withQuant applies STRATA_BENCH_QUANT: "sq8" (with rerank) or "sq8-codes".
func (c Config) withQuant(q string) Config {
	switch q {
	case "sq8":
		c.Quantization, c.Rerank = QuantSQ8, true
	case "sq8-codes":
		c.Quantization = QuantSQ8
	}
	return c
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// readF32 reads a raw float32 file.
func readF32(b *testing.B, path string) []float32 {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		m, err := metric.Parse(os.Getenv("STRATA_BENCH_METRIC"))
		if err != nil {
			m = metric.L2
		}
		if path := os.Getenv("STRATA_BENCH_INDEX"); path != "" {
			x, err := Load(vfs.Default, path, LoadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if x.Dim() != benchDim {
				b.Fatalf("%s: dimension %d, STRATA_BENCH_DIM %d", path, x.Dim(), benchDim)
			}
			benchQueries = readF32(b, os.Getenv("STRATA_BENCH_QUERIES"))
			b.Logf("strata-bench-index: %s", path)
			benchIndex = x
			return
		}
		var data []float32
		if path := os.Getenv("STRATA_BENCH_TRAIN"); path != "" {
			data = readF32(b, path)
			benchQueries = readF32(b, os.Getenv("STRATA_BENCH_QUERIES"))
			if n := benchN * benchDim; os.Getenv("STRATA_BENCH_N") != "" && n < len(data) {
				data = data[:n]
			}
			b.Logf("strata-bench-data: %s", path)
		} else {
			data = synth.Clustered(benchN, benchDim, 200, 0.3, 11)
			benchQueries = synth.Clustered(1000, benchDim, 200, 0.3, 12)
		}
		x, err := New(Config{
			Dim: benchDim, Metric: m, M: envInt("STRATA_BENCH_M", 16),
			EfConstruction: envInt("STRATA_BENCH_EFC", 200), Seed: uint64(envInt("STRATA_BENCH_SEED", 1)),
		}.withQuant(os.Getenv("STRATA_BENCH_QUANT")))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := x.Add(data, nil, nil, envInt("STRATA_BENCH_BUILD_THREADS", 0)); err != nil {
			b.Fatal(err)
		}
		b.Logf("strata-bench-build: %d vectors in %.2f s", len(data)/benchDim, time.Since(start).Seconds())
		benchIndex = x
	})
}

// BenchmarkSearchOne is one single-threaded query (k=10, ef=64 unless set),
// the unit that bench/bench_overhead.py compares with the Python call.
func BenchmarkSearchOne(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	ids := make([]int64, benchK)
	dists := make([]float32, benchK)
	nq := len(benchQueries) / benchDim
	var ndis int64
	runtime.LockOSThread() // threadCPU reads this thread's clock
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := threadCPU()
	for i := 0; b.Loop(); i++ {
		q := benchQueries[(i%nq)*benchDim : (i%nq+1)*benchDim]
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		ndis += st.DistanceComputations
	}
	b.ReportMetric((threadCPU()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(ndis)/float64(b.N), "dist/op")
}

// BenchmarkBuild measures parallel construction of benchN clustered vectors.
func BenchmarkBuild(b *testing.B) {
	data := synth.Clustered(benchN, benchDim, 200, 0.3, 11)
	for b.Loop() {
		x, _ := New(Config{Dim: benchDim, Seed: 1})
		if err := x.Add(data, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchOneKernels is an A/B of the distance kernels inside one
// process: the same queries on the same index, each query searched once
// with one kernel call per row ("one") and once with the multi-row kernels
// ("rows"), in alternating order. It reports both times per query and
// their ratio.
func BenchmarkSearchOneKernels(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	defer func() { x.testing = searchTesting{} }()
	benchAlternating(b, [2]string{"one", "rows"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		x.testing.oneRowKernels = side == 0
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// benchAlternating times single-query searches of two variants: every
// iteration searches the next query with both, in an order that alternates
// between iterations, so machine noise falls on both alike. It reports each
// side's ns and distances per query and the time ratio side 1 / side 0.
func benchAlternating(b *testing.B, names [2]string, search func(side int, q []float32, ids []int64, dists []float32) int64) {
	ids := make([]int64, benchK)
	dists := make([]float32, benchK)
	nq := len(benchQueries) / benchDim
	var ns [2]time.Duration
	var ndis [2]int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := benchQueries[(i%nq)*benchDim : (i%nq+1)*benchDim]
		for j := range 2 {
			side := (i + j) % 2
			start := time.Now()
			ndis[side] += search(side, q, ids, dists)
			ns[side] += time.Since(start)
		}
	}
	for side, name := range names {
		b.ReportMetric(float64(ns[side].Nanoseconds())/float64(b.N), name+"-ns/q")
		b.ReportMetric(float64(ndis[side])/float64(b.N), name+"-dist/q")
	}
	b.ReportMetric(float64(ns[1])/float64(ns[0]), names[1]+"/"+names[0])
}

// BenchmarkSearchOneReorder is an A/B of the node numbering inside one
// process: two copies of the benchmark index, one numbered in insertion
// order ("insertion", the layout before renumbering), one in the
// breadth-first order Add leaves large graphs in ("bfs"), searched
// alternately with the same queries.
func BenchmarkSearchOneReorder(b *testing.B) {
	benchSetup(b)
	g := benchIndex.graph.Load()
	copies := [2]*Index{numberedCopy(b, benchIndex, g.insertionOrder()), numberedCopy(b, benchIndex, g.bfsOrder())}
	benchAlternating(b, [2]string{"insertion", "bfs"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		st, err := copies[side].SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// numberedCopy returns a search-only copy of x whose node i is x's node
// order[i].
func numberedCopy(b *testing.B, x *Index, order []uint32) *Index {
	y, err := New(x.cfg)
	if err != nil {
		b.Fatal(err)
	}
	g, _ := x.graph.Load().permuted(order)
	for node := range g.count {
		if g.isReady(uint32(node)) {
			y.byID.set(g.labels[node], uint32(node))
		}
	}
	y.graph.Store(g)
	return y
}

// BenchmarkSearchOneSettled is an A/B of the settled prefix inside one
// process: the same index and queries, searched alternately with every
// node's flags checked ("flags") and with the check skipped below the
// settled count ("settled").
func BenchmarkSearchOneSettled(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	defer func() { x.testing = searchTesting{} }()
	benchAlternating(b, [2]string{"flags", "settled"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		x.testing.ignoreSettled = side == 0
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// BenchmarkSearchOneSmallNoPrefetch is an A/B of skipping prefetches on
// graphs whose rows fit in L2 (prefetchMinBytes), inside one process:
// "prefetch" forces them, "skip" is the default; alternating per query.
func BenchmarkSearchOneSmallNoPrefetch(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	defer func() { x.testing = searchTesting{} }()
	benchAlternating(b, [2]string{"prefetch", "skip"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		x.testing.alwaysPrefetch = side == 0
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// BenchmarkSearchLayerList is an A/B of the layer search's candidate
// structures inside one process: the same index and queries, searched
// alternately with two heaps ("heaps") and with the sorted list
// ("list"). Run it at several STRATA_BENCH_EF values to place listMaxEF.
func BenchmarkSearchLayerList(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	defer func() { x.testing = searchTesting{} }()
	x.testing.listMaxEF = 1 << 30
	benchAlternating(b, [2]string{"heaps", "list"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		x.testing.heapsOnly = side == 0
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// BenchmarkSearchListInsert is an A/B of how searchList finds an insertion
// point, inside one process: bisection ("bisect") against a scan back from
// the end ("scan"), alternating per query. Run it at several
// STRATA_BENCH_EF values to place listScanMaxEF.
func BenchmarkSearchListInsert(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	defer func() { x.testing = searchTesting{} }()
	benchAlternating(b, [2]string{"bisect", "scan"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		x.testing.listScanMaxEF = -1 // always bisect
		if side == 1 {
			x.testing.listScanMaxEF = 1 << 30 // always scan
		}
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// BenchmarkSearchListMerge is an A/B of how searchList adds an expanded
// node's candidates: one at a time ("single") or merged at once
// (mergeFresh, "merge"), the same queries on the same index, alternately.
func BenchmarkSearchListMerge(b *testing.B) {
	benchSetup(b)
	x := benchIndex
	defer func() { x.testing = searchTesting{} }()
	benchAlternating(b, [2]string{"single", "merge"}, func(side int, q []float32, ids []int64, dists []float32) int64 {
		x.testing.mergeOff = side == 0
		st, err := x.SearchFiltered(q, benchK, benchEf, 1, nil, ids, dists)
		if err != nil {
			b.Fatal(err)
		}
		return st.DistanceComputations
	})
}

// BenchmarkRenumber times Renumber on the benchmark index: how long Adds
// and Removes wait while a collection renumbers its graph.
func BenchmarkRenumber(b *testing.B) {
	benchSetup(b)
	benchIndex.build.reorderMinNodes = 1
	defer func() { benchIndex.build.reorderMinNodes = 0 }()
	for b.Loop() {
		if _, err := benchIndex.Renumber(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactWritePause measures what a Compact costs the writes that
// run beside it: one goroutine upserts single vectors (overwriting random
// ids) for the whole compaction of an index of benchN clustered vectors
// with a fifth of them overwritten; it reports the longest and the 99th
// percentile upsert and the compaction's time. The live graph is given
// room first, so that the longest upsert is Compact's locked carry-over at
// the end and not an Add growing the graph (overwrites append nodes until
// the swap), which copies every array under the write lock (95-367 ms at
// 225k-337k nodes of 128-d while Compact runs beside it).
func BenchmarkCompactWritePause(b *testing.B) {
	data := synth.Clustered(benchN, benchDim, 200, 0.3, 11)
	x, err := New(Config{Dim: benchDim, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Add(data, nil, nil, 0); err != nil {
		b.Fatal(err)
	}
	var worst, p99, secs float64
	for b.Loop() {
		// A fifth overwritten: the collection's default vacuum ratio.
		over := make([]uint64, benchN/5)
		for i := range over {
			over[i] = uint64(i * 5)
		}
		if err := x.Add(data[:len(over)*benchDim], over, nil, 0); err != nil {
			b.Fatal(err)
		}
		x.writeMu.Lock()
		g := x.graph.Load()
		x.graph.Store(g.grown(4*g.count, 0))
		x.writeMu.Unlock()
		stop := make(chan struct{})
		lat := make(chan []time.Duration)
		go func() {
			var ds []time.Duration
			for i := 0; ; i++ {
				select {
				case <-stop:
					lat <- ds
					return
				default:
				}
				row := (i * 7919) % benchN
				start := time.Now()
				if err := x.Add(data[row*benchDim:(row+1)*benchDim], []uint64{uint64(row)}, nil, 1); err != nil {
					b.Error(err)
				}
				ds = append(ds, time.Since(start))
			}
		}()
		start := time.Now()
		if err := x.Compact(1); err != nil {
			b.Fatal(err)
		}
		secs = time.Since(start).Seconds()
		close(stop)
		ds := <-lat
		slices.Sort(ds)
		worst, p99 = ds[len(ds)-1].Seconds()*1e3, ds[len(ds)*99/100].Seconds()*1e3
	}
	b.ReportMetric(worst, "max-upsert-ms")
	b.ReportMetric(p99, "p99-upsert-ms")
	b.ReportMetric(secs, "compact-s")
}

// BenchmarkFreeze times Freeze on the benchmark index: how long a
// checkpoint holds writes back.
func BenchmarkFreeze(b *testing.B) {
	benchSetup(b)
	for b.Loop() {
		if _, err := benchIndex.Freeze(); err != nil {
			b.Fatal(err)
		}
	}
}
