package hnsw

import (
	"math"
	"sync/atomic"
)

// searchTesting switches off, for one index, choices the search and build
// paths make for speed, so that tests and benchmarks can compare both
// sides in one process without global state that parallel tests would
// share. The zero value is production behaviour. Index.testing is set by
// tests before the index is used (never while it is in use) and copied
// into every searcher the index hands out, so the hot path reads a field
// of the searcher it already holds.
type searchTesting struct {
	// ignoreSettled makes searches check every node's flags, not only
	// those of nodes past graph.settled.
	ignoreSettled bool
	// alwaysPrefetch makes layer searches prefetch whatever the graph's
	// size (prefetchMinBytes).
	alwaysPrefetch bool
	// oneRowKernels makes distRows call the one-row kernel per node.
	oneRowKernels bool
	// mergeOff makes unfiltered list searches insert candidates one at a
	// time, as filtered ones do, instead of through mergeFresh.
	mergeOff bool
	// heapsOnly makes every layer search use the heaps.
	heapsOnly bool
	// listMaxEF and listScanMaxEF, when not 0, replace the constants of
	// the same names (a negative value: no ef qualifies).
	listMaxEF, listScanMaxEF int
	// routeFilter makes filtered graph searches route through every node
	// (searchHeaps) instead of searching the admitted ones (searchAllowed).
	routeFilter bool
	// rereadThrough makes searchAllowed read the link list of every node
	// it passes through again, drained or not (admittedNeighbours).
	rereadThrough bool
	// filterHopBudget, when not 0, replaces filterHopBudget's choice.
	filterHopBudget int
	// forcePlan makes every non-empty search use forcedPlan, so that each
	// plan can be checked against the same model.
	forcePlan  bool
	forcedPlan Plan
	// rabitqBytes, when set, adds up the bytes RaBitQ searches read
	// (rabitqScratch.bytes): BenchmarkRaBitQSweep's bandwidth figures.
	rabitqBytes *atomic.Int64
}

// maxListEF is listMaxEF unless a test replaced it.
func (t *searchTesting) maxListEF() int {
	if t.listMaxEF != 0 {
		return t.listMaxEF
	}
	return listMaxEF
}

// hopBudget is how many admitted nodes one expansion of searchAllowed
// gathers: filterHopBudget unless a test replaced it.
func (t *searchTesting) hopBudget(g *graph) int {
	if t.filterHopBudget != 0 {
		return t.filterHopBudget
	}
	return filterHopBudget(g)
}

// maxListScanEF is listScanMaxEF unless a test replaced it.
func (t *searchTesting) maxListScanEF() int {
	if t.listScanMaxEF != 0 {
		return t.listScanMaxEF
	}
	return listScanMaxEF
}

// buildTesting replaces, for one index, thresholds and hooks of Compact
// and of renumbering, so that tests can reach the paths they guard on
// small graphs and run in parallel. The zero value is production
// behaviour. It is kept apart from searchTesting, which every searcher
// copies: a test changes compactLockedMax between Compacts while searches
// run, and a field the searchers copy would be a data race. Index.build
// is set before the index is shared, or by the goroutine that then calls
// Compact or Renumber (a field nothing else is reading at that moment).
type buildTesting struct {
	// compactLockedMax, when not 0, replaces the constant of the same
	// name (a negative value: every carry-over round runs unlocked).
	compactLockedMax int
	// compactBuilt, when set, runs between Compact's build and its
	// carry-over, so that a test can write at exactly that point.
	compactBuilt func()
	// reorderMinNodes, when not 0, replaces the constant of the same name
	// (a negative value: never renumber).
	reorderMinNodes int
	// addPlaced, when set, runs in Add once the batch's nodes are placed
	// and before they are linked (writeMu held), so that a test can read
	// the index with an Add in progress.
	addPlaced func()
}

// lockedMax is compactLockedMax unless a test replaced it.
func (t *buildTesting) lockedMax() int {
	switch {
	case t.compactLockedMax < 0:
		return 0
	case t.compactLockedMax > 0:
		return t.compactLockedMax
	}
	return compactLockedMax
}

// minReorderNodes is reorderMinNodes unless a test replaced it.
func (t *buildTesting) minReorderNodes() int {
	switch {
	case t.reorderMinNodes < 0:
		return math.MaxInt
	case t.reorderMinNodes > 0:
		return t.reorderMinNodes
	}
	return reorderMinNodes
}
