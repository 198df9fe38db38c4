package meta

import (
	"cmp"
	"slices"
)

// keyed is one distinct value of a path with its posting.
type keyed[K float64 | string | int64] struct {
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
type keyIndex[K float64 | string | int64] struct {
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

func compareKeyed[K float64 | string | int64](a, b keyed[K]) int { return cmp.Compare(a.key, b.key) }

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

func filterKeyed[K float64 | string | int64](in []keyed[K], keep func(keyed[K]) bool) []keyed[K] {
	out := make([]keyed[K], 0, len(in))
	for _, e := range in {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// interval is a range of keys; an unset end is unbounded.
type interval[K float64 | string | int64] struct {
	lo, hi         K
	hasLo, hasHi   bool
	loIncl, hiIncl bool
}

// tighten narrows the interval by "key op bound"; the result is the
// intersection of both conditions.
func (iv *interval[K]) tighten(op rangeOp, bound K) {
	switch op {
	case opGt, opGte:
		incl := op == opGte
		if !iv.hasLo || bound > iv.lo || (bound == iv.lo && !incl) {
			iv.lo, iv.hasLo, iv.loIncl = bound, true, incl
		}
	default:
		incl := op == opLte
		if !iv.hasHi || bound < iv.hi || (bound == iv.hi && !incl) {
			iv.hi, iv.hasHi, iv.hiIncl = bound, true, incl
		}
	}
}

func (iv *interval[K]) contains(key K) bool {
	if iv.hasLo && (key < iv.lo || (key == iv.lo && !iv.loIncl)) {
		return false
	}
	if iv.hasHi && (key > iv.hi || (key == iv.hi && !iv.hiIncl)) {
		return false
	}
	return true
}

// span returns the part of k.sorted inside iv as [from, to); to < from
// when the interval is empty.
func (k *keyIndex[K]) span(iv *interval[K]) (from, to int) {
	// cut returns the first index whose key is above bound (orEqual:
	// at or above).
	cut := func(bound K, orEqual bool) int {
		i, _ := slices.BinarySearchFunc(k.sorted, bound, func(e keyed[K], b K) int {
			if c := cmp.Compare(e.key, b); c != 0 || orEqual {
				return c
			}
			return -1 // an equal key sorts before the cut
		})
		return i
	}
	from, to = 0, len(k.sorted)
	if iv.hasLo {
		from = cut(iv.lo, iv.loIncl)
	}
	if iv.hasHi {
		to = cut(iv.hi, !iv.hiIncl)
	}
	return from, to
}

// each calls fn with every non-empty posting whose key is inside iv.
func (k *keyIndex[K]) each(iv *interval[K], fn func(*posting)) {
	from, to := k.span(iv)
	if from < to {
		for _, e := range k.sorted[from:to] {
			if !e.p.empty() {
				fn(e.p)
			}
		}
	}
	for _, e := range k.pending {
		if !e.p.empty() && iv.contains(e.key) {
			fn(e.p)
		}
	}
}

// eachOutside calls fn with every non-empty posting whose key is not
// inside iv.
func (k *keyIndex[K]) eachOutside(iv *interval[K], fn func(*posting)) {
	from, to := k.span(iv)
	visit := func(part []keyed[K]) {
		for _, e := range part {
			if !e.p.empty() {
				fn(e.p)
			}
		}
	}
	if from >= to {
		visit(k.sorted)
	} else {
		visit(k.sorted[:from])
		visit(k.sorted[to:])
	}
	for _, e := range k.pending {
		if !e.p.empty() && !iv.contains(e.key) {
			fn(e.p)
		}
	}
}
