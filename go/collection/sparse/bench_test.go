package sparse

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSearch is one query at a time on the pypi-demo BM25 corpus
// (29,000 summaries, IDF modifier, held-out summaries as queries), k=10,
// with MaxScore and with exhaustive scoring of every posting. Set
// STRATA_SPARSE_N to run on that many synthetic documents instead (see
// syntheticCorpus).
func BenchmarkSearch(b *testing.B) {
	c := benchCorpus(b)
	x := c.build(b, ModifierIDF)
	for _, plan := range []Plan{PlanMaxScore, PlanExhaustive, PlanBlockMaxWAND} {
		b.Run(c.name+"/"+plan.String(), func(b *testing.B) {
			var postings int64
			i := 0
			for b.Loop() {
				_, st, err := x.search(c.queries[i%len(c.queries)], 10, nil, plan)
				if err != nil {
					b.Fatal(err)
				}
				postings += st.Postings
				i++
			}
			b.ReportMetric(float64(postings)/float64(i), "postings/query")
		})
	}
}

func benchCorpus(b *testing.B) corpus {
	if n, err := strconv.Atoi(os.Getenv("STRATA_SPARSE_N")); err == nil && n > 0 {
		return syntheticCorpus(b, n)
	}
	return pypiCorpus(b)
}

// BenchmarkSparseReport measures what bench/bench_sparse.py reports: on
// the real corpus (pypi29k) and on $STRATA_SPARSE_N (300,000) synthetic
// documents, one query per call on one thread, MaxScore and exhaustive
// alternating query by query so that the machine's load hits both alike;
// per plan the latency percentiles and postings read per query. With
// STRATA_SPARSE_OUT set it writes there, per corpus, report.json and the
// documents, the queries as scored (weights after the IDF) and the top 10
// as raw little-endian arrays, for the scipy brute force to time and check
// against. Run it once:
//
//	STRATA_SPARSE_OUT=/tmp/sparse go test ./go/collection/sparse -run '^$' -bench SparseReport -benchtime 1x
func BenchmarkSparseReport(b *testing.B) {
	out := os.Getenv("STRATA_SPARSE_OUT")
	n := 300000
	if v, err := strconv.Atoi(os.Getenv("STRATA_SPARSE_N")); err == nil && v > 0 {
		n = v
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	report := map[string]any{}
	for _, c := range []corpus{pypiCorpus(b), syntheticCorpus(b, n)} {
		start := time.Now()
		x := c.build(b, ModifierIDF)
		build := time.Since(start).Seconds()
		plans := []Plan{PlanMaxScore, PlanExhaustive, PlanBlockMaxWAND}
		lat := map[Plan][]float64{}
		postings := map[Plan]int64{}
		scored := map[Plan]int64{}
		top := make([][]Hit, len(c.queries))
		for round := range 2 { // the first round warms caches and pools
			for qi, q := range c.queries {
				for _, plan := range plans {
					t0 := time.Now()
					hits, st, err := x.search(q, 10, nil, plan)
					el := time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					if round == 0 {
						continue
					}
					lat[plan] = append(lat[plan], float64(el.Nanoseconds())/1e3)
					postings[plan] += st.Postings
					scored[plan] += st.Scored
					if plan == PlanMaxScore {
						top[qi] = hits
					} else if !slices.Equal(hits, top[qi]) {
						b.Fatalf("%s query %d: MaxScore %v, exhaustive %v", c.name, qi, top[qi], hits)
					}
				}
			}
		}
		nnz := 0
		for _, d := range c.docs {
			nnz += d.Len()
		}
		qterms := 0
		for _, q := range c.queries {
			qterms += q.Len()
		}
		entry := map[string]any{"docs": len(c.docs), "nonzeros": nnz, "queries": len(c.queries),
			"mean_query_terms": float64(qterms) / float64(len(c.queries)), "build_s": build,
			"synthetic": strings.HasPrefix(c.name, "synthetic")}
		for _, plan := range plans {
			l := slices.Clone(lat[plan])
			slices.Sort(l)
			entry[plan.String()] = map[string]any{
				"p50_us": l[len(l)/2], "p99_us": l[len(l)*99/100], "mean_us": mean(l),
				"postings_per_query": float64(postings[plan]) / float64(len(l)),
				"scored_per_query":   float64(scored[plan]) / float64(len(l)),
			}
			b.Logf("%s %-10s p50 %7.1f µs  p99 %7.1f µs  postings/query %8.0f", c.name, plan,
				l[len(l)/2], l[len(l)*99/100], float64(postings[plan])/float64(len(l)))
		}
		report[c.name] = entry
		if out != "" {
			if err := export(filepath.Join(out, c.name), x, c, top); err != nil {
				b.Fatal(err)
			}
		}
	}
	if out != "" {
		raw, _ := json.MarshalIndent(map[string]any{"k": 10, "modifier": "idf", "goversion": runtime.Version(),
			"corpora": report}, "", " ")
		if err := os.WriteFile(filepath.Join(out, "report.json"), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// export writes c for bench_sparse.py: docs_indptr (int64), docs_indices
// (uint32), docs_values (float32) in CSR form, the same for the queries as
// scored (weights after the modifier), and top_keys (int64, 10 per query,
// -1 padded) and top_scores (float32).
func export(dir string, x *Index, c corpus, top [][]Hit) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, data any) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := binary.Write(f, binary.LittleEndian, data); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return f.Close()
	}
	csr := func(prefix string, vs []Vector) error {
		indptr := []int64{0}
		var idx []uint32
		var val []float32
		for _, v := range vs {
			idx, val = append(idx, v.Indices...), append(val, v.Values...)
			indptr = append(indptr, int64(len(idx)))
		}
		if err := write(prefix+"_indptr", indptr); err != nil {
			return err
		}
		if err := write(prefix+"_indices", idx); err != nil {
			return err
		}
		return write(prefix+"_values", val)
	}
	if err := csr("docs", c.docs); err != nil {
		return err
	}
	scored := make([]Vector, len(c.queries))
	x.mu.RLock()
	for i, q := range c.queries {
		_, scored[i], _ = x.queryTerms(q)
	}
	x.mu.RUnlock()
	if err := csr("queries", scored); err != nil {
		return err
	}
	keys := make([]int64, 0, 10*len(top))
	scores := make([]float32, 0, 10*len(top))
	for _, hits := range top {
		for i := range 10 {
			if i < len(hits) {
				keys, scores = append(keys, int64(hits[i].Key)), append(scores, hits[i].Score)
			} else {
				keys, scores = append(keys, -1), append(scores, 0)
			}
		}
	}
	if err := write("top_keys", keys); err != nil {
		return err
	}
	return write("top_scores", scores)
}
