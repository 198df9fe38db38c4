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
// out of range: checkBounds, then checkLinkSets.
func (g *graph) checkStructure() error {
	if err := g.checkBounds(); err != nil {
		return err
	}
	return g.checkLinkSets(nil)
}

// checkBounds verifies the rules a search needs to stay inside the
// graph's arrays, which it indexes without bounds checks (vectors and
// codes by unsafe row arithmetic, the visited set by node):
//
//   - the entry point is a node of the top level (or absent iff empty);
//   - levels are at most the top level and upper slots lie inside upper;
//   - link counts are within the level's capacity;
//   - every neighbour is an allocated node whose level reaches the link's level.
//
// The level-0 lists (all but about 1/M of the links) need only the count
// and the largest neighbour of each list: a branch-free max over the
// list, no per-link branch and no random access (the levels of level-0
// neighbours are all at least 0). LoadOptions.DeferCRC runs this alone
// at Load and leaves checkLinkSets to Verify.
func (g *graph) checkBounds() error {
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
	return g.inChunks(func(lo, hi uint32) error { return g.checkListBounds(lo, hi) })
}

// inChunks runs check over the nodes in parallel chunks (a graph read
// from a file is checked on every Open) and returns the first error.
func (g *graph) inChunks(check func(lo, hi uint32) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(1, g.count/checkChunk))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := g.count*w/workers, g.count*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = check(uint32(lo), uint32(hi))
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

// checkListBounds checks the link counts and neighbour bounds of nodes
// [lo, hi) (checkBounds' last two rules).
func (g *graph) checkListBounds(lo, hi uint32) error {
	count := uint32(g.count)
	m0 := uint32(g.m0)
	for node := lo; node < hi; node++ {
		off := int(node) * g.stride0
		row := g.level0[off : off+g.stride0 : off+g.stride0]
		n := atomic.LoadUint32(&row[0])
		if n > m0 {
			return fmt.Errorf("%w: node %d has %d links at level 0 (max %d)", ErrCorrupt, node, n, m0)
		}
		if maxLink(row[1:1+n]) >= count {
			return g.listBoundsError(node, 0)
		}
		for l := 1; l <= int(g.levels[node]); l++ {
			links := g.links(node, l)
			n := int(atomic.LoadUint32(&links[0]))
			if n > g.m {
				return fmt.Errorf("%w: node %d has %d links at level %d (max %d)", ErrCorrupt, node, n, l, g.m)
			}
			for _, nb := range links[1 : 1+n] {
				if nb >= count || int(g.levels[nb]) < l {
					return g.listBoundsError(node, l)
				}
			}
		}
	}
	return nil
}

// listBoundsError names the first neighbour out of bounds in node's list
// at level (one checkListBounds found).
func (g *graph) listBoundsError(node uint32, level int) error {
	links := g.links(node, level)
	for _, nb := range links[1 : 1+links[0]] {
		switch {
		case int(nb) >= g.count:
			return fmt.Errorf("%w: node %d links to unallocated node %d at level %d", ErrCorrupt, node, nb, level)
		case int(g.levels[nb]) < level:
			return fmt.Errorf("%w: node %d links at level %d to node %d of level %d", ErrCorrupt, node, level, nb, g.levels[nb])
		}
	}
	return fmt.Errorf("%w: node %d's links at level %d changed while checked", ErrCorrupt, node, level)
}

// maxLink is the largest value in links (0 if none), four independent
// maxima at a time: the compiler makes each a conditional move, so a
// list costs no branch per link.
func maxLink(links []uint32) uint32 {
	var a, b, c, d uint32
	i := 0
	for ; i+4 <= len(links); i += 4 {
		a, b = max(a, links[i]), max(b, links[i+1])
		c, d = max(c, links[i+2]), max(d, links[i+3])
	}
	for ; i < len(links); i++ {
		a = max(a, links[i])
	}
	return max(a, b, c, d)
}

// checkLinkSets verifies, on a graph that passed checkBounds, what
// only the quality of searches and the invariants of insertion need: no
// self links and no duplicate links. pause, if not nil, is called
// between chunks of nodes and an error from it stops the check (Verify's
// background pass).
func (g *graph) checkLinkSets(pause func() error) error {
	if pause == nil {
		return g.inChunks(func(lo, hi uint32) error { return g.newLinkChecker().check(lo, hi) })
	}
	const piece = 1 << 14 // nodes between two pauses: about a millisecond
	c := g.newLinkChecker()
	for lo := 0; lo < g.count; lo += piece {
		if err := pause(); err != nil {
			return err
		}
		if err := c.check(uint32(lo), uint32(min(g.count, lo+piece))); err != nil {
			return err
		}
	}
	return nil
}

// linkChecker finds self links and duplicates. stamp[nb] holds the stamp
// of the last list that named nb; each list gets a new one, so nothing
// is cleared between lists (only if the uint32 stamps wrap). One word
// write per link instead of a map insertion (the map made this check
// 0.9 s of a 1M-node Load).
type linkChecker struct {
	g     *graph
	stamp []uint32
	cur   uint32
}

func (g *graph) newLinkChecker() *linkChecker {
	return &linkChecker{g: g, stamp: make([]uint32, g.count)}
}

// check checks the link lists of nodes [lo, hi) for self links and
// duplicates (checkLinkSets' rules; the bounds are checked before).
func (c *linkChecker) check(lo, hi uint32) error {
	g := c.g
	for node := lo; node < hi; node++ {
		level := int(g.levels[node])
		for l := 0; l <= level; l++ {
			links := g.links(node, l)
			n := int(atomic.LoadUint32(&links[0]))
			if c.cur++; c.cur == 0 {
				clear(c.stamp)
				c.cur = 1
			}
			for _, nb := range links[1 : 1+n] {
				switch {
				case nb == node:
					return fmt.Errorf("%w: node %d links to itself at level %d", ErrCorrupt, node, l)
				case c.stamp[nb] == c.cur:
					return fmt.Errorf("%w: node %d links twice to node %d at level %d", ErrCorrupt, node, nb, l)
				}
				c.stamp[nb] = c.cur
			}
		}
	}
	return nil
}
