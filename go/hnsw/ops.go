package hnsw

import (
	"fmt"
	"runtime/debug"
)

// Remove deletes ids: each becomes a tombstone that still routes searches
// but is never returned, until Compact reclaims it. An id that is not live
// fails the whole call with ErrNotFound (and changes nothing) unless
// missingOK, in which case it is skipped. It returns how many ids were
// removed.
func (x *Index) Remove(ids []uint64, missingOK bool) (int, error) {
	if err := x.acquire(); err != nil {
		return 0, err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mapMu.Lock()
	defer x.mapMu.Unlock()
	if !missingOK {
		for i, id := range ids {
			if _, ok := x.byID.get(id); !ok {
				return 0, fmt.Errorf("%w: ids[%d] = %d", ErrNotFound, i, id)
			}
		}
	}
	g := x.graph.Load()
	removed := 0
	for _, id := range ids {
		node, ok := x.byID.get(id)
		if !ok {
			continue // missingOK, or repeated in ids
		}
		g.lowerSettled(node)
		g.setFlag(node, flagDeleted)
		x.byID.del(id)
		removed++
	}
	return removed, nil
}

// GetVectors copies the stored vectors of ids into out (len(ids)·Dim).
// Cosine indexes return the normalised vectors they store.
func (x *Index) GetVectors(ids []uint64, out []float32) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	dim := x.cfg.Dim
	if len(out) != len(ids)*dim {
		return fmt.Errorf("%w: output holds %d floats, want %d", ErrInvalidArgument, len(out), len(ids)*dim)
	}
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	g := x.graph.Load()
	for i, id := range ids {
		node, ok := x.byID.get(id)
		if !ok {
			return fmt.Errorf("%w: ids[%d] = %d", ErrNotFound, i, id)
		}
		if g.floats {
			copy(out[i*dim:(i+1)*dim], g.vector(node))
		} else {
			g.sq.Decode(g.code(node), out[i*dim:(i+1)*dim])
		}
	}
	return nil
}

// IDs returns the live ids in insertion order.
func (x *Index) IDs() ([]uint64, error) {
	if err := x.acquire(); err != nil {
		return nil, err
	}
	defer x.closeMu.RUnlock()
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	g := x.graph.Load()
	out := make([]uint64, 0, x.byID.len())
	for _, node := range g.insertionOrder() {
		if g.isReady(node) {
			out = append(out, g.labels[node])
		}
	}
	return out, nil
}

// Tombstones returns the number of removed or replaced vectors still held
// in the graph (what Compact would reclaim).
func (x *Index) Tombstones() int {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	return x.graph.Load().count - x.byID.len()
}

// Compact rebuilds the graph from the live vectors only, reclaiming the
// memory of tombstones. The new graph is built aside while searches keep
// using the current one, then swapped in atomically; Add and Remove wait.
// threads <= 0 uses every core.
func (x *Index) Compact(threads int) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	old := x.graph.Load()
	live := make([]uint32, 0, old.count)
	for _, node := range old.insertionOrder() {
		if old.isReady(node) {
			live = append(live, node)
		}
	}
	n := len(live)
	levels, upperWords := x.drawLevels(n, old.strideUp)
	g := newGraph(old.dim, old.m, old.sq, old.floats).grown(n, upperWords)
	dim := g.dim
	for i, src := range live {
		if g.floats {
			copy(g.vectors[i*dim:(i+1)*dim], old.vector(src))
		}
		if g.sq != nil {
			copy(g.codes[i*dim:(i+1)*dim], old.code(src))
			g.shares[i] = old.shares[src]
		}
		g.labels[i] = old.labels[src]
		g.levels[i] = levels[i]
		if levels[i] > 0 {
			g.upperStart[i] = uint32(g.upperUsed)
			g.upperUsed += int(levels[i]) * g.strideUp
		}
	}
	g.count = n
	x.parallel(n, threads, func(s *searcher, i int) {
		x.insert(g, s, uint32(i), nil)
		g.setFlag(uint32(i), flagReady)
		x.progress.Add(1)
	})
	g.settled.Store(uint32(n))
	if n >= reorderMinNodes {
		g, _ = g.permuted(g.bfsOrder())
	}
	byID := newIDTable()
	for i := range n {
		byID.set(g.labels[i], uint32(i))
	}
	x.mapMu.Lock()
	x.graph.Store(g)
	x.byID = byID
	x.mapMu.Unlock()
	// The old generation is garbage once in-flight searches finish; hand
	// its memory back now rather than whenever the runtime gets to it.
	debug.FreeOSMemory()
	return nil
}
