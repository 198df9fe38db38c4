package hnsw

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// BenchmarkCodesOnlyRecall is the recall of codes-only searches (extended
// codes of $STRATA_CODES_BITS bits, default 3, no float vector read) on
// the cached float graph of $STRATA_RABITQ_SET, at the efs of
// $STRATA_MODES_EFS (64,128), for each count of centroids in
// $STRATA_CODES_CLUSTERS (0: the engine's rabitqClusters), so that the
// estimator's choices can be compared on one graph:
//
//	STRATA_RABITQ_INDEX=/tmp/pypi100k.strata go test ./go/hnsw -run '^$' -bench CodesOnlyRecall -benchtime 1x -timeout 1h
func BenchmarkCodesOnlyRecall(b *testing.B) {
	s := loadRaBitQBenchSet(b, 100000, 1000)
	x, _ := s.graph(b)
	truth := s.truth()
	bits := envInt("STRATA_CODES_BITS", 3)
	ids := make([]int64, s.nq*s.k)
	dists := make([]float32, s.nq*s.k)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, clusters := range envInts(b, "STRATA_CODES_CLUSTERS", []int{0}) {
		x.writeMu.Lock()
		saved := rabitqClustersOverride
		rabitqClustersOverride = clusters
		err := x.buildRaBitQLocked(bits)
		rabitqClustersOverride = saved
		x.writeMu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		rq := x.rabitq.Load()
		c := rq.withoutBlocks()
		c.codesOnly = true
		x.rabitq.Store(c)
		for _, ef := range envInts(b, "STRATA_MODES_EFS", []int{64, 128}) {
			for _, eps := range envFloats(b, "STRATA_CODES_EPS", []float64{float64(rabitq.Epsilon0)}) {
				rabitqEpsilon = float32(eps)
				c.pool = sync.Pool{New: newRaBitQScratch(c.q, false)}
				cpu0 := threadCPU()
				var nref int64
				for i := 0; i < s.nq; i++ {
					st, err := x.SearchFiltered(s.query(i), s.k, ef, 1, nil, ids[i*s.k:(i+1)*s.k], dists[i*s.k:(i+1)*s.k])
					if err != nil {
						b.Fatal(err)
					}
					nref += st.Refinements
				}
				cpu := threadCPU() - cpu0
				fmt.Fprintf(os.Stderr, "codes-only bits %d clusters %d ef %d eps %.1f: recall %.4f  qps(cpu) %6.0f  refine/q %.1f\n",
					bits, rq.q.Clusters(), ef, eps, synth.Recall(ids, truth, s.k), float64(s.nq)/cpu, float64(nref)/float64(s.nq))
			}
		}
		rabitqEpsilon = rabitq.Epsilon0
	}
}

// envFloats is the comma-separated floats of $name, or def.
func envFloats(b *testing.B, name string, def []float64) []float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		out = append(out, x)
	}
	return out
}
