package hnsw

// candidate is a node and its distance to the current query.
type candidate struct {
	dist float32
	node uint32
}

// maxHeap keeps the farthest candidate on top: the bounded result list of a
// layer search. Hand-written rather than container/heap so the hot loop has
// no interface calls.
type maxHeap []candidate

func (h *maxHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].dist >= s[i].dist {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func siftDownMax(s []candidate, i int) {
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s[r].dist > s[l].dist {
			m = r
		}
		if s[i].dist >= s[m].dist {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// replaceTop swaps the farthest candidate for c (one sift instead of a
// push and a pop).
func (h maxHeap) replaceTop(c candidate) {
	h[0] = c
	siftDownMax(h, 0)
}

// minHeap keeps the nearest candidate on top: the frontier of a layer search.
type minHeap []candidate

func (h *minHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].dist <= s[i].dist {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() candidate {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	*h = s
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].dist < s[l].dist {
			m = r
		}
		if s[i].dist <= s[m].dist {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return top
}

// heapify restores the max-heap property after distances were rewritten.
func heapify(h maxHeap) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDownMax(h, i)
	}
}

// sortAscending sorts a max-heap's contents in place by increasing distance
// (heap sort: pop the maximum to the back repeatedly).
func sortAscending(h maxHeap) {
	s := []candidate(h)
	for n := len(s) - 1; n > 0; n-- {
		s[0], s[n] = s[n], s[0]
		siftDownMax(s[:n], 0)
	}
}
