package meta

import "math/bits"

// bitset is a dense set of slots, one bit each. Filters are evaluated on
// bitsets rather than on compressed bitmaps because slots are dense by
// construction: at 100k slots a bitset is 12.5 KiB and an AND or OR is a
// short loop over words, whatever the two operands hold.
type bitset []uint64

func newBitset(words int) bitset { return make(bitset, words) }

func wordsFor(slots int) int { return (slots + 63) / 64 }

func (b bitset) set(slot uint32)   { b[slot>>6] |= 1 << (slot & 63) }
func (b bitset) clear(slot uint32) { b[slot>>6] &^= 1 << (slot & 63) }
func (b bitset) has(slot uint32) bool {
	return b[slot>>6]&(1<<(slot&63)) != 0
}

func (b bitset) and(o bitset) {
	o = o[:len(b)]
	for i := range b {
		b[i] &= o[i]
	}
}

func (b bitset) or(o bitset) {
	o = o[:len(b)]
	for i := range b {
		b[i] |= o[i]
	}
}

func (b bitset) andNot(o bitset) {
	o = o[:len(b)]
	for i := range b {
		b[i] &^= o[i]
	}
}

// complementWithin turns b into within &^ b.
func (b bitset) complementWithin(within bitset) {
	within = within[:len(b)]
	for i := range b {
		b[i] = within[i] &^ b[i]
	}
}

// orMissing adds the slots of within that are not in present.
func (b bitset) orMissing(within, present bitset) {
	within, present = within[:len(b)], present[:len(b)]
	for i := range b {
		b[i] |= within[i] &^ present[i]
	}
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// each calls fn for every slot in b, ascending.
func (b bitset) each(fn func(slot uint32)) {
	for i, w := range b {
		for w != 0 {
			fn(uint32(i*64 + bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
}
