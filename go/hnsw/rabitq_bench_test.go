package hnsw

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
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
	set := os.Getenv("STRATA_RABITQ_SET")
	if set == "" {
		set = "pypi-use512"
	}
	n, nq, k := envInt("STRATA_RABITQ_N", 20000), envInt("STRATA_RABITQ_Q", 500), 10
	data, err := loadSweepSet(set, n)
	if err != nil {
		b.Skipf("real data not available: %v", err)
	}
	m := metric.Cosine
	if set == "fashion-mnist" {
		m = metric.L2
	}
	dim := data.Dim
	n = len(data.Train) / dim
	nq = min(nq, len(data.Queries)/dim)
	queries := data.Queries[:nq*dim]
	x, buildSec := rabitqBenchIndex(b, data.Train, dim, m)
	bandwidth := streamReadGBps()

	truth := exactTruth(data.Train, queries, dim, k, m)
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
		load, _ := os.ReadFile("/proc/loadavg")
		commit, _ := exec.Command("git", "rev-parse", "HEAD").Output()
		out := map[string]any{
			"benchmark": "go/hnsw BenchmarkRaBitQSweep", "set": set, "n": n, "queries": nq, "k": k, "dim": dim,
			"metric": m.String(), "m": x.cfg.M, "ef_construction": x.cfg.EfConstruction, "build_seconds": buildSec,
			"code_build_seconds": codeSec, "block_build_seconds": blockSec, "stream_read_gbps": bandwidth,
			"commit": strings.TrimSpace(string(commit)), "loadavg": strings.TrimSpace(string(load)),
			"cpu": cpuModel(), "kernels": map[string]string{"float": kernels.Path(), "bitdot": kernels.BitDotPath()},
			"goversion": runtime.Version(), "time": time.Now().UTC().Format(time.RFC3339), "rows": rows,
		}
		raw, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// loadSweepSet is synth.LoadRealSet, or for "fashion-mnist" the 60k
// training and 10k test images of Debian's dataset-fashion-mnist (784
// bytes each, as float32 0-255), the first maxTrain of the training ones.
func loadSweepSet(name string, maxTrain int) (*synth.RealSet, error) {
	if name != "fashion-mnist" {
		return synth.LoadRealSet(name, maxTrain)
	}
	const dir = "/usr/share/datasets/fashion-mnist"
	train, err := readIDXImages(dir + "/train-images-idx3-ubyte.gz")
	if err != nil {
		return nil, err
	}
	test, err := readIDXImages(dir + "/t10k-images-idx3-ubyte.gz")
	if err != nil {
		return nil, err
	}
	if maxTrain > 0 && maxTrain*784 < len(train) {
		train = train[:maxTrain*784]
	}
	return &synth.RealSet{Dim: 784, Train: train, Queries: test}, nil
}

// readIDXImages reads a gzipped IDX file of uint8 images into float32s.
func readIDXImages(path string) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(raw) < 16 || raw[2] != 0x08 || raw[3] != 3 {
		return nil, fmt.Errorf("%s: not an IDX file of 3-d uint8 images", path)
	}
	count := int(binary.BigEndian.Uint32(raw[4:]))
	size := int(binary.BigEndian.Uint32(raw[8:])) * int(binary.BigEndian.Uint32(raw[12:]))
	if len(raw)-16 != count*size {
		return nil, fmt.Errorf("%s: %d bytes for %d images of %d", path, len(raw)-16, count, size)
	}
	out := make([]float32, count*size)
	for i, v := range raw[16:] {
		out[i] = float32(v)
	}
	return out, nil
}

// streamReadGBps is this machine's one-thread streaming read bandwidth:
// the best of three passes summing a 256 MiB array (far beyond the
// caches) with four independent accumulators, in GB/s of the calling
// thread's CPU time (as the sweep's QPS: on this shared machine wall time
// counts other processes' turns). It is the physical limit a one-thread
// search's bytes per second are compared with.
func streamReadGBps() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]uint64, 32<<20)
	for i := range buf {
		buf[i] = uint64(i)
	}
	best := 0.0
	var sink uint64
	for pass := 0; pass < 3; pass++ {
		start := threadCPU()
		var s0, s1, s2, s3 uint64
		for i := 0; i < len(buf); i += 4 {
			s0 += buf[i]
			s1 += buf[i+1]
			s2 += buf[i+2]
			s3 += buf[i+3]
		}
		sink += s0 + s1 + s2 + s3
		best = max(best, float64(8*len(buf))/(threadCPU()-start)/1e9)
	}
	streamSink = sink
	return best
}

// streamSink keeps streamReadGBps's sums live, so the loop is not removed.
var streamSink uint64

// BenchmarkStreamRead reports streamReadGBps, the one-thread memory
// bandwidth BenchmarkRaBitQSweep compares searches with.
func BenchmarkStreamRead(b *testing.B) {
	var gbps float64
	for b.Loop() {
		gbps = streamReadGBps()
	}
	b.ReportMetric(gbps, "GB/s")
}

// rabitqBenchIndex builds the graph of data with metric m, or loads it
// from $STRATA_RABITQ_INDEX when that file exists (and saves it there).
func rabitqBenchIndex(b *testing.B, data []float32, dim int, m metric.Metric) (*Index, float64) {
	path := os.Getenv("STRATA_RABITQ_INDEX")
	if path != "" {
		if x, err := Load(vfs.Default, path, LoadOptions{}); err == nil && x.Len() == len(data)/dim && x.cfg.Metric == m {
			return x, 0
		}
	}
	x, err := New(Config{Dim: dim, Metric: m, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := x.Add(data, nil, nil, 0); err != nil {
		b.Fatal(err)
	}
	sec := time.Since(start).Seconds()
	if path != "" {
		if err := x.Save(vfs.Default, path); err != nil {
			b.Fatal(err)
		}
	}
	return x, sec
}

// exactTruth is the exact top-k by cosine (data and queries normalised on
// the way) or L2, with float32 kernels.
func exactTruth(data, queries []float32, dim, k int, m metric.Metric) [][]uint64 {
	norm := func(v []float32) []float32 {
		out := append([]float32(nil), v...)
		for i := 0; i < len(out); i += dim {
			metric.Normalize(out[i : i+dim])
		}
		return out
	}
	if m == metric.Cosine {
		data, queries = norm(data), norm(queries)
	}
	n := len(data) / dim
	truth := make([][]uint64, len(queries)/dim)
	for qi := range truth {
		var h maxHeap
		q := queries[qi*dim : (qi+1)*dim]
		for i := 0; i < n; i++ {
			var d float32
			if m == metric.Cosine {
				d = 1 - kernels.Dot(q, data[i*dim:(i+1)*dim])
			} else {
				d = kernels.L2Squared(q, data[i*dim:(i+1)*dim])
			}
			if len(h) < k {
				h.push(candidate{d, uint32(i)})
			} else if d < h[0].dist {
				h.replaceTop(candidate{d, uint32(i)})
			}
		}
		sortAscending(h)
		for _, c := range h {
			truth[qi] = append(truth[qi], uint64(c.node))
		}
	}
	return truth
}

// threadCPU is the calling thread's CPU time in seconds.
func threadCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func cpuModel() string {
	raw, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "model name") {
			return strings.TrimSpace(line[strings.IndexByte(line, ':')+1:])
		}
	}
	return ""
}

// BenchmarkRaBitQSearchOne is one single-threaded query on the
// BenchmarkRaBitQSweep graph ($STRATA_RABITQ_INDEX caches it) in each mode
// at ef = $STRATA_BENCH_EF (64), for profiling one mode at a time.
func BenchmarkRaBitQSearchOne(b *testing.B) {
	data, err := synth.LoadRealSet("pypi-use512", envInt("STRATA_RABITQ_N", 20000))
	if err != nil {
		b.Skipf("real data not available: %v", err)
	}
	dim, k, ef := data.Dim, 10, benchEf
	x, _ := rabitqBenchIndex(b, data.Train, dim, metric.Cosine)
	nq := len(data.Queries) / dim
	ids := make([]int64, k)
	dists := make([]float32, k)
	for _, bits := range []int{0, 1, 2, 8, 9} {
		x.DropRaBitQ()
		switch bits {
		case 0:
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
		name := map[int]string{0: "float", 1: "rabitq1+float", 2: "rabitq1-expanded", 8: "rabitq8", 9: "rabitq8-expand"}[bits]
		if only := os.Getenv("STRATA_RABITQ_MODES"); only != "" && !slices.Contains(strings.Split(only, ","), name) {
			continue
		}
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread() // threadCPU reads this thread's clock
			defer runtime.UnlockOSThread()
			var nref int64
			cpu0 := threadCPU()
			for i := 0; b.Loop(); i++ {
				st, err := x.SearchFiltered(data.Queries[(i%nq)*dim:(i%nq+1)*dim], k, ef, 1, nil, ids, dists)
				if err != nil {
					b.Fatal(err)
				}
				nref += st.Refinements
			}
			b.ReportMetric((threadCPU()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(nref)/float64(b.N), "refine/op")
		})
	}
}

// BenchmarkRaBitQBlockBuild is the cost of writing the neighbour blocks of
// every node of the BenchmarkRaBitQSweep graph ($STRATA_RABITQ_INDEX caches
// it), per node: what keeping them current would add to an insertion for
// each link list it rewrites (its own and those of the neighbours it
// links back to). Run with -cpu 1 for one core's figure.
func BenchmarkRaBitQBlockBuild(b *testing.B) {
	data, err := synth.LoadRealSet("pypi-use512", envInt("STRATA_RABITQ_N", 20000))
	if err != nil {
		b.Skipf("real data not available: %v", err)
	}
	x, _ := rabitqBenchIndex(b, data.Train, data.Dim, metric.Cosine)
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
		y, err := New(Config{Dim: data.Dim, Metric: metric.Cosine, Seed: 1})
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
