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
	// implicit stands for the entries while every id so far was added
	// above the others into a new slot (a fresh index filled in id order,
	// or one Import rebuilt): entry s is then {ids[s], s} for each slot
	// s < implicit, and entries and pending are empty. It saves a stored
	// 16-byte entry per point (issue 24: 1.5 MiB of a 100k collection's
	// resident memory). The first other add stores them (materialize).
	implicit int
}

// orderList is a view of the entries sortedEntries returns: the stored
// ones, or the implicit ones read off the ids.
type orderList struct {
	entries []orderEntry
	ids     []uint64 // with implicit: entry i is {ids[i], i}
	n       int
}

func (l orderList) len() int { return l.n }

func (l orderList) at(i int) orderEntry {
	if l.entries == nil {
		return orderEntry{l.ids[i], uint32(i)}
	}
	return l.entries[i]
}

// added records a new id, put in slot of ids. Called by writers.
func (o *idOrder) added(ids []uint64, id uint64, slot uint32) {
	if len(o.entries) == 0 && len(o.pending) == 0 && int(slot) == o.implicit &&
		(o.implicit == 0 || id > ids[o.implicit-1]) {
		o.implicit++
		o.slotsRising = true
		return
	}
	if o.implicit > 0 {
		o.materialize(ids, slot)
	}
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

// materialize stores the implicit entries, but for slot: it has just been
// given to a new id (the entry of the id it held is stale: that id was
// deleted), which added records as any other.
func (o *idOrder) materialize(ids []uint64, slot uint32) {
	o.entries = make([]orderEntry, 0, o.implicit+1)
	for s := range o.implicit {
		if uint32(s) != slot {
			o.entries = append(o.entries, orderEntry{ids[s], uint32(s)})
		}
	}
	o.implicit = 0
}

// live reports whether an entry still describes a live id.
func (x *Index) live(e orderEntry) bool {
	return x.alive.has(e.slot) && x.ids[e.slot] == e.id
}

// sortedEntries returns entries covering every live id exactly once
// (possibly with stale entries too), ascending by id, and whether their
// slots ascend too, so that slot order is id order. Called by readers
// holding x.mu shared.
func (x *Index) sortedEntries() (entries orderList, slotsRising bool) {
	o := &x.order
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.implicit > 0 {
		// Ascending ids in ascending slots, the deleted ones' still in
		// place (stale entries): nothing to rebuild.
		return orderList{ids: x.ids[:o.implicit], n: o.implicit}, true
	}
	if len(o.pending) > 0 || o.stale > 64+len(o.entries)/4 {
		x.rebuildOrder()
	}
	return orderList{entries: o.entries, n: len(o.entries)}, o.slotsRising
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
