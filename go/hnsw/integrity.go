package hnsw

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// checkChunk is the fewest nodes checkStructure gives a goroutine.
const checkChunk = 1 << 16

// CheckIntegrity verifies the graph's invariants (see checkStructure), that
// no node below the settled count is a tombstone or unfinished, and that
// every node is reachable from the entry point at level 0. It returns
// an error wrapping ErrCorrupt describing the first violation. It waits for
// any running Add so that it sees a consistent graph.
func (x *Index) CheckIntegrity() error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	g := x.graph.Load()
	if err := g.checkStructure(); err != nil {
		return err
	}
	if err := g.checkTree(); err != nil {
		return err
	}
	// Searches skip the flag check below settled: a tombstone or an
	// unfinished node there would be returned.
	for node := range min(int(g.settled.Load()), g.count) {
		if !g.isReady(uint32(node)) {
			return fmt.Errorf("%w: node %d (id %d) is below the settled count %d but deleted or not ready",
				ErrCorrupt, node, g.labels[node], g.settled.Load())
		}
	}
	if g.count == 0 {
		return nil
	}
	_, reached := g.reachable(nil)
	for node, ok := range reached {
		if !ok {
			return fmt.Errorf("%w: node %d (id %d) is unreachable from the entry point at level 0",
				ErrCorrupt, node, g.labels[node])
		}
	}
	return nil
}

// checkStructure verifies what every graph must satisfy, whatever its
// origin (built here or read from a file), in an order that never indexes
// out of range:
//
//   - the entry point is a node of the top level (or absent iff empty);
//   - levels are at most the top level and upper slots lie inside upper;
//   - link counts are within the level's capacity;
//   - no self links and no duplicate links;
//   - every neighbour is an allocated node whose level reaches the link's level.
func (g *graph) checkStructure() error {
	e := g.entry.Load()
	if g.count == 0 {
		if e != noEntry {
			return fmt.Errorf("%w: empty graph has an entry point", ErrCorrupt)
		}
		return nil
	}
	if e == noEntry {
		return fmt.Errorf("%w: %d nodes but no entry point", ErrCorrupt, g.count)
	}
	top, entry := unpackEntry(e)
	if int(entry) >= g.count || int(g.levels[entry]) != top {
		return fmt.Errorf("%w: entry point %d at level %d is not a node of that level", ErrCorrupt, entry, top)
	}
	for node := 0; node < g.count; node++ {
		level := int(g.levels[node])
		if level > top {
			return fmt.Errorf("%w: node %d has level %d above the entry level %d", ErrCorrupt, node, level, top)
		}
		if level > 0 && int(g.upperStart[node])+level*g.strideUp > g.upperUsed {
			return fmt.Errorf("%w: node %d's %d upper levels at %d overrun the %d-word pool",
				ErrCorrupt, node, level, g.upperStart[node], g.upperUsed)
		}
	}
	// The links are checked in parallel chunks of nodes (a graph read
	// from a file is checked on every Open). Duplicates are found with a
	// stamp per node: stamp[nb] == the stamp of the list being checked,
	// one word write per link instead of a map insertion (the map made
	// this check 0.9 s of a 1M-node Load).
	workers := min(runtime.GOMAXPROCS(0), max(1, g.count/checkChunk))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := g.count*w/workers, g.count*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = g.checkLinks(uint32(lo), uint32(hi))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkLinks checks the link lists of nodes [lo, hi) (checkStructure's
// last four rules; the levels and upper slots are checked before).
func (g *graph) checkLinks(lo, hi uint32) error {
	// stamp[nb] holds the stamp of the last list that named nb; each list
	// gets a new one, so nothing is cleared between lists (only if the
	// uint32 stamps wrap).
	stamp := make([]uint32, g.count)
	var cur uint32
	for node := lo; node < hi; node++ {
		level := int(g.levels[node])
		for l := 0; l <= level; l++ {
			links := g.links(node, l)
			n := int(atomic.LoadUint32(&links[0]))
			if n > g.maxLinks(l) {
				return fmt.Errorf("%w: node %d has %d links at level %d (max %d)", ErrCorrupt, node, n, l, g.maxLinks(l))
			}
			if cur++; cur == 0 {
				clear(stamp)
				cur = 1
			}
			for _, nb := range links[1 : 1+n] {
				switch {
				case nb == node:
					return fmt.Errorf("%w: node %d links to itself at level %d", ErrCorrupt, node, l)
				case int(nb) >= g.count:
					return fmt.Errorf("%w: node %d links to unallocated node %d at level %d", ErrCorrupt, node, nb, l)
				case int(g.levels[nb]) < l:
					return fmt.Errorf("%w: node %d links at level %d to node %d of level %d", ErrCorrupt, node, l, nb, g.levels[nb])
				case stamp[nb] == cur:
					return fmt.Errorf("%w: node %d links twice to node %d at level %d", ErrCorrupt, node, nb, l)
				}
				stamp[nb] = cur
			}
		}
	}
	return nil
}
