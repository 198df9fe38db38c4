package meta

import "slices"

// Match reports whether the document satisfies the filter. It is the
// reference evaluator: plain recursion over the filter and the document,
// written to read like the package comment. Index.Select must agree with
// it on every document, which the model tests check.
//
// Match does not know the document's id, so an id-list condition (IDs)
// never holds in it; MatchID is Match for the document of a given id.
func (f *Filter) Match(d Document) bool {
	if f == nil {
		return true
	}
	return f.root.match(d.fields, subject{})
}

// MatchID reports whether the document d of id satisfies the filter.
func (f *Filter) MatchID(id uint64, d Document) bool {
	if f == nil {
		return true
	}
	return f.root.match(d.fields, subject{id: id, hasID: true})
}

// subject is what the reference evaluator knows of a document besides its
// fields.
type subject struct {
	id    uint64
	hasID bool
}

func (n *node) match(fields []field, s subject) bool {
	switch n.kind {
	case nodeAll:
		return true
	case nodeAnd:
		for _, k := range n.kids {
			if !k.match(fields, s) {
				return false
			}
		}
		return true
	case nodeOr:
		for _, k := range n.kids {
			if k.match(fields, s) {
				return true
			}
		}
		return false
	case nodeNot:
		return !n.kids[0].match(fields, s)
	case nodeExists:
		_, ok := lookup(fields, n.parts)
		return ok
	case nodeEq:
		v, ok := lookup(fields, n.parts)
		return matchEq(v, ok, n.operand)
	case nodeIn:
		v, ok := lookup(fields, n.parts)
		for _, operand := range n.operands {
			if matchEq(v, ok, operand) {
				return true
			}
		}
		return false
	case nodeRange:
		v, ok := lookup(fields, n.parts)
		if !ok {
			return false
		}
		if v.kind == kindList {
			for _, item := range v.list {
				if c, ok := compareScalar(item, n.operand); ok && n.op.holds(c) {
					return true
				}
			}
			return false
		}
		c, ok := compareScalar(v, n.operand)
		return ok && n.op.holds(c)
	case nodeAtLeast:
		held := 0
		for _, k := range n.kids {
			if k.match(fields, s) {
				if held++; held >= n.min {
					return true
				}
			}
		}
		return false
	case nodeIDs:
		_, found := slices.BinarySearch(n.ids, s.id)
		return s.hasID && found
	case nodeValuesCount:
		v, ok := lookup(fields, n.parts)
		count := 0
		switch {
		case !ok, v.kind == kindNull:
		case v.kind == kindList:
			count = len(v.list)
		default:
			count = 1
		}
		return n.bounds.contains(float64(count))
	case nodeIsEmpty:
		v, ok := lookup(fields, n.parts)
		return !ok || v.kind == kindNull || (v.kind == kindList && len(v.list) == 0)
	case nodeIsNull:
		v, ok := lookup(fields, n.parts)
		if ok && v.kind == kindList {
			for _, item := range v.list {
				if item.kind == kindNull {
					return true
				}
			}
		}
		return ok && v.kind == kindNull
	}
	// The rest hold when one value at the path, the field itself or an
	// element of its list, does.
	v, ok := lookup(fields, n.parts)
	if !ok {
		return false
	}
	if v.kind != kindList {
		return n.holdsFor(v)
	}
	for _, item := range v.list {
		if n.holdsFor(item) {
			return true
		}
	}
	return false
}

// holdsFor tests one value (not a list) against a per-value condition:
// nodeWithin, nodeExcept, nodeWords.
func (n *node) holdsFor(v value) bool {
	switch n.kind {
	case nodeWithin:
		return v.kind == kindNumber && n.bounds.contains(normZero(v.num))
	case nodeExcept:
		if v.kind == kindNull {
			return false
		}
		for _, operand := range n.operands {
			if equal(v, operand) {
				return false
			}
		}
		return true
	case nodeWords:
		return v.kind == kindString && hasWords(v.str, n.words)
	}
	panic("meta: unknown filter node")
}

// matchEq is Mongo's equality: the field equals the operand, or the field
// is a list one of whose elements equals it; null also matches a missing
// field.
func matchEq(v value, present bool, operand value) bool {
	if !present {
		return operand.kind == kindNull
	}
	if equal(v, operand) {
		return true
	}
	if v.kind == kindList {
		for _, item := range v.list {
			if equal(item, operand) {
				return true
			}
		}
	}
	return false
}
