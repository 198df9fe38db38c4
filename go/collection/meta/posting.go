package meta

import (
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// smallPosting is the size up to which a posting is a sorted slice. Most
// postings of a high-cardinality field (prices, timestamps, names) hold one
// or two slots, where a roaring bitmap would cost a hundred bytes of
// headers and a range query would spend its time entering containers.
const smallPosting = 32

// posting is the set of slots holding one value at one path: a sorted
// slice while small, a roaring bitmap once it outgrows that (compressed, and
// fast to expand into a bitset). The zero posting is empty.
type posting struct {
	small []uint32
	big   *roaring.Bitmap
}

// add inserts slot and reports whether it was absent.
func (p *posting) add(slot uint32) bool {
	if p.big != nil {
		return p.big.CheckedAdd(slot)
	}
	i, found := slices.BinarySearch(p.small, slot)
	if found {
		return false
	}
	if len(p.small) < smallPosting {
		p.small = slices.Insert(p.small, i, slot)
		return true
	}
	p.big = roaring.BitmapOf(p.small...)
	p.big.Add(slot)
	p.small = nil
	return true
}

// remove deletes slot and reports whether it was present. A bitmap that
// empties goes back to the (allocation-free) empty slice form.
func (p *posting) remove(slot uint32) bool {
	if p.big != nil {
		if !p.big.CheckedRemove(slot) {
			return false
		}
		if p.big.IsEmpty() {
			p.big = nil
		}
		return true
	}
	i, found := slices.BinarySearch(p.small, slot)
	if !found {
		return false
	}
	p.small = slices.Delete(p.small, i, i+1)
	return true
}

func (p *posting) empty() bool { return p.big == nil && len(p.small) == 0 }

// orInto adds the posting's slots to dst. scratch is a bitset of dst's
// size whose contents are destroyed: roaring's WriteDenseTo overwrites the
// words of its dense containers rather than OR-ing them, so a dense posting
// is expanded there first.
func (p *posting) orInto(dst, scratch bitset) {
	if p.big == nil {
		for _, s := range p.small {
			dst.set(s)
		}
		return
	}
	// Setting bits one by one costs a few ns per slot; expanding costs a
	// fraction of a ns per word of dst. Pick the cheaper.
	if p.big.GetCardinality()*4 < uint64(len(dst)) {
		p.big.Iterate(func(s uint32) bool {
			dst.set(s)
			return true
		})
		return
	}
	clear(scratch)
	p.big.WriteDenseTo(scratch)
	dst.or(scratch)
}
