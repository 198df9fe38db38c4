package meta

import "strings"

// kind is the JSON type of a value. The order is only used to name types in
// messages; values of different kinds never compare (type bracketing).
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindList
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a bool"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindList:
		return "a list"
	default:
		return "an object"
	}
}

// value is one parsed JSON value. Objects keep their fields sorted by key
// (byte order) with no duplicates, so lookups are binary searches and two
// equal objects have identical field slices.
type value struct {
	kind   kind
	b      bool    // kindBool
	num    float64 // kindNumber
	str    string  // kindString
	list   []value // kindList
	fields []field // kindObject
}

type field struct {
	key string
	val value
}

// equal is JSON value equality as the filter language defines it: numbers
// by numeric value (so 1 == 1.0 and -0 == 0), lists element by element in
// order, objects key by key regardless of the order they were written in.
func equal(a, b value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindNull:
		return true
	case kindBool:
		return a.b == b.b
	case kindNumber:
		return a.num == b.num
	case kindString:
		return a.str == b.str
	case kindList:
		if len(a.list) != len(b.list) {
			return false
		}
		for i := range a.list {
			if !equal(a.list[i], b.list[i]) {
				return false
			}
		}
		return true
	default:
		if len(a.fields) != len(b.fields) {
			return false
		}
		for i := range a.fields {
			if a.fields[i].key != b.fields[i].key || !equal(a.fields[i].val, b.fields[i].val) {
				return false
			}
		}
		return true
	}
}

// compareScalar orders two numbers or two strings: -1, 0 or +1, and ok false
// when they are not of one of those comparable pairs.
func compareScalar(a, b value) (c int, ok bool) {
	switch {
	case a.kind == kindNumber && b.kind == kindNumber:
		switch {
		case a.num < b.num:
			return -1, true
		case a.num > b.num:
			return 1, true
		}
		return 0, true
	case a.kind == kindString && b.kind == kindString:
		return strings.Compare(a.str, b.str), true
	}
	return 0, false
}

// findField returns the value of key in fields sorted by key.
func findField(fields []field, key string) (value, bool) {
	lo, hi := 0, len(fields)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if fields[mid].key < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(fields) && fields[lo].key == key {
		return fields[lo].val, true
	}
	return value{}, false
}

// lookup follows a dotted path (already split) through nested objects
// only: a path that runs into a scalar or a list before its last part is
// missing. Filters reach into lists (Path.reach); lookup serves the
// fields that hold one value (text fields).
func lookup(fields []field, parts []string) (value, bool) {
	for i, part := range parts {
		v, ok := findField(fields, part)
		if !ok {
			return value{}, false
		}
		if i == len(parts)-1 {
			return v, true
		}
		if v.kind != kindObject {
			return value{}, false
		}
		fields = v.fields
	}
	return value{}, false
}

// normZero maps -0 to 0 so both land in one posting and one sort position.
func normZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}
