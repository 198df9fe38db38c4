package hnsw

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
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
// Env: STRATA_RABITQ_SET (default pypi-use512, from synth.DataDir),
// STRATA_RABITQ_N train rows (20000), STRATA_RABITQ_Q queries (500, held
// out), STRATA_RABITQ_INDEX a file caching the built graph, STRATA_RABITQ_JSON
// a file for the results (machine, commit, load, one row per mode and ef).
func BenchmarkRaBitQSweep(b *testing.B) {
	set := os.Getenv("STRATA_RABITQ_SET")
	if set == "" {
		set = "pypi-use512"
	}
	n, nq, k := envInt("STRATA_RABITQ_N", 20000), envInt("STRATA_RABITQ_Q", 500), 10
	data, err := synth.LoadRealSet(set, n)
	if err != nil {
		b.Skipf("real data not available: %v", err)
	}
	dim := data.Dim
	n = len(data.Train) / dim
	nq = min(nq, len(data.Queries)/dim)
	queries := data.Queries[:nq*dim]
	x, buildSec := rabitqBenchIndex(b, data.Train, dim)

	truth := exactTruth(data.Train, queries, dim, k)
	codes := map[string]*rabitqCodes{}
	codeSec := map[string]float64{}
	for _, bits := range []int{1, 8} {
		start := time.Now()
		if err := x.BuildRaBitQ(bits); err != nil {
			b.Fatal(err)
		}
		name := map[int]string{1: "rabitq1+float", 8: "rabitq8"}[bits]
		codes[name], codeSec[name] = x.rabitq.Load(), time.Since(start).Seconds()
	}
	c := codes["rabitq8"]
	codesOnly := &rabitqCodes{g: c.g, n: c.n, progress: c.progress, q: c.q, words: c.words, stride: c.stride,
		padded: c.padded, rows: c.rows, ex: c.ex, fx: c.fx, codesOnly: true}
	codesOnly.pool.New = c.pool.New
	codes["rabitq8-codes"] = codesOnly
	expand := &rabitqCodes{g: c.g, n: c.n, progress: c.progress, q: c.q, words: c.words, stride: c.stride,
		padded: c.padded, rows: c.rows, ex: c.ex, fx: c.fx, refineOnExpand: true}
	expand.pool.New = c.pool.New
	codes["rabitq8-expand"] = expand
	modes := []string{"float", "rabitq1+float", "rabitq8", "rabitq8-codes", "rabitq8-expand"}
	type row struct {
		Mode        string  `json:"mode"`
		Ef          int     `json:"ef"`
		Recall      float64 `json:"recall"`
		QPSCPU      float64 `json:"qps_cpu"`
		QPSWall     float64 `json:"qps_wall"`
		DistPerQ    float64 `json:"dist_per_query"`
		RefinePerQ  float64 `json:"refinements_per_query"`
		MemoryBytes int     `json:"code_bytes"`
	}
	var rows []row
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for _, ef := range []int{10, 16, 24, 32, 48, 64, 96, 128, 192, 256} {
		for _, mode := range modes {
			x.rabitq.Store(codes[mode]) // nil for float
			var ndis, nref int64
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
			if mode != "float" {
				r.MemoryBytes = x.RaBitQBytes()
			}
			rows = append(rows, r)
			fmt.Fprintf(os.Stderr, "%-14s ef=%-4d recall %.4f  qps(cpu) %7.0f  qps(wall) %7.0f  dist/q %6.0f  refine/q %5.1f\n", mode, ef, r.Recall, r.QPSCPU, r.QPSWall, r.DistPerQ, r.RefinePerQ)
		}
	}
	x.rabitq.Store(nil)
	if path := os.Getenv("STRATA_RABITQ_JSON"); path != "" {
		load, _ := os.ReadFile("/proc/loadavg")
		commit, _ := exec.Command("git", "rev-parse", "HEAD").Output()
		out := map[string]any{
			"benchmark": "go/hnsw BenchmarkRaBitQSweep", "set": set, "n": n, "queries": nq, "k": k, "dim": dim,
			"m": x.cfg.M, "ef_construction": x.cfg.EfConstruction, "build_seconds": buildSec, "code_build_seconds": codeSec,
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

// rabitqBenchIndex builds the cosine graph of data, or loads it from
// $STRATA_RABITQ_INDEX when that file exists (and saves it there).
func rabitqBenchIndex(b *testing.B, data []float32, dim int) (*Index, float64) {
	path := os.Getenv("STRATA_RABITQ_INDEX")
	if path != "" {
		if x, err := Load(vfs.Default, path, LoadOptions{}); err == nil && x.Len() == len(data)/dim {
			return x, 0
		}
	}
	x, err := New(Config{Dim: dim, Metric: metric.Cosine, Seed: 1})
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
// the way), with float32 kernels.
func exactTruth(data, queries []float32, dim, k int) [][]uint64 {
	norm := func(v []float32) []float32 {
		out := append([]float32(nil), v...)
		for i := 0; i < len(out); i += dim {
			metric.Normalize(out[i : i+dim])
		}
		return out
	}
	data, queries = norm(data), norm(queries)
	n := len(data) / dim
	truth := make([][]uint64, len(queries)/dim)
	for qi := range truth {
		var h maxHeap
		q := queries[qi*dim : (qi+1)*dim]
		for i := 0; i < n; i++ {
			d := 1 - kernels.Dot(q, data[i*dim:(i+1)*dim])
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
	x, _ := rabitqBenchIndex(b, data.Train, dim)
	nq := len(data.Queries) / dim
	ids := make([]int64, k)
	dists := make([]float32, k)
	for _, bits := range []int{0, 1, 8, 9} {
		x.DropRaBitQ()
		if bits > 0 {
			if err := x.BuildRaBitQ(min(bits, 8)); err != nil {
				b.Fatal(err)
			}
			x.rabitq.Load().refineOnExpand = bits == 9
		}
		b.Run(map[int]string{0: "float", 1: "rabitq1+float", 8: "rabitq8", 9: "rabitq8-expand"}[bits], func(b *testing.B) {
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
