package sparse

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/internal/synth"
)

// corpus is a set of sparse document vectors with their queries.
type corpus struct {
	name    string
	keys    []uint64
	docs    []Vector
	queries []Vector
}

// BM25's free parameters for the document weights (Lucene's defaults).
const bm25K1, bm25B = 1.2, 0.75

// heldOut is how many pypi-demo summaries are kept out of the index as
// queries.
const heldOut = 1000

// termIndex maps a term to its sparse index as fastembed's Bm25 does with
// a hash (FNV-1a here, mmh3 there): collisions merge terms, harmlessly.
func termIndex(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// pypiTerms returns the analysed terms of every pypi-demo summary (English
// analyzer of package text), in file order, or skips without the data.
func pypiTerms(tb testing.TB) [][]string {
	tb.Helper()
	summaries, err := synth.PypiSummaries()
	if err != nil {
		tb.Skip("shared data absent:", err)
	}
	a, err := text.ParseAnalyzer(text.AnalyzerEnglish)
	if err != nil {
		tb.Fatal(err)
	}
	out := make([][]string, len(summaries))
	for i, s := range summaries {
		out[i] = a.Terms(s)
	}
	return out
}

// bm25Docs turns term lists into BM25 document vectors: each distinct
// term's value is tf·(k1+1)/(tf + k1·(1−b+b·|d|/avgdl)), the part of BM25
// that a document carries (fastembed's Bm25 embeddings); the IDF comes
// from the index's modifier at query time.
func bm25Docs(termLists [][]string) []Vector {
	total := 0
	for _, terms := range termLists {
		total += len(terms)
	}
	avgdl := float64(total) / float64(max(len(termLists), 1))
	docs := make([]Vector, len(termLists))
	for i, terms := range termLists {
		tf := map[uint32]int{}
		for _, t := range terms {
			tf[termIndex(t)]++
		}
		idx := make([]uint32, 0, len(tf))
		val := make([]float32, 0, len(tf))
		norm := bm25K1 * (1 - bm25B + bm25B*float64(len(terms))/avgdl)
		for index, n := range tf {
			idx = append(idx, index)
			val = append(val, float32(float64(n)*(bm25K1+1)/(float64(n)+norm)))
		}
		v, err := Normalize(idx, val)
		if err != nil {
			panic(err)
		}
		docs[i] = v
	}
	return docs
}

// bm25Queries turns term lists into queries: 1 per distinct term
// (fastembed's Bm25 query_embed), lists without terms dropped.
func bm25Queries(termLists [][]string) []Vector {
	var out []Vector
	for _, terms := range termLists {
		seen := map[uint32]bool{}
		var idx []uint32
		for _, t := range terms {
			if i := termIndex(t); !seen[i] {
				seen[i] = true
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		val := make([]float32, len(idx))
		for i := range val {
			val[i] = 1
		}
		v, err := Normalize(idx, val)
		if err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}

// pypiCorpus is the real set: the first 29,000 pypi-demo summaries as
// BM25 documents (keys 0..), the last 1,000 as queries.
func pypiCorpus(tb testing.TB) corpus {
	terms := pypiTerms(tb)
	split := len(terms) - heldOut
	c := corpus{name: "pypi29k", docs: bm25Docs(terms[:split]), queries: bm25Queries(terms[split:])}
	c.keys = make([]uint64, split)
	for i := range c.keys {
		c.keys[i] = uint64(i)
	}
	return c
}

// syntheticCorpus is n documents sampled from the real corpus's term
// statistics, labelled synthetic: each takes the term count of a real
// document drawn uniformly (the length distribution), then that many terms
// drawn independently from the real corpus's term occurrences (the
// collection unigram distribution, so df follows the real Zipf curve). The
// queries are the real held-out summaries. Seeded: the same n gives the
// same corpus.
func syntheticCorpus(tb testing.TB, n int) corpus {
	terms := pypiTerms(tb)
	split := len(terms) - heldOut
	var stream []string
	for _, t := range terms[:split] {
		stream = append(stream, t...)
	}
	rng := rand.New(rand.NewPCG(25, uint64(n)))
	lists := make([][]string, n)
	for i := range lists {
		length := len(terms[rng.IntN(split)])
		doc := make([]string, length)
		for j := range doc {
			doc[j] = stream[rng.IntN(len(stream))]
		}
		lists[i] = doc
	}
	c := corpus{name: "synthetic" + shortCount(n), docs: bm25Docs(lists), queries: bm25Queries(terms[split:])}
	c.keys = make([]uint64, n)
	for i := range c.keys {
		c.keys[i] = uint64(i)
	}
	return c
}

func shortCount(n int) string {
	if n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// build indexes c's documents.
func (c corpus) build(tb testing.TB, m Modifier) *Index {
	tb.Helper()
	x, err := New(m)
	if err != nil {
		tb.Fatal(err)
	}
	if err := x.Upsert(c.keys, c.docs); err != nil {
		tb.Fatal(err)
	}
	return x
}
