package hnsw

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"
)

// Compact rebuilds the graph from the live vectors only, reclaiming the
// memory of tombstones (removed and replaced vectors), and swaps it in
// atomically. threads <= 0 uses every core.
//
// Searches, Add and Remove go on while it runs, so that a server can vacuum
// without stalling writes for the seconds a rebuild takes:
//
//  1. under the write lock, briefly: note the nodes live now and draw the
//     levels of their copies; from here Add and Remove record the ids they
//     touch;
//  2. without it: build the new graph from copies of those nodes (vectors,
//     SQ8 codes and ids are copied exactly, never re-encoded);
//  3. carry over every id touched meanwhile (its copy, if any, becomes a
//     tombstone; its current node, if live, is copied and inserted): in
//     up to compactCatchUpRounds rounds without the lock while more than
//     compactLockedMax are pending (on every core once a round fails to
//     halve them), then the rest under the write lock on every core, and
//     swap; the build is renumbered for locality before the rounds. Writes
//     wait only for that last step, whose cost is that of the writes made
//     during the round before.
//
// The new graph thus holds tombstones only for ids written during the
// rebuild. Compact calls are serialised with each other.
func (x *Index) Compact(threads int) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	x.compactMu.Lock()
	defer x.compactMu.Unlock()

	x.writeMu.Lock()
	old := x.graph.Load()
	if err := x.refuseCodesOnly(old, "Compact", "rebuild the graph"); err != nil {
		x.writeMu.Unlock()
		return err
	}
	if err := x.checkDeferred(); err != nil {
		x.writeMu.Unlock()
		return fmt.Errorf("hnsw: Compact: %w", err)
	}
	live := make([]uint32, 0, old.count)
	for _, node := range old.insertionOrder() {
		if old.isReady(node) {
			live = append(live, node)
		}
	}
	levels, upperWords := x.drawLevels(len(live), old.strideUp)
	x.touched = make(map[uint64]struct{})
	x.writeMu.Unlock()
	// On every return the recording stops (the swap clears it too, under
	// the lock it already holds; this covers a panic in the build).
	defer func() {
		x.writeMu.Lock()
		x.touched = nil
		x.writeMu.Unlock()
	}()

	// Room for the carry-over, so that the locked step need not copy the
	// whole graph to grow it, and for as many nodes again: under
	// overwrites, nodes are appended until the next vacuum and during it,
	// and a graph compacted to its exact size had to grow (copying every
	// array while writes wait, 100-300 ms at 150k-230k x 128) soon after
	// each one. Room no node uses yet is address space: the pages are
	// touched when nodes arrive (100k x 128, four rounds of a quarter
	// overwritten and a Compact: RSS 129-141 MB after each, 123 MB built).
	g := newGraph(old.dim, old.m, old.sq, old.floats).grown(2*len(live)+2*x.build.lockedMax(), upperWords)
	byID := newIDTable()
	x.copyIn(g, old, live, levels, threads, &byID)
	if x.build.compactBuilt != nil {
		x.build.compactBuilt()
	}

	// Renumber for locality now, before the carry-over: the ids written
	// meanwhile are appended after the ordered nodes, as an Add appends
	// them, and the locked step follows the last round directly rather
	// than the copy (which let writes pile up for it: 3,407 ids, a 156 ms
	// pause, against one writer upserting as fast as it can).
	renumbered := g.count >= x.build.minReorderNodes()
	if renumbered {
		var newOf []uint32
		g, newOf = g.permuted(g.bfsOrder())
		byID.remap(newOf)
	}
	aside := x.rabitqAside(g)

	// Catch up without the write lock while writes keep coming, so that
	// the locked step carries over only the last few: under a steady write
	// load the build took seconds and the carry-over of everything written
	// meanwhile held writes back for up to a second. A round that does not
	// halve what is pending means the writes come about as fast as threads
	// can copy them in (one writer upserting as fast as it can against a
	// one-thread Compact: 56,770, 34,485, 22,335, 15,368 ids, then 16,797
	// carried over under the lock, a 1.27 s pause), so from then on the
	// rounds use every core.
	pending := -1
	for range compactCatchUpRounds {
		x.writeMu.Lock()
		touched := x.touched
		if len(touched) <= x.build.lockedMax() {
			x.writeMu.Unlock()
			break
		}
		if pending >= 0 && 2*len(touched) > pending {
			threads = 0 // every core
		}
		pending = len(touched)
		x.touched = make(map[uint64]struct{})
		levels := x.drawLevelsOnly(len(touched))
		x.writeMu.Unlock()
		g = x.carryOver(g, touched, levels, threads, &byID)
	}

	var err error
	func() {
		x.writeMu.Lock()
		defer x.writeMu.Unlock()
		touched := x.touched
		x.touched = nil
		// Writes wait for this step whatever it runs on: every core.
		g = x.carryOver(g, touched, x.drawLevelsOnly(len(touched)), 0, &byID)
		x.mapMu.Lock()
		x.graph.Store(g)
		x.byID, x.published = byID, g.count
		if renumbered {
			x.orderedLive = byID.len()
		}
		x.mapMu.Unlock()
		err = x.keepRaBitQ(true, aside)
	}()
	if err != nil {
		return err
	}
	// The old generation is garbage once in-flight searches finish; hand
	// its memory back now rather than whenever the runtime gets to it.
	// Outside the write lock: a forced collection of a large heap takes
	// tens of milliseconds that writes need not wait for.
	debug.FreeOSMemory()
	return nil
}

// compactCatchUpRounds bounds the unlocked carry-over rounds (each at least
// halves what is pending once on every core); they stop once at most
// compactLockedMax ids are pending (buildTesting can force the rounds).
const (
	compactCatchUpRounds = 16
	compactLockedMax     = 256
)

// carryOver brings g up to date for the ids touched: each one's copy in g
// (if any) becomes a tombstone, and its current node (if live) is copied in
// and inserted with the next of levels (drawn for len(touched) nodes). It
// returns g, grown if needed.
func (x *Index) carryOver(g *graph, touched map[uint64]struct{}, levels []uint8, threads int, byID *idTable) *graph {
	var carry []uint32
	x.mapMu.RLock()
	cur := x.graph.Load() // byID and graph change together under mapMu
	for id := range touched {
		if node, ok := byID.get(id); ok {
			g.lowerSettled(node)
			g.setFlag(node, flagDeleted)
			byID.del(id)
		}
		if node, ok := x.byID.get(id); ok {
			carry = append(carry, node)
		}
	}
	x.mapMu.RUnlock()
	if len(carry) == 0 {
		return g
	}
	// In insertion order, so a seeded single-threaded index stays
	// reproducible whatever the map's iteration order.
	slices.SortFunc(carry, func(a, b uint32) int { return cmp.Compare(cur.rankOf(a), cur.rankOf(b)) })
	levels = levels[:len(carry)]
	upperWords := 0
	for _, l := range levels {
		upperWords += int(l) * g.strideUp
	}
	// g is not published: it grows in place while it has room, so the
	// locked carry-over does not copy the whole graph.
	if g.count+len(carry) > g.capacity() || g.upperUsed+upperWords > len(g.upper) {
		g = g.grown(g.count+len(carry), upperWords)
	}
	x.copyIn(g, cur, carry, levels, threads, byID)
	return g
}

// drawLevelsOnly draws n node levels (drawLevels without the words). The
// caller holds writeMu, which guards the level generator.
func (x *Index) drawLevelsOnly(n int) []uint8 {
	levels, _ := x.drawLevels(n, 0)
	return levels
}

// copyIn appends copies of the nodes src of graph from to g (which has room
// for them), with the given levels, links them as Add does and records
// their ids in byID. g is not published yet, or the caller holds
// writeMu with g unpublished: no search sees the half-built nodes.
func (x *Index) copyIn(g, from *graph, src []uint32, levels []uint8, threads int, byID *idTable) {
	first := g.count
	dim := g.dim
	for i, s := range src {
		node := first + i
		if g.floats {
			copy(g.vectors[node*dim:(node+1)*dim], from.vector(s))
		}
		if g.sq != nil {
			copy(g.codes[node*dim:(node+1)*dim], from.code(s))
			g.shares[node] = from.shares[s]
		}
		g.labels[node] = from.labels[s]
		g.place(node, levels[i])
	}
	g.count = first + len(src)
	x.link(g, first, len(src), threads, nil)
	for i := range src {
		byID.set(g.labels[first+i], uint32(first+i))
	}
}

// touch records ids written by Add or Remove while a Compact builds its
// graph aside, so that it carries them over. The caller holds writeMu.
func (x *Index) touch(ids []uint64) {
	if x.touched == nil {
		return
	}
	for _, id := range ids {
		x.touched[id] = struct{}{}
	}
}
