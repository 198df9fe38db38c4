package meta

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

// This file builds filter trees directly, for doors whose filter language
// is not the JSON one ParseFilter reads (the Qdrant door). The constructors
// make the same nodes ParseFilter makes, plus the conditions only those
// languages have; one evaluator (Index.Select) and one reference
// (Filter.Match) serve both.

// Scalar is an operand of a comparison: a number, a string, a bool or null.
type Scalar struct{ v value }

// Number, String, Bool and Null make the operands of Eq, In and Except.
// Number refuses NaN and infinities, which no document holds.
func Number(f float64) (Scalar, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Scalar{}, fmt.Errorf("%w: %v is not a JSON number", ErrInvalidFilter, f)
	}
	return Scalar{value{kind: kindNumber, num: f}}, nil
}

// ParseNumber reads a JSON number literal as an operand, with the rules of
// documents: an integer beyond ±2^53, which a float64 would round, is
// refused. Errors wrap ErrInvalidFilter.
func ParseNumber(literal []byte) (Scalar, error) {
	d := decoder{data: literal, maxDepth: 1, exact: true}
	v, err := d.decodeRoot()
	if err == nil && v.kind != kindNumber {
		err = fmt.Errorf("%s is not a number", literal)
	}
	if err != nil {
		return Scalar{}, fmt.Errorf("%w: %v", ErrInvalidFilter, err)
	}
	return Scalar{v}, nil
}

// String makes a string operand.
func String(s string) Scalar { return Scalar{value{kind: kindString, str: s}} }

// Bool makes a bool operand.
func Bool(b bool) Scalar { return Scalar{value{kind: kindBool, b: b}} }

// Null makes the null operand.
func Null() Scalar { return Scalar{} }

func scalarValues(ops []Scalar) []value {
	out := make([]value, len(ops))
	for i, s := range ops {
		out[i] = s.v
	}
	return out
}

// Bounds is a numeric interval; a nil bound is absent, and no bound at all
// is every number.
type Bounds struct {
	Gt, Gte, Lt, Lte *float64
}

func (b Bounds) interval() interval[float64] {
	var iv interval[float64]
	for _, bound := range []struct {
		op rangeOp
		at *float64
	}{{opGt, b.Gt}, {opGte, b.Gte}, {opLt, b.Lt}, {opLte, b.Lte}} {
		if bound.at != nil {
			iv.tighten(bound.op, normZero(*bound.at))
		}
	}
	return iv
}

func (b Bounds) check() error {
	for _, at := range []*float64{b.Gt, b.Gte, b.Lt, b.Lte} {
		if at != nil && math.IsNaN(*at) {
			return fmt.Errorf("%w: NaN as a range bound", ErrInvalidFilter)
		}
	}
	return nil
}

func wrap(n *node) *Filter { return &Filter{root: simplify(n)} }

func (f *Filter) node() *node {
	if f == nil {
		return &node{kind: nodeAll}
	}
	return f.root
}

func nodes(fs []*Filter) []*node {
	out := make([]*node, len(fs))
	for i, f := range fs {
		out[i] = f.node()
	}
	return out
}

// All matches every document; None matches none.
func All() *Filter  { return &Filter{root: &node{kind: nodeAll}} }
func None() *Filter { return Not(All()) }

// Eq is {"path": {"$eq": v}}: the field equals v or is a list holding it;
// Eq with Null also matches a missing field.
func Eq(p Path, v Scalar) *Filter {
	n := newLeaf(nodeEq, p)
	n.operand = v.v
	return wrap(n)
}

// In is {"path": {"$in": [vs...]}}; with no operand it matches nothing.
func In(p Path, vs ...Scalar) *Filter {
	n := newLeaf(nodeIn, p)
	n.operands = scalarValues(vs)
	return wrap(n)
}

// Exists is {"path": {"$exists": true}}: the field is present, null
// included.
func Exists(p Path) *Filter { return wrap(newLeaf(nodeExists, p)) }

// Within matches a document whose field is a number inside b, or a list
// holding one such number: unlike an $and of $gt and $lt, all bounds apply
// to the same element ([0, 10] is not within (1, 5)).
func Within(p Path, b Bounds) (*Filter, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	n := newLeaf(nodeWithin, p)
	n.bounds = b.interval()
	return wrap(n), nil
}

// Except matches a document whose field holds a value other than null that
// equals none of vs: the field, or one element of its list. An object
// equals no scalar, so it matches; a missing field, null and [] do not.
func Except(p Path, vs ...Scalar) *Filter {
	n := newLeaf(nodeExcept, p)
	n.operands = scalarValues(vs)
	return wrap(n)
}

// Words matches a document whose field is a string, or a list holding one,
// that contains every word of text. Words are what remains of a string
// lower-cased and split at every character that is not a letter or a
// digit; text without words matches nothing.
func Words(p Path, text string) *Filter { return wordsLeaf(p, text, textAll) }

// AnyWord is Words holding when one word of text is among the string's
// words (Qdrant's match.text_any).
func AnyWord(p Path, text string) *Filter { return wordsLeaf(p, text, textAny) }

// Phrase is Words holding when the words of text appear among the
// string's words consecutively and in order (Qdrant's match.phrase).
func Phrase(p Path, text string) *Filter { return wordsLeaf(p, text, textPhrase) }

func wordsLeaf(p Path, text string, mode textMode) *Filter {
	n := newLeaf(nodeWords, p)
	n.words = words(text)
	n.text = mode
	return wrap(n)
}

// ValuesCount matches a document whose field holds a number of values
// inside b: a list counts its elements, a missing field and null count 0,
// any other value (an object too) counts 1.
func ValuesCount(p Path, b Bounds) (*Filter, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	n := newLeaf(nodeValuesCount, p)
	n.bounds = b.interval()
	return wrap(n), nil
}

// IsEmpty matches a document whose field is missing, null, or [] ([null]
// is not empty).
func IsEmpty(p Path) *Filter { return wrap(newLeaf(nodeIsEmpty, p)) }

// IsNull matches a document whose field is null or a list holding null.
func IsNull(p Path) *Filter { return wrap(newLeaf(nodeIsNull, p)) }

// ElemMatch matches a document whose field is a list (or, through lists
// of objects, holds lists) with one element that f matches, f's paths
// being relative to the element (Mongo's $elemMatch).
func ElemMatch(p Path, f *Filter) *Filter {
	n := newLeaf(nodeElemMatch, p)
	n.kids = []*node{f.node()}
	return wrap(n)
}

// Nested is ElemMatch over the elements that are objects only, each
// matched by f as a whole (Qdrant's nested condition).
func Nested(p Path, f *Filter) *Filter {
	n := newLeaf(nodeElemMatch, p)
	n.kids = []*node{f.node()}
	n.objectsOnly = true
	return wrap(n)
}

// Size matches a document whose field is a list of n elements (Mongo's
// $size); a negative n matches nothing.
func Size(p Path, n int) *Filter {
	if n < 0 {
		return None()
	}
	s := newLeaf(nodeSize, p)
	s.size = n
	return wrap(s)
}

// IDs matches the documents of the given integer ids and string ids (see
// Filter.MatchID). The index keys documents by uint64: an integer id is
// its own key, and a string id means nothing to it until the collection,
// which owns the string -> key table, resolves it (ResolveIDs); until
// then a string id matches nothing, in Select and in Match alike.
func IDs(ints []uint64, strs []string) *Filter {
	ints = slices.Clone(ints)
	slices.Sort(ints)
	var s []string
	if len(strs) > 0 {
		s = slices.Clone(strs)
		slices.Sort(s)
		s = slices.Compact(s)
	}
	return wrap(&node{kind: nodeIDs, ids: slices.Compact(ints), strs: s})
}

// HasStringIDs reports whether the filter names string ids (IDs) that
// ResolveIDs would turn into keys.
func (f *Filter) HasStringIDs() bool {
	return f != nil && f.root.hasStrings()
}

func (n *node) hasStrings() bool {
	if n.kind == nodeIDs {
		return len(n.strs) > 0
	}
	for _, k := range n.kids {
		if k.hasStrings() {
			return true
		}
	}
	return false
}

// ResolveIDs returns the filter with every string id of its IDs
// conditions replaced by its key, as key reports it; a string key does not
// know (an id not present) is dropped, so it still matches nothing. f is
// not changed; without string ids it is returned as it is.
func (f *Filter) ResolveIDs(key func(string) (uint64, bool)) *Filter {
	if !f.HasStringIDs() {
		return f
	}
	return &Filter{root: f.root.resolve(key)}
}

func (n *node) resolve(key func(string) (uint64, bool)) *node {
	if !n.hasStrings() {
		return n
	}
	out := *n
	if n.kind == nodeIDs {
		ids := slices.Clone(n.ids)
		for _, s := range n.strs {
			if k, ok := key(s); ok {
				ids = append(ids, k)
			}
		}
		slices.Sort(ids)
		out.ids, out.strs = slices.Compact(ids), nil
		return &out
	}
	out.kids = make([]*node, len(n.kids))
	for i, k := range n.kids {
		out.kids[i] = k.resolve(key)
	}
	return &out
}

// HasVector matches the points that have a value in the named vector field
// (Qdrant's has_vector). Documents do not hold vectors, so the condition
// holds for none until BindVectors replaces it with the field's ids; the
// collection does that before it evaluates a filter.
func HasVector(field string) *Filter { return wrap(&node{kind: nodeHasVector, vector: field}) }

// VectorFields returns the names of the vector fields the filter's
// has_vector conditions name, each once, in the order met.
func (f *Filter) VectorFields() []string {
	var names []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.kind == nodeHasVector && !slices.Contains(names, n.vector) {
			names = append(names, n.vector)
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	if f != nil {
		walk(f.root)
	}
	return names
}

// BindVectors returns the filter with every has_vector condition replaced
// by the id list points(field) returns (ascending, as IDs takes them; the
// list is not copied), or f itself if it has none.
func (f *Filter) BindVectors(points func(field string) []uint64) *Filter {
	if len(f.VectorFields()) == 0 {
		return f
	}
	var bind func(n *node) *node
	bind = func(n *node) *node {
		if n.kind == nodeHasVector {
			return &node{kind: nodeIDs, ids: points(n.vector)}
		}
		if len(n.kids) == 0 {
			return n
		}
		out := *n
		out.kids = make([]*node, len(n.kids))
		for i, k := range n.kids {
			out.kids[i] = bind(k)
		}
		return &out
	}
	return &Filter{root: simplify(bind(f.root))}
}

// And matches what every filter matches (everything when there is none).
func And(fs ...*Filter) *Filter { return wrap(&node{kind: nodeAnd, kids: nodes(fs)}) }

// Or matches what at least one filter matches (nothing when there is
// none).
func Or(fs ...*Filter) *Filter {
	if len(fs) == 0 {
		return None()
	}
	return wrap(&node{kind: nodeOr, kids: nodes(fs)})
}

// Not matches what f does not.
func Not(f *Filter) *Filter { return wrap(&node{kind: nodeNot, kids: []*node{f.node()}}) }

// AtLeast matches what at least k of the filters match: everything when
// k <= 0, nothing when k exceeds their number.
func AtLeast(k int, fs ...*Filter) *Filter {
	switch {
	case k <= 0:
		return All()
	case k > len(fs):
		return None()
	case k == 1:
		return Or(fs...)
	case k == len(fs):
		return And(fs...)
	}
	return wrap(&node{kind: nodeAtLeast, kids: nodes(fs), min: k})
}

// words lower-cases s and splits it at every rune that is neither a letter
// nor a digit.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// textMode is what a nodeWords asks of a string's words.
type textMode uint8

const (
	textAll    textMode = iota // every word of the query (Qdrant's match.text)
	textAny                    // one word of it (match.text_any)
	textPhrase                 // its words, consecutive and in order (match.phrase)
)

// holds reports whether s's words meet the query's words want; a query
// without words matches nothing.
func (m textMode) holds(s string, want []string) bool {
	if len(want) == 0 {
		return false
	}
	have := words(s)
	switch m {
	case textAny:
		for _, w := range want {
			if slices.Contains(have, w) {
				return true
			}
		}
		return false
	case textPhrase:
		for i := 0; i+len(want) <= len(have); i++ {
			if slices.Equal(have[i:i+len(want)], want) {
				return true
			}
		}
		return false
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// OfType is {"path": {"$type": names}}: a value at the path, or an
// element of a list there, of one of the named types ($type's names:
// "string", "number", "int" for an integral number, "bool", ...).
func OfType(p Path, names ...string) (*Filter, error) {
	items := make([]value, len(names))
	for i, name := range names {
		items[i] = value{kind: kindString, str: name}
	}
	t, err := parseTypes(value{kind: kindList, list: items})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFilter, err)
	}
	n := newLeaf(nodeType, p)
	n.types = t
	return wrap(n), nil
}
