package meta

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchDocs builds n documents shaped like product metadata: a category of
// 100 values, a bool, a year of 75 values, a unique-ish float price, a tag
// list and a nested object.
func benchDocs(tb testing.TB, n int) []Document {
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]Document, n)
	for i := range docs {
		docs[i] = mustDoc(tb, fmt.Sprintf(
			`{"cat": "c%d", "flag": %v, "year": %d, "price": %.4f, "tags": ["t%d", "t%d"], "stock": {"shop": %d}}`,
			i%100, i%2 == 0, 1950+i%75, r.Float64()*100, r.IntN(20), r.IntN(20), r.IntN(10)))
	}
	return docs
}

func benchIndex(tb testing.TB, n int) *Index {
	x := NewIndex()
	docs := benchDocs(tb, n)
	for i, d := range docs {
		x.Put(uint64(i), d)
	}
	return x
}

func BenchmarkParseDocument(b *testing.B) {
	data := []byte(`{"cat": "c17", "flag": true, "year": 1984, "price": 12.5, "tags": ["t1", "t2"], "stock": {"shop": 3}}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseDocument(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut reports the cost of one Put of a new id into an index that
// grows to 20k documents.
func BenchmarkPut(b *testing.B) {
	docs := benchDocs(b, 20000)
	x := NewIndex()
	i := 0
	for b.Loop() {
		if i == len(docs) {
			b.StopTimer()
			x, i = NewIndex(), 0
			b.StartTimer()
		}
		x.Put(uint64(i), docs[i])
		i++
	}
}

// BenchmarkPutReplace replaces documents of a full index: the old
// document's postings are removed first.
func BenchmarkPutReplace(b *testing.B) {
	docs := benchDocs(b, 20000)
	x := NewIndex()
	for i, d := range docs {
		x.Put(uint64(i), d)
	}
	i := 0
	for b.Loop() {
		// Shift by one more each pass, so that no Put repeats the stored document.
		x.Put(uint64(i%len(docs)), docs[(i+1+i/len(docs))%len(docs)])
		i++
	}
}

func BenchmarkSelect(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		x := benchIndex(b, n)
		for _, tc := range []struct{ name, filter string }{
			{"all", `{}`},
			{"50pct", `{"flag": true}`},
			{"1pct", `{"cat": "c7"}`},
			{"range_year_27pct", `{"year": {"$gte": 1980, "$lt": 2000}}`},
			{"range_price_50pct", `{"price": {"$lt": 50}}`},
			{"range_price_1pct", `{"price": {"$gte": 20, "$lt": 21}}`},
			{"in_and_not", `{"tags": {"$in": ["t1", "t2"]}, "cat": {"$ne": "c3"}, "stock.shop": {"$gt": 4}}`},
		} {
			f := mustFilter(b, tc.filter)
			b.Run(fmt.Sprintf("%dk/%s", n/1000, tc.name), func(b *testing.B) {
				count := 0
				for b.Loop() {
					count = len(x.Select(f))
				}
				b.ReportMetric(float64(count), "ids")
			})
		}
	}
}

func BenchmarkCount(b *testing.B) {
	x := benchIndex(b, 20000)
	f := mustFilter(b, `{"flag": true, "year": {"$gte": 1980}}`)
	for b.Loop() {
		x.Count(f)
	}
}

// BenchmarkSelectLists measures the conditions on lists of objects over
// 20k documents with 0 to 3 reviews each: a path through the list
// (postings), $elemMatch (documents read, narrowed by postings), $size and
// a list position (documents read).
func BenchmarkSelectLists(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	x := NewIndex()
	for i := range 20000 {
		reviews := make([]string, r.IntN(4))
		for j := range reviews {
			reviews[j] = fmt.Sprintf(`{"by": "u%d", "stars": %d}`, r.IntN(100), 1+r.IntN(5))
		}
		x.Put(uint64(i), mustDoc(b, fmt.Sprintf(`{"cat": "c%d", "reviews": [%s]}`, i%100, strings.Join(reviews, ","))))
	}
	for _, tc := range []struct{ name, filter string }{
		{"path_stars", `{"reviews.stars": 5}`},
		{"path_by_1pct", `{"reviews.by": "u7"}`},
		{"elemMatch_selective", `{"reviews": {"$elemMatch": {"by": "u7", "stars": 5}}}`},
		{"elemMatch_broad", `{"reviews": {"$elemMatch": {"stars": {"$gte": 2}}}}`},
		{"size", `{"reviews": {"$size": 2}}`},
		{"position", `{"reviews.0.stars": 5}`},
	} {
		f := mustFilter(b, tc.filter)
		b.Run(tc.name, func(b *testing.B) {
			count := 0
			for b.Loop() {
				count = len(x.Select(f))
			}
			b.ReportMetric(float64(count), "ids")
		})
	}
}
