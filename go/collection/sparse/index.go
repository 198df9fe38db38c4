package sparse

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Modifier says how a query's weights are changed before scoring.
type Modifier uint8

const (
	// ModifierNone scores the query as given.
	ModifierNone Modifier = iota
	// ModifierIDF multiplies each query weight by the index's inverse
	// document frequency of its index (Qdrant's modifier "idf"; see the
	// package doc for the formula).
	ModifierIDF
	numModifiers
)

func (m Modifier) String() string {
	switch m {
	case ModifierNone:
		return "none"
	case ModifierIDF:
		return "idf"
	}
	return fmt.Sprintf("Modifier(%d)", uint8(m))
}

// ParseModifier returns the modifier named s ("none" or "", "idf").
func ParseModifier(s string) (Modifier, error) {
	switch s {
	case "", "none":
		return ModifierNone, nil
	case "idf":
		return ModifierIDF, nil
	}
	return 0, fmt.Errorf("%w: unknown sparse modifier %q (want \"none\" or \"idf\")", ErrInvalid, s)
}

// Index is an inverted index of sparse vectors keyed by uint64. It is safe
// for concurrent use: writes are exclusive, searches share (see the
// package doc).
type Index struct {
	modifier Modifier

	mu sync.RWMutex
	// The forward store: row slot of live or dead points, append-only
	// between compactions (Freeze relies on it), so a slot's row never
	// changes while the slot exists.
	keys   []uint64  // slot -> key
	starts []uint64  // slot -> start of its row in rowIdx/rowVal; len(keys)+1 entries
	rowIdx []uint32  // all rows' indices, slot after slot
	rowVal []float32 // all rows' values
	dead   bitset    // slot -> replaced or deleted
	ndead  int
	slots  map[uint64]uint32 // key -> its live slot

	// The inverted side: one posting list per index that any row holds.
	lists map[uint32]*postingList
}

// postingList holds one index's postings in slot order (rows are appended in
// slot order, so appending keeps it sorted). Entries of dead slots stay
// until a compaction; df counts the live ones. maxVal and minVal bound
// every entry's value, dead ones included, which keeps them valid bounds
// without a rescan on delete; so do the per-block bounds: block b holds
// entries [b·blockSize, (b+1)·blockSize), its last slot blockLast[b] and
// its values within [blockMin[b], blockMax[b]].
type postingList struct {
	slots     []uint32
	values    []float32
	df        uint32
	maxVal    float32
	minVal    float32
	blockLast []uint32
	blockMax  []float32
	blockMin  []float32
}

// blockSize is the number of postings a block bound covers: small enough
// that a block's bound is close to its values (BM25 weights vary with
// document length), large enough that the bounds cost 12 bytes per 64
// postings.
const blockSize = 64

// New returns an empty index whose searches apply modifier m.
func New(m Modifier) (*Index, error) {
	if m >= numModifiers {
		return nil, fmt.Errorf("%w: unknown sparse modifier %d", ErrInvalid, m)
	}
	return &Index{modifier: m, starts: []uint64{0}, slots: map[uint64]uint32{}, lists: map[uint32]*postingList{}}, nil
}

// Modifier returns the modifier the index applies to queries.
func (x *Index) Modifier() Modifier { return x.modifier }

// Len returns the number of points (each key with a vector, empty ones
// included).
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slots)
}

// Keys returns the keys of the points, in no particular order.
func (x *Index) Keys() []uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	keys := make([]uint64, 0, len(x.slots))
	for k := range x.slots {
		keys = append(keys, k)
	}
	return keys
}

// Contains reports whether key has a vector.
func (x *Index) Contains(key uint64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.slots[key]
	return ok
}

// Upsert stores vectors[i] under keys[i], replacing what the key had, in
// order (a key twice in one call keeps its last vector). Every vector must
// be normalised (Check); if one is not, nothing is stored and the error
// wraps ErrInvalid and names its position. The vectors are copied.
func (x *Index) Upsert(keys []uint64, vectors []Vector) error {
	if len(keys) != len(vectors) {
		return fmt.Errorf("%w: %d keys and %d vectors", ErrInvalid, len(keys), len(vectors))
	}
	for i, v := range vectors {
		if err := Check(v); err != nil {
			return fmt.Errorf("vector %d (key %d): %w", i, keys[i], err)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, key := range keys {
		x.remove(key)
		x.add(key, vectors[i])
	}
	x.maybeCompact()
	return nil
}

// Delete removes keys (unknown ones are ignored) and returns how many
// there were.
func (x *Index) Delete(keys []uint64) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, key := range keys {
		if x.remove(key) {
			n++
		}
	}
	x.maybeCompact()
	return n
}

// Get returns a copy of key's vector.
func (x *Index) Get(key uint64) (Vector, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot, ok := x.slots[key]
	if !ok {
		return Vector{}, false
	}
	row := x.row(slot)
	return Vector{Indices: append([]uint32{}, row.Indices...), Values: append([]float32{}, row.Values...)}, true
}

// row returns the stored row of slot, sharing the store's memory.
func (x *Index) row(slot uint32) Vector {
	from, to := x.starts[slot], x.starts[slot+1]
	return Vector{Indices: x.rowIdx[from:to:to], Values: x.rowVal[from:to:to]}
}

func (x *Index) add(key uint64, v Vector) {
	if len(x.keys) >= math.MaxUint32 {
		// Slots are uint32; a compaction renumbers, and only 2^32 live
		// points could still reach this.
		x.compact()
	}
	slot := uint32(len(x.keys))
	x.keys = append(x.keys, key)
	x.rowIdx = append(x.rowIdx, v.Indices...)
	x.rowVal = append(x.rowVal, v.Values...)
	x.starts = append(x.starts, uint64(len(x.rowIdx)))
	x.dead = x.dead.grow(len(x.keys))
	x.slots[key] = slot
	for i, index := range v.Indices {
		x.post(index, slot, v.Values[i])
	}
}

func (x *Index) post(index, slot uint32, value float32) {
	l := x.lists[index]
	if l == nil {
		l = &postingList{maxVal: value, minVal: value}
		x.lists[index] = l
	}
	if len(l.slots)%blockSize == 0 {
		l.blockLast = append(l.blockLast, slot)
		l.blockMax = append(l.blockMax, value)
		l.blockMin = append(l.blockMin, value)
	}
	l.slots = append(l.slots, slot)
	l.values = append(l.values, value)
	l.df++
	l.maxVal, l.minVal = max(l.maxVal, value), min(l.minVal, value)
	b := len(l.blockLast) - 1
	l.blockLast[b] = slot
	l.blockMax[b], l.blockMin[b] = max(l.blockMax[b], value), min(l.blockMin[b], value)
}

func (x *Index) remove(key uint64) bool {
	slot, ok := x.slots[key]
	if !ok {
		return false
	}
	delete(x.slots, key)
	x.dead.set(slot)
	x.ndead++
	for _, index := range x.row(slot).Indices {
		x.lists[index].df--
	}
	return true
}

// minCompact keeps a small index from compacting on every other delete.
const minCompact = 1024

// maybeCompact rewrites the store and the postings without dead slots once
// they outnumber live ones (and minCompact), so a delete costs O(1)
// amortised and memory stays within twice the live data.
func (x *Index) maybeCompact() {
	if x.ndead >= minCompact && x.ndead > len(x.slots) {
		x.compact()
	}
}

// compact renumbers the live slots in order into new arrays. It never
// writes into the old ones: a Frozen view may still read them.
func (x *Index) compact() {
	live := len(x.slots)
	nnz := 0
	for slot := range x.keys {
		if !x.dead.has(uint32(slot)) {
			nnz += int(x.starts[slot+1] - x.starts[slot])
		}
	}
	keys := make([]uint64, 0, live)
	starts := make([]uint64, 1, live+1)
	rowIdx := make([]uint32, 0, nnz)
	rowVal := make([]float32, 0, nnz)
	for slot := range x.keys {
		if x.dead.has(uint32(slot)) {
			continue
		}
		row := x.row(uint32(slot))
		keys = append(keys, x.keys[slot])
		rowIdx = append(rowIdx, row.Indices...)
		rowVal = append(rowVal, row.Values...)
		starts = append(starts, uint64(len(rowIdx)))
	}
	x.keys, x.starts, x.rowIdx, x.rowVal = keys, starts, rowIdx, rowVal
	x.dead, x.ndead = make(bitset, (live+63)/64), 0
	x.rebuildPostings()
}

// rebuildPostings builds the posting lists and the key map from the store,
// whose slots must all be live.
func (x *Index) rebuildPostings() {
	df := map[uint32]uint32{}
	for _, index := range x.rowIdx {
		df[index]++
	}
	x.lists = make(map[uint32]*postingList, len(df))
	for index, n := range df {
		blocks := (n + blockSize - 1) / blockSize
		x.lists[index] = &postingList{slots: make([]uint32, 0, n), values: make([]float32, 0, n),
			maxVal: float32(math.Inf(-1)), minVal: float32(math.Inf(1)), blockLast: make([]uint32, 0, blocks),
			blockMax: make([]float32, 0, blocks), blockMin: make([]float32, 0, blocks)}
	}
	x.slots = make(map[uint64]uint32, len(x.keys))
	for slot, key := range x.keys {
		x.slots[key] = uint32(slot)
		row := x.row(uint32(slot))
		for i, index := range row.Indices {
			x.post(index, uint32(slot), row.Values[i])
		}
	}
}

// CheckIntegrity verifies the index's invariants: every live key maps to
// a slot holding it, every row is normalised, every posting list is in
// slot order and holds exactly the rows that have its index, its df counts
// the live ones, and its bounds hold every value. Errors wrap ErrCorrupt.
func (x *Index) CheckIntegrity() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.starts) != len(x.keys)+1 || x.starts[0] != 0 || x.starts[len(x.keys)] != uint64(len(x.rowIdx)) || len(x.rowIdx) != len(x.rowVal) {
		return fmt.Errorf("%w: store of %d slots has %d row starts and %d/%d coordinates", ErrCorrupt, len(x.keys), len(x.starts), len(x.rowIdx), len(x.rowVal))
	}
	if live := len(x.keys) - x.dead.count(len(x.keys)); live != len(x.slots) || x.ndead != len(x.keys)-live {
		return fmt.Errorf("%w: %d live slots, %d keys, %d counted dead", ErrCorrupt, live, len(x.slots), x.ndead)
	}
	for key, slot := range x.slots {
		if int(slot) >= len(x.keys) || x.keys[slot] != key || x.dead.has(slot) {
			return fmt.Errorf("%w: key %d maps to slot %d, which does not hold it live", ErrCorrupt, key, slot)
		}
	}
	want := map[uint32][2]uint32{} // index -> entries, live entries
	for slot := range x.keys {
		if x.starts[slot+1] < x.starts[slot] {
			return fmt.Errorf("%w: row of slot %d ends before it starts", ErrCorrupt, slot)
		}
		row := x.row(uint32(slot))
		if err := Check(row); err != nil {
			return fmt.Errorf("%w: row of slot %d (key %d): %v", ErrCorrupt, slot, x.keys[slot], err)
		}
		for _, index := range row.Indices {
			w := want[index]
			w[0]++
			if !x.dead.has(uint32(slot)) {
				w[1]++
			}
			want[index] = w
		}
	}
	if len(want) != len(x.lists) {
		return fmt.Errorf("%w: rows hold %d indices, %d posting lists", ErrCorrupt, len(want), len(x.lists))
	}
	for index, l := range x.lists {
		w := want[index]
		if uint32(len(l.slots)) != w[0] || len(l.values) != len(l.slots) || l.df != w[1] {
			return fmt.Errorf("%w: posting list of index %d has %d entries (df %d), rows say %d (%d live)", ErrCorrupt, index, len(l.slots), l.df, w[0], w[1])
		}
		if blocks := (len(l.slots) + blockSize - 1) / blockSize; len(l.blockLast) != blocks || len(l.blockMax) != blocks || len(l.blockMin) != blocks {
			return fmt.Errorf("%w: posting list of index %d has %d entries and %d block bounds", ErrCorrupt, index, len(l.slots), len(l.blockLast))
		}
		for i, slot := range l.slots {
			b := i / blockSize
			if v := l.values[i]; v > l.blockMax[b] || v < l.blockMin[b] || (i%blockSize == blockSize-1 || i == len(l.slots)-1) && l.blockLast[b] != slot {
				return fmt.Errorf("%w: posting list of index %d: entry %d outside its block's bounds", ErrCorrupt, index, i)
			}
			if i > 0 && slot <= l.slots[i-1] {
				return fmt.Errorf("%w: posting list of index %d out of slot order at %d", ErrCorrupt, index, i)
			}
			v := l.values[i]
			if v > l.maxVal || v < l.minVal {
				return fmt.Errorf("%w: posting list of index %d: value %v outside its bounds [%v, %v]", ErrCorrupt, index, v, l.minVal, l.maxVal)
			}
			row := x.row(slot)
			j, found := slices.BinarySearch(row.Indices, index)
			if !found || row.Values[j] != v {
				return fmt.Errorf("%w: posting of index %d for slot %d does not match its row", ErrCorrupt, index, slot)
			}
		}
	}
	return nil
}

// bitset is a set of slots.
type bitset []uint64

func (b bitset) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }

// grow returns b with room for n slots, the new ones clear. It may append
// in place: a frozen copy is taken with clone, never shared.
func (b bitset) grow(n int) bitset {
	for len(b)*64 < n {
		b = append(b, 0)
	}
	return b
}

func (b bitset) clone() bitset { return append(bitset(nil), b...) }

// count returns the set slots below n.
func (b bitset) count(n int) int {
	c := 0
	for w := 0; w < len(b) && w*64 < n; w++ {
		c += bits.OnesCount64(b[w])
	}
	return c
}
