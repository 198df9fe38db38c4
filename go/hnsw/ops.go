package hnsw

import (
	"fmt"
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
	x.touch(ids)
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
	if err := x.refuseCodesOnly(g, "GetVectors", "return the vectors"); err != nil {
		return err
	}
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

// IDs returns the live ids in insertion order. It waits for an Add in
// progress: the insertion order it reads (the node count, the ranks) is
// written by Add outside mapMu, and a collection's builder adds while its
// readers ask for the ids (has_vector, DistancesTo).
func (x *Index) IDs() ([]uint64, error) {
	if err := x.acquire(); err != nil {
		return nil, err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
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
