package hnsw

// Seeded searches (SearchSeeded): a query answered by several indexes in
// turn (the segments of a collection) hands each the distances the
// earlier ones found, so that its level-0 search keeps, as one index over
// all of them would, only the nearest candidates of them all. The seeds
// enter the candidate list as expanded entries with no node (seedNode):
// never expanded, never returned, but counted among the ef, so the
// list's bound (its ef-th distance) falls to what the earlier indexes
// found as soon as this one's own candidates fill the other places, and
// the termination test (no unexpanded entry within the bound) fires once
// this index has nothing nearer. The seeds take at most ef - ef/2 places
// (seedOwnShare): seeded with all ef, the list dropped the descent's
// entry point when it lay beyond the bound, and an index found nearer
// to the bound routed through a beam of a few entries; recall fell more
// than the work did (20k x 128 in 2 segments: ef 21 for recall 0.95,
// against ef 10 searched alone).

// seedNode marks a seed in a search's candidate list: a distance found in
// another index, with no node here.
const seedNode = ^uint32(0)

// seedOwnShare is the share of ef a seeded search keeps for its own
// candidates whatever the seeds: the seeds take the other places. At
// equal recall (TestSegmentQueryBench at 20k x 128, one run each) 0.5
// computed 4-7 % fewer distances than 0.3 at 2 and 3 segments and about
// as many at 10; 0.7 bounds less (TestSeededSearchKeepsRecall: 431
// distances a query at 2 segments against 413).
const seedOwnShare = 0.5

// seedsFor returns the seeds for a level-0 search of ef: the first
// ef - ef·seedOwnShare distances of row (the nearest found elsewhere,
// ascending, +Inf padded), or nil when fewer are known.
func seedsFor(row []float32, ef int) []float32 {
	places := ef - max(1, int(float64(ef)*seedOwnShare))
	if places <= 0 || len(row) < places || row[places-1] == inf {
		return nil
	}
	return row[:places]
}

// seededList starts searchList's candidate list: the seeds (fewer than
// ef), expanded and admitted, with first among them (after equal seeds:
// they arrived first). It returns the list, its admitted count and
// first's position.
func seededList(list []listEntry, seeds []float32, first listEntry, ef int) ([]listEntry, int, int) {
	at := -1
	for _, d := range seeds {
		if at < 0 && first.dist < d {
			at = len(list)
			list = append(list, first)
		}
		list = append(list, listEntry{candidate: candidate{d, seedNode}, expanded: true, admitted: true})
	}
	if at < 0 {
		at = len(list)
		list = append(list, first)
	}
	nres := len(seeds)
	if first.admitted {
		nres++
	}
	if nres == ef {
		list = trimPastBound(list)
	}
	return list, nres, at
}

// dropSeeds removes the seeds from s.results, keeping the order.
func (s *searcher) dropSeeds() {
	own := s.results[:0]
	for _, c := range s.results {
		if c.node != seedNode {
			own = append(own, c)
		}
	}
	s.results = own
}

// absorb merges the distances of found (ascending) into row (ascending,
// +Inf padded), keeping the len(row) smallest.
func (s *searcher) absorb(row []float32, found []candidate) {
	if len(found) == 0 || found[0].dist >= row[len(row)-1] {
		return
	}
	merged := s.seen[:0]
	i, j := 0, 0
	for len(merged) < len(row) && (i < len(row) || j < len(found)) {
		if j == len(found) || (i < len(row) && row[i] <= found[j].dist) {
			merged = append(merged, row[i])
			i++
		} else {
			merged = append(merged, found[j].dist)
			j++
		}
	}
	copy(row, merged)
	s.seen = merged
}
