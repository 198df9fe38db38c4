package hnsw

// selectNeighbors applies the HNSW neighbour-selection heuristic
// (Malkov & Yashunin, algorithm 4, as in hnswlib's getNeighborsByHeuristic2)
// to cands, which must be sorted by increasing distance: a candidate is kept only if it is
// closer to the base node than to every neighbour already kept, which
// spreads links across directions instead of crowding one cluster. At most
// limit candidates are kept; the result aliases s.selected.
func (s *searcher) selectNeighbors(g *graph, dk distance, cands []candidate, limit int) []candidate {
	sel := s.selected[:0]
	if len(cands) <= limit {
		sel = append(sel, cands...)
		s.selected = sel
		return sel
	}
	for _, c := range cands {
		if len(sel) >= limit {
			break
		}
		keep := true
		for _, k := range sel {
			if s.pairDist(g, dk, c.node, k.node) < c.dist {
				keep = false
				break
			}
		}
		if keep {
			sel = append(sel, c)
		}
	}
	s.selected = sel
	return sel
}

// sortByDist sorts a short slice (at most 2·M+1 entries) by increasing
// distance; insertion sort beats a general sort at that size.
func sortByDist(c []candidate) {
	for i := 1; i < len(c); i++ {
		x := c[i]
		j := i - 1
		for j >= 0 && c[j].dist > x.dist {
			c[j+1] = c[j]
			j--
		}
		c[j+1] = x
	}
}
