package hnsw

// Seeded searches (SearchSeeded): a query answered by several indexes in
// turn (the segments of a collection) hands each the distances the
// earlier ones found, so that its level-0 search keeps, as a single index
// over all of them would, only the ef nearest candidates of them all.
// The seeds enter the candidate list as expanded entries with no node
// (seedNode): they are never expanded and never returned, but they count
// among the ef, so the list's bound (its ef-th distance) starts at the
// ef-th distance found so far and the termination test (no unexpanded
// entry within the bound) fires as soon as this index has nothing nearer.
// A candidate beyond that bound could not be among the k results (the
// seeds are ef ≥ k genuine distances of other nodes), only route: the
// search reaches the bound by the descent above level 0 and, when the
// descent stops short of it, by a greedy walk at level 0; if it is still
// short, the index is searched unseeded (the bound would stop it at once).

// seedNode marks a seed in a search's candidate list: a distance found in
// another index, with no node here.
const seedNode = ^uint32(0)

// seedOwnShare is the share of ef a seeded search keeps for its own
// candidates whatever the seeds: the seeds take the other places.
var seedOwnShare = 0.5

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
// ef), expanded and admitted, with first among them. It returns the list,
// its admitted count and first's position.
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
