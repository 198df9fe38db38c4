package sparse

import (
	"cmp"
	"math"
	"slices"
)

// blockMaxWAND is block-max WAND (Ding and Suel 2011), kept to measure
// MaxScore against (see the package doc: BenchmarkSearch runs both); Search
// does not choose it. Cursors are kept sorted by their current slot; the
// pivot is the first cursor at which the sum of the bounds of the cursors
// before it can reach the k-th score; a pivot slot whose lists' block
// bounds cannot is skipped to the end of the nearest block. Bounds are
// clamped at 0 (a point need not be in a list with a negative bound) and
// compared with MaxScore's margin, and points are scored exactly, so the
// results equal MaxScore's.
func (s *searcher) blockMaxWAND(terms []term) {
	n := len(terms)
	cs := make([]cursor, n)
	var absSum float64
	for i, t := range terms {
		cs[i] = cursor{slots: t.list.slots, values: t.list.values, weight: t.weight, list: t.list, order: t.order,
			bound: max(t.bound, 0)}
		cs[i].cur = cs[i].slotAt(0)
		absSum += max(math.Abs(t.weight*float64(t.list.maxVal)), math.Abs(t.weight*float64(t.list.minVal)))
	}
	order := make([]*cursor, n)
	for i := range cs {
		order[i] = &cs[i]
	}
	slices.SortFunc(order, func(a, b *cursor) int { return cmp.Compare(a.cur, b.cur) })
	theta, margin := math.Inf(-1), math.Inf(1)
	if seed, ok := s.seedThreshold(sortedByBound(terms)); ok {
		theta, margin = seed, 1e-6*(math.Abs(seed)+absSum)
	}
	contrib := make([]float64, n) // by query order, for the exact sum
	dead := s.x.dead
	var postings, blocks int64
	// resort restores order after order[i]'s cursor moved forward.
	resort := func(i int) {
		for ; i+1 < n && order[i].cur > order[i+1].cur; i++ {
			order[i], order[i+1] = order[i+1], order[i]
		}
	}
	for {
		// Pivot: the first cursor where the bounds before it reach theta.
		var acc float64
		p := -1
		for i, c := range order {
			if c.cur == noSlot {
				break
			}
			acc += c.bound
			if acc+margin >= theta {
				p = i
				break
			}
		}
		if p < 0 {
			break
		}
		slot := order[p].cur
		for p+1 < n && order[p+1].cur == slot {
			p++
		}
		// The block bounds of the pivot's lists at slot.
		var blockSum float64
		for _, c := range order[:p+1] {
			blockSum += c.blockBound(slot)
			blocks++
		}
		if blockSum+margin < theta {
			// No point up to the end of the nearest of these blocks (nor
			// before the next cursor) can reach theta: skip there.
			next := uint32(noSlot)
			if p+1 < n {
				next = order[p+1].cur
			}
			for _, c := range order[:p+1] {
				if c.block < len(c.list.blockLast) {
					next = min(next, c.list.blockLast[c.block]+1)
				}
			}
			next = max(next, slot+1)
			// Advance the pivot-side cursor with the largest bound.
			best := 0
			for i := 1; i <= p; i++ {
				if order[i].bound > order[best].bound {
					best = i
				}
			}
			postings += order[best].seekFrom(next)
			resort(best)
			continue
		}
		if order[0].cur != slot {
			// Bring a cursor before the pivot up to slot.
			postings += order[0].seekFrom(slot)
			resort(0)
			continue
		}
		// Every list holding slot is at it: score it, then move past.
		clear(contrib)
		var score float64
		for _, c := range order[:p+1] {
			v := c.weight * float64(c.values[c.pos])
			contrib[c.order] = v
			score += v
		}
		if !dead.has(slot) && score+margin >= theta && (s.allow == nil || s.allowed(s.x.keys[slot])) {
			var exact float64
			for _, v := range contrib {
				exact += v
			}
			s.stats.Scored++
			s.top.push(Hit{Key: s.x.keys[slot], Score: float32(exact)})
			if s.top.full() {
				if worst := float64(s.top.worst().Score); worst > theta {
					theta, margin = worst, 1e-6*(math.Abs(worst)+absSum)
				}
			}
		}
		for i := p; i >= 0; i-- {
			c := order[i]
			c.pos++
			c.cur = c.slotAt(c.pos)
			postings++
			resort(i)
		}
	}
	s.stats.Postings += postings
	s.stats.Blocks += blocks
}

// sortedByBound returns terms sorted by bound, as seedThreshold wants.
func sortedByBound(terms []term) []term {
	out := slices.Clone(terms)
	sortByBound(out)
	return out
}

// seekFrom moves c to the first posting at or after slot, searching from
// its position (blockBound's block may be behind it or ahead of slot).
func (c *cursor) seekFrom(slot uint32) int64 {
	p, probes := seek(c.slots, c.pos, slot)
	c.pos, c.cur = p, c.slotAt(p)
	return probes
}
