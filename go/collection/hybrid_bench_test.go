package collection

import (
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// hybridHeldOut is how many pypi-demo rows are kept out of the collection
// as queries (as BenchmarkSparseReport does).
const hybridHeldOut = 1000

// pypiHybrid loads pypi-demo: each row's 512-d embedding and the BM25
// vector of its summary (the document side of BM25, the IDF left to the
// field's modifier; terms hashed by FNV-1a, as package sparse's corpus),
// and the held-out rows' queries (the embedding, 1 per distinct term).
func pypiHybrid(tb testing.TB) (dim int, docs []float32, docSparse []sparse.Vector, queries []float32, querySparse []sparse.Vector) {
	tb.Helper()
	dir := filepath.Join(synth.DataDir(), "pypi-demo")
	vectors, rows, dim, err := synth.ReadNpyF16(filepath.Join(dir, "vectors.f16.npy"))
	if err != nil {
		tb.Skip("shared data absent:", err)
	}
	summaries, err := synth.PypiSummaries()
	if err != nil {
		tb.Skip("shared data absent:", err)
	}
	a, err := text.ParseAnalyzer(text.AnalyzerEnglish)
	if err != nil {
		tb.Fatal(err)
	}
	terms := make([][]string, len(summaries))
	for i, s := range summaries {
		terms[i] = a.Terms(s)
	}
	if len(terms) != rows {
		tb.Fatalf("%d summaries, %d vectors", len(terms), rows)
	}
	index := func(t string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(t))
		return h.Sum32()
	}
	split := rows - hybridHeldOut
	total := 0
	for _, t := range terms[:split] {
		total += len(t)
	}
	avgdl := float64(total) / float64(split)
	const k1, b = 1.2, 0.75
	for i, ts := range terms {
		tf := map[uint32]int{}
		for _, t := range ts {
			tf[index(t)]++
		}
		var idx []uint32
		var val []float32
		norm := k1 * (1 - b + b*float64(len(ts))/avgdl)
		for x, n := range tf {
			idx = append(idx, x)
			if i < split {
				val = append(val, float32(float64(n)*(k1+1)/(float64(n)+norm)))
			} else {
				val = append(val, 1)
			}
		}
		v, err := sparse.Normalize(idx, val)
		if err != nil {
			tb.Fatal(err)
		}
		if i < split {
			docSparse = append(docSparse, v)
		} else if len(idx) > 0 {
			querySparse = append(querySparse, v)
			queries = append(queries, vectors[i*dim:(i+1)*dim]...)
		}
	}
	return dim, vectors[:split*dim], docSparse, queries, querySparse
}

// BenchmarkHybridReport measures what bench/bench_hybrid.py reports: a
// collection of the 29,000 pypi-demo rows (dense field "" of 512-d
// cosine embeddings, sparse field "bm25" of BM25 weights with the IDF
// modifier), queried by the 1,000 held-out rows one query per call on one
// thread, k = 10: the dense side alone, the sparse side alone, and
// QueryFused of both (limit 10 each) by RRF and by DBSF, the four
// alternating query by query (each first for a quarter of the queries) so
// that the machine's load and the caches treat them alike.
// With STRATA_HYBRID_OUT set it writes report.json there. Run it once:
//
//	STRATA_HYBRID_OUT=/tmp/hybrid go test ./go/collection -run '^$' -bench HybridReport -benchtime 1x
func BenchmarkHybridReport(b *testing.B) {
	dim, docs, docSparse, queries, querySparse := pypiHybrid(b)
	n := len(docSparse)
	c, err := Create(b.TempDir(), Options{Dim: dim, Metric: metric.Cosine,
		Sparse: []SparseField{{Name: "bm25", Modifier: sparse.ModifierIDF}}}, Tuning{CheckpointBytes: -1, Fsync: FsyncNever, HasFsync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseForDrop()
	start := time.Now()
	const batchRows = 1000
	for at := 0; at < n; at += batchRows {
		to := min(at+batchRows, n)
		ids := make([]ID, 0, to-at)
		kw := FieldValues{Counts: []int{}, Indices: []uint32{}, Vectors: []float32{}}
		for i := at; i < to; i++ {
			ids = append(ids, IntID(uint64(i)))
			kw.Counts = append(kw.Counts, docSparse[i].Len())
			kw.Indices, kw.Vectors = append(kw.Indices, docSparse[i].Indices...), append(kw.Vectors, docSparse[i].Values...)
		}
		if err := c.UpsertPoints(ids, map[string]FieldValues{"": {Vectors: docs[at*dim : to*dim]}, "bm25": kw}, nil); err != nil {
			b.Fatal(err)
		}
	}
	build := time.Since(start).Seconds()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sides := func(qi int) []SubQuery {
		return []SubQuery{
			{Field: "", Vector: queries[qi*dim : (qi+1)*dim], Limit: 10},
			{Field: "bm25", Indices: querySparse[qi].Indices, Values: querySparse[qi].Values, Limit: 10},
		}
	}
	kinds := []string{"dense", "sparse", "hybrid_rrf", "hybrid_dbsf"}
	run := func(kind string, qi int) error {
		s := sides(qi)
		var err error
		switch kind {
		case "dense":
			_, err = c.Search(s[0], nil, nil, 1)
		case "sparse":
			_, err = c.Search(s[1], nil, nil, 1)
		case "hybrid_rrf":
			_, err = c.QueryFused(s, Fusion{Method: RRF}, 10, nil, nil, 1)
		case "hybrid_dbsf":
			_, err = c.QueryFused(s, Fusion{Method: DBSF}, 10, nil, nil, 1)
		}
		return err
	}
	lat := map[string][]float64{}
	for round := range 2 { // the first round warms caches and pools
		for qi := range querySparse {
			// Each kind goes first for a quarter of the queries: the
			// first search of a query meets its graph region cold, the
			// next ones (the hybrids repeat the dense search) warm.
			for j := range kinds {
				kind := kinds[(qi+j)%len(kinds)]
				t0 := time.Now()
				if err := run(kind, qi); err != nil {
					b.Fatal(err)
				}
				if round == 1 {
					lat[kind] = append(lat[kind], float64(time.Since(t0).Nanoseconds())/1e3)
				}
			}
		}
	}
	report := map[string]any{"docs": n, "dim": dim, "queries": len(querySparse), "k": 10, "sub_query_limit": 10,
		"build_s": build, "threads": 1, "goversion": runtime.Version()}
	for _, kind := range kinds {
		l := slices.Clone(lat[kind])
		slices.Sort(l)
		var sum float64
		for _, x := range l {
			sum += x
		}
		report[kind] = map[string]any{"p50_us": l[len(l)/2], "p99_us": l[len(l)*99/100], "mean_us": sum / float64(len(l))}
		b.Logf("%-12s p50 %7.1f µs  p99 %7.1f µs", kind, l[len(l)/2], l[len(l)*99/100])
	}
	if out := os.Getenv("STRATA_HYBRID_OUT"); out != "" {
		data, err := json.MarshalIndent(report, "", " ")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "report.json"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
