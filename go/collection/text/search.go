package text

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/limits"
)

// Bounds on a query.
const (
	// MaxQueryBytes bounds the query text.
	MaxQueryBytes = 64 << 10
	// MaxQueryTerms bounds the terms of one query after analysis.
	MaxQueryTerms = 1024
)

// Params are BM25's free parameters; zero values pick Lucene's defaults.
type Params struct {
	K1 float64 // term-frequency saturation, default 1.2; >= 0
	B  float64 // length normalisation, default 0.75; in [0, 1]
	// HasK1 and HasB say K1 and B were set, since 0 is meaningful for
	// both (tf ignored past presence; no length normalisation).
	HasK1, HasB bool
}

// Defaults of Params: Lucene's BM25Similarity.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

func (p Params) resolve() (k1, b float64, err error) {
	k1, b = p.K1, p.B
	if !p.HasK1 && k1 == 0 {
		k1 = DefaultK1
	}
	if !p.HasB && b == 0 {
		b = DefaultB
	}
	if !(k1 >= 0 && k1 <= limits.MaxBM25K1) || !(b >= 0 && b <= 1) {
		return 0, 0, fmt.Errorf("%w: BM25 needs 0 <= k1 <= %d and 0 <= b <= 1, got k1=%v b=%v", ErrInvalid, limits.MaxBM25K1, p.K1, p.B)
	}
	return k1, b, nil
}

// Hit is one search result.
type Hit struct {
	ID    uint64
	Score float32
}

// CheckQuery returns an error for a query text outside the bounds.
func CheckQuery(query string) error {
	if len(query) > MaxQueryBytes {
		return fmt.Errorf("%w: query text of %d bytes exceeds the limit of %d", ErrInvalid, len(query), MaxQueryBytes)
	}
	return nil
}

// Search returns the (up to) k best documents for query, best first. allow,
// when not nil, lists the only ids that may be returned (an empty non-nil
// slice allows none). A query without an indexed term finds nothing.
func (x *Index) Search(query string, k int, p Params, allow []uint64) ([]Hit, error) {
	if err := CheckQuery(query); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("%w: k must be positive, got %d", ErrInvalid, k)
	}
	k1, b, err := p.resolve()
	if err != nil {
		return nil, err
	}
	queryTerms := x.analyzer.Terms(query)
	if len(queryTerms) > MaxQueryTerms {
		return nil, fmt.Errorf("%w: query has %d terms, more than the limit of %d", ErrInvalid, len(queryTerms), MaxQueryTerms)
	}
	if allow != nil && !slices.IsSorted(allow) {
		allow = slices.Sorted(slices.Values(allow))
	}

	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.live == 0 || (allow != nil && len(allow) == 0) {
		return nil, nil
	}
	s := getScratch(len(x.ids))
	defer putScratch(s)
	n := float64(x.live)
	avgdl := float64(x.totalLen) / n
	for _, term := range queryTerms {
		t, ok := x.terms[term]
		if !ok {
			continue
		}
		pl := &x.postings[t]
		if pl.df == 0 {
			continue
		}
		df := float64(pl.df)
		idf := float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
		// tf / (tf + k1·(1 − b + b·|d|/avgdl)) = tf / (tf + c0 + c1·|d|)
		c0, c1 := float32(k1*(1-b)), float32(k1*b/avgdl)
		acc, lengths := s.acc, x.lengths
		for i, slot := range pl.slots {
			dl := lengths[slot]
			if dl == 0 {
				continue // dead
			}
			tf := float32(pl.freqs[i])
			if acc[slot] == 0 {
				s.touched = append(s.touched, slot)
			}
			acc[slot] += idf * tf / (tf + c0 + c1*float32(dl))
		}
	}
	return x.topK(s, k, allow), nil
}

// topK picks the k best touched slots that allow admits, best first.
func (x *Index) topK(s *scratch, k int, allow []uint64) []Hit {
	h := s.heap[:0]
	for _, slot := range s.touched {
		hit := Hit{x.ids[slot], s.acc[slot]}
		if len(h) == k && !better(hit, h[0]) {
			continue
		}
		if allow != nil {
			if _, found := slices.BinarySearch(allow, hit.ID); !found {
				continue
			}
		}
		if len(h) < k {
			h = append(h, hit)
			siftUp(h, len(h)-1)
		} else {
			h[0] = hit
			siftDown(h, 0)
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = h[0]
		h[0] = h[i]
		h = h[:i]
		siftDown(h, 0)
	}
	s.heap = h
	return out
}

// better orders hits: higher score first, then smaller id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// The heap is a min-heap by better: the worst kept hit at h[0]. Written
// out rather than container/heap, which boxes every element.
func siftUp(h []Hit, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !better(h[parent], h[i]) {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func siftDown(h []Hit, i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// scratch is one search's accumulator: a score per slot, and the slots
// touched, so that clearing costs what the search touched, not N.
type scratch struct {
	acc     []float32
	touched []uint32
	heap    []Hit
}

var scratchPool sync.Pool

func getScratch(slots int) *scratch {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.acc) < slots {
		s.acc = make([]float32, slots+slots/4)
	}
	return s
}

func putScratch(s *scratch) {
	for _, slot := range s.touched {
		s.acc[slot] = 0
	}
	s.touched = s.touched[:0]
	scratchPool.Put(s)
}
