package meta

import (
	"slices"
	"sort"
)

// Select returns the ids whose documents match f, ascending.
func (x *Index) Select(f *Filter) []uint64 {
	return x.IDsAfter(f, 0, false, 0)
}

// Count returns how many documents match f.
func (x *Index) Count(f *Filter) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if f.MatchesAll() {
		return len(x.slots)
	}
	return x.eval(f).count()
}

// IDsAfter returns, ascending, up to limit ids that match f and are greater
// than after (every matching id when hasAfter is false). A limit of zero or
// less means no limit. It is the page step of a scan: pass the last id of
// one page as after to get the next.
func (x *Index) IDsAfter(f *Filter, after uint64, hasAfter bool, limit int) []uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if limit <= 0 {
		limit = len(x.slots)
	}
	var res bitset
	n := len(x.slots)
	if f.MatchesAll() {
		res = x.alive
	} else {
		res = x.eval(f)
		n = res.count()
	}
	if n == 0 || limit == 0 {
		return []uint64{}
	}
	// A small result is cheaper to sort than to find by walking every id.
	if n < len(x.slots)/16 {
		out := make([]uint64, 0, n)
		res.each(func(slot uint32) {
			if id := x.ids[slot]; !hasAfter || id > after {
				out = append(out, id)
			}
		})
		slices.Sort(out)
		if len(out) > limit {
			out = out[:limit:limit]
		}
		return out
	}
	entries := x.sortedEntries()
	start := 0
	if hasAfter {
		start = sort.Search(len(entries), func(i int) bool { return entries[i].id > after })
	}
	out := make([]uint64, 0, min(n, limit))
	for _, e := range entries[start:] {
		if res.has(e.slot) && x.ids[e.slot] == e.id {
			out = append(out, e.id)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// eval computes the set of live slots matching f. Called with x.mu held.
func (x *Index) eval(f *Filter) bitset {
	e := evaluator{x: x, words: len(x.alive)}
	e.scratch = newBitset(e.words)
	return e.eval(f.root)
}

// evaluator turns a filter tree into a bitset of slots, bottom up: leaves
// OR postings together, inner nodes combine their kids' bitsets in place.
// Negations are complements within the live slots.
type evaluator struct {
	x       *Index
	words   int
	scratch bitset // for posting.orInto
}

func (e *evaluator) eval(n *node) bitset {
	x := e.x
	switch n.kind {
	case nodeAll:
		return slices.Clone(x.alive)
	case nodeAnd:
		res := e.eval(n.kids[0])
		for _, k := range n.kids[1:] {
			if res.empty() {
				break
			}
			res.and(e.eval(k))
		}
		return res
	case nodeOr:
		res := e.eval(n.kids[0])
		for _, k := range n.kids[1:] {
			res.or(e.eval(k))
		}
		return res
	case nodeNot:
		res := e.eval(n.kids[0])
		res.complementWithin(x.alive)
		return res
	}
	res := newBitset(e.words)
	pp := x.paths[n.path]
	switch n.kind {
	case nodeExists:
		if pp != nil {
			pp.exists.orInto(res, e.scratch)
		}
	case nodeEq:
		e.eq(res, n, pp, n.operand)
	case nodeIn:
		for _, operand := range n.operands {
			e.eq(res, n, pp, operand)
		}
	case nodeRange:
		if pp == nil {
			break
		}
		add := func(p *posting) { p.orInto(res, e.scratch) }
		if n.operand.kind == kindNumber {
			pp.nums.each(n.op, normZero(n.operand.num), add)
		} else {
			pp.strs.each(n.op, n.operand.str, add)
		}
	}
	return res
}

// eq adds to res the slots where the field at n's path equals operand in
// the Mongo sense (see matchEq).
func (e *evaluator) eq(res bitset, n *node, pp *pathPostings, operand value) {
	x := e.x
	if pp == nil {
		if operand.kind == kindNull {
			res.or(x.alive) // null matches a missing field
		}
		return
	}
	var p *posting
	switch operand.kind {
	case kindNull:
		pp.nulls.orInto(res, e.scratch)
		present := newBitset(e.words)
		pp.exists.orInto(present, e.scratch)
		res.orMissing(x.alive, present)
		return
	case kindBool:
		p = &pp.falses
		if operand.b {
			p = &pp.trues
		}
	case kindNumber:
		p = pp.nums.get(normZero(operand.num))
	case kindString:
		p = pp.strs.get(operand.str)
	default:
		e.eqComposite(res, n, pp, operand)
		return
	}
	if p != nil {
		p.orInto(res, e.scratch)
	}
}

// eqComposite handles $eq with a list or an object operand, which postings
// cannot answer exactly: they narrow the candidates, then each candidate's
// document is read back and tested with the reference evaluator.
func (e *evaluator) eqComposite(res bitset, n *node, pp *pathPostings, operand value) {
	x := e.x
	cand := newBitset(e.words)
	if operand.kind == kindList {
		// Lists in documents hold only scalars, so only an equal list can
		// match, and it holds every element of the operand.
		pp.lists.orInto(cand, e.scratch)
		for _, item := range operand.list {
			if cand.empty() {
				return
			}
			elem := newBitset(e.words)
			switch item.kind {
			case kindNull:
				pp.nulls.orInto(elem, e.scratch)
			case kindBool, kindNumber, kindString:
				e.eq(elem, n, pp, item)
			default:
				return // no document list holds a list or an object
			}
			cand.and(elem)
		}
	} else {
		pp.objects.orInto(cand, e.scratch)
		// An equal object has the operand's keys.
		for _, f := range operand.fields {
			if cand.empty() {
				return
			}
			sub := x.paths[n.path+"."+f.key]
			if sub == nil {
				return
			}
			has := newBitset(e.words)
			sub.exists.orInto(has, e.scratch)
			cand.and(has)
		}
	}
	cand.each(func(slot uint32) {
		fields, err := parseStored(x.docs[slot])
		if err != nil {
			panic("meta: stored document unreadable: " + err.Error())
		}
		v, ok := lookup(fields, n.parts)
		if matchEq(v, ok, operand) {
			res.set(slot)
		}
	})
}
