package flat

import "math"

// topK keeps the k best (smallest distance, then smallest id) candidates seen
// so far in a bounded max-heap: the root is the worst kept candidate, so most
// candidates are rejected after one comparison with it. Parallel arrays, not
// a slice of structs or container/heap, so pushes neither box nor allocate.
type topK struct {
	k    int
	dist []float32
	id   []uint64
}

func newTopK(k int) *topK {
	return &topK{k: k, dist: make([]float32, 0, k), id: make([]uint64, 0, k)}
}

func (h *topK) reset() {
	h.dist = h.dist[:0]
	h.id = h.id[:0]
}

// worse reports whether candidate a ranks after candidate b.
func worse(distA float32, idA uint64, distB float32, idB uint64) bool {
	return distA > distB || (distA == distB && idA > idB)
}

func (h *topK) push(dist float32, id uint64) {
	if len(h.dist) < h.k {
		h.dist = append(h.dist, dist)
		h.id = append(h.id, id)
		h.siftUp(len(h.dist) - 1)
		return
	}
	if !worse(h.dist[0], h.id[0], dist, id) {
		return
	}
	h.dist[0], h.id[0] = dist, id
	h.siftDown(0)
}

func (h *topK) siftUp(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(h.dist[i], h.id[i], h.dist[parent], h.id[parent]) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *topK) siftDown(i int) {
	n := len(h.dist)
	for {
		worst := i
		for _, child := range [2]int{2*i + 1, 2*i + 2} {
			if child < n && worse(h.dist[child], h.id[child], h.dist[worst], h.id[worst]) {
				worst = child
			}
		}
		if worst == i {
			return
		}
		h.swap(i, worst)
		i = worst
	}
}

func (h *topK) swap(i, j int) {
	h.dist[i], h.dist[j] = h.dist[j], h.dist[i]
	h.id[i], h.id[j] = h.id[j], h.id[i]
}

// drain empties the heap into outIDs/outDists (both of length k), best
// first, and pads the rest with -1 / +Inf.
func (h *topK) drain(outIDs []int64, outDists []float32) {
	n := len(h.dist)
	for i := n - 1; i >= 0; i-- {
		outIDs[i], outDists[i] = int64(h.id[0]), h.dist[0]
		last := len(h.dist) - 1
		h.swap(0, last)
		h.dist, h.id = h.dist[:last], h.id[:last]
		h.siftDown(0)
	}
	for i := n; i < len(outIDs); i++ {
		outIDs[i], outDists[i] = -1, float32(math.Inf(1))
	}
}
