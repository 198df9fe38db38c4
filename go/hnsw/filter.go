package hnsw

import (
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Filter restricts a search to some ids. Allow, when not nil, lists the only
// ids that may be returned (an empty, non-nil list allows nothing); Deny
// lists ids that must not be returned. Unknown ids are ignored. The same
// filter applies to every query of a call.
type Filter struct {
	Allow []uint64
	Deny  []uint64
	// Sorted says Allow is in ascending order (segment.Graphs checks it
	// once per query): an index then intersects it with its own sorted
	// ids (filter_keys.go) instead of looking up every id of it. A list
	// out of order with Sorted set loses ids.
	Sorted bool
}

// Plan names how a search was answered.
type Plan uint8

const (
	// PlanGraph traversed the HNSW graph: with a filter, measuring only
	// allowed nodes, reached in one or two hops (filter_search.go), or on
	// RaBitQ codes routing through every node but admitting only allowed
	// ones to the results.
	PlanGraph Plan = iota
	// PlanExact scanned the allowed vectors: cheaper than the graph when few
	// are allowed, and exact.
	PlanExact
	// PlanEmpty found nothing to search (empty index or nothing allowed).
	PlanEmpty
)

func (p Plan) String() string {
	switch p {
	case PlanGraph:
		return "graph"
	case PlanExact:
		return "exact"
	}
	return "empty"
}

// Merge adds the stats of another part of one search (a segment, a tail
// scanned exactly) to s: the counts add up, EfSearch is the largest, and
// Plan is PlanGraph if a part took its graph, else PlanExact if one
// scanned, else PlanEmpty. Every search over several parts merges its
// parts' stats with it, so a plan never depends on which part held the
// rows (s starts as SearchStats{Plan: PlanEmpty}).
func (s *SearchStats) Merge(part SearchStats) {
	s.DistanceComputations += part.DistanceComputations
	s.Refinements += part.Refinements
	s.LinksRead += part.LinksRead
	s.Rerouted += part.Rerouted
	s.Allowed += part.Allowed
	s.EfSearch = max(s.EfSearch, part.EfSearch)
	switch {
	case part.Plan == PlanGraph:
		s.Plan = PlanGraph
	case part.Plan == PlanExact && s.Plan == PlanEmpty:
		s.Plan = PlanExact
	}
}

// bitset is a fixed-size set of nodes.
type bitset []uint64

func (b bitset) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) unset(i uint32)    { b[i>>6] &^= 1 << (i & 63) }
func (b bitset) has(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }

func (b bitset) count() int {
	c := 0
	for _, w := range b {
		c += bits.OnesCount64(w)
	}
	return c
}

// bitsets keeps compiled filters' node sets between searches
// (compileFilter, releaseFilter): a new one per filtered search of each
// segment was capacity/8 bytes of garbage per query (a collection's
// queries deny the keys its tail hides while writes overwrite points).
var bitsets = sync.Pool{New: func() any { return new(bitset) }}

// releaseFilter returns a set compileFilter made (nil: none).
func releaseFilter(held *bitset) {
	if held != nil {
		bitsets.Put(held)
	}
}

// compileFilter turns f into a bitset over g's nodes and counts the live
// nodes it allows and the live nodes in all. It holds mapMu so ids and
// nodes come from the same generation; allowed is nil when f restricts
// nothing. The caller gives held to releaseFilter once the search is
// done with allowed.
func (x *Index) compileFilter(f *Filter) (g *graph, allowed bitset, held *bitset, selected, live int) {
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	g = x.graph.Load()
	live = x.byID.len()
	if f == nil || (f.Allow == nil && len(f.Deny) == 0) {
		return g, nil, nil, live, live
	}
	held = bitsets.Get().(*bitset)
	words := (g.capacity() + 63) / 64
	*held = slices.Grow((*held)[:0], words)[:words]
	clear(*held)
	allowed = *held
	var keys *keyTable
	if f.Allow != nil && f.Sorted {
		keys = x.sortedKeys(g)
	}
	switch {
	case keys != nil:
		x.compileSorted(keys, f.Allow, allowed)
	case f.Allow != nil:
		for _, id := range f.Allow {
			if node, ok := x.byID.get(id); ok {
				allowed.set(node)
			}
		}
	default:
		x.byID.eachNode(allowed.set)
	}
	for _, id := range f.Deny {
		if node, ok := x.byID.get(id); ok {
			allowed.unset(node)
		}
	}
	return g, allowed, held, allowed.count(), live
}

// maxFilterBoost caps filteredEf's widening of the candidate list.
const maxFilterBoost = 8

// filteredEf widens ef for a graph search that routes through every node
// (routing: RaBitQ graphs, and the reroute of a search of the allowed
// nodes that came up short; that search itself keeps ef) but admits only
// a fraction p = selected/live of the nodes. The admitted candidates of a filtered
// search come from a sparser, more scattered set than an unfiltered
// search's, and at the same ef its recall falls below the unfiltered one
// (pypi-use512, 50% random allow list, ef=64: 0.972 against exact filtered
// search; one-cluster allow lists lower still). Scaling ef by 1/p² (capped)
// restores it, leaves unfiltered and nearly unfiltered searches alone, and
// is priced into the plan choice, which then scans exactly whenever the
// widened traversal would cost more.
//
// The search of the allowed nodes (routing false) needs less: its
// candidates are all allowed, but they come from a sparser graph, and ef/p
// capped at 2·ef (allowedFilterBoost) brings it to recall 0.99 where ef
// alone falls short (TestFilterTraversalBench, 100k x 128 clustered: at a
// 50 % random allow list 0.975 at ef 16, 0.998 at 32).
func filteredEf(ef, selected, live int, routing bool) int {
	if selected >= live || selected == 0 {
		return ef
	}
	p := float64(selected) / float64(live)
	if !routing {
		return int(math.Ceil(float64(ef) * min(1/p, allowedFilterBoost)))
	}
	return int(math.Ceil(float64(ef) * min(1/(p*p), maxFilterBoost)))
}

// allowedFilterBoost caps filteredEf's widening for a search of the
// allowed nodes.
const allowedFilterBoost = 2

// choosePlan picks exact scan or graph traversal by their costs in
// distance computations. An exact scan costs selected. An unfiltered
// graph search costs about ef·2M, and a filtered one that routes through
// every node (RaBitQ graphs) must visit about ef·n/selected nodes,
// expanding 2·M links each: the scan wins when selected² < ef·2M·n. The
// search of the allowed nodes alone (searchAllowed) costs an unfiltered
// search's ef·2M, whatever n, times 1 + (1−p)·(allowedPassCost + 1/(p·2M))
// for an allowed fraction p: the nodes it passes through to a second hop
// cost a link list read each (allowedPassCost), and gathering 2·M allowed
// nodes from two hops reads about 1/(p·2M) lists per node gathered. At
// p = 1 that is the unfiltered cost; at 1 % with M = 16 about five times
// it. TestFilterTraversalBench measures both sides; an unfiltered small
// index is scanned for the same reason (selected = n).
func (x *Index) choosePlan(g *graph, selected, live, ef int, routing bool) Plan {
	if selected == 0 || g.entry.Load() == noEntry {
		return PlanEmpty
	}
	if x.testing.forcePlan {
		return x.testing.forcedPlan
	}
	sel, m0, work := float64(selected), float64(g.m0), float64(ef)*float64(g.m0)
	if routing || selected >= live {
		return routeOrScan(g, selected, ef)
	}
	p := sel / float64(live)
	if sel < work*(1+(1-p)*(allowedPassCost+1/(p*m0))) {
		return PlanExact
	}
	return PlanGraph
}

// routeOrScan is the cheaper of an exact scan of selected nodes and a
// graph search at ef that routes through every node (choosePlan's model):
// PlanExact or PlanGraph.
func routeOrScan(g *graph, selected, ef int) Plan {
	sel, work := float64(selected), float64(ef)*float64(g.m0)
	if sel*sel < work*float64(g.capacity()) {
		return PlanExact
	}
	return PlanGraph
}

// fallbackWork is what the fallback of a filtered graph search costs in
// distances (choosePlan's units): an exact scan its selected nodes, a
// routing search at ef about ef·2M·capacity/selected. searchAllowed gives
// up past it, so a query that falls back pays at most twice its fallback.
func fallbackWork(g *graph, fallback Plan, selected, ef int) int64 {
	if fallback == PlanExact {
		return int64(selected)
	}
	return int64(min(float64(ef)*float64(g.m0)*float64(g.capacity())/float64(max(selected, 1)), 1<<40))
}

// allowedPassCost is what a filtered search of the allowed nodes pays per
// expansion for the nodes it passes through, in units of ef·2M distances
// (choosePlan). TestFilterTraversalBench, 100k x 128 clustered, M 16, load
// average 40-60: at a 10 % random allow list and ef 16 the search read 354
// link lists and computed 217 distances in 131 µs of CPU, the unfiltered
// search at ef 16 445 distances in 45 µs: 2.9x, where the model says
// 1 + 0.9·(1 + 0.31) = 2.2x; at 1 % (ef 10) 4,382 link lists, 745 µs, the
// scan of the 1,000 allowed 135 µs, which the model picks (5.1x).
const allowedPassCost = 1

// filterHopBudget is how many admitted nodes one expansion of a filtered
// graph search (searchAllowed) gathers from one and two hops: the level-0
// degree, so that the admitted subgraph it walks is about as dense as the
// graph itself.
func filterHopBudget(g *graph) int { return g.m0 }
