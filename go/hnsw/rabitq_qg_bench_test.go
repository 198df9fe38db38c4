package hnsw

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
)

// BenchmarkQGHop is the qg layout's search (rabitq_qg.go) alone on the
// BenchmarkRaBitQSweep graph ($STRATA_RABITQ_INDEX caches it): every
// held-out query once per round at each ef of $STRATA_QG_EFS (32), for
// $STRATA_QG_ROUNDS rounds (5), one thread. It prints one JSON line per ef
// to stderr (recall, CPU ns per query of each round, distances and hops
// per query, and an FNV hash of every answer's ids and distance bits, which
// two builds of the search must share when a change keeps the results),
// for bench/qg_ab.py to alternate two builds of this package and compare.
func BenchmarkQGHop(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 500)
	x, _ := s.graph(b)
	truth := s.truth()
	if err := x.BuildRaBitQ(1); err != nil {
		b.Fatal(err)
	}
	rq := x.rabitq.Load()
	rq.qg = x.buildQG(rq.g, rq.n)
	k, nq, dim := s.k, s.nq, s.dim
	rounds := envInt("STRATA_QG_ROUNDS", 5)
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	runtime.LockOSThread() // threadCPU reads this thread's clock
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for _, ef := range envInts(b, "STRATA_QG_EFS", []int{32}) {
			var cpu []float64
			var ndis, nhops int64
			h := fnv.New64a()
			for round := range rounds {
				ndis, nhops = 0, 0
				cpu0 := threadCPU()
				for i := range nq {
					st, err := x.SearchFiltered(s.queries[i*dim:(i+1)*dim], k, ef, 1, nil, ids[i*k:(i+1)*k], dists[i*k:(i+1)*k])
					if err != nil {
						b.Fatal(err)
					}
					ndis, nhops = ndis+st.DistanceComputations, nhops+st.LinksRead
				}
				cpu = append(cpu, (threadCPU()-cpu0)*1e9/float64(nq))
				if round == 0 {
					for i, id := range ids {
						fmt.Fprintf(h, "%d:%d,", id, math.Float32bits(dists[i]))
					}
				}
			}
			line, _ := json.Marshal(map[string]any{
				"ef": ef, "recall": synth.Recall(ids, truth, k), "cpu_ns_per_query_rounds": cpu,
				"cpu_ns_per_query": median(cpu),
				"dist_per_query":   float64(ndis) / float64(nq), "hops_per_query": float64(nhops) / float64(nq),
				"results_hash": fmt.Sprintf("%016x", h.Sum64()),
				"set":          s.name, "n": s.n, "queries": nq, "k": k, "dim": dim,
			})
			fmt.Fprintf(os.Stderr, "QGHOP %s\n", line)
		}
	}
}
