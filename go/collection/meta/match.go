package meta

// Match reports whether the document satisfies the filter. It is the
// reference evaluator: plain recursion over the filter and the document,
// written to read like the package comment. Index.Select must agree with
// it on every document, which the model tests check.
func (f *Filter) Match(d Document) bool {
	if f == nil {
		return true
	}
	return f.root.match(d.fields)
}

func (n *node) match(fields []field) bool {
	switch n.kind {
	case nodeAll:
		return true
	case nodeAnd:
		for _, k := range n.kids {
			if !k.match(fields) {
				return false
			}
		}
		return true
	case nodeOr:
		for _, k := range n.kids {
			if k.match(fields) {
				return true
			}
		}
		return false
	case nodeNot:
		return !n.kids[0].match(fields)
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
