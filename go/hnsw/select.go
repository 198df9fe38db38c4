package hnsw

import (
	"math"

	"github.com/strata-db/strata/go/metric"
)

// selectNeighbors applies the HNSW neighbour-selection heuristic
// (Malkov & Yashunin, algorithm 4, as in hnswlib's getNeighborsByHeuristic2)
// to cands, which must be sorted by increasing distance: a candidate is kept only if it is
// closer to the base node than to every neighbour already kept, which
// spreads links across directions instead of crowding one cluster. At most
// limit candidates are kept; the result aliases s.selected.
//
// Copies of the base node (a distance at most copyDist: Index.copyDist)
// are kept without the heuristic, at most half of limit of them, and say
// nothing of direction to the later candidates. hnswlib's rule keeps every
// copy (its distance to the base and to a kept copy are both 0) and then
// judges the other candidates against a copy, at the same distance up to
// rounding: once a vector had more copies than a list has slots (a point
// overwritten again and again with one value keeps each old copy until a
// vacuum), its newest copies linked only to copies, and a query at that
// vector could not leave them (TestCopiesDoNotIslandTheGraph). Without
// copies among the candidates the choice is hnswlib's, unchanged.
func (s *searcher) selectNeighbors(g *graph, dk distance, cands []candidate, limit int, copyDist float32) []candidate {
	sel := s.selected[:0]
	if len(cands) <= limit {
		sel = append(sel, cands...)
		s.selected = sel
		return sel
	}
	copies, maxCopies := 0, max(1, limit/2)
	for _, c := range cands {
		if len(sel) >= limit {
			break
		}
		if c.dist <= copyDist {
			if copies < maxCopies {
				sel = append(sel, c)
				copies++
			}
			continue
		}
		keep := true
		for _, k := range sel {
			if k.dist <= copyDist {
				continue
			}
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

// copyDist is the distance at or below which a neighbour candidate is a
// copy of the node being linked (selectNeighbors): 0 for L2 and
// Manhattan, rounding's reach for cosine (1 - <a, a> of a normalised
// vector is a few ulps from 0), and none for inner product, whose
// distance says nothing of identity.
func (x *Index) copyDist() float32 {
	switch x.cfg.Metric {
	case metric.Cosine:
		return 1e-6
	case metric.IP:
		return float32(math.Inf(-1))
	}
	return 0
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
