package sparse

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/limits"
)

// Hit is one search result.
type Hit struct {
	Key   uint64
	Score float32
}

// Plan names how a search was answered.
type Plan uint8

const (
	// PlanEmpty found nothing to score: no query index has postings, or
	// the allow list is empty.
	PlanEmpty Plan = iota
	// PlanMaxScore walked the query's posting lists document at a time,
	// skipping what MaxScore's bounds rule out.
	PlanMaxScore
	// PlanAllowed scored the allowed points one by one from their stored
	// rows: cheaper than the posting lists when the allow list is short.
	PlanAllowed
	// PlanExhaustive scored every posting term at a time (no pruning): the
	// baseline of the benchmark, not chosen by Search.
	PlanExhaustive
	// PlanBlockMaxWAND is block-max WAND, measured against MaxScore by the
	// benchmark, not chosen by Search.
	PlanBlockMaxWAND
)

func (p Plan) String() string {
	switch p {
	case PlanMaxScore:
		return "maxscore"
	case PlanAllowed:
		return "allowed"
	case PlanExhaustive:
		return "exhaustive"
	case PlanBlockMaxWAND:
		return "bmw"
	}
	return "empty"
}

// Stats describes the work of one search.
type Stats struct {
	Plan Plan
	// Postings counts the posting entries (for PlanAllowed: row
	// coordinates) the search read, skips by seeking included at one per
	// entry compared.
	Postings int64
	// Blocks counts the block bounds PlanMaxScore read (12 bytes per 64
	// postings, read instead of the postings they rule out).
	Blocks int64
	// Scored counts the points whose exact score was computed as
	// candidates for the top k.
	Scored int64
}

// allowedPlanRatio: the allowed points are scored from their rows when
// there are fewer than 1/allowedPlanRatio as many as the postings of the
// query's indices. A row costs a map lookup and a merge of two short
// lists, several posting reads' worth.
const allowedPlanRatio = 4

// Search returns the (up to) k points with the highest scores for query q
// (normalised, see Check), best first, ties broken by key ascending. Only
// points that share an index with q are candidates. allow, when not nil,
// lists the only keys that may be returned, ascending (what a filter's
// Select produces; an empty non-nil list allows none; unknown keys are
// ignored). The index's modifier is applied to q's weights.
func (x *Index) Search(q Vector, k int, allow []uint64) ([]Hit, Stats, error) {
	return x.search(q, k, allow, planAuto)
}

// planAuto lets search choose between PlanMaxScore and PlanAllowed; tests
// and the benchmark force the others.
const planAuto Plan = 255

func (x *Index) search(q Vector, k int, allow []uint64, plan Plan) ([]Hit, Stats, error) {
	if err := limits.CheckK(k); err != nil {
		return nil, Stats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := Check(q); err != nil {
		return nil, Stats{}, fmt.Errorf("query: %w", err)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	terms, weights, postings := x.queryTerms(q)
	if len(terms) == 0 || (allow != nil && len(allow) == 0) {
		return []Hit{}, Stats{Plan: PlanEmpty}, nil
	}
	if plan == planAuto {
		plan = PlanMaxScore
		if allow != nil && len(allow) < postings/allowedPlanRatio {
			plan = PlanAllowed
		}
	}
	s := searcher{x: x, weights: weights, allow: allow, top: newTopK(k), stats: Stats{Plan: plan}}
	switch plan {
	case PlanAllowed:
		s.allowedRows()
	case PlanExhaustive:
		s.exhaustive(terms)
	case PlanBlockMaxWAND:
		s.blockMaxWAND(terms)
	default:
		s.maxScore(terms)
	}
	return s.top.sorted(), s.stats, nil
}

// term is one query coordinate that has postings.
type term struct {
	list   *postingList
	weight float64 // after the modifier
	bound  float64 // the most weight·value can be for any posting
	low    float64 // the least weight·value can be for any posting
	order  int     // position among the query's terms, which are in index order
}

// queryTerms returns q's coordinates that have postings, in index order,
// the query's weights after the modifier (as the Vector that Dot scores
// with) and the postings of those lists.
func (x *Index) queryTerms(q Vector) ([]term, Vector, int) {
	terms := make([]term, 0, len(q.Indices))
	weights := Vector{Indices: make([]uint32, 0, len(q.Indices)), Values: make([]float32, 0, len(q.Indices))}
	postings := 0
	for i, index := range q.Indices {
		l := x.lists[index]
		if l == nil || len(l.slots) == 0 {
			continue
		}
		w := q.Values[i]
		if x.modifier == ModifierIDF {
			w *= idf(len(x.slots), int(l.df))
		}
		wf := float64(w)
		hi, lo := wf*float64(l.maxVal), wf*float64(l.minVal)
		terms = append(terms, term{list: l, weight: wf, bound: max(hi, lo), low: min(hi, lo), order: len(terms)})
		weights.Indices, weights.Values = append(weights.Indices, index), append(weights.Values, w)
		postings += len(l.slots)
	}
	return terms, weights, postings
}

// idf is Qdrant's inverse document frequency of an index held by df of n
// points, in float32 arithmetic as Qdrant computes it (ln in float64,
// rounded).
func idf(n, df int) float32 {
	nf, dff := float32(n), float32(df)
	return float32(math.Log(float64((nf-dff+0.5)/(dff+0.5) + 1)))
}

type searcher struct {
	x       *Index
	weights Vector // the query as scored
	allow   []uint64
	top     topK
	stats   Stats
}

// admit scores slot exactly and offers it to the top k.
func (s *searcher) admit(slot uint32) {
	score, matched := Dot(s.weights, s.x.row(slot))
	s.stats.Scored++
	if matched {
		s.top.push(Hit{Key: s.x.keys[slot], Score: score})
	}
}

func (s *searcher) allowed(key uint64) bool {
	_, ok := slices.BinarySearch(s.allow, key)
	return ok
}

// allowedRows is PlanAllowed.
func (s *searcher) allowedRows() {
	for i, key := range s.allow {
		if i > 0 && key == s.allow[i-1] {
			continue // a key listed twice is one point
		}
		if slot, ok := s.x.slots[key]; ok {
			s.stats.Postings += int64(s.x.starts[slot+1] - s.x.starts[slot])
			s.admit(slot)
		}
	}
}

// exhaustive is PlanExhaustive: every posting of every query index added
// into one accumulator per slot, index after index in increasing order,
// which is the order Dot sums in, so the sums are the exact scores.
func (s *searcher) exhaustive(terms []term) {
	acc := getAccumulator(len(s.x.keys))
	defer putAccumulator(acc)
	for _, t := range terms {
		for i, slot := range t.list.slots {
			if !acc.seen.has(slot) {
				acc.seen.set(slot)
				acc.touched = append(acc.touched, slot)
			}
			acc.sum[slot] += t.weight * float64(t.list.values[i])
		}
		s.stats.Postings += int64(len(t.list.slots))
	}
	for _, slot := range acc.touched {
		if s.x.dead.has(slot) || (s.allow != nil && !s.allowed(s.x.keys[slot])) {
			continue
		}
		s.stats.Scored++
		s.top.push(Hit{Key: s.x.keys[slot], Score: float32(acc.sum[slot])})
	}
}

// noSlot marks an exhausted cursor. No slot reaches it: add compacts
// before a slot number would.
const noSlot = math.MaxUint32

// maxScore is PlanMaxScore (Turtle and Flood's MaxScore, document at a
// time, as PISA and Lucene describe it): the lists sorted by bound
// ascending; the shortest prefix whose bound cannot reach the k-th score
// is non-essential, so only points of the other (essential) lists are
// enumerated, and the non-essential lists are only probed for them, from
// the largest bound down, while the score so far plus what they could add
// can still reach the k-th score. See the package doc for why the bounds
// stay correct with negative weights and values.
func (s *searcher) maxScore(terms []term) {
	sortByBound(terms)
	n := len(terms)
	cs := make([]cursor, n)
	// rest[i]: the most lists 0..i-1 can add to a point's score (a point
	// need not be in any of them, so never below 0).
	rest := make([]float64, n+1)
	var absSum float64
	for i, t := range terms {
		cs[i] = cursor{slots: t.list.slots, values: t.list.values, weight: t.weight, list: t.list}
		cs[i].cur = cs[i].slotAt(0)
		rest[i+1] = rest[i] + max(t.bound, 0)
		absSum += max(math.Abs(t.weight*float64(t.list.maxVal)), math.Abs(t.weight*float64(t.list.minVal)))
	}
	// onlyIn(p): the most a point can score that is in some of lists
	// 0..p-1 and in none of the others.
	onlyIn := func(p int) float64 {
		if terms[p-1].bound <= 0 {
			return terms[p-1].bound
		}
		return rest[p]
	}
	first := 0 // lists first.. are essential
	theta, margin := math.Inf(-1), math.Inf(1)
	// raise moves theta up to t and the essential split with it.
	raise := func(t float64) {
		theta = t
		// Ample for the float64 sums' order and the rounding to float32
		// (2^-24 relative), so a bound is never trusted to a hair.
		margin = 1e-6 * (math.Abs(theta) + absSum)
		for first < n && onlyIn(first+1)+margin < theta {
			first++
		}
	}
	if seed, ok := s.seedThreshold(terms); ok {
		raise(seed)
		if first == n {
			return
		}
	}
	blockRest := make([]float64, n+1)
	byIndex := make([]int, n) // list positions in the query's index order
	for i, t := range terms {
		byIndex[t.order] = i
	}
	dead := s.x.dead
	next := uint32(noSlot)
	for i := first; i < n; i++ {
		next = min(next, cs[i].cur)
	}
	var postings, blocks int64
	for next != noSlot {
		slot := next
		var score float64
		next = noSlot
		for i := first; i < n; i++ {
			c := &cs[i]
			if c.cur == slot {
				score += c.weight * float64(c.values[c.pos])
				c.pos++
				c.cur = c.slotAt(c.pos)
				postings++
			}
			next = min(next, c.cur)
		}
		if dead.has(slot) || score+rest[first]+margin < theta {
			continue
		}
		// The non-essential lists' bounds on the blocks that would hold
		// slot: tighter than the lists' own.
		for i := range first {
			c := &cs[i]
			blockRest[i+1] = blockRest[i] + c.blockBound(slot)
		}
		blocks += int64(first)
		if score+blockRest[first]+margin < theta ||
			(s.allow != nil && !s.allowed(s.x.keys[slot])) {
			continue
		}
		pruned := false
		for i := first - 1; i >= 0; i-- {
			if score+blockRest[i+1]+margin < theta {
				pruned = true
				break
			}
			c := &cs[i]
			if c.block == len(c.list.blockLast) {
				continue // the list ends before slot
			}
			probes := c.seek(slot)
			postings += probes
			if c.cur == slot {
				score += c.weight * float64(c.values[c.pos])
			}
		}
		if pruned || score+margin < theta {
			continue
		}
		// Every list's cursor now says whether it holds slot: the
		// essential ones just passed it, the others were probed (or end
		// before it). Sum as Dot does, in index order.
		var exact float64
		for _, i := range byIndex {
			c := &cs[i]
			if i >= first {
				if c.pos > 0 && c.slots[c.pos-1] == slot {
					exact += c.weight * float64(c.values[c.pos-1])
				}
			} else if c.cur == slot {
				exact += c.weight * float64(c.values[c.pos])
			}
		}
		s.stats.Scored++
		s.top.push(Hit{Key: s.x.keys[slot], Score: float32(exact)})
		if !s.top.full() {
			continue
		}
		worst := float64(s.top.worst().Score)
		if worst <= theta {
			continue
		}
		was := first
		raise(worst)
		if first == n {
			break
		}
		if first != was {
			next = noSlot
			for i := first; i < n; i++ {
				next = min(next, cs[i].cur)
			}
		}
	}
	s.stats.Postings += postings
	s.stats.Blocks += blocks
}

func sortByBound(terms []term) {
	slices.SortFunc(terms, func(a, b term) int { return cmp.Compare(a.bound, b.bound) })
}

// cursor is MaxScore's position in one posting list.
type cursor struct {
	slots  []uint32
	values []float32
	pos    int
	cur    uint32 // slots[pos], or noSlot past the end
	weight float64
	list   *postingList
	block  int     // the block that would hold the slot last bounded
	order  int     // the term's position in the query's index order
	bound  float64 // blockMaxWAND: the term's bound, at least 0
}

func (c *cursor) slotAt(pos int) uint32 {
	if pos < len(c.slots) {
		return c.slots[pos]
	}
	return noSlot
}

// blockBound moves c's block to the one that would hold slot and returns
// the most the list can add in it (0 past the end).
func (c *cursor) blockBound(slot uint32) float64 {
	l := c.list
	b := c.block
	for b < len(l.blockLast) && l.blockLast[b] < slot {
		b++
	}
	c.block = b
	if b == len(l.blockLast) {
		return 0
	}
	hi, lo := c.weight*float64(l.blockMax[b]), c.weight*float64(l.blockMin[b])
	if lo > hi {
		hi = lo
	}
	if hi < 0 {
		return 0
	}
	return hi
}

// seek moves c to the first posting at or after slot, within the block
// blockBound found (entries before it are below slot), galloping then
// bisecting, and returns the entries it compared.
func (c *cursor) seek(slot uint32) int64 {
	from := max(c.pos, c.block*blockSize)
	p, probes := seek(c.slots, from, slot)
	c.pos, c.cur = p, c.slotAt(p)
	return probes
}

// seedPostings is how many postings of the lists with the highest bounds
// seedThreshold reads (at least 2k).
const seedPostings = 64

// seedThreshold returns a score that k points are known to reach, when
// it finds k: it merges the lists with the highest bounds (terms is sorted
// by bound), and a point's sum over them, plus the least the other lists
// can add (0 unless their weight·value can be negative), is at most its
// score. No point scoring below the k-th of these can be in the top k, so
// MaxScore starts with it as its threshold instead of enumerating the long
// lists until its heap fills (which, on BM25 data, read a long prefix of
// the most common term's list before any list became non-essential). The
// seeds are found again, and ranked, by the main pass.
func (s *searcher) seedThreshold(terms []term) (float64, bool) {
	k := s.top.k
	want := max(2*k, seedPostings)
	from, count := len(terms), 0
	for from > 0 && count < want && count+len(terms[from-1].list.slots) <= 4*want {
		from--
		count += len(terms[from].list.slots)
	}
	if count < k {
		return 0, false
	}
	var others float64
	for _, t := range terms[:from] {
		others += min(t.low, 0)
	}
	type contribution struct {
		slot  uint32
		score float64
	}
	seeds := make([]contribution, 0, count)
	for _, t := range terms[from:] {
		for i, slot := range t.list.slots {
			seeds = append(seeds, contribution{slot, t.weight * float64(t.list.values[i])})
		}
	}
	s.stats.Postings += int64(count)
	slices.SortFunc(seeds, func(a, b contribution) int { return cmp.Compare(a.slot, b.slot) })
	known := newTopK(k)
	for i := 0; i < len(seeds); {
		slot, sum := seeds[i].slot, others
		for ; i < len(seeds) && seeds[i].slot == slot; i++ {
			sum += seeds[i].score
		}
		if s.x.dead.has(slot) || (s.allow != nil && !s.allowed(s.x.keys[slot])) {
			continue
		}
		known.push(Hit{Key: uint64(slot), Score: float32(sum)})
	}
	if !known.full() {
		return 0, false
	}
	// float32(sum) may round above the sum: step below it.
	floor := float64(known.worst().Score)
	return floor - 1e-6*math.Abs(floor), true
}

// seek returns the first position at or after from whose slot is at least
// target (len(slots) if none), galloping then bisecting, and the entries
// it compared.
func seek(slots []uint32, from int, target uint32) (int, int64) {
	if from >= len(slots) || slots[from] >= target {
		return from, 1
	}
	probes := int64(1)
	lo, step := from, 1 // slots[lo] < target
	hi := from + step
	for hi < len(slots) && slots[hi] < target {
		probes++
		lo, step = hi, step*2
		hi = lo + step
	}
	hi = min(hi, len(slots))
	for lo+1 < hi { // slots[lo] < target <= slots[hi] (or hi = len)
		mid := int(uint(lo+hi) >> 1)
		probes++
		if slots[mid] < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, probes
}

// topK keeps the k best hits: a heap with the worst on top (lowest score,
// then highest key).
type topK struct {
	k    int
	hits []Hit
}

func newTopK(k int) topK { return topK{k: k, hits: make([]Hit, 0, min(k, 1024))} }

// worse reports whether a ranks below b.
func worse(a, b Hit) bool { return a.Score < b.Score || (a.Score == b.Score && a.Key > b.Key) }

func (t *topK) full() bool { return len(t.hits) == t.k }
func (t *topK) worst() Hit { return t.hits[0] }
func (t *topK) push(h Hit) {
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		for i := len(t.hits) - 1; i > 0; {
			parent := (i - 1) / 2
			if !worse(t.hits[i], t.hits[parent]) {
				break
			}
			t.hits[i], t.hits[parent] = t.hits[parent], t.hits[i]
			i = parent
		}
		return
	}
	if !worse(t.hits[0], h) {
		return
	}
	t.hits[0] = h
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(t.hits) && worse(t.hits[l], t.hits[least]) {
			least = l
		}
		if r < len(t.hits) && worse(t.hits[r], t.hits[least]) {
			least = r
		}
		if least == i {
			return
		}
		t.hits[i], t.hits[least] = t.hits[least], t.hits[i]
		i = least
	}
}

// sorted returns the hits best first.
func (t *topK) sorted() []Hit {
	out := slices.Clone(t.hits)
	slices.SortFunc(out, func(a, b Hit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return out
}

// accumulator is PlanExhaustive's scratch, pooled: a sum per slot and the
// slots touched, which are the only ones cleared afterwards.
type accumulator struct {
	sum     []float64
	seen    bitset
	touched []uint32
}

var accumulators sync.Pool

func getAccumulator(n int) *accumulator {
	a, _ := accumulators.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	if len(a.sum) < n {
		a.sum = make([]float64, n)
		a.seen = make(bitset, (n+63)/64)
	}
	return a
}

func putAccumulator(a *accumulator) {
	for _, slot := range a.touched {
		a.sum[slot] = 0
		a.seen[slot>>6] = 0
	}
	a.touched = a.touched[:0]
	accumulators.Put(a)
}
