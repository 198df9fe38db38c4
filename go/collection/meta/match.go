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
	return f.root.match(d.root(), subject{})
}

// MatchID reports whether the document d of id satisfies the filter.
func (f *Filter) MatchID(id uint64, d Document) bool {
	if f == nil {
		return true
	}
	return f.root.match(d.root(), subject{id: id, hasID: true})
}

func (d Document) root() value { return value{kind: kindObject, fields: d.fields} }

// subject is what the reference evaluator knows of a document besides its
// fields.
type subject struct {
	id    uint64
	hasID bool
}

// match tests the node against root: the document, or inside $elemMatch
// one element of a list (an element has no id).
func (n *node) match(root value, s subject) bool {
	switch n.kind {
	case nodeAll:
		return true
	case nodeAnd:
		for _, k := range n.kids {
			if !k.match(root, s) {
				return false
			}
		}
		return true
	case nodeOr:
		for _, k := range n.kids {
			if k.match(root, s) {
				return true
			}
		}
		return false
	case nodeNot:
		return !n.kids[0].match(root, s)
	case nodeAtLeast:
		held := 0
		for _, k := range n.kids {
			if k.match(root, s) {
				if held++; held >= n.min {
					return true
				}
			}
		}
		return false
	case nodeIDs:
		_, found := slices.BinarySearch(n.ids, s.id)
		return s.hasID && found
	case nodeHasVector:
		return false // documents hold no vectors: BindVectors first
	}
	vals := n.path.reach(root)
	switch n.kind {
	case nodeExists:
		return len(vals) > 0
	case nodeEq:
		return matchEq(vals, n.operand)
	case nodeIn:
		for _, operand := range n.operands {
			if matchEq(vals, operand) {
				return true
			}
		}
		return false
	case nodeValuesCount:
		// Qdrant's counts: a list counts its elements, null 0, any other
		// value 1, and a missing field 0; one count inside the bounds is
		// enough.
		if len(vals) == 0 {
			return n.bounds.contains(0)
		}
		for _, v := range vals {
			count := 1
			switch v.kind {
			case kindNull:
				count = 0
			case kindList:
				count = len(v.list)
			}
			if n.bounds.contains(float64(count)) {
				return true
			}
		}
		return false
	case nodeIsEmpty:
		for _, v := range vals {
			if v.kind != kindNull && (v.kind != kindList || len(v.list) > 0) {
				return false
			}
		}
		return true
	case nodeIsNull:
		for _, v := range vals {
			if v.kind == kindNull || (v.kind == kindList && slices.ContainsFunc(v.list, isNull)) {
				return true
			}
		}
		return false
	case nodeSize:
		for _, v := range vals {
			if v.kind == kindList && len(v.list) == n.size {
				return true
			}
		}
		return false
	case nodeElemMatch:
		for _, v := range vals {
			if v.kind != kindList {
				continue
			}
			for _, e := range v.list {
				if (!n.objectsOnly || e.kind == kindObject) && n.kids[0].match(e, subject{}) {
					return true
				}
			}
		}
		return false
	}
	// The rest hold when one value at the path, or one element of a list
	// there, does.
	for _, v := range vals {
		if v.kind != kindList {
			if n.holdsFor(v) {
				return true
			}
			continue
		}
		if n.kind == nodeType && n.types.has(v) {
			return true
		}
		for _, item := range v.list {
			if n.holdsFor(item) {
				return true
			}
		}
	}
	return false
}

func isNull(v value) bool { return v.kind == kindNull }

// holdsFor tests one value against a per-value condition: nodeRange,
// nodeWithin, nodeExcept, nodeWords, nodeRegex, nodeType, nodeGeo, nodeDatetime.
func (n *node) holdsFor(v value) bool {
	switch n.kind {
	case nodeRange:
		c, ok := compareScalar(v, n.operand)
		return ok && n.op.holds(c)
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
		return v.kind == kindString && n.text.holds(v.str, n.words)
	case nodeRegex:
		return v.kind == kindString && n.regex.MatchString(v.str)
	case nodeGeo:
		pt, ok := geoPointOf(v)
		return ok && n.geo.contains(pt)
	case nodeDatetime:
		if v.kind != kindString {
			return false
		}
		t, ok := ParseDatetime(v.str)
		return ok && n.times.contains(DatetimeMicros(t))
	case nodeType:
		return n.types.has(v)
	}
	panic("meta: unknown filter node")
}

// matchEq is Mongo's equality over the values a path reaches: one of them
// equals the operand, or is a list one of whose elements does; null also
// matches a missing field.
func matchEq(vals []value, operand value) bool {
	if len(vals) == 0 {
		return operand.kind == kindNull
	}
	for _, v := range vals {
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
	}
	return false
}
