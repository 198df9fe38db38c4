package hnsw

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/synth"
)

// expandedVariant is one arm of BenchmarkRaBitQExpandedAB: set prepares the
// codes (and package knobs) before a round of that arm, unset undoes it.
type expandedVariant struct {
	name       string
	set, unset func(x *Index, rq *rabitqCodes)
}

// expandedVariants are the arms BenchmarkRaBitQExpandedAB can run, by name.
var expandedVariants = map[string]expandedVariant{
	"base": {name: "base", set: func(*Index, *rabitqCodes) {}, unset: func(*Index, *rabitqCodes) {}},
	// The codes without the neighbour records: the 1-bit rows searched one
	// neighbour at a time with refinement where found (searchRaBitQ), the
	// layout of a 1-bit index below expandedMinDims.
	"rows": {name: "rows", set: func(x *Index, rq *rabitqCodes) {
		rows := rq.withoutBlocks()
		rows.expanded = false
		x.rabitq.Store(rows)
	}, unset: func(x *Index, rq *rabitqCodes) { x.rabitq.Store(rq) }},
	// The float graph (no codes).
	"float": {name: "float", set: func(x *Index, _ *rabitqCodes) { x.rabitq.Store(nil) },
		unset: func(x *Index, rq *rabitqCodes) { x.rabitq.Store(rq) }},
}

// BenchmarkRaBitQExpandedAB is a quiet A/B of the expanded 1-bit search
// (searchRaBitQExpanded) against variants of it on one graph: the arms
// alternate every round over all the queries at one ef, and the median of
// the rounds' CPU time per query is reported per arm (CPU time of this
// thread: what other processes take from it is not counted), with the
// recall@10 of each arm. Run:
//
//	STRATA_RABITQ_N=20000 STRATA_RABITQ_INDEX=/tmp/use20k.idx STRATA_AB=base,other \
//	  go test ./go/hnsw -run '^$' -bench RaBitQExpandedAB -benchtime 1x
//
// Env: STRATA_RABITQ_SET, STRATA_RABITQ_N, STRATA_RABITQ_Q as for
// BenchmarkRaBitQSweep; STRATA_AB the arms (default base); STRATA_AB_ROUNDS
// (7); STRATA_AB_EFS (48); STRATA_AB_JSON a file for the results (rows as
// BenchmarkRaBitQSweep writes them, the arm as the mode: bench/report.py
// shows them under bench/results/rabitq-go/).
func BenchmarkRaBitQExpandedAB(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 500)
	set, dim, nq, k, queries := s.name, s.dim, s.nq, s.k, s.queries
	x, _ := s.graph(b)
	truth := s.truth()
	x.cfg.RaBitQBits = 1
	if err := x.BuildRaBitQBlocks(1); err != nil {
		b.Fatal(err)
	}
	rq := x.rabitq.Load()
	rq.expanded = true
	var arms []expandedVariant
	for _, name := range strings.Split(envString("STRATA_AB", "base"), ",") {
		v, ok := expandedVariants[name]
		if !ok {
			b.Fatalf("unknown arm %q", name)
		}
		arms = append(arms, v)
	}
	efs := envInts(b, "STRATA_AB_EFS", []int{48})
	rounds := envInt("STRATA_AB_ROUNDS", 7)
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	// A row as BenchmarkRaBitQSweep writes it (bench/report.py's rabitq-go
	// section reads both), the arm as its mode, with the rounds beside.
	type result struct {
		Mode       string    `json:"mode"`
		Ef         int       `json:"ef"`
		Recall     float64   `json:"recall"`
		QPSCPU     float64   `json:"qps_cpu"`
		QPSWall    float64   `json:"qps_wall"`
		CPURounds  []float64 `json:"cpu_ns_per_query_rounds"`
		DistPerQ   float64   `json:"dist_per_query"`
		RefinePerQ float64   `json:"refinements_per_query"`
	}
	var results []result
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for _, ef := range efs {
		cpu := make([][]float64, len(arms))
		wall := make([][]float64, len(arms))
		recall := make([]float64, len(arms))
		dist := make([]float64, len(arms))
		refine := make([]float64, len(arms))
		for r := 0; r < rounds; r++ {
			for i := range arms {
				a := arms[(i+r)%len(arms)] // the order rotates so no arm always runs first
				ai := (i + r) % len(arms)
				a.set(x, rq)
				var nd, nr int64
				w0, c0 := time.Now(), threadCPU()
				for qi := 0; qi < nq; qi++ {
					st, err := x.SearchFiltered(queries[qi*dim:(qi+1)*dim], k, ef, 1, nil, ids[qi*k:(qi+1)*k], dists[qi*k:(qi+1)*k])
					if err != nil {
						b.Fatal(err)
					}
					nd += st.DistanceComputations
					nr += st.Refinements
				}
				c1, w1 := threadCPU(), time.Since(w0)
				a.unset(x, rq)
				cpu[ai] = append(cpu[ai], (c1-c0)*1e9/float64(nq))
				wall[ai] = append(wall[ai], float64(w1.Nanoseconds())/float64(nq))
				dist[ai], refine[ai] = float64(nd)/float64(nq), float64(nr)/float64(nq)
				recall[ai] = synth.Recall(ids, truth, k)
			}
		}
		for i, a := range arms {
			res := result{Mode: a.name, Ef: ef, Recall: recall[i], QPSCPU: 1e9 / median(cpu[i]), QPSWall: 1e9 / median(wall[i]),
				CPURounds: cpu[i], DistPerQ: dist[i], RefinePerQ: refine[i]}
			results = append(results, res)
			b.Logf("ef %d %-14s recall %.4f  cpu %8.0f ns/q (median of %d)  wall %8.0f ns/q  ratio to %s %.3f  dist %.0f refine %.1f",
				ef, a.name, res.Recall, median(cpu[i]), rounds, median(wall[i]), arms[0].name, median(cpu[i])/median(cpu[0]), res.DistPerQ, res.RefinePerQ)
		}
	}
	if path := os.Getenv("STRATA_AB_JSON"); path != "" {
		writeResults(b, path, map[string]any{"benchmark": "go/hnsw BenchmarkRaBitQExpandedAB", "set": set, "n": s.n,
			"dim": dim, "queries": nq, "k": k, "rounds": rounds, "rows": results})
	}
}
