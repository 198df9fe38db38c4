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
		return x.slots.Len()
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
		limit = x.slots.Len()
	}
	var res bitset
	n := x.slots.Len()
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
	if n < x.slots.Len()/16 {
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
		start = sort.Search(entries.len(), func(i int) bool { return entries.at(i).id > after })
		if start == entries.len() {
			return []uint64{}
		}
	}
	out := make([]uint64, 0, min(n, limit))
	if slotsRising {
		// Slot order is id order: read the ids off the bitset, from the
		// slot of the first id above after.
		from := uint32(0)
		if hasAfter {
			from = entries.at(start).slot
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
	for i := start; i < entries.len(); i++ {
		if e := entries.at(i); res.has(e.slot) && x.ids[e.slot] == e.id {
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
	case nodeHasVector:
		return newBitset(e.words) // documents hold no vectors: BindVectors first
	case nodeIDs:
		res := newBitset(e.words)
		for _, id := range n.ids {
			if slot, ok := x.slots.Get(id); ok {
				res.set(slot)
			}
		}
		return res
	}
	if n.scan {
		return e.scanLeaf(n)
	}
	pps := e.routes(n)
	res := newBitset(e.words)
	switch n.kind {
	case nodeExists:
		for _, pp := range pps {
			pp.exists.orInto(res, e.scratch)
		}
	case nodeEq:
		e.eq(res, n, pps, n.operand)
	case nodeIn:
		for _, operand := range n.operands {
			e.eq(res, n, pps, operand)
		}
	case nodeRange:
		return e.rangeGroup([]*node{n}, 0, nil)
	default:
		return e.valueLeaf(n, pps)
	}
	return res
}

// routes returns the postings that answer n's path: every route of a
// dotted path (one, unless lists of objects were met on the way), or the
// one route of an explicit path.
func (e *evaluator) routes(n *node) []*pathPostings {
	if n.path.expand {
		return e.x.dotted[n.key]
	}
	if pp := e.x.paths[n.key]; pp != nil {
		return []*pathPostings{pp}
	}
	return nil
}

// single reports whether every slot has at most one value at the routes,
// and that not a list: a route that enters no list and holds no list.
func single(pps []*pathPostings) bool {
	return len(pps) == 1 && !pps[0].spread && pps[0].lists.empty()
}

// union is the slots in the chosen posting of any of the routes.
func (e *evaluator) union(pps []*pathPostings, which func(*pathPostings) *posting) bitset {
	b := newBitset(e.words)
	for _, pp := range pps {
		which(pp).orInto(b, e.scratch)
	}
	return b
}

// scanLeaf evaluates a leaf that postings cannot answer (a list position,
// the elements of a list at the end of a path) by reading the documents
// that hold the leading part of its path postings can answer.
func (e *evaluator) scanLeaf(n *node) bitset {
	var pps []*pathPostings
	if n.path.expand {
		pps = e.x.dotted[n.prefix]
	} else if pp := e.x.paths[n.prefix]; pp != nil {
		pps = []*pathPostings{pp}
	}
	return e.scan(n, e.union(pps, existsOf))
}

// scan tests each candidate's stored document with the reference
// evaluator; a slot outside cand, which lacks the path, matches if an
// empty document does. It costs one document decoding per candidate.
func (e *evaluator) scan(n *node, cand bitset) bitset {
	x := e.x
	res := newBitset(e.words)
	cand.each(func(slot uint32) {
		fields, err := parseStored(x.doc(slot))
		if err != nil {
			panic("meta: stored document unreadable: " + err.Error())
		}
		if n.match(value{kind: kindObject, fields: fields}, subject{id: x.ids[slot], hasID: true}) {
			res.set(slot)
		}
	})
	if n.match(value{kind: kindObject}, subject{}) {
		res.orMissing(x.alive, cand)
	}
	return res
}

func existsOf(pp *pathPostings) *posting  { return &pp.exists }
func objectsOf(pp *pathPostings) *posting { return &pp.objects }

// narrowToBox removes from cand the slots with no number inside the
// shape's latitude bounds at a "lat" key of an object at pps (the object
// itself, or the objects of a list there), and likewise for longitudes.
// Latitude and longitude may come from different points, so a slot left
// may still fail, which scan decides.
func (e *evaluator) narrowToBox(cand bitset, s *geoShape, pps []*pathPostings) {
	lat, lon := s.latLonBounds()
	coordinate := func(key string, ivs []interval[float64]) {
		part := newBitset(e.words)
		fresh := true
		for _, pp := range pps {
			for _, route := range []string{pp.route + "." + key, pp.route + "." + routeElements + "." + key} {
				q := e.x.paths[route]
				if q == nil {
					continue
				}
				for i := range ivs {
					rangeInto(e, part, fresh, q, &q.nums, &q.numbers, &ivs[i])
					fresh = false
				}
			}
		}
		cand.and(part)
	}
	coordinate("lat", lat)
	if lon != nil && !cand.empty() {
		coordinate("lon", lon)
	}
}
func listsOf(pp *pathPostings) *posting { return &pp.lists }

// valueLeaf evaluates the leaves other than $exists, $eq, $in and ranges.
func (e *evaluator) valueLeaf(n *node, pps []*pathPostings) bitset {
	x := e.x
	res := newBitset(e.words)
	switch n.kind {
	case nodeWithin:
		for i, pp := range pps {
			rangeInto(e, res, i == 0, pp, &pp.nums, &pp.numbers, &n.bounds)
		}
	case nodeExcept:
		for _, pp := range pps {
			e.except(res, n, pp)
		}
	case nodeWords, nodeRegex:
		for _, pp := range pps {
			for key, p := range pp.strs.byKey {
				if n.holdsFor(value{kind: kindString, str: key}) {
					p.orInto(res, e.scratch)
				}
			}
		}
	case nodeDatetime:
		for i, pp := range pps {
			rangeInto(e, res, i == 0, pp, &pp.times, &pp.datetimes, &n.times)
		}
	case nodeGeo:
		// The documents holding an object at the path are read, narrowed
		// first by the numeric postings of the points' "lat" and "lon".
		cand := e.union(pps, objectsOf)
		e.narrowToBox(cand, n.geo, pps)
		return e.scan(n, cand)
	case nodeValuesCount:
		switch {
		case len(pps) == 0: // nothing at the path: no values
			if n.bounds.contains(0) {
				res.or(x.alive)
			}
		case len(pps) == 1 && !pps[0].spread:
			e.valuesCount(res, n, pps[0])
		default:
			return e.scan(n, e.union(pps, existsOf))
		}
	case nodeIsEmpty:
		// Every value null or [], or none at all: with one value per slot,
		// missing, null, or a list holding nothing; otherwise read.
		if len(pps) > 1 || (len(pps) == 1 && pps[0].spread) {
			return e.scan(n, e.union(pps, existsOf))
		}
		present := e.union(pps, existsOf)
		res.orMissing(x.alive, present)
		for _, pp := range pps {
			res.or(e.without(&pp.nulls, &pp.lists))
			empty := e.bits(&pp.lists)
			empty.andNot(e.scalars(pp))
			for _, held := range []*posting{&pp.nulls, &pp.objects, &pp.nested} {
				empty.andNot(e.bits(held))
			}
			res.or(empty)
		}
	case nodeIsNull:
		for _, pp := range pps {
			pp.nulls.orInto(res, e.scratch)
		}
	case nodeType:
		for _, pp := range pps {
			e.types(res, n.types, pp)
		}
	case nodeSize:
		// Postings hold no list lengths: the documents holding a list at
		// the path are read.
		return e.scan(n, e.union(pps, listsOf))
	case nodeElemMatch:
		// Postings do not say which element holds what: the documents
		// holding a list at the path are read, narrowed first to those
		// where some element meets each positive condition of the query.
		cand := e.union(pps, listsOf)
		e.narrowToElements(cand, n, pps)
		return e.scan(n, cand)
	default:
		panic("meta: unknown filter node")
	}
	return res
}

// narrowToElements removes from cand the slots where no element of a list
// at pps meets one of the positive conditions that n's query requires (the
// query, or the kids of its And) on a path postings hold: the element
// itself (its scalars are indexed with the list, its lists at the
// elements' route) or one key of an object element. A slot left may still
// fail (the conditions met by different elements), which scan decides.
func (e *evaluator) narrowToElements(cand bitset, n *node, pps []*pathPostings) {
	conds := []*node{n.kids[0]}
	if k := n.kids[0]; k.kind == nodeAnd {
		conds = k.kids
	}
	for _, c := range conds {
		if cand.empty() {
			return
		}
		if c.scan || !positive(c) {
			continue
		}
		var elements []*pathPostings
		switch {
		case len(c.path.steps) == 0:
			elements = append(elements, pps...)
			for _, pp := range pps {
				if q := e.x.paths[pp.route+"."+routeElements]; q != nil {
					elements = append(elements, q)
				}
			}
		case len(c.path.steps) == 1 && c.path.steps[0].kind == stepKey:
			for _, pp := range pps {
				if q := e.x.paths[pp.route+"."+routeElements+"."+c.path.steps[0].key]; q != nil {
					elements = append(elements, q)
				}
			}
		default:
			continue
		}
		part := newBitset(e.words)
		switch c.kind {
		case nodeExists:
			part = e.union(elements, existsOf)
		case nodeEq, nodeIn:
			operands := c.operands
			if c.kind == nodeEq {
				operands = []value{c.operand}
			}
			for _, operand := range operands {
				e.eq(part, c, elements, operand)
			}
		case nodeRange:
			if c.operand.kind == kindNumber {
				var iv interval[float64]
				iv.tighten(c.op, normZero(c.operand.num))
				for i, pp := range elements {
					rangeInto(e, part, i == 0, pp, &pp.nums, &pp.numbers, &iv)
				}
			} else {
				var iv interval[string]
				iv.tighten(c.op, c.operand.str)
				for i, pp := range elements {
					rangeInto(e, part, i == 0, pp, &pp.strs, &pp.strings, &iv)
				}
			}
		case nodeWithin, nodeWords, nodeRegex, nodeDatetime:
			part = e.valueLeaf(c, elements)
		}
		cand.and(part)
	}
}

// positive reports whether a leaf holds only where a value at its path
// meets it, so that postings of its path give every slot it can hold in:
// not a condition a missing path or null meets, nor one postings answer by
// reading documents.
func positive(c *node) bool {
	switch c.kind {
	case nodeExists, nodeRange, nodeWithin, nodeWords, nodeRegex, nodeDatetime:
		return true
	case nodeEq:
		return isScalar(c.operand)
	case nodeIn:
		return len(c.operands) > 0 && !slices.ContainsFunc(c.operands, func(v value) bool { return !isScalar(v) })
	}
	return false
}

// isScalar: a bool, number or string (not null, a list or an object).
func isScalar(v value) bool {
	return v.kind == kindBool || v.kind == kindNumber || v.kind == kindString
}

// types adds the slots holding a value of a type in t at pp's route, or a
// list holding one.
func (e *evaluator) types(res bitset, t typeSet, pp *pathPostings) {
	for _, c := range []struct {
		t typeSet
		p *posting
	}{{typeNull, &pp.nulls}, {typeBool, &pp.trues}, {typeBool, &pp.falses}, {typeString, &pp.strings},
		{typeObject, &pp.objects}, {typeArray, &pp.lists}} {
		if t&c.t != 0 {
			c.p.orInto(res, e.scratch)
		}
	}
	switch t & typeNumber {
	case typeNumber:
		pp.numbers.orInto(res, e.scratch)
	case typeInteger, typeFraction:
		for key, p := range pp.nums.byKey {
			if t.has(value{kind: kindNumber, num: key}) {
				p.orInto(res, e.scratch)
			}
		}
	}
}

// rangeGroup evaluates the range condition kids[i]. When the path holds
// one value per document and no lists, the other range conditions of the
// same path and type among kids (an $and) can be folded into one interval
// and evaluated in one pass; those kids are marked in merged. With lists
// each condition may be met by a different element ([0, 10] is both > 1
// and < 5), so each is evaluated on its own.
func (e *evaluator) rangeGroup(kids []*node, i int, merged []bool) bitset {
	n := kids[i]
	if n.scan {
		return e.scanLeaf(n)
	}
	res := newBitset(e.words)
	pps := e.routes(n)
	fold := merged != nil && single(pps)
	foldable := func(k *node, operand kind) bool {
		return k.kind == nodeRange && !k.scan && k.key == n.key && k.path.expand == n.path.expand && k.operand.kind == operand
	}
	if n.operand.kind == kindNumber {
		var iv interval[float64]
		iv.tighten(n.op, normZero(n.operand.num))
		for j := i + 1; fold && j < len(kids); j++ {
			if k := kids[j]; foldable(k, kindNumber) {
				iv.tighten(k.op, normZero(k.operand.num))
				merged[j] = true
			}
		}
		for r, pp := range pps {
			rangeInto(e, res, r == 0, pp, &pp.nums, &pp.numbers, &iv)
		}
	} else {
		var iv interval[string]
		iv.tighten(n.op, n.operand.str)
		for j := i + 1; fold && j < len(kids); j++ {
			if k := kids[j]; foldable(k, kindString) {
				iv.tighten(k.op, k.operand.str)
				merged[j] = true
			}
		}
		for r, pp := range pps {
			rangeInto(e, res, r == 0, pp, &pp.strs, &pp.strings, &iv)
		}
	}
	return res
}

// rangeInto adds to res the slots with a key of keys inside iv. all is the
// union of the keys' postings. When the interval covers most keys and the
// route holds one value per slot and no lists, it is cheaper to take all
// and remove the keys outside; that is done in res itself only when it is
// fresh (empty), else in a bitset of its own.
func rangeInto[K float64 | string | int64](e *evaluator, res bitset, fresh bool, pp *pathPostings, keys *keyIndex[K], all *posting, iv *interval[K]) {
	from, to := keys.span(iv)
	if inside := to - from; !pp.spread && pp.lists.empty() && inside > len(keys.sorted)-inside+len(keys.pending) {
		part := res
		if !fresh {
			part = newBitset(e.words)
		}
		all.orInto(part, e.scratch)
		outside := newBitset(e.words)
		keys.eachOutside(iv, func(p *posting) { p.orInto(outside, e.scratch) })
		part.andNot(outside)
		if !fresh {
			res.or(part)
		}
		return
	}
	keys.each(iv, func(p *posting) { p.orInto(res, e.scratch) })
}

// scalarPosting is the posting of a bool, number or string at pp's route
// (nil if none holds it).
func (pp *pathPostings) scalarPosting(v value) *posting {
	switch v.kind {
	case kindBool:
		if v.b {
			return &pp.trues
		}
		return &pp.falses
	case kindNumber:
		return pp.nums.get(normZero(v.num))
	case kindString:
		return pp.strs.get(v.str)
	}
	return nil
}

// eq adds to res the slots where the field at n's path equals operand in
// the Mongo sense (see matchEq).
func (e *evaluator) eq(res bitset, n *node, pps []*pathPostings, operand value) {
	switch operand.kind {
	case kindNull: // null, a list holding null, or missing
		present := newBitset(e.words)
		for _, pp := range pps {
			pp.nulls.orInto(res, e.scratch)
			pp.exists.orInto(present, e.scratch)
		}
		res.orMissing(e.x.alive, present)
	case kindBool, kindNumber, kindString:
		for _, pp := range pps {
			if p := pp.scalarPosting(operand); p != nil {
				p.orInto(res, e.scratch)
			}
		}
	default:
		e.eqComposite(res, n, pps, operand)
	}
}

// eqComposite handles $eq with a list or an object operand, which postings
// cannot answer exactly: they narrow the candidates, then each candidate's
// document is read back and tested with the reference evaluator.
func (e *evaluator) eqComposite(res bitset, n *node, pps []*pathPostings, operand value) {
	x := e.x
	cand := newBitset(e.words)
	for _, pp := range pps {
		cand.or(e.compositeCandidates(pp, operand))
	}
	cand.each(func(slot uint32) {
		fields, err := parseStored(x.doc(slot))
		if err != nil {
			panic("meta: stored document unreadable: " + err.Error())
		}
		if matchEq(n.path.reach(value{kind: kindObject, fields: fields}), operand) {
			res.set(slot)
		}
	})
}

// compositeCandidates is a superset of the slots where a value at pp's
// route, or an element of a list there, equals operand (a list or an
// object).
func (e *evaluator) compositeCandidates(pp *pathPostings, operand value) bitset {
	x := e.x
	if operand.kind == kindList {
		cand := e.bits(&pp.lists)
		if !pp.nested.empty() {
			return cand // the equal list may be an element: no narrowing by elements
		}
		// Only the list itself can be equal, so it holds every element of
		// the operand.
		for _, item := range operand.list {
			if cand.empty() {
				break
			}
			var p *posting
			switch item.kind {
			case kindNull:
				p = &pp.nulls
			case kindObject:
				p = &pp.objects
			case kindList:
				p = &pp.nested
			default:
				p = pp.scalarPosting(item)
			}
			if p == nil {
				return newBitset(e.words)
			}
			cand.and(e.bits(p))
		}
		return cand
	}
	cand := e.bits(&pp.objects)
	// An equal object has the operand's keys: below the route if it is
	// the value, below the route's elements if it is in a list.
	for _, f := range operand.fields {
		if cand.empty() {
			break
		}
		has := newBitset(e.words)
		for _, sub := range []string{pp.route + "." + f.key, pp.route + "." + routeElements + "." + f.key} {
			if q := x.paths[sub]; q != nil {
				q.exists.orInto(has, e.scratch)
			}
		}
		cand.and(has)
	}
	return cand
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
// of n.operands at pp's route: objects and lists always do. With one
// value per slot and no lists there, that is the slots with a scalar
// minus those holding an excluded one; otherwise the postings of every
// value not excluded are united.
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
	pp.nested.orInto(res, e.scratch)  // nor does a list
	if !pp.spread && pp.lists.empty() {
		part := e.scalars(pp)
		for _, operand := range n.operands {
			if p := pp.scalarPosting(operand); p != nil {
				part.andNot(e.bits(p))
			}
		}
		res.or(part)
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
	lists := e.scan(n, e.bits(&pp.lists))
	lists.and(e.bits(&pp.lists)) // scan adds the slots without the path
	res.or(lists)
}
