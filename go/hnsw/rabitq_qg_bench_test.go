package hnsw

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/quant/rabitq"
	"github.com/strata-db/strata/go/vfs"
)

// BenchmarkQGHop is the qg layout's search (rabitq_qg.go) alone on the
// BenchmarkRaBitQSweep graph ($STRATA_RABITQ_INDEX caches it): every
// held-out query once per round at each ef of $STRATA_QG_EFS (32), for
// $STRATA_QG_ROUNDS rounds (5), one thread. It prints one JSON line per ef
// to stderr (recall, CPU ns per query of each round, distances and hops
// per query, the CPU ns of the query preparation alone (qgPrepareCPU),
// and an FNV hash of every answer's ids and distance bits, which
// two builds of the search must share when a change keeps the results),
// for bench/qg_ab.py to alternate two builds of this package and compare.
// $STRATA_QG_GRAPH names a peer's graph (peerQGRows) to search instead of
// the one buildQG makes, to tell the graph's share from the search's.
// $STRATA_QG_DUMP names a directory to write the rows, queries and truth
// to first (dumpQGSet), for a peer's harness to search the same set, and
// $STRATA_QG_SAVE a file to save the index with its quantized graph to.
func BenchmarkQGHop(b *testing.B) {
	s := loadRaBitQBenchSet(b, 20000, 500)
	x, _ := s.graph(b)
	truth := s.truth()
	if dir := os.Getenv("STRATA_QG_DUMP"); dir != "" {
		dumpQGSet(b, dir, s, truth)
	}
	if err := x.BuildRaBitQ(1); err != nil {
		b.Fatal(err)
	}
	rq := x.rabitq.Load()
	rq.qg = x.buildQG(rq.g, rq.n, rq.padded)
	if path := os.Getenv("STRATA_QG_GRAPH"); path != "" {
		rq.qg = peerQGRows(b, x, rq.g, rq.n, path)
	}
	if path := os.Getenv("STRATA_QG_SAVE"); path != "" {
		// The index with these rows, for the other sides of
		// bench/bench_overhead.py --index (Python, C, BenchmarkSearchOne).
		x.cfg.RaBitQLayout, x.cfg.RaBitQBits = LayoutQG, 1
		if err := x.Save(vfs.Default, path); err != nil {
			b.Fatal(err)
		}
	}
	k, nq, dim := s.k, s.nq, s.dim
	rounds := envInt("STRATA_QG_ROUNDS", 5)
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	runtime.LockOSThread() // threadCPU reads this thread's clock
	defer runtime.UnlockOSThread()
	prepare := qgPrepareCPU(rq.qg, s.queries[:nq*dim], dim, rounds)
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
				"results_hash":             fmt.Sprintf("%016x", h.Sum64()),
				"prepare_cpu_ns_per_query": prepare,
				"set":                      s.name, "n": s.n, "queries": nq, "k": k, "dim": dim,
			})
			fmt.Fprintf(os.Stderr, "QGHOP %s\n", line)
		}
	}
}

// qgPrepareCPU is the median over rounds of the CPU ns per query of the
// search's query preparation alone (searchQG's PrepareFastFrom: rotation,
// 6-bit operand, FastScan tables), over the queries.
func qgPrepareCPU(r *qgRows, queries []float32, dim, rounds int) float64 {
	sc := r.pool.Get().(*rabitqScratch)
	defer r.pool.Put(sc)
	nq := len(queries) / dim
	var cpu []float64
	for range rounds {
		cpu0 := threadCPU()
		for i := range nq {
			sc.query.PrepareFastFrom(queries[i*dim : (i+1)*dim])
		}
		cpu = append(cpu, (threadCPU()-cpu0)*1e9/float64(nq))
	}
	return median(cpu)
}

// dumpQGSet writes the set's training rows (train.f32), queries
// (queries.f32), both n×dim little-endian float32, and the truth
// (truth.u32, nq×k uint32) to dir, so that a peer's harness (SymphonyQG's
// counters in bench/qg_symqg_count.cpp) measures the same rows and queries.
func dumpQGSet(b *testing.B, dir string, s *rabitqBenchSet, truth [][]uint64) {
	ids := make([]uint32, 0, len(truth)*s.k)
	for _, t := range truth {
		for _, id := range t[:s.k] {
			ids = append(ids, uint32(id))
		}
	}
	for name, data := range map[string][]byte{
		"train.f32":   wordBytes(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s.data.Train))), len(s.data.Train))),
		"queries.f32": wordBytes(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s.queries))), len(s.queries))),
		"truth.u32":   wordBytes(ids),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// peerQGRows are the rows of the graph in the file at path (a uint32
// entry, then n rows of 32 uint32 neighbour ids, as qg_symqg_count writes
// SymphonyQG's), coded as buildQG codes its own.
func peerQGRows(b *testing.B, x *Index, g *graph, n int, path string) *qgRows {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if len(raw) != 4*(1+n*qgDegree) {
		b.Fatalf("%s: %d bytes, want %d for %d nodes", path, len(raw), 4*(1+n*qgDegree), n)
	}
	words := make([]uint32, len(raw)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	// The file's rows and ids are the training rows' (the ids Add gave);
	// the graph's nodes may be in another order (reorder.go).
	nodeOf := make([]uint32, n)
	for u := range n {
		if int(g.labels[u]) >= n {
			b.Fatalf("node %d has id %d, not a training row of %d", u, g.labels[u], n)
		}
		nodeOf[g.labels[u]] = uint32(u)
	}
	ids := make([]uint32, n*qgDegree)
	for u := range n {
		row := words[1+int(g.labels[u])*qgDegree:][:qgDegree]
		for j, id := range row {
			if int(id) >= n {
				b.Fatalf("%s: row %d links to %d of %d", path, g.labels[u], id, n)
			}
			ids[u*qgDegree+j] = nodeOf[id]
		}
	}
	return newQGRows(x.qgQuantizer(rabitq.PaddedDim(g.dim)), g.dim, n).fill(g, ids, nodeOf[words[0]])
}
