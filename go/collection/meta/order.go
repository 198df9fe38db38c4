package meta

import (
	"slices"
	"sync"
)

// orderEntry pairs an id with the slot it had when the entry was made. The
// entry is stale once that slot is freed or given to another id.
type orderEntry struct {
	id   uint64
	slot uint32
}

// idOrder lists the live slots by ascending id, so that results (slot sets)
// come out as ascending ids by one pass over the list instead of a sort of
// the ids found.
//
// Writers, who hold Index.mu exclusively, only do O(1) work: an id above
// every listed id is appended (the usual case: ids handed out in order);
// any other new id goes to pending; a delete leaves a stale entry behind.
// The first reader after that rebuilds the list under mu: it drops stale
// entries, sorts pending and merges it in. Readers hold Index.mu shared, so
// no writer runs meanwhile, and a rebuild makes a new slice, so a reader
// still scanning the old one is unaffected.
//
// When ids were added in ascending order into ascending slots (a fresh
// index filled with increasing ids, or after a rebuild that finds it so),
// slotsRising is set and a result is read in id order straight off its
// bitset, without touching the entries at all.
type idOrder struct {
	mu          sync.Mutex
	entries     []orderEntry // ascending ids; may include stale entries
	pending     []orderEntry // added out of order since the last rebuild
	stale       int          // deletes since the last rebuild
	slotsRising bool         // entries' slots ascend too (valid without pending)
}

// added records a new id. Called by writers.
func (o *idOrder) added(id uint64, slot uint32) {
	if len(o.pending) == 0 && (len(o.entries) == 0 || id > o.entries[len(o.entries)-1].id) {
		if len(o.entries) == 0 {
			o.slotsRising = true
		} else if slot <= o.entries[len(o.entries)-1].slot {
			o.slotsRising = false
		}
		o.entries = append(o.entries, orderEntry{id, slot})
		return
	}
	o.pending = append(o.pending, orderEntry{id, slot})
}

// removed records that some id left. Called by writers.
func (o *idOrder) removed() { o.stale++ }

// live reports whether an entry still describes a live id.
func (x *Index) live(e orderEntry) bool {
	return x.alive.has(e.slot) && x.ids[e.slot] == e.id
}

// sortedEntries returns entries covering every live id exactly once
// (possibly with stale entries too), ascending by id, and whether their
// slots ascend too, so that slot order is id order. Called by readers
// holding x.mu shared.
func (x *Index) sortedEntries() (entries []orderEntry, slotsRising bool) {
	o := &x.order
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) > 0 || o.stale > 64+len(o.entries)/4 {
		x.rebuildOrder()
	}
	return o.entries, o.slotsRising
}

func (x *Index) rebuildOrder() {
	o := &x.order
	pending := make([]orderEntry, 0, len(o.pending))
	for _, e := range o.pending {
		if x.live(e) {
			pending = append(pending, e)
		}
	}
	slices.SortFunc(pending, func(a, b orderEntry) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	merged := make([]orderEntry, 0, x.slots.Len())
	push := func(e orderEntry) {
		// An id deleted and put again can be listed twice, both entries live
		// (same id, same slot): keep one.
		if n := len(merged); n > 0 && merged[n-1].id == e.id {
			return
		}
		merged = append(merged, e)
	}
	i := 0
	for _, e := range o.entries {
		if !x.live(e) {
			continue
		}
		for i < len(pending) && pending[i].id <= e.id {
			push(pending[i])
			i++
		}
		push(e)
	}
	for ; i < len(pending); i++ {
		push(pending[i])
	}
	o.entries, o.pending, o.stale = merged, nil, 0
	o.slotsRising = slices.IsSortedFunc(merged, func(a, b orderEntry) int { return int(a.slot) - int(b.slot) })
}
