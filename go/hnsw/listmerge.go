package hnsw

// mergeFresh is searchList's step for an unfiltered search (every
// candidate may be a result: an insertion's searches): the distances of one
// expanded node's unvisited neighbours go into the list at once instead of
// one at a time. Those under the bound are sorted among themselves, then
// merged into the list from its end, and whatever falls past ef is dropped.
//
// The list that results is the one inserting them one by one gives: the
// first ef of all entries ordered by distance and then by arrival (an
// entry already in the list before an equal newcomer, newcomers in their
// given order). One at a time, each candidate paid a bisection whose
// branches the predictor loses and a memmove of the entries behind it; at
// ef_construction 200 the two were a quarter of an insertion's CPU. The
// merge moves each entry behind the first newcomer once.
//
// It returns the list and the lowest position a newcomer landed at (ef
// when none stayed), from which the next node to expand is looked for.
func mergeFresh(list []listEntry, ef int, nodes []uint32, dists []float32, scratch *[]candidate) ([]listEntry, int) {
	n := len(list)
	full := n == ef
	bound := float32(0)
	if full {
		bound = list[n-1].dist
	}
	fresh := (*scratch)[:0]
	for i, d := range dists {
		if !full || d < bound {
			fresh = append(fresh, candidate{d, nodes[i]})
		}
	}
	*scratch = fresh
	if len(fresh) == 0 {
		return list, ef
	}
	// Insertion sort: a handful of entries, stable.
	for i := 1; i < len(fresh); i++ {
		c := fresh[i]
		j := i
		for ; j > 0 && fresh[j-1].dist > c.dist; j-- {
			fresh[j] = fresh[j-1]
		}
		fresh[j] = c
	}
	size := min(n+len(fresh), ef)
	list = list[:size] // n <= size <= ef < cap(list)
	lowest := ef
	// w is the position in the whole merged sequence; only w < size is
	// kept. w > i while a newcomer is left, so no entry is overwritten
	// before it has been read.
	i, j := n-1, len(fresh)-1
	for w := n + len(fresh) - 1; j >= 0; w-- {
		if i >= 0 && list[i].dist > fresh[j].dist {
			if w < size {
				list[w] = list[i]
			}
			i--
			continue
		}
		if w < size {
			list[w] = listEntry{candidate: fresh[j], admitted: true}
			lowest = w
		}
		j--
	}
	return list, lowest
}
