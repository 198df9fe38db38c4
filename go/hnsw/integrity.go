package hnsw

import (
	"fmt"
	"sync/atomic"
)

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
	seen := make(map[uint32]struct{}, g.m0)
	for node := uint32(0); int(node) < g.count; node++ {
		level := int(g.levels[node])
		for l := 0; l <= level; l++ {
			links := g.links(node, l)
			n := int(atomic.LoadUint32(&links[0]))
			if n > g.maxLinks(l) {
				return fmt.Errorf("%w: node %d has %d links at level %d (max %d)", ErrCorrupt, node, n, l, g.maxLinks(l))
			}
			clear(seen)
			for i := 1; i <= n; i++ {
				nb := links[i]
				switch {
				case nb == node:
					return fmt.Errorf("%w: node %d links to itself at level %d", ErrCorrupt, node, l)
				case int(nb) >= g.count:
					return fmt.Errorf("%w: node %d links to unallocated node %d at level %d", ErrCorrupt, node, nb, l)
				case int(g.levels[nb]) < l:
					return fmt.Errorf("%w: node %d links at level %d to node %d of level %d", ErrCorrupt, node, l, nb, g.levels[nb])
				}
				if _, dup := seen[nb]; dup {
					return fmt.Errorf("%w: node %d links twice to node %d at level %d", ErrCorrupt, node, nb, l)
				}
				seen[nb] = struct{}{}
			}
		}
	}
	return nil
}
