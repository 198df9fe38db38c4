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
		x.keys.Load().forget(id)
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

// IDs returns the live ids in insertion order. It reads the id map under
// mapMu's read lock and never waits for an Add in progress (a
// collection's builder adds while its readers ask for the ids: has_vector,
// DistancesTo): an Add publishes its ids, and a renumbered graph with
// them, under mapMu once its nodes are linked, so IDs lists each batch
// whole or not at all. The ranks it orders by are written when a graph is
// made (grown or renumbered), before any node of it is published.
func (x *Index) IDs() ([]uint64, error) {
	if err := x.acquire(); err != nil {
		return nil, err
	}
	defer x.closeMu.RUnlock()
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	g := x.graph.Load()
	// Ranks are a permutation of [0, capacity): one slot per rank, node+1
	// in it for a live node (0: none), read back in rank order.
	byRank := make([]uint32, g.capacity())
	x.byID.eachNode(func(node uint32) { byRank[g.rankOf(node)] = node + 1 })
	out := make([]uint64, 0, x.byID.len())
	for _, v := range byRank {
		if v != 0 {
			out = append(out, g.labels[v-1])
		}
	}
	return out, nil
}

// Tombstones returns the number of removed or replaced vectors still held
// in the graph (what Compact would reclaim). It reads under mapMu's read
// lock and never waits for an Add in progress (a collection's vacuum
// look and Info ask while its builder adds): it counts the nodes
// published so far, each batch's replaced vectors once its ids are.
func (x *Index) Tombstones() int {
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	return x.published - x.byID.len()
}
