package hnsw

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/metric"
)

// Add inserts len(vectors)/Dim vectors. ids gives their ids (nil: sequential
// ids starting after the largest id ever added); an id already present is
// replaced (upsert): its old vector is tombstoned once the new one is in.
// outIDs, if not nil, receives the ids used. threads <= 0 uses every core.
// On error nothing is changed. A cosine index normalises the vectors it
// stores (GetVectors returns them so).
func (x *Index) Add(vectors []float32, ids []uint64, outIDs []uint64, threads int) error {
	return x.add(vectors, ids, outIDs, threads, x.cfg.Metric.NeedsNormalize())
}

// AddStored is Add of vectors already in the form the index stores them:
// normalised for cosine (a collection's tail rows, or what GetVectors of
// an index of the same metric returned). They are stored bit for bit:
// normalising a unit vector again moves coordinates by an ulp or two, so
// a vector read back would depend on how often it had been inserted.
func (x *Index) AddStored(vectors []float32, ids []uint64, threads int) error {
	return x.add(vectors, ids, nil, threads, false)
}

func (x *Index) add(vectors []float32, ids []uint64, outIDs []uint64, threads int, normalize bool) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	dim := x.cfg.Dim
	n, err := batch.CheckAddUpTo(vectors, dim, ids, outIDs, x.cfg.maxID())
	if err != nil {
		return fmt.Errorf("hnsw: %w", err)
	}

	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if err := x.refuseCodesOnly(x.graph.Load(), "Add", "place new vectors in the graph"); err != nil {
		return err
	}
	if err := x.checkDeferred(); err != nil {
		return fmt.Errorf("hnsw: Add: %w", err)
	}

	if ids == nil {
		if x.nextID > batch.MaxID-uint64(n)+1 {
			return fmt.Errorf("%w: %d sequential ids from %d would exceed the largest id %d",
				ErrInvalidArgument, n, x.nextID, uint64(batch.MaxID))
		}
		ids = make([]uint64, n)
		for i := range ids {
			ids[i] = x.nextID + uint64(i)
		}
	}
	if n == 0 {
		return nil
	}
	x.touch(ids)

	if !x.Trained() {
		if err := x.trainLocked(vectors); err != nil {
			return err
		}
	}
	// Allocate nodes: levels are drawn here, in order, so a seed fixes them
	// whatever the thread count.
	g := x.graph.Load()
	first := g.count
	levels, upperWords := x.drawLevels(n, g.strideUp)
	if first+n > g.capacity() || g.upperUsed+upperWords > len(g.upper) {
		g = g.grown(first+n, upperWords)
		x.graph.Store(g)
	}
	replaced := make([]int64, n) // old node of an upserted id, or -1
	x.mapMu.RLock()
	for i, id := range ids {
		replaced[i] = -1
		if old, ok := x.byID.get(id); ok {
			replaced[i] = int64(old)
			g.lowerSettled(old) // it becomes a tombstone below
		}
	}
	x.mapMu.RUnlock()
	var row []float32 // scratch for codes-only graphs
	if !g.floats {
		row = make([]float32, dim)
	}
	for i := 0; i < n; i++ {
		node := first + i
		dst := row
		if g.floats {
			dst = g.vectors[node*dim : (node+1)*dim]
		}
		copy(dst, vectors[i*dim:(i+1)*dim])
		if normalize {
			metric.Normalize(dst)
		}
		if g.sq != nil {
			g.shares[node] = g.sq.Encode(dst, g.codes[node*dim:(node+1)*dim])
		}
		g.labels[node] = ids[i]
		g.place(node, levels[i])
	}
	g.count = first + n
	if x.build.addPlaced != nil {
		x.build.addPlaced()
	}

	x.link(g, first, n, threads, func(i int) {
		if old := replaced[i]; old >= 0 {
			g.setFlag(uint32(old), flagDeleted)
		}
	})
	// A large batch is renumbered for locality (reorder.go) before its ids
	// are published; searches still running on the old numbering finish
	// on the old graph, which keeps its own labels.
	var newOf []uint32
	if x.shouldReorder(n, g.count) {
		g, newOf = g.permuted(g.bfsOrder())
	}
	x.mapMu.Lock()
	if newOf != nil {
		x.byID.remap(newOf)
		x.graph.Store(g)
	}
	for i, id := range ids {
		node := uint32(first + i)
		if newOf != nil {
			node = newOf[node]
		}
		x.byID.set(id, node)
		if id >= x.nextID {
			x.nextID = id + 1
		}
	}
	if newOf != nil {
		x.orderedLive = x.byID.len()
	}
	x.published = g.count
	x.mapMu.Unlock()
	if outIDs != nil {
		copy(outIDs, ids)
	}
	if err := x.keepRaBitQ(newOf != nil, nil); err != nil {
		return err
	}
	if x.codesOnly() {
		return x.dropFloats()
	}
	return nil
}

// link inserts nodes [first, first+n) of g, whose data and levels are
// stored, in rounds in locality order (insertorder.go), and marks each one
// ready; linked(i), if not nil, runs for node first+i just before that.
// Add and Compact's copies go through it.
func (x *Index) link(g *graph, first, n, threads int, linked func(i int)) {
	var p insertionPlan
	for done := 0; done < n; {
		size := roundSize(first+done, n-done)
		planned := x.plan(g, first+done, size, threads, &p)
		x.parallel(size, threads, func(s *searcher, j int) {
			i, start := done+j, (*candidate)(nil)
			if planned {
				i, start = done+int(p.order[j]), &p.start[p.order[j]]
			}
			node := uint32(first + i)
			x.insert(g, s, node, start)
			if linked != nil {
				linked(i)
			}
			g.setFlag(node, flagReady)
			x.progress.Add(1)
		})
		done += size
	}
	if g.settled.Load() == uint32(first) {
		g.settled.Store(uint32(g.count)) // the whole range is ready, no tombstone below it
	}
}

// place records node's level and reserves its upper-level links.
func (g *graph) place(node int, level uint8) {
	g.levels[node] = level
	if level > 0 {
		g.upperStart[node] = uint32(g.upperUsed)
		g.upperUsed += int(level) * g.strideUp
	}
}

// parallel runs work(s, i) for i in [0, n) on up to threads goroutines
// (threads <= 0: GOMAXPROCS), each with its own pooled searcher. Items are
// handed out in order through an atomic counter. Each worker yields its P
// between items every yieldEvery (yield.go).
func (x *Index) parallel(n, threads int, work func(s *searcher, i int)) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = min(threads, n)
	if threads <= 1 {
		s, y := x.getSearcher(), newYielder()
		for i := 0; i < n; i++ {
			work(s, i)
			y.maybe()
		}
		x.putSearcher(s)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var panicked atomic.Pointer[any]
	for t := 0; t < threads; t++ {
		wg.Go(func() {
			// A panic on a worker would kill the process (the C ABI can only
			// recover panics on the calling goroutine): hand it over instead.
			defer func() {
				if r := recover(); r != nil {
					panicked.CompareAndSwap(nil, &r)
					next.Store(int64(n)) // stop the other workers
				}
			}()
			s, y := x.getSearcher(), newYielder()
			defer x.putSearcher(s)
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				work(s, i)
				y.maybe()
			}
		})
	}
	wg.Wait()
	if r := panicked.Load(); r != nil {
		panic(fmt.Sprintf("hnsw: worker panicked: %v", *r))
	}
}

// insert links node, whose vector, level and upper slots are already
// stored, into g (algorithm 1 of the HNSW paper, as hnswlib does it).
// start, if not nil, is the level-1 node a descent towards node reached
// (insertorder.go); a level-0 node then searches level 0 from it instead
// of descending again.
func (x *Index) insert(g *graph, s *searcher, node uint32, start *candidate) {
	q := s.setNodeQuery(g, node)
	level := int(g.levels[node])
	e := g.entry.Load()
	holdEntry := false
	if top, _ := unpackEntry(e); e == noEntry || level > top {
		// This node may become the entry point: decide under entryMu and,
		// if it does, keep holding it until the node is fully linked so no
		// one enters the graph through a node without links.
		x.entryMu.Lock()
		e = g.entry.Load()
		if e == noEntry {
			g.entry.Store(packEntry(level, node))
			x.entryMu.Unlock()
			return
		}
		if top, _ := unpackEntry(e); level > top {
			holdEntry = true
		} else {
			x.entryMu.Unlock()
		}
	}
	top, ep := unpackEntry(e)
	var cur candidate
	if start != nil && level == 0 {
		cur = *start
	} else {
		cur = candidate{s.dist(g, x.dk, q, ep), ep}
		for l := top; l > level; l-- {
			cur = s.greedy(g, x.dk, q, cur, l, allNodes)
		}
	}
	build := admission{}
	for l := min(level, top); l >= 0; l-- {
		s.searchLayer(g, x.dk, q, cur, x.cfg.EfConstruction, l, &build)
		cands := withoutNode([]candidate(s.results), node)
		if len(cands) == 0 {
			continue // only the node itself was found (through a concurrent insertion's link)
		}
		cur = cands[0]
		// Keep the choice in s.chosen: setLinks and connect reuse
		// s.selected for their own pruning.
		s.chosen = append(s.chosen[:0], s.selectNeighbors(g, x.dk, cands, x.cfg.M, x.copyDist())...)
		x.setLinks(g, s, node, l, s.chosen)
		for _, nb := range s.chosen {
			x.connect(g, s, nb.node, node, nb.dist, l)
		}
	}
	// No neighbour that adopted the node while linking back: anchor it
	// (tree.go), or nothing might ever reach it.
	x.adoptOrphan(g, s, node)
	if holdEntry {
		x.reroot(g, s, node, ep)
		g.entry.Store(packEntry(level, node))
		atomic.StoreUint32(&g.parent[node], noParent) // the root has none
		x.entryMu.Unlock()
	}
}

// setLinks writes node's own neighbour list at level. If a concurrent
// insertion already linked back to node there, those links are merged in
// instead of being overwritten.
func (x *Index) setLinks(g *graph, s *searcher, node uint32, level int, selected []candidate) {
	mu := &x.locks[node%lockStripes]
	mu.Lock()
	defer mu.Unlock()
	links := g.links(node, level)
	if n := int(links[0]); n > 0 {
		cands := append(s.pruned[:0], selected...)
		for i := 1; i <= n; i++ {
			nb := links[i]
			if !containsNode(cands, nb) {
				cands = append(cands, candidate{s.pairDist(g, x.dk, node, nb), nb})
			}
		}
		sortByDist(cands)
		s.pruned = cands
		selected = s.selectNeighbors(g, x.dk, cands, g.maxLinks(level), x.copyDist())
	}
	x.replaceLinks(g, s, node, links, level, selected)
}

// connect adds the link from -> to at level (distance d between them),
// pruning from's list with the heuristic when it is full.
func (x *Index) connect(g *graph, s *searcher, from, to uint32, d float32, level int) {
	mu := &x.locks[from%lockStripes]
	mu.Lock()
	defer mu.Unlock()
	links := g.links(from, level)
	n := int(links[0])
	for i := 1; i <= n; i++ {
		if links[i] == to {
			return
		}
	}
	limit := g.maxLinks(level)
	if n < limit {
		atomic.StoreUint32(&links[n+1], to)
		atomic.StoreUint32(&links[0], uint32(n+1))
		if level == 0 {
			g.adopt(from, to)
		}
		return
	}
	// Full: choose from the current neighbours plus the new one.
	cands := append(s.pruned[:0], candidate{d, to})
	for i := 1; i <= n; i++ {
		nb := links[i]
		cands = append(cands, candidate{s.pairDist(g, x.dk, from, nb), nb})
	}
	sortByDist(cands)
	s.pruned = cands
	sel := s.selectNeighbors(g, x.dk, cands, limit, x.copyDist())
	x.replaceLinks(g, s, from, links, level, sel)
}

// replaceLinks publishes sel as from's neighbour list links at level (the
// caller holds from's lock). At level 0 a pinned link (tree.go) is never
// dropped: a pinned neighbour the heuristic left out is kept, taking a free
// slot or the place of the farthest unpinned entry of sel; if every entry is
// pinned the list stays as it was. Neighbours newly linked from a node in
// the tree that have no parent are adopted.
func (x *Index) replaceLinks(g *graph, s *searcher, from uint32, links []uint32, level int, sel []candidate) {
	if level != 0 {
		writeLinks(links, sel)
		return
	}
	old := append(s.old[:0], links[1:1+int(links[0])]...)
	s.old = old
	sel = append(s.final[:0], sel...) // edited below; the caller's list stays intact
	s.final = sel
	limit := g.maxLinks(0)
	for _, nb := range old {
		if containsNode(sel, nb) || !g.pinned(from, nb) {
			continue
		}
		if len(sel) < limit {
			sel = append(sel, candidate{node: nb})
			continue
		}
		j := lastUnpinned(g, from, sel)
		if j < 0 {
			return
		}
		sel[j] = candidate{node: nb}
	}
	s.final = sel
	writeLinks(links, sel)
	for _, c := range sel {
		if !containsLink(old, c.node) {
			g.adopt(from, c.node)
		}
	}
}

// withoutNode removes node from the sorted candidates c, in place: a node
// being inserted can find itself when a concurrent insertion that started
// from it at an upper level has already linked back to it.
func withoutNode(c []candidate, node uint32) []candidate {
	for i := range c {
		if c[i].node == node {
			return append(c[:i], c[i+1:]...)
		}
	}
	return c
}

func containsLink(links []uint32, node uint32) bool {
	for _, l := range links {
		if l == node {
			return true
		}
	}
	return false
}

func containsNode(c []candidate, node uint32) bool {
	for _, x := range c {
		if x.node == node {
			return true
		}
	}
	return false
}

// writeLinks publishes a neighbour list: slots first, then the count, each
// with an atomic store so lock-free readers see whole words.
func writeLinks(links []uint32, sel []candidate) {
	for i, c := range sel {
		atomic.StoreUint32(&links[i+1], c.node)
	}
	atomic.StoreUint32(&links[0], uint32(len(sel)))
}
