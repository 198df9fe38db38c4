package meta

import (
	"cmp"
	"slices"
)

// keyed is one distinct value of a path with its posting.
type keyed[K float64 | string] struct {
	key K
	p   *posting
}

// keyIndex holds the postings of the numbers (or the strings) found at one
// path: a map for exact matches and the keys in sorted order for ranges.
//
// Keeping the order exactly sorted on every write would cost a memmove of
// the whole key array per new key, and sorting lazily on read would make a
// read after each write pay a full sort. Instead new keys go to a short
// unsorted pending list that range reads scan linearly, merged into the
// sorted array once it grows past an eighth of it (amortised O(1) per key),
// and postings that empty stay in place until they are a third of all
// keys. Only writers change a keyIndex, so readers need no lock of their own.
type keyIndex[K float64 | string] struct {
	byKey   map[K]*posting
	sorted  []keyed[K] // ascending; may hold empty postings
	pending []keyed[K] // unsorted keys not yet in sorted
	empties int        // postings in byKey that hold no slot
}

func (k *keyIndex[K]) add(key K, slot uint32) {
	p := k.byKey[key]
	switch {
	case p == nil:
		if k.byKey == nil {
			k.byKey = make(map[K]*posting)
		}
		p = &posting{}
		k.byKey[key] = p
		k.pending = append(k.pending, keyed[K]{key, p})
		if len(k.pending) > 4+len(k.sorted)/8 {
			k.merge()
		}
	case p.empty():
		k.empties--
	}
	p.add(slot)
}

func (k *keyIndex[K]) remove(key K, slot uint32) {
	p := k.byKey[key]
	if p == nil || !p.remove(slot) || !p.empty() {
		return
	}
	k.empties++
	if k.empties > 4+len(k.byKey)/3 {
		k.compact()
	}
}

// get returns the posting of key, nil if no slot holds it.
func (k *keyIndex[K]) get(key K) *posting {
	p := k.byKey[key]
	if p == nil || p.empty() {
		return nil
	}
	return p
}

func (k *keyIndex[K]) len() int { return len(k.byKey) - k.empties }

func compareKeyed[K float64 | string](a, b keyed[K]) int { return cmp.Compare(a.key, b.key) }

// merge sorts the pending keys into the sorted array, building a new array
// so that nothing a reader might hold is rewritten.
func (k *keyIndex[K]) merge() {
	slices.SortFunc(k.pending, compareKeyed[K])
	merged := make([]keyed[K], 0, len(k.sorted)+len(k.pending))
	i, j := 0, 0
	for i < len(k.sorted) && j < len(k.pending) {
		if k.sorted[i].key < k.pending[j].key {
			merged = append(merged, k.sorted[i])
			i++
		} else {
			merged = append(merged, k.pending[j])
			j++
		}
	}
	merged = append(merged, k.sorted[i:]...)
	merged = append(merged, k.pending[j:]...)
	k.sorted, k.pending = merged, nil
}

// compact drops empty postings from the map and both key lists.
func (k *keyIndex[K]) compact() {
	keep := func(e keyed[K]) bool { return !e.p.empty() }
	k.sorted = filterKeyed(k.sorted, keep)
	k.pending = filterKeyed(k.pending, keep)
	for key, p := range k.byKey {
		if p.empty() {
			delete(k.byKey, key)
		}
	}
	k.empties = 0
}

func filterKeyed[K float64 | string](in []keyed[K], keep func(keyed[K]) bool) []keyed[K] {
	out := make([]keyed[K], 0, len(in))
	for _, e := range in {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// each calls fn with every non-empty posting whose key k satisfies
// "k op bound".
func (k *keyIndex[K]) each(op rangeOp, bound K, fn func(*posting)) {
	// The sorted keys satisfying op form a prefix or a suffix.
	firstAbove := func(orEqual bool) int {
		i, _ := slices.BinarySearchFunc(k.sorted, bound, func(e keyed[K], b K) int {
			if c := cmp.Compare(e.key, b); c != 0 || !orEqual {
				return c
			}
			return -1 // equal keys sort before the cut
		})
		return i
	}
	var lo, hi int
	switch op {
	case opGt:
		lo, hi = firstAbove(true), len(k.sorted)
	case opGte:
		lo, hi = firstAbove(false), len(k.sorted)
	case opLt:
		lo, hi = 0, firstAbove(false)
	case opLte:
		lo, hi = 0, firstAbove(true)
	}
	for _, e := range k.sorted[lo:hi] {
		if !e.p.empty() {
			fn(e.p)
		}
	}
	for _, e := range k.pending {
		if !e.p.empty() && op.holds(cmp.Compare(e.key, bound)) {
			fn(e.p)
		}
	}
}
