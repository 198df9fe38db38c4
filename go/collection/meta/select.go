package meta

import (
	"math/bits"
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
	entries, slotsRising := x.sortedEntries()
	start := 0
	if hasAfter {
		start = sort.Search(len(entries), func(i int) bool { return entries[i].id > after })
		if start == len(entries) {
			return []uint64{}
		}
	}
	out := make([]uint64, 0, min(n, limit))
	if slotsRising {
		// Slot order is id order: read the ids off the bitset, from the
		// slot of the first id above after.
		from := uint32(0)
		if hasAfter {
			from = entries[start].slot
		}
		for w := int(from >> 6); w < len(res); w++ {
			word := res[w]
			if w == int(from>>6) {
				word &^= 1<<(from&63) - 1
			}
			for word != 0 {
				out = append(out, x.ids[w*64+bits.TrailingZeros64(word)])
				if len(out) == limit {
					return out
				}
				word &= word - 1
			}
		}
		return out
	}
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
		var res bitset
		var merged []bool // kids already folded into an interval
		for i, k := range n.kids {
			var part bitset
			switch {
			case merged != nil && merged[i]:
				continue
			case k.kind == nodeRange:
				if merged == nil {
					merged = make([]bool, len(n.kids))
				}
				part = e.rangeGroup(n.kids, i, merged)
			default:
				part = e.eval(k)
			}
			if res == nil {
				res = part
			} else {
				res.and(part)
			}
			if res.empty() {
				break
			}
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
	case nodeAtLeast:
		return e.atLeast(n)
	case nodeIDs:
		res := newBitset(e.words)
		for _, id := range n.ids {
			if slot, ok := x.slots[id]; ok {
				res.set(slot)
			}
		}
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
		return e.rangeGroup([]*node{n}, 0, nil)
	default:
		return e.valueLeaf(n, pp)
	}
	return res
}

// valueLeaf evaluates the leaves only the constructors of tree.go build.
func (e *evaluator) valueLeaf(n *node, pp *pathPostings) bitset {
	x := e.x
	res := newBitset(e.words)
	if pp == nil { // nothing at the path: empty, no values
		if n.kind == nodeIsEmpty || (n.kind == nodeValuesCount && n.bounds.contains(0)) {
			res.or(x.alive)
		}
		return res
	}
	switch n.kind {
	case nodeWithin:
		rangeInto(e, res, pp, &pp.nums, &pp.numbers, &n.bounds)
	case nodeExcept:
		e.except(res, n, pp)
	case nodeWords:
		for key, p := range pp.strs.byKey {
			if n.holdsFor(value{kind: kindString, str: key}) {
				p.orInto(res, e.scratch)
			}
		}
	case nodeValuesCount:
		e.valuesCount(res, n, pp)
	case nodeIsEmpty:
		// Missing, null, or a list holding nothing (no scalar, no null).
		res.orMissing(x.alive, e.bits(&pp.exists))
		res.or(e.without(&pp.nulls, &pp.lists))
		empty := e.bits(&pp.lists)
		empty.andNot(e.scalars(pp))
		empty.andNot(e.bits(&pp.nulls))
		res.or(empty)
	case nodeIsNull:
		pp.nulls.orInto(res, e.scratch)
	default:
		panic("meta: unknown filter node")
	}
	return res
}

// rangeGroup evaluates the range condition kids[i]. When the path holds no
// lists, every document has at most one value there, so the other range
// conditions of the same path and type among kids (an $and) can be folded
// into one interval and evaluated in one pass; those kids are marked in
// merged. With lists each condition may be met by a different element
// ([0, 10] is both > 1 and < 5), so each is evaluated on its own.
func (e *evaluator) rangeGroup(kids []*node, i int, merged []bool) bitset {
	res := newBitset(e.words)
	n := kids[i]
	pp := e.x.paths[n.path]
	if pp == nil {
		return res
	}
	fold := merged != nil && pp.lists.empty()
	if n.operand.kind == kindNumber {
		var iv interval[float64]
		iv.tighten(n.op, normZero(n.operand.num))
		for j := i + 1; fold && j < len(kids); j++ {
			if k := kids[j]; k.kind == nodeRange && k.path == n.path && k.operand.kind == kindNumber {
				iv.tighten(k.op, normZero(k.operand.num))
				merged[j] = true
			}
		}
		rangeInto(e, res, pp, &pp.nums, &pp.numbers, &iv)
	} else {
		var iv interval[string]
		iv.tighten(n.op, n.operand.str)
		for j := i + 1; fold && j < len(kids); j++ {
			if k := kids[j]; k.kind == nodeRange && k.path == n.path && k.operand.kind == kindString {
				iv.tighten(k.op, k.operand.str)
				merged[j] = true
			}
		}
		rangeInto(e, res, pp, &pp.strs, &pp.strings, &iv)
	}
	return res
}

// rangeInto adds to res the slots with a key of keys inside iv. all is the
// union of the keys' postings. When the interval covers most keys and the
// path holds no lists (one key per slot), it is cheaper to take all and
// remove the keys outside.
func rangeInto[K float64 | string](e *evaluator, res bitset, pp *pathPostings, keys *keyIndex[K], all *posting, iv *interval[K]) {
	from, to := keys.span(iv)
	if inside := to - from; pp.lists.empty() && inside > len(keys.sorted)-inside+len(keys.pending) {
		all.orInto(res, e.scratch)
		outside := newBitset(e.words)
		keys.eachOutside(iv, func(p *posting) { p.orInto(outside, e.scratch) })
		res.andNot(outside)
		return
	}
	keys.each(iv, func(p *posting) { p.orInto(res, e.scratch) })
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

// bits expands a posting into a fresh bitset.
func (e *evaluator) bits(p *posting) bitset {
	b := newBitset(e.words)
	p.orInto(b, e.scratch)
	return b
}

// without is the slots of p that are not in q.
func (e *evaluator) without(p, q *posting) bitset {
	b := e.bits(p)
	b.andNot(e.bits(q))
	return b
}

// scalars is the slots holding a scalar other than null at pp's path,
// as the value or in a list.
func (e *evaluator) scalars(pp *pathPostings) bitset {
	b := newBitset(e.words)
	for _, p := range []*posting{&pp.numbers, &pp.strings, &pp.trues, &pp.falses} {
		p.orInto(b, e.scratch)
	}
	return b
}

// atLeast evaluates "at least n.min of the kids" with one bitset per
// count: reached[j] holds the slots that j of the kids seen so far match,
// or more. Each kid adds one to the slots it matches.
func (e *evaluator) atLeast(n *node) bitset {
	reached := make([]bitset, n.min+1)
	reached[0] = slices.Clone(e.x.alive)
	for j := 1; j <= n.min; j++ {
		reached[j] = newBitset(e.words)
	}
	step := newBitset(e.words)
	for _, k := range n.kids {
		matched := e.eval(k)
		for j := n.min; j >= 1; j-- {
			copy(step, reached[j-1])
			step.and(matched)
			reached[j].or(step)
		}
	}
	return reached[n.min]
}

// except adds the slots holding a value other than null that equals none
// of n.operands (objects always do). Without lists at the path a slot holds one value, so
// that is the slots with a scalar minus those holding an excluded one;
// with lists, the postings of every value not excluded are united.
func (e *evaluator) except(res bitset, n *node, pp *pathPostings) {
	excluded := func(v value) bool {
		for _, operand := range n.operands {
			if equal(v, operand) {
				return true
			}
		}
		return false
	}
	pp.objects.orInto(res, e.scratch) // an object equals no scalar
	if pp.lists.empty() {
		res.or(e.scalars(pp))
		out := newBitset(e.words)
		for _, operand := range n.operands {
			if operand.kind != kindNull {
				e.eq(out, n, pp, operand)
			}
		}
		res.andNot(out)
		return
	}
	for key, p := range pp.nums.byKey {
		if !excluded(value{kind: kindNumber, num: key}) {
			p.orInto(res, e.scratch)
		}
	}
	for key, p := range pp.strs.byKey {
		if !excluded(value{kind: kindString, str: key}) {
			p.orInto(res, e.scratch)
		}
	}
	if !excluded(value{kind: kindBool, b: true}) {
		pp.trues.orInto(res, e.scratch)
	}
	if !excluded(value{kind: kindBool}) {
		pp.falses.orInto(res, e.scratch)
	}
}

// valuesCount adds the slots whose number of values at the path is within
// n.bounds: 0 where it is missing or null, 1 where it holds anything else
// but a list,
// and for lists, whose length postings do not record, the length read
// from the stored document.
func (e *evaluator) valuesCount(res bitset, n *node, pp *pathPostings) {
	x := e.x
	single := e.without(&pp.exists, &pp.lists) // one value, maybe null
	null := e.without(&pp.nulls, &pp.lists)
	if n.bounds.contains(0) {
		res.orMissing(x.alive, e.bits(&pp.exists))
		res.or(null)
	}
	if n.bounds.contains(1) {
		single.andNot(null)
		res.or(single)
	}
	e.bits(&pp.lists).each(func(slot uint32) {
		fields, err := parseStored(x.docs[slot])
		if err != nil {
			panic("meta: stored document unreadable: " + err.Error())
		}
		if v, ok := lookup(fields, n.parts); ok && v.kind == kindList && n.bounds.contains(float64(len(v.list))) {
			res.set(slot)
		}
	})
}
