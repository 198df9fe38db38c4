package meta

import (
	"fmt"
	"math"
	"strings"
)

// This file parses the operators about lists and types: $elemMatch,
// $size, $all and $type.

// elementPath is the path of the value under test itself, which the
// operators of $elemMatch's value form ({"$gte": 80}) apply to.
var elementPath = Path{expand: true}

// parseElemMatch reads {"$elemMatch": q}. An object of operators only
// ({"$gte": 80, "$lt": 85}) tests each element itself; a query with field
// paths or logical operators ({"product": "x", "score": {"$gt": 8}})
// tests each element that is an object, its paths relative to it.
func parseElemMatch(p Path, v value, here string) (*node, error) {
	here = joinWhere(here, "$elemMatch")
	if v.kind != kindObject || len(v.fields) == 0 {
		return nil, errorAt(here, "\"$elemMatch\" needs a non-empty query object, not %s", describeValue(v))
	}
	valueForm := true
	for _, f := range v.fields {
		switch f.key {
		case "$and", "$or", "$nor":
			valueForm = false
		default:
			if !strings.HasPrefix(f.key, "$") {
				valueForm = false
			}
		}
	}
	var kid *node
	var err error
	if valueForm {
		kid, err = parseOperators(elementPath, v.fields, here)
	} else {
		kid, err = parseQuery(v.fields, here)
	}
	if err != nil {
		return nil, err
	}
	n := newLeaf(nodeElemMatch, p)
	n.kids = []*node{simplify(kid)}
	n.objectsOnly = !valueForm
	return n, nil
}

// parseAll reads {"$all": [v, ...]}: every value is in the list (an $and
// of $eq), and an {"$elemMatch": q} item means an element matching q. An
// empty list matches nothing, as in MongoDB.
func parseAll(p Path, v value, here string) (*node, error) {
	if v.kind != kindList {
		return nil, errorAt(here, "\"$all\" needs a list, not %s", v.kind)
	}
	if len(v.list) == 0 {
		return &node{kind: nodeNot, kids: []*node{{kind: nodeAll}}}, nil
	}
	and := &node{kind: nodeAnd}
	for i, item := range v.list {
		if item.kind == kindObject && len(item.fields) == 1 && item.fields[0].key == "$elemMatch" {
			n, err := parseElemMatch(p, item.fields[0].val, fmt.Sprintf("%s.$all[%d]", here, i))
			if err != nil {
				return nil, err
			}
			and.kids = append(and.kids, n)
			continue
		}
		if item.kind == kindObject && hasOperator(item.fields) {
			return nil, errorAt(here, "\"$all\"[%d]: only {\"$elemMatch\": ...} may stand for a value, not %s", i, item.fields[0].key)
		}
		n := newLeaf(nodeEq, p)
		n.operand = item
		and.kids = append(and.kids, n)
	}
	return and, nil
}

// sizeOperand reads the operand of $size: a non-negative integer (2.0 is
// 2, as in MongoDB).
func sizeOperand(v value) (int, bool) {
	if v.kind != kindNumber || v.num < 0 || v.num != math.Trunc(v.num) || v.num > math.MaxInt32 {
		return 0, false
	}
	return int(v.num), true
}

// typeSet is a set of JSON types for $type.
type typeSet uint8

const (
	typeNull typeSet = 1 << iota
	typeBool
	typeString
	typeInteger // a number with an integral value
	typeFraction
	typeObject
	typeArray
	typeNumber = typeInteger | typeFraction
)

// typeNames are $type's operands: MongoDB's names and numeric codes.
// Numbers are float64 here, so BSON's int and double cannot be told
// apart by how they were written: "int" and "long" match a number with an
// integral value (2, 2.0, 1e3), "double" and "decimal" one without (2.5),
// and "number" any number. The other BSON types (dates, ObjectIds, ...)
// are names no JSON value has: they match nothing.
var typeNames = map[string]typeSet{
	"double": typeFraction, "string": typeString, "object": typeObject, "array": typeArray,
	"bool": typeBool, "null": typeNull, "int": typeInteger, "long": typeInteger,
	"decimal": typeFraction, "number": typeNumber,
	"binData": 0, "undefined": 0, "objectId": 0, "date": 0, "regex": 0, "dbPointer": 0,
	"javascript": 0, "symbol": 0, "timestamp": 0, "minKey": 0, "maxKey": 0,
}

var typeCodes = map[float64]string{
	1: "double", 2: "string", 3: "object", 4: "array", 5: "binData", 6: "undefined",
	7: "objectId", 8: "bool", 9: "date", 10: "null", 11: "regex", 12: "dbPointer",
	13: "javascript", 14: "symbol", 16: "int", 17: "timestamp", 18: "long", 19: "decimal",
	-1: "minKey", 127: "maxKey",
}

// parseTypes reads $type's operand: a name, a code, or a non-empty list of
// them.
func parseTypes(v value) (typeSet, error) {
	items := []value{v}
	if v.kind == kindList {
		if len(v.list) == 0 {
			return 0, fmt.Errorf("\"$type\" needs a type name, a type code or a non-empty list of them, not an empty list")
		}
		items = v.list
	}
	var set typeSet
	for _, item := range items {
		name := item.str
		if item.kind == kindNumber {
			name = typeCodes[item.num]
		}
		t, ok := typeNames[name]
		if !ok || (item.kind != kindString && item.kind != kindNumber) || name == "" {
			return 0, fmt.Errorf("\"$type\": unknown type %s (known: double, string, object, array, bool, null, int, long, decimal, number, or their codes 1, 2, 3, 4, 8, 10, 16, 18, 19)", appendValue(nil, item))
		}
		set |= t
	}
	return set, nil
}

// has reports whether v (not looking into a list's elements) is of a type
// in the set.
func (t typeSet) has(v value) bool {
	switch v.kind {
	case kindNull:
		return t&typeNull != 0
	case kindBool:
		return t&typeBool != 0
	case kindString:
		return t&typeString != 0
	case kindNumber:
		if v.num == math.Trunc(v.num) {
			return t&typeInteger != 0
		}
		return t&typeFraction != 0
	case kindList:
		return t&typeArray != 0
	}
	return t&typeObject != 0
}
