package hnsw

// idTable maps live ids to nodes. Most callers number their vectors
// 0..n-1, and a filtered search looks up thousands of ids per call, so ids
// below len(dense) live in a flat slice (dense[id] = node+1, 0 = absent)
// and only larger ids go to a map. Invariant: an id is in dense iff
// id < len(dense); growing dense migrates the map entries it now covers.
// Both representations are pointer-free for the GC.
type idTable struct {
	dense  []uint32
	sparse map[uint64]uint32
	n      int
	// sets counts set calls: a sorted copy of the ids (filter_keys.go)
	// is current while it and the graph are unchanged.
	sets uint64
}

// denseSlack is how far past twice the live count ids may reach and still
// be stored densely: room for the gaps left by removals and upserts.
const denseSlack = 1 << 16

func newIDTable() idTable { return idTable{sparse: map[uint64]uint32{}} }

func (t *idTable) len() int { return t.n }

func (t *idTable) get(id uint64) (uint32, bool) {
	if id < uint64(len(t.dense)) {
		v := t.dense[id]
		return v - 1, v != 0
	}
	node, ok := t.sparse[id]
	return node, ok
}

func (t *idTable) set(id uint64, node uint32) {
	t.sets++
	if id >= uint64(len(t.dense)) && id < uint64(2*(t.n+1)+denseSlack) {
		t.growDense(id)
	}
	if id < uint64(len(t.dense)) {
		if t.dense[id] == 0 {
			t.n++
		}
		t.dense[id] = node + 1
		return
	}
	if _, ok := t.sparse[id]; !ok {
		t.n++
	}
	t.sparse[id] = node
}

// growDense extends dense to cover id (at least doubling) and moves the
// map entries it now covers.
func (t *idTable) growDense(id uint64) {
	size := max(int(id)+1, 2*len(t.dense), 1024)
	grown := make([]uint32, size)
	copy(grown, t.dense)
	for sid, node := range t.sparse {
		if sid < uint64(size) {
			grown[sid] = node + 1
			delete(t.sparse, sid)
		}
	}
	t.dense = grown
}

// del removes id and reports whether it was present.
func (t *idTable) del(id uint64) bool {
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

// eachNode calls fn with the node of every live id.
func (t *idTable) eachNode(fn func(node uint32)) {
	for _, v := range t.dense {
		if v != 0 {
			fn(v - 1)
		}
	}
	for _, node := range t.sparse {
		fn(node)
	}
}
