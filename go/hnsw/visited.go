package hnsw

// visitedSet marks nodes seen during one search. Clearing is O(1): each
// search bumps the epoch and a node counts as visited only when its stamp
// equals the current epoch. The array is zeroed only when the epoch wraps.
type visitedSet struct {
	stamps []uint16
	epoch  uint16
}

// reset prepares the set for a new search over n nodes.
func (v *visitedSet) reset(n int) {
	if len(v.stamps) < n {
		grown := max(n, 2*len(v.stamps))
		v.stamps = make([]uint16, grown)
		v.epoch = 0
	}
	v.epoch++
	if v.epoch == 0 {
		clear(v.stamps)
		v.epoch = 1
	}
}

// visit marks node and reports whether it was already marked.
func (v *visitedSet) visit(node uint32) bool {
	if v.stamps[node] == v.epoch {
		return true
	}
	v.stamps[node] = v.epoch
	return false
}

// has reports whether node is marked, without marking it.
func (v *visitedSet) has(node uint32) bool { return v.stamps[node] == v.epoch }
