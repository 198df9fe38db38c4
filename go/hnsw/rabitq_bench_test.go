package hnsw

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/synth"
)

// BenchmarkRaBitQSweep measures recall@10 against CPU-time and wall-clock
// QPS for the float graph and its RaBitQ modes on one graph, one query per
// call on one thread, the modes alternating at every ef so that the
// machine's load hits them alike. Run it once:
//
//	STRATA_RABITQ_N=20000 go test ./go/hnsw -run '^$' -bench RaBitQSweep -benchtime 1x
//
// Env: STRATA_RABITQ_SET (default pypi-use512, from synth.DataDir, cosine;
// or fashion-mnist, L2, read from the IDX files of Debian's
// dataset-fashion-mnist), STRATA_RABITQ_N train rows (20000), STRATA_RABITQ_Q
// queries (500, held out), STRATA_RABITQ_INDEX a file caching the built
// graph, STRATA_RABITQ_JSON a file for the results (machine, commit, load,
// the machine's one-thread streaming read bandwidth, one row per mode and
// ef with the bytes a query reads and the fraction of that bandwidth it
// reaches).
//
// Modes: float; rabitq1+float and rabitq8 on the neighbour blocks
// (FastScan), and the same on the code rows one neighbour at a time
// ("-rows", the layout before the blocks); rabitq1-expanded, the blocks
// searched as a Config.RaBitQBits = 1 index searches them
// (searchRaBitQExpanded); rabitq8-codes (no float read)
// and rabitq8-expand (refinement on expansion), both on the blocks; the
// "-hybrid" modes (blockScanMin). STRATA_RABITQ_MODES (a comma-separated
// list) runs only those modes.
func BenchmarkRaBitQSweep(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 500)
	set, m, dim, n, nq, k, queries := s.name, s.metric, s.dim, s.n, s.nq, s.k, s.queries
	x, buildSec := s.graph(b)
	bandwidth := streamReadGBps()

	truth := s.truth()
	codes := map[string]*rabitqCodes{}
	codeSec := map[string]float64{}
	for _, bits := range []int{1, 8} {
		start := time.Now()
		if err := x.BuildRaBitQBlocks(bits); err != nil {
			b.Fatal(err)
		}
		name := map[int]string{1: "rabitq1+float", 8: "rabitq8"}[bits]
		codes[name], codeSec[name] = x.rabitq.Load(), time.Since(start).Seconds()
		codes[name+"-rows"] = codes[name].withoutBlocks()
	}
	c := codes["rabitq8"]
	start := time.Now()
	c.buildBlocks(c.g) // again, alone: the cost of writing every node's block
	blockSec := time.Since(start).Seconds()
	codesOnly := &rabitqCodes{g: c.g, n: c.n, progress: c.progress, q: c.q, words: c.words, stride: c.stride,
		padded: c.padded, rows: c.rows, ex: c.ex, fx: c.fx, blocks: c.blocks, codesOnly: true}
	codesOnly.pool.New = c.pool.New
	codes["rabitq8-codes"] = codesOnly
	expand := &rabitqCodes{g: c.g, n: c.n, progress: c.progress, q: c.q, words: c.words, stride: c.stride,
		padded: c.padded, rows: c.rows, ex: c.ex, fx: c.fx, blocks: c.blocks, refineOnExpand: true}
	expand.pool.New = c.pool.New
	codes["rabitq8-expand"] = expand
	expanded := codes["rabitq1+float"].withBlocks()
	expanded.expanded = true
	codes["rabitq1-expanded"] = expanded
	// The hybrids estimate a block's new neighbours from their rows when
	// there are fewer than $STRATA_RABITQ_SCANMIN (12) of them.
	scanMin := envInt("STRATA_RABITQ_SCANMIN", 12)
	for _, name := range []string{"rabitq8", "rabitq8-expand"} {
		h := codes[name].withBlocks()
		h.blockScanMin = scanMin
		codes[name+"-hybrid"] = h
	}
	modes := []string{"float", "rabitq1+float", "rabitq1+float-rows", "rabitq1-expanded", "rabitq8", "rabitq8-rows", "rabitq8-codes",
		"rabitq8-expand", "rabitq8-hybrid", "rabitq8-expand-hybrid"}
	if only := os.Getenv("STRATA_RABITQ_MODES"); only != "" {
		modes = strings.Split(only, ",")
	}
	type row struct {
		Mode        string  `json:"mode"`
		Ef          int     `json:"ef"`
		Recall      float64 `json:"recall"`
		QPSCPU      float64 `json:"qps_cpu"`
		QPSWall     float64 `json:"qps_wall"`
		DistPerQ    float64 `json:"dist_per_query"`
		RefinePerQ  float64 `json:"refinements_per_query"`
		BytesPerQ   float64 `json:"bytes_per_query"`
		Bandwidth   float64 `json:"bandwidth_fraction"`
		MemoryBytes int     `json:"code_bytes"`
	}
	var rows []row
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	var bytesRead atomic.Int64
	x.testing.rabitqBytes = &bytesRead
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for _, ef := range []int{10, 16, 24, 32, 48, 64, 96, 128, 192, 256} {
		for _, mode := range modes {
			x.rabitq.Store(codes[mode]) // nil for float
			var ndis, nref int64
			bytesRead.Store(0)
			cpu0, wall0 := threadCPU(), time.Now()
			for i := 0; i < nq; i++ {
				st, err := x.SearchFiltered(queries[i*dim:(i+1)*dim], k, ef, 1, nil, ids[i*k:(i+1)*k], dists[i*k:(i+1)*k])
				if err != nil {
					b.Fatal(err)
				}
				ndis += st.DistanceComputations
				nref += st.Refinements
			}
			cpu, wall := threadCPU()-cpu0, time.Since(wall0).Seconds()
			r := row{Mode: mode, Ef: ef, Recall: synth.Recall(ids, truth, k), QPSCPU: float64(nq) / cpu, QPSWall: float64(nq) / wall,
				DistPerQ: float64(ndis) / float64(nq), RefinePerQ: float64(nref) / float64(nq)}
			r.BytesPerQ = float64(bytesRead.Load()) / float64(nq)
			if mode == "float" {
				// The vectors measured and their link lists, one per
				// expansion (about one per 20 distances at M = 16).
				r.BytesPerQ = r.DistPerQ * float64(4*dim+4*(1+2*x.cfg.M)/20)
			} else {
				r.MemoryBytes = x.RaBitQBytes()
			}
			r.Bandwidth = r.BytesPerQ * r.QPSCPU / (bandwidth * 1e9)
			rows = append(rows, r)
			fmt.Fprintf(os.Stderr, "%-18s ef=%-4d recall %.4f  qps(cpu) %7.0f  qps(wall) %7.0f  dist/q %6.0f  refine/q %5.1f  KB/q %6.1f  bw %.3f\n",
				mode, ef, r.Recall, r.QPSCPU, r.QPSWall, r.DistPerQ, r.RefinePerQ, r.BytesPerQ/1024, r.Bandwidth)
		}
	}
	x.rabitq.Store(nil)
	x.testing.rabitqBytes = nil
	if path := os.Getenv("STRATA_RABITQ_JSON"); path != "" {
		writeResults(b, path, map[string]any{
			"benchmark": "go/hnsw BenchmarkRaBitQSweep", "set": set, "n": n, "queries": nq, "k": k, "dim": dim,
			"metric": m.String(), "m": x.cfg.M, "ef_construction": x.cfg.EfConstruction, "build_seconds": buildSec,
			"code_build_seconds": codeSec, "block_build_seconds": blockSec, "stream_read_gbps": bandwidth, "rows": rows,
		})
	}
}

// BenchmarkStreamRead reports streamReadGBps, the one-thread memory
// bandwidth BenchmarkRaBitQSweep compares searches with.
func BenchmarkStreamRead(b *testing.B) {
	var gbps float64
	for b.Loop() {
		gbps = streamReadGBps()
	}
	b.ReportMetric(gbps, "GB/s")
}

// BenchmarkRaBitQSearchOne is one single-threaded query on the
// BenchmarkRaBitQSweep graph ($STRATA_RABITQ_INDEX caches it) in each mode
// at ef = $STRATA_BENCH_EF (64), for profiling one mode at a time.
func BenchmarkRaBitQSearchOne(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 500)
	k, ef, nq := s.k, benchEf, s.nq
	x, _ := s.graph(b)
	ids := make([]int64, k)
	dists := make([]float32, k)
	for _, bits := range []int{0, 1, 2, 8, 9, 3} {
		x.DropRaBitQ()
		switch bits {
		case 0:
		case 3: // the qg layout (rabitq_qg.go) built from this graph
			if err := x.BuildRaBitQ(1); err != nil {
				b.Fatal(err)
			}
			rq := x.rabitq.Load()
			rq.qg = x.buildQG(rq.g, rq.n, rq.padded)
		case 2: // 1 bit, the neighbour blocks searched as a RaBitQBits = 1 index does
			if err := x.BuildRaBitQBlocks(1); err != nil {
				b.Fatal(err)
			}
			x.rabitq.Load().expanded = true
		default:
			if err := x.BuildRaBitQ(min(bits, 8)); err != nil {
				b.Fatal(err)
			}
			x.rabitq.Load().refineOnExpand = bits == 9
		}
		name := map[int]string{0: "float", 1: "rabitq1+float", 2: "rabitq1-expanded", 3: "qg", 8: "rabitq8", 9: "rabitq8-expand"}[bits]
		if only := os.Getenv("STRATA_RABITQ_MODES"); only != "" && !slices.Contains(strings.Split(only, ","), name) {
			continue
		}
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread() // threadCPU reads this thread's clock
			defer runtime.UnlockOSThread()
			var nref, ndis, nhops int64
			cpu0 := threadCPU()
			for i := 0; b.Loop(); i++ {
				st, err := x.SearchFiltered(s.query(i%nq), k, ef, 1, nil, ids, dists)
				if err != nil {
					b.Fatal(err)
				}
				nref, ndis, nhops = nref+st.Refinements, ndis+st.DistanceComputations, nhops+st.LinksRead
			}
			b.ReportMetric((threadCPU()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(nref)/float64(b.N), "refine/op")
			b.ReportMetric(float64(ndis)/float64(b.N), "dist/op")
			b.ReportMetric(float64(nhops)/float64(b.N), "hops/op")
		})
	}
}

// BenchmarkRaBitQBlockBuild is the cost of writing the neighbour blocks of
// every node of the BenchmarkRaBitQSweep graph ($STRATA_RABITQ_INDEX caches
// it), per node: what keeping them current would add to an insertion for
// each link list it rewrites (its own and those of the neighbours it
// links back to). Run with -cpu 1 for one core's figure.
func BenchmarkRaBitQBlockBuild(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 500)
	data := s.data
	x, _ := s.graph(b)
	if err := x.BuildRaBitQBlocks(8); err != nil {
		b.Fatal(err)
	}
	rq := x.rabitq.Load()
	runtime.LockOSThread() // with -cpu 1 the build runs on this thread, whose clock threadCPU reads
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	for b.Loop() {
		rq.buildBlocks(rq.g)
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(rq.n), "ns/node")
	if runtime.GOMAXPROCS(0) == 1 {
		b.ReportMetric((threadCPU()-cpu0)*1e9/float64(b.N)/float64(rq.n), "cpu-ns/node")
		// Beside it, what one float insertion costs on this thread (the
		// first 5,000 rows into a new graph of the same configuration).
		y, err := New(Config{Dim: data.Dim, Metric: s.metric, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		rows := min(5000, len(data.Train)/data.Dim)
		cpu0 = threadCPU()
		if err := y.Add(data.Train[:rows*data.Dim], nil, nil, 1); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric((threadCPU()-cpu0)*1e9/float64(rows), "insert-cpu-ns/node")
	}
}
