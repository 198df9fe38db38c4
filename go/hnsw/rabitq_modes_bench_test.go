package hnsw

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// BenchmarkRaBitQModes measures what each RaBitQ memory mode costs and
// keeps, on one data set in one run (issue 22's memory, build-time and
// same-algorithm targets):
//
//   - build time (wall and process CPU, every core) of the indexes named by
//     $STRATA_MODES_BUILDS, in that order (default "float"): "float",
//     "rabitq1" (the door's default, Config.RaBitQBits = 1: float vectors,
//     1-bit codes and neighbour blocks), "qg" (Config.RaBitQLayout =
//     LayoutQG: the quantized graph of rabitq_qg.go) and "codes-only" (Config.RaBitQCodesOnly
//     with $STRATA_MODES_BITS, 3, bits); repeat names to alternate them;
//
//   - each mode's memory per vector (Index.Memory), with the float vectors
//     resident and, for modes that re-rank with them, mapped (not counted);
//
//   - unless $STRATA_MODES_SEARCH is 0: recall@10, CPU-time QPS, bytes read
//     per query and the fraction of the machine's one-thread streaming
//     bandwidth that reaches, per ef, on the last float graph built: float
//     search, the door's 1-bit search (its blocks and expanded search, coded
//     as the door codes), 1-bit codes on their rows (BuildRaBitQ(1): no
//     blocks), and codes-only searches of 2-8 bits (the search a codes-only
//     index of those bits runs on its own graph,
//     TestCodesOnlyPlanesAreTheExtendedCodes), with the codes-only index
//     built, if any, searched too.
//
//     STRATA_RABITQ_N=100000 STRATA_MODES_JSON=out.json go test ./go/hnsw -run '^$' -bench RaBitQModes -benchtime 1x -timeout 3h
//
// Env: STRATA_RABITQ_SET (pypi-use512), STRATA_RABITQ_N (100000),
// STRATA_RABITQ_Q (1000 held-out queries), STRATA_MODES_EFS (32,64,128,256),
// STRATA_MODES_CODEBITS (2,3,4,5,6,8: the codes-only widths searched),
// STRATA_MODES_JSON (the results file).
func BenchmarkRaBitQModes(b *testing.B) {
	s := loadRaBitQBenchSet(b, 100000, 1000)
	set, data, m, dim, n, nq, k, queries := s.name, s.data, s.metric, s.dim, s.n, s.nq, s.k, s.queries
	codeBits := envInt("STRATA_MODES_BITS", 3)

	type build struct {
		Mode    string  `json:"mode"`
		WallSec float64 `json:"wall_seconds"`
		CPUSec  float64 `json:"cpu_seconds"`
		Loadavg string  `json:"loadavg"`
	}
	var builds []build
	var float, codes *Index
	buildModes := strings.Split(os.Getenv("STRATA_MODES_BUILDS"), ",")
	if buildModes[0] == "" {
		buildModes = []string{"float"}
	}
	for _, mode := range buildModes {
		cfg := Config{Dim: dim, Metric: m, Seed: 1}
		switch mode {
		case "float":
		case "rabitq1":
			cfg.RaBitQBits = 1
		case "qg":
			cfg.RaBitQBits, cfg.RaBitQLayout = 1, LayoutQG
		case "codes-only":
			cfg.RaBitQBits, cfg.RaBitQCodesOnly = codeBits, true
		default:
			b.Fatalf("unknown build mode %q", mode)
		}
		x, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		cpu0, wall0 := processCPU(), time.Now()
		if err := x.Add(data.Train, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
		bd := build{Mode: mode, WallSec: time.Since(wall0).Seconds(), CPUSec: processCPU() - cpu0, Loadavg: loadavg()}
		fmt.Fprintf(os.Stderr, "build %-10s wall %6.1f s  cpu %6.1f s  load %s\n", mode, bd.WallSec, bd.CPUSec, bd.Loadavg)
		builds = append(builds, bd)
		switch mode {
		case "float":
			float = x
		case "codes-only":
			codes = x
		}
	}
	if float == nil {
		b.Fatal("STRATA_MODES_BUILDS builds no float index")
	}

	searchModes := map[string]*rabitqCodes{"float": nil}
	memRows := []modeMemory{memoryPerVector("float", float.Memory())}
	order := []string{"float"}
	// The door's 1-bit index: codes and blocks as keepRaBitQ builds them.
	float.cfg.RaBitQBits, float.rabitqBlocks = 1, true
	if err := float.buildRaBitQLocked(1); err != nil {
		b.Fatal(err)
	}
	float.cfg.RaBitQBits = 0
	searchModes["rabitq1"], order = float.rabitq.Load(), append(order, "rabitq1")
	memRows = append(memRows, memoryPerVector("rabitq1", float.Memory()))
	if err := float.BuildRaBitQ(1); err != nil {
		b.Fatal(err)
	}
	searchModes["rabitq1-rows"], order = float.rabitq.Load(), append(order, "rabitq1-rows")
	memRows = append(memRows, memoryPerVector("rabitq1-rows", float.Memory()))
	for _, bits := range envInts(b, "STRATA_MODES_CODEBITS", []int{2, 3, 4, 5, 6, 8}) {
		if err := float.BuildRaBitQ(bits); err != nil {
			b.Fatal(err)
		}
		rq := float.rabitq.Load()
		mem := float.Memory()
		// The codes-only index of these bits keeps bits−1 planes instead
		// of the byte codes, and no float vectors.
		mem.RaBitQCodes += 8*rq.n*(bits-1)*rq.words - len(rq.ex)
		mem.Floats = 0
		name := fmt.Sprintf("codes-only%d", bits)
		c := rq.withoutBlocks()
		c.codesOnly = true
		searchModes[name+"-on-float-graph"] = c
		order = append(order, name+"-on-float-graph")
		memRows = append(memRows, memoryPerVector(name, mem))
	}
	if codes != nil {
		name := fmt.Sprintf("codes-only%d-index", codeBits)
		order = append(order, name)
		memRows = append(memRows, memoryPerVector(name, codes.Memory()))
	}
	for _, r := range withFloatRatios(memRows) {
		fmt.Fprintf(os.Stderr, "memory %-18s B/vector graph %5.0f floats %5.0f codes %5.0f factors %4.0f blocks %5.0f = %5.0f (%.3f of float); floats mapped %5.0f (%.3f)\n",
			r.Mode, r.Graph, r.Floats, r.Codes, r.Factors, r.Blocks, r.Total, r.RatioResident, r.FloatsMapped, r.RatioMapped)
	}

	type row struct {
		Mode       string  `json:"mode"`
		Ef         int     `json:"ef"`
		Recall     float64 `json:"recall"`
		QPSCPU     float64 `json:"qps_cpu"`
		RefinePerQ float64 `json:"refinements_per_query"`
		BytesPerQ  float64 `json:"bytes_per_query"`
		Bandwidth  float64 `json:"bandwidth_fraction"`
	}
	var rows []row
	bandwidth := streamReadGBps()
	efs := envInts(b, "STRATA_MODES_EFS", []int{32, 64, 128, 256})
	if os.Getenv("STRATA_MODES_SEARCH") == "0" {
		efs = nil
	}
	var truth [][]uint64
	if len(efs) > 0 {
		truth = s.truth()
	}
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	var bytesRead atomic.Int64
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for _, ef := range efs {
		for _, mode := range order {
			x := float
			if codes != nil && mode == order[len(order)-1] {
				x = codes
			} else {
				float.rabitq.Store(searchModes[mode])
			}
			x.testing.rabitqBytes = &bytesRead
			var nref, ndis int64
			bytesRead.Store(0)
			cpu0 := threadCPU()
			for i := 0; i < nq; i++ {
				st, err := x.SearchFiltered(queries[i*dim:(i+1)*dim], k, ef, 1, nil, ids[i*k:(i+1)*k], dists[i*k:(i+1)*k])
				if err != nil {
					b.Fatal(err)
				}
				nref += st.Refinements
				ndis += st.DistanceComputations
			}
			cpu := threadCPU() - cpu0
			x.testing.rabitqBytes = nil
			r := row{Mode: mode, Ef: ef, Recall: synth.Recall(ids, truth, k), QPSCPU: float64(nq) / cpu,
				RefinePerQ: float64(nref) / float64(nq), BytesPerQ: float64(bytesRead.Load()) / float64(nq)}
			if mode == "float" {
				// The vectors measured and their link lists, one per
				// expansion (about one per 20 distances at M = 16), as
				// BenchmarkRaBitQSweep counts them.
				r.BytesPerQ = float64(ndis) / float64(nq) * float64(4*dim+4*(1+2*x.cfg.M)/20)
			}
			r.Bandwidth = r.BytesPerQ * r.QPSCPU / (bandwidth * 1e9)
			rows = append(rows, r)
			fmt.Fprintf(os.Stderr, "%-28s ef=%-4d recall %.4f  qps(cpu) %7.0f  refine/q %6.1f  KB/q %6.1f  bw %.3f\n",
				mode, ef, r.Recall, r.QPSCPU, r.RefinePerQ, r.BytesPerQ/1024, r.Bandwidth)
		}
	}
	if path := os.Getenv("STRATA_MODES_JSON"); path != "" {
		writeResults(b, path, map[string]any{
			"benchmark": "go/hnsw BenchmarkRaBitQModes", "set": set, "n": n, "queries": nq, "k": k, "dim": dim,
			"metric": m.String(), "m": float.cfg.M, "ef_construction": float.cfg.EfConstruction, "codes_only_bits": codeBits,
			"builds": builds, "memory_per_vector": withFloatRatios(memRows), "stream_read_gbps": bandwidth, "rows": rows,
		})
	}
}

// BenchmarkRaBitQCoding is what coding adds to a build, per node and on
// one thread: fitting the quantizer and coding every node of a graph of
// $STRATA_RABITQ_N (5000) pypi-use512 vectors at 1, 3 and 8 bits, beside
// what inserting a node costs on the same thread. Run with -cpu 1.
func BenchmarkRaBitQCoding(b *testing.B) {
	data, err := synth.LoadRealSet("pypi-use512", envInt("STRATA_RABITQ_N", 5000))
	if err != nil {
		b.Skipf("real data not available: %v", err)
	}
	n := len(data.Train) / data.Dim
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := mustNew(b, Config{Dim: data.Dim, Metric: metric.Cosine, Seed: 1})
	cpu0 := threadCPU()
	if err := x.Add(data.Train, nil, nil, 1); err != nil {
		b.Fatal(err)
	}
	insert := (threadCPU() - cpu0) * 1e9 / float64(n)
	for _, bits := range []int{1, 3, 8} {
		b.Run(fmt.Sprintf("bits=%d", bits), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				if err := x.BuildRaBitQ(bits); err != nil {
					b.Fatal(err)
				}
			}
			code := (threadCPU() - cpu0) * 1e9 / float64(b.N) / float64(n)
			b.ReportMetric(code, "code-cpu-ns/node")
			b.ReportMetric(insert, "insert-cpu-ns/node")
			b.ReportMetric(code/insert, "code/insert")
		})
	}
}

// modeMemory is one mode's memory per vector (Index.Memory over its
// nodes); "floats mapped" leaves out the float vectors, which
// Load(MmapVectors) keeps in the page cache.
type modeMemory struct {
	Mode          string  `json:"mode"`
	Graph         float64 `json:"graph"`
	Floats        float64 `json:"floats"`
	Codes         float64 `json:"codes"`
	Factors       float64 `json:"factors"`
	Blocks        float64 `json:"blocks"`
	Total         float64 `json:"total"`
	FloatsMapped  float64 `json:"total_floats_mapped"`
	RatioResident float64 `json:"ratio_to_float"`
	RatioMapped   float64 `json:"ratio_to_float_floats_mapped"`
}

func memoryPerVector(mode string, mem Memory) modeMemory {
	nd := float64(mem.Nodes)
	r := modeMemory{Mode: mode, Graph: float64(mem.Graph) / nd, Floats: float64(mem.Floats) / nd,
		Codes: float64(mem.RaBitQCodes) / nd, Factors: float64(mem.RaBitQFactors) / nd, Blocks: float64(mem.RaBitQBlocks) / nd}
	r.Total = r.Graph + r.Floats + r.Codes + r.Factors + r.Blocks
	r.FloatsMapped = r.Total - r.Floats
	return r
}

// withFloatRatios fills each row's ratios to the first row's total, the
// float index's (0 when the first row is not "float").
func withFloatRatios(rows []modeMemory) []modeMemory {
	if len(rows) == 0 || rows[0].Mode != "float" {
		return rows
	}
	for i := range rows {
		rows[i].RatioResident = rows[i].Total / rows[0].Total
		rows[i].RatioMapped = rows[i].FloatsMapped / rows[0].Total
	}
	return rows
}
