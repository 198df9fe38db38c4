// Package idtable maps uint64 ids to uint32 values (graph nodes, document
// slots) the way most callers number their ids: 0..n-1, with gaps. Ids
// below len(dense) live in a flat slice (dense[id] = value+1, 0 = absent)
// and only larger ids go to a map, so a lookup of a dense id is one array
// read, and filling the table with n ascending ids costs n array writes
// (a Go map of 1M ids was a quarter second of a collection's reopen).
// Invariant: an id is in dense iff id < len(dense); growing dense
// migrates the map entries it now covers. Both representations are
// pointer-free for the GC. Not safe for concurrent writes: callers lock.
package idtable

// Table is the map. The zero value is not usable: call New.
type Table struct {
	dense  []uint32
	sparse map[uint64]uint32
	n      int
	sets   uint64 // Set calls: Sets
}

// denseSlack is how far past twice the live count ids may reach and still
// be stored densely: room for the gaps left by removals and upserts.
const denseSlack = 1 << 16

// New returns an empty table.
func New() Table { return Table{sparse: map[uint64]uint32{}} }

// Len is the number of ids.
func (t *Table) Len() int { return t.n }

// Get returns id's value and whether id is present.
func (t *Table) Get(id uint64) (uint32, bool) {
	if id < uint64(len(t.dense)) {
		v := t.dense[id]
		return v - 1, v != 0
	}
	v, ok := t.sparse[id]
	return v, ok
}

// Set sets id's value (at most 2^32-2).
func (t *Table) Set(id uint64, v uint32) {
	t.sets++
	if id >= uint64(len(t.dense)) && id < uint64(2*(t.n+1)+denseSlack) {
		t.growDense(id)
	}
	if id < uint64(len(t.dense)) {
		if t.dense[id] == 0 {
			t.n++
		}
		t.dense[id] = v + 1
		return
	}
	if _, ok := t.sparse[id]; !ok {
		t.n++
	}
	t.sparse[id] = v
}

// Reserve makes room for n ids up to maxID before they are set, as Set
// would grow it for them one doubling at a time (a copy each): a caller
// that knows the ids it is about to set (an import of ascending ids)
// fills the table without copying. It changes nothing else: ids past
// where Set would keep dense still go to the map.
func (t *Table) Reserve(maxID uint64, n int) {
	if maxID >= uint64(len(t.dense)) && maxID < uint64(2*(max(t.n, n)+1)+denseSlack) {
		t.growDense(maxID)
	}
}

// growDense extends dense to cover id (at least doubling) and moves the
// map entries it now covers.
func (t *Table) growDense(id uint64) {
	size := max(int(id)+1, 2*len(t.dense), 1024)
	grown := make([]uint32, size)
	copy(grown, t.dense)
	for sid, v := range t.sparse {
		if sid < uint64(size) {
			grown[sid] = v + 1
			delete(t.sparse, sid)
		}
	}
	t.dense = grown
}

// Del removes id and reports whether it was present.
func (t *Table) Del(id uint64) bool {
	if id < uint64(len(t.dense)) {
		if t.dense[id] == 0 {
			return false
		}
		t.dense[id] = 0
		t.n--
		return true
	}
	if _, ok := t.sparse[id]; !ok {
		return false
	}
	delete(t.sparse, id)
	t.n--
	return true
}

// Sets counts the Set calls so far: a copy of the ids taken (hnsw's sorted
// key table) is current while it is unchanged and nothing was deleted.
func (t *Table) Sets() uint64 { return t.sets }

// Dense is the flat part of the table, for a caller that reads many ids
// below its length: Dense()[id] is id's value+1, 0 if id is absent, and
// ids at or past its length are in the map part (EachSparse). Read only;
// valid until the next Set.
func (t *Table) Dense() []uint32 { return t.dense }

// SparseLen is the number of ids in the map part.
func (t *Table) SparseLen() int { return len(t.sparse) }

// EachSparse calls fn with every id of the map part and its value, in no
// particular order.
func (t *Table) EachSparse(fn func(id uint64, v uint32)) {
	for id, v := range t.sparse {
		fn(id, v)
	}
}

// EachValue calls fn with the value of every id, in no particular order.
func (t *Table) EachValue(fn func(v uint32)) {
	for _, v := range t.dense {
		if v != 0 {
			fn(v - 1)
		}
	}
	for _, v := range t.sparse {
		fn(v)
	}
}

// Each calls fn with every id and its value, in no particular order.
func (t *Table) Each(fn func(id uint64, v uint32)) {
	for id, v := range t.dense {
		if v != 0 {
			fn(uint64(id), v-1)
		}
	}
	for id, v := range t.sparse {
		fn(id, v)
	}
}

// Remap replaces every value v by newOf[v].
func (t *Table) Remap(newOf []uint32) {
	for i, v := range t.dense {
		if v != 0 {
			t.dense[i] = newOf[v-1] + 1
		}
	}
	for id, v := range t.sparse {
		t.sparse[id] = newOf[v]
	}
}
