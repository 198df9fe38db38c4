package hnsw

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/strata-db/strata/go/quant/rabitq"
)

// BenchmarkQGBuild is issue 22's build-time target for the qg layout (its
// build within 1.2x the CPU time of the float build): on the first
// $STRATA_RABITQ_N rows of $STRATA_RABITQ_SET (rabitqBenchSet), each of
// $STRATA_QG_BUILD_ROUNDS rounds (3) builds a float index and a qg index
// with one Add on every core, in an order that flips every round, and
// measures each build's process CPU time. The two build the same HNSW
// graph (the same seed and rows); the qg build then codes it
// (keepRaBitQ), so after each qg build the benchmark runs that step
// again $STRATA_QG_CODES_REPS times (3) on the built graph, timed whole
// and in its parts: fitting the quantizer, coding the rows (what is left),
// the medoid, the 32 neighbours of every node (qgNeighbours) and the rows
// of the quantized graph (fill). With $STRATA_QG_BUILD_ROUNDS=0 it times
// only that step, on the float graph of the set (rabitqBenchSet.graph,
// cached in $STRATA_RABITQ_INDEX): the run to profile.
//
//	STRATA_RABITQ_SET=fashion-mnist STRATA_RABITQ_N=60000 STRATA_QG_BUILD_JSON=out.json \
//	  go test ./go/hnsw -run '^$' -bench QGBuild -benchtime 1x -timeout 2h
//
// It reports the medians: float-cpu-s, qg-cpu-s, qg/float (of each
// round's pair), codes-cpu-s and codes-cpu-us/vector; the JSON file
// (rabitq-modes shape: builds in the order run, memory per vector) keeps
// every build and every repetition.
func BenchmarkQGBuild(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 0)
	rounds := 3 // envInt reads 0 as unset
	if v, err := strconv.Atoi(os.Getenv("STRATA_QG_BUILD_ROUNDS")); err == nil && v >= 0 {
		rounds = v
	}
	reps := envInt("STRATA_QG_CODES_REPS", 3)
	type build struct {
		Mode    string  `json:"mode"`
		WallSec float64 `json:"wall_seconds"`
		CPUSec  float64 `json:"cpu_seconds"`
		Loadavg string  `json:"loadavg"`
	}
	// codesStep is one repetition of the qg build's coding step, process
	// CPU seconds of each part.
	type codesStep struct {
		Total      float64 `json:"total_cpu_seconds"`
		Quantizer  float64 `json:"quantizer_cpu_seconds"`
		Rows       float64 `json:"code_rows_cpu_seconds"`
		Medoid     float64 `json:"medoid_cpu_seconds"`
		Neighbours float64 `json:"neighbours_cpu_seconds"`
		Fill       float64 `json:"fill_cpu_seconds"`
		Loadavg    string  `json:"loadavg"`
	}
	var builds []build
	var steps []codesStep
	var ratios []float64
	var memRows []modeMemory
	cfgOf := func(mode string) Config {
		cfg := Config{Dim: s.dim, Metric: s.metric, Seed: 1}
		if mode == "qg" {
			cfg.RaBitQBits, cfg.RaBitQLayout = 1, LayoutQG
		}
		return cfg
	}
	timeCodes := func(x *Index) {
		x.writeMu.Lock()
		defer x.writeMu.Unlock()
		g := x.graph.Load()
		n := g.count
		for range reps {
			runtime.GC()
			var st codesStep
			cpu0 := processCPU()
			if err := x.buildRaBitQLocked(1); err != nil {
				b.Fatal(err)
			}
			st.Total = processCPU() - cpu0
			// The parts, as buildRaBitQLocked, codeRaBitQ and buildQG run them.
			cpu0 = processCPU()
			q, err := rabitq.NewClustered(s.dim, x.rabitq.Load().q.Metric(), 1, x.cfg.Seed, g.vectors[:n*s.dim], 1)
			if err != nil {
				b.Fatal(err)
			}
			st.Quantizer = processCPU() - cpu0
			cpu0 = processCPU()
			entry := qgMedoid(g, n)
			st.Medoid = processCPU() - cpu0
			cpu0 = processCPU()
			ids := x.qgNeighbours(g, n)
			st.Neighbours = processCPU() - cpu0
			cpu0 = processCPU()
			newQGRows(x.qgQuantizer(q.Padded()), g.dim, n).fill(g, ids, entry)
			st.Fill = processCPU() - cpu0
			st.Rows = st.Total - st.Quantizer - st.Medoid - st.Neighbours - st.Fill
			st.Loadavg = loadavg()
			fmt.Fprintf(os.Stderr, "codes step %.2f CPU s: quantizer %.2f, rows %.2f, medoid %.2f, neighbours %.2f, fill %.2f  load %s\n",
				st.Total, st.Quantizer, st.Rows, st.Medoid, st.Neighbours, st.Fill, st.Loadavg)
			steps = append(steps, st)
		}
	}
	for b.Loop() {
		if rounds == 0 {
			x, _ := s.graph(b)
			x.cfg.RaBitQBits, x.cfg.RaBitQLayout = 1, LayoutQG
			timeCodes(x)
			memRows = append(memRows, memoryPerVector("qg", x.Memory()))
			continue
		}
		for round := range rounds {
			modes := []string{"float", "qg"}
			if round%2 == 1 {
				modes = []string{"qg", "float"}
			}
			cpu := map[string]float64{}
			for _, mode := range modes {
				x := mustNew(b, cfgOf(mode))
				runtime.GC()
				cpu0, wall0 := processCPU(), time.Now()
				if err := x.Add(s.data.Train, nil, nil, 0); err != nil {
					b.Fatal(err)
				}
				bd := build{Mode: mode, WallSec: time.Since(wall0).Seconds(), CPUSec: processCPU() - cpu0, Loadavg: loadavg()}
				fmt.Fprintf(os.Stderr, "build %-5s wall %6.1f s  cpu %6.1f s  load %s\n", mode, bd.WallSec, bd.CPUSec, bd.Loadavg)
				builds = append(builds, bd)
				cpu[mode] = bd.CPUSec
				if round == 0 {
					memRows = append(memRows, memoryPerVector(mode, x.Memory()))
				}
				if mode == "qg" {
					if rq := x.rabitq.Load(); rq == nil || rq.qg == nil {
						b.Fatal("the qg build has no quantized graph")
					}
					timeCodes(x)
				}
				if err := x.Close(); err != nil {
					b.Fatal(err)
				}
			}
			ratios = append(ratios, cpu["qg"]/cpu["float"])
		}
	}
	med := func(pick func(build) bool) float64 {
		var v []float64
		for _, bd := range builds {
			if pick(bd) {
				v = append(v, bd.CPUSec)
			}
		}
		return median(v)
	}
	var totals []float64
	for _, st := range steps {
		totals = append(totals, st.Total)
	}
	if rounds > 0 {
		b.ReportMetric(med(func(bd build) bool { return bd.Mode == "float" }), "float-cpu-s")
		b.ReportMetric(med(func(bd build) bool { return bd.Mode == "qg" }), "qg-cpu-s")
		b.ReportMetric(median(ratios), "qg/float")
	}
	b.ReportMetric(median(totals), "codes-cpu-s")
	b.ReportMetric(median(totals)*1e6/float64(s.n), "codes-cpu-us/vector")
	if path := os.Getenv("STRATA_QG_BUILD_JSON"); path != "" {
		defaults := mustNew(b, cfgOf("float")).cfg
		writeResults(b, path, map[string]any{
			"benchmark": "go/hnsw BenchmarkQGBuild", "set": s.name, "n": s.n, "queries": 0, "k": s.k, "dim": s.dim,
			"metric": s.metric.String(), "m": defaults.M, "ef_construction": defaults.EfConstruction,
			"code":   os.Getenv("STRATA_QG_BUILD_CODE"),
			"builds": builds, "qg_over_float": ratios, "codes_steps": steps,
			"memory_per_vector": withFloatRatios(memRows), "rows": []any{},
		})
	}
}
