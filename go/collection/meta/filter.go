package meta

import (
	"fmt"
	"regexp"
	"strings"
)

// maxFilterDepth bounds JSON nesting in a filter so that a hostile filter
// cannot exhaust the stack of the recursive parser and evaluators.
const maxFilterDepth = 64

// Filter is a parsed filter (see the package comment for the language).
// A Filter is immutable and safe for concurrent use; a nil *Filter matches
// every document.
type Filter struct {
	root *node
}

// nodeKind is what a node of the normalised filter tree tests. Parsing
// rewrites the negative operators into nodeNot ($ne, $nin, $exists:false,
// $nor, field-level $not), so evaluators handle only these.
type nodeKind uint8

const (
	nodeAll    nodeKind = iota // no condition
	nodeAnd                    // every kid
	nodeOr                     // at least one kid
	nodeNot                    // not kids[0]
	nodeEq                     // path $eq operand
	nodeIn                     // path $eq one of operands
	nodeRange                  // path op operand; operand a number or a string
	nodeExists                 // path is present
	// Built only by the constructors of tree.go, for the Qdrant door.
	nodeWithin      // a number (or list element) at path inside bounds
	nodeExcept      // a non-null scalar at path equal to none of operands
	nodeWords       // a string at path holding every one of words
	nodeValuesCount // the number of values at path inside bounds
	nodeIsEmpty     // path missing, null, or a list of nulls only
	nodeIsNull      // path holds null itself
	nodeIDs         // the document's id is one of ids (strs match nothing until resolved)
	nodeAtLeast     // at least min kids
	// Built by ParseFilter and by tree.go.
	nodeElemMatch // a list at path with an element that kids[0] matches
	nodeSize      // a list at path with size elements
	nodeType      // a value at path (or an element) of one of types
	nodeRegex     // a string at path (or an element) in which regex finds a match
	// Built by tree.go's HasVector, bound by Filter.BindVectors.
	nodeHasVector // the point has a value in vector field vector
	// Built by tree.go's geo and datetime constructors.
	nodeGeo      // a geo point at path (or an element) inside geo
	nodeDatetime // a datetime string at path (or an element) inside times
)

type rangeOp uint8

const (
	opGt rangeOp = iota
	opGte
	opLt
	opLte
)

// holds reports whether c, the comparison of a field value with the
// operand, satisfies the operator.
func (op rangeOp) holds(c int) bool {
	switch op {
	case opGt:
		return c > 0
	case opGte:
		return c >= 0
	case opLt:
		return c < 0
	default:
		return c <= 0
	}
}

type node struct {
	kind nodeKind
	kids []*node
	path Path
	// key finds the postings of path (Path.postingsKey); scan means they
	// cannot answer it, and documents holding prefix are read instead.
	key      string
	scan     bool
	prefix   string
	op       rangeOp
	operand  value
	operands []value
	bounds   interval[float64] // nodeWithin, nodeValuesCount
	words    []string          // nodeWords
	text     textMode          // nodeWords: all words, any word, or the phrase
	geo      *geoShape         // nodeGeo
	times    interval[int64]   // nodeDatetime: microseconds since the epoch
	ids      []uint64          // nodeIDs: ascending, unique
	strs     []string          // nodeIDs: string ids not yet resolved to keys (see ResolveIDs); ascending, unique
	min      int               // nodeAtLeast: 1 < min < len(kids)
	size     int               // nodeSize
	types    typeSet           // nodeType
	regex    *regexp.Regexp    // nodeRegex
	// objectsOnly: nodeElemMatch tries only the elements that are
	// objects (a query of fields, Mongo's object form; Qdrant's nested).
	objectsOnly bool
	vector      string // nodeHasVector: the vector field's name
}

// newLeaf makes a node that tests the values at p.
func newLeaf(kind nodeKind, p Path) *node {
	n := &node{kind: kind, path: p}
	n.key, n.scan, n.prefix = p.postingsKey()
	return n
}

// ParseFilter parses a filter. Empty input, null and {} give a filter that
// matches everything. Errors wrap ErrInvalidFilter and name the offending
// field or operator, as in `at "year": unknown operator "$gtx"`.
func ParseFilter(data []byte) (*Filter, error) {
	d := decoder{data: data, maxDepth: maxFilterDepth, exact: true}
	d.skipSpace()
	if d.pos == len(data) {
		return &Filter{root: &node{kind: nodeAll}}, nil
	}
	v, err := d.decodeRoot()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFilter, err)
	}
	switch v.kind {
	case kindNull:
		return &Filter{root: &node{kind: nodeAll}}, nil
	case kindObject:
	default:
		return nil, fmt.Errorf("%w: a filter must be a JSON object, not %s", ErrInvalidFilter, v.kind)
	}
	n, err := parseQuery(v.fields, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFilter, err)
	}
	return &Filter{root: simplify(n)}, nil
}

// MatchesAll reports whether the filter has no conditions ({} or null, or
// only conditions that are trivially true), so callers can skip filtering.
func (f *Filter) MatchesAll() bool { return f == nil || f.root.kind == nodeAll }

// errorAt builds a parse error naming where in the filter it was found:
// a field path, with the logical operators that lead to it ("$or[1].year").
func errorAt(where, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if where == "" {
		return fmt.Errorf("%s", msg)
	}
	return fmt.Errorf("at %q: %s", where, msg)
}

func joinWhere(where, part string) string {
	if where == "" {
		return part
	}
	return where + "." + part
}

// parseQuery reads a query object: field conditions and logical operators,
// all of which must hold.
func parseQuery(fields []field, where string) (*node, error) {
	and := &node{kind: nodeAnd}
	for _, f := range fields {
		var n *node
		var err error
		if strings.HasPrefix(f.key, "$") {
			n, err = parseLogical(f.key, f.val, where)
		} else {
			n, err = parseField(f.key, f.val, where)
		}
		if err != nil {
			return nil, err
		}
		and.kids = append(and.kids, n)
	}
	return and, nil
}

func parseLogical(op string, v value, where string) (*node, error) {
	here := joinWhere(where, op)
	switch op {
	case "$and", "$or", "$nor":
		if v.kind != kindList || len(v.list) == 0 {
			return nil, errorAt(here, "%q needs a non-empty list of objects, not %s", op, describeValue(v))
		}
		n := &node{kind: nodeAnd}
		if op != "$and" {
			n.kind = nodeOr
		}
		for i, item := range v.list {
			itemWhere := fmt.Sprintf("%s[%d]", here, i)
			if item.kind != kindObject {
				return nil, errorAt(itemWhere, "%q needs a non-empty list of objects, not a list holding %s", op, item.kind)
			}
			kid, err := parseQuery(item.fields, itemWhere)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
		if op == "$nor" {
			n = &node{kind: nodeNot, kids: []*node{n}}
		}
		return n, nil
	case "$not":
		if v.kind != kindObject {
			return nil, errorAt(here, "%q needs an object, not %s", op, v.kind)
		}
		kid, err := parseQuery(v.fields, here)
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeNot, kids: []*node{kid}}, nil
	}
	if _, ok := fieldOperators[op]; ok {
		return nil, errorAt(where, "operator %q needs a field, as in {\"field\": {%q: ...}}", op, op)
	}
	return nil, errorAt(where, "unknown top-level operator %q", op)
}

// fieldOperators lists the operators allowed inside a field's operator
// object.
var fieldOperators = map[string]struct{}{
	"$eq": {}, "$ne": {}, "$gt": {}, "$gte": {}, "$lt": {}, "$lte": {},
	"$in": {}, "$nin": {}, "$exists": {}, "$not": {},
	"$elemMatch": {}, "$size": {}, "$all": {}, "$type": {}, "$regex": {}, "$options": {},
}

var rangeOps = map[string]rangeOp{"$gt": opGt, "$gte": opGte, "$lt": opLt, "$lte": opLte}

// splitPath checks a dotted field path: every part must be a key a document
// can hold.
func splitPath(path string) ([]string, error) {
	parts := strings.Split(path, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("field path %q has an empty part", path)
		}
		if p[0] == '$' {
			return nil, fmt.Errorf("field path %q has a part starting with '$'", path)
		}
	}
	return parts, nil
}

func parseField(path string, v value, where string) (*node, error) {
	if path == "" {
		return nil, errorAt(where, "empty field name")
	}
	here := joinWhere(where, path)
	parts, err := splitPath(path)
	if err != nil {
		return nil, errorAt(here, "%v", err)
	}
	p := dottedPath(path, parts)
	if v.kind == kindObject && hasOperator(v.fields) {
		return parseOperators(p, v.fields, here)
	}
	n := newLeaf(nodeEq, p)
	n.operand = v
	return n, nil
}

func hasOperator(fields []field) bool {
	for _, f := range fields {
		if strings.HasPrefix(f.key, "$") {
			return true
		}
	}
	return false
}

// parseOperators reads a field's operator object ({"$gt": 1, "$lt": 5}),
// every operator of which must hold.
func parseOperators(p Path, fields []field, here string) (*node, error) {
	and := &node{kind: nodeAnd}
	for _, f := range fields {
		if !strings.HasPrefix(f.key, "$") {
			return nil, errorAt(here, "cannot mix operators and fields in one object: %q is not an operator", f.key)
		}
		leaf := newLeaf(nodeEq, p)
		leaf.operand = f.val
		n := leaf
		switch f.key {
		case "$eq":
			leaf.kind = nodeEq
		case "$ne":
			leaf.kind = nodeEq
			n = &node{kind: nodeNot, kids: []*node{leaf}}
		case "$gt", "$gte", "$lt", "$lte":
			if f.val.kind != kindNumber && f.val.kind != kindString {
				return nil, errorAt(here, "%q cannot compare with %s", f.key, f.val.kind)
			}
			leaf.kind = nodeRange
			leaf.op = rangeOps[f.key]
		case "$in", "$nin":
			if f.val.kind != kindList {
				return nil, errorAt(here, "%q needs a list, not %s", f.key, f.val.kind)
			}
			leaf.kind = nodeIn
			leaf.operands = f.val.list
			leaf.operand = value{}
			if f.key == "$nin" {
				n = &node{kind: nodeNot, kids: []*node{leaf}}
			}
		case "$exists":
			if f.val.kind != kindBool {
				return nil, errorAt(here, "%q needs true or false, not %s", f.key, f.val.kind)
			}
			leaf.kind = nodeExists
			leaf.operand = value{}
			if !f.val.b {
				n = &node{kind: nodeNot, kids: []*node{leaf}}
			}
		case "$not":
			if f.val.kind != kindObject || len(f.val.fields) == 0 || !hasOperator(f.val.fields) {
				return nil, errorAt(here, "%q needs an object of operators such as {\"$gt\": 5}, not %s", f.key, describeValue(f.val))
			}
			kid, err := parseOperators(p, f.val.fields, here)
			if err != nil {
				return nil, err
			}
			n = &node{kind: nodeNot, kids: []*node{kid}}
		case "$elemMatch":
			var err error
			if n, err = parseElemMatch(p, f.val, here); err != nil {
				return nil, err
			}
		case "$size":
			size, ok := sizeOperand(f.val)
			if !ok {
				return nil, errorAt(here, "%q needs a non-negative integer, not %s", f.key, describeValue(f.val))
			}
			n = newLeaf(nodeSize, p)
			n.size = size
		case "$all":
			var err error
			if n, err = parseAll(p, f.val, here); err != nil {
				return nil, err
			}
		case "$type":
			types, err := parseTypes(f.val)
			if err != nil {
				return nil, errorAt(here, "%v", err)
			}
			n = newLeaf(nodeType, p)
			n.types = types
		case "$regex":
			var err error
			if n, err = parseRegex(p, f.val, fields, here); err != nil {
				return nil, err
			}
		case "$options":
			if !hasKey(fields, "$regex") {
				return nil, errorAt(here, "%q goes with \"$regex\" in the same object", f.key)
			}
			continue // read by parseRegex
		case "$and", "$or", "$nor":
			return nil, errorAt(here, "operator %q combines whole filters and cannot be applied to a field", f.key)
		default:
			return nil, errorAt(here, "unknown operator %q", f.key)
		}
		and.kids = append(and.kids, n)
	}
	return and, nil
}

// describeValue names a value's type for a message, calling out the empty
// cases a reader would otherwise not spot.
func describeValue(v value) string {
	switch {
	case v.kind == kindList && len(v.list) == 0:
		return "an empty list"
	case v.kind == kindObject && len(v.fields) == 0:
		return "an empty object"
	}
	return v.kind.String()
}

// simplify flattens nested and/or nodes, drops conditions that are always
// true, and removes double negation, so that MatchesAll is exact for the
// obvious cases and evaluators do less work.
func simplify(n *node) *node {
	switch n.kind {
	case nodeAnd, nodeOr:
		out := &node{kind: n.kind}
		for _, k := range n.kids {
			k = simplify(k)
			switch {
			case k.kind == n.kind:
				out.kids = append(out.kids, k.kids...)
			case k.kind == nodeAll && n.kind == nodeAnd:
				// true AND x = x
			case k.kind == nodeAll:
				return k // true OR x = true
			default:
				out.kids = append(out.kids, k)
			}
		}
		switch len(out.kids) {
		case 0:
			return &node{kind: nodeAll}
		case 1:
			return out.kids[0]
		}
		return out
	case nodeNot:
		k := simplify(n.kids[0])
		if k.kind == nodeNot {
			return k.kids[0]
		}
		return &node{kind: nodeNot, kids: []*node{k}}
	case nodeAtLeast:
		out := &node{kind: nodeAtLeast, min: n.min, kids: make([]*node, len(n.kids))}
		for i, k := range n.kids {
			out.kids[i] = simplify(k)
		}
		return out
	}
	return n
}
