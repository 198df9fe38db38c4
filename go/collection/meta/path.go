package meta

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is a checked field path: a dotted Mongo path (ParsePath), whose
// keys reach through lists of objects, or an explicit path of steps
// (NewPath), which reaches into a list only where a step says so (Qdrant's
// "a[].b", "a[0]").
type Path struct {
	dotted string
	steps  []step
	// expand: a key step applied to a list reaches the key in each object
	// element, and a key that is an array index (ArrayIndex) also the
	// element at that position (Mongo's dotted paths).
	expand bool
}

type stepKind uint8

const (
	stepKey   stepKind = iota // the value of a key in an object
	stepIndex                 // the element at index of a list
	stepEach                  // every element of a list
)

type step struct {
	kind  stepKind
	key   string
	index int
}

// PathStep is one step of an explicit path: Key, At or Elements.
type PathStep struct{ s step }

// Key is the step to the value of name in an object.
func Key(name string) PathStep { return PathStep{step{kind: stepKey, key: name}} }

// At is the step to the element at position i (from 0) of a list.
func At(i int) PathStep { return PathStep{step{kind: stepIndex, index: i}} }

// Elements is the step to every element of a list.
func Elements() PathStep { return PathStep{step{kind: stepEach}} }

// ParsePath checks a dotted Mongo field path ("stock.shop"): every part
// must be a key a document can hold. Errors wrap ErrInvalidFilter.
func ParsePath(dotted string) (Path, error) {
	if dotted == "" {
		return Path{}, fmt.Errorf("%w: empty field path", ErrInvalidFilter)
	}
	parts, err := splitPath(dotted)
	if err != nil {
		return Path{}, fmt.Errorf("%w: %v", ErrInvalidFilter, err)
	}
	return dottedPath(dotted, parts), nil
}

func dottedPath(dotted string, parts []string) Path {
	steps := make([]step, len(parts))
	for i, p := range parts {
		steps[i] = step{kind: stepKey, key: p}
	}
	return Path{dotted: dotted, steps: steps, expand: true}
}

// NewPath builds an explicit path. The first step must be a Key (a
// document is an object); keys must be keys a document can hold, and
// indexes non-negative. Errors wrap ErrInvalidFilter.
func NewPath(steps ...PathStep) (Path, error) {
	if len(steps) == 0 || steps[0].s.kind != stepKey {
		return Path{}, fmt.Errorf("%w: a path starts with a key", ErrInvalidFilter)
	}
	var b strings.Builder
	p := Path{steps: make([]step, len(steps))}
	for i, st := range steps {
		s := st.s
		switch s.kind {
		case stepKey:
			if err := checkPathKey(s.key); err != nil {
				return Path{}, fmt.Errorf("%w: %v", ErrInvalidFilter, err)
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case stepIndex:
			if s.index < 0 {
				return Path{}, fmt.Errorf("%w: negative list index %d", ErrInvalidFilter, s.index)
			}
			fmt.Fprintf(&b, "[%d]", s.index)
		default:
			b.WriteString("[]")
		}
		p.steps[i] = s
	}
	p.dotted = b.String()
	return p, nil
}

func checkPathKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("empty key in a path")
	case strings.IndexByte(key, '.') >= 0:
		return fmt.Errorf("key %q: no document key holds '.'", key)
	case key[0] == '$':
		return fmt.Errorf("key %q: no document key starts with '$'", key)
	}
	return nil
}

// String returns the path as written: dotted, with [] and [i] for the list
// steps of an explicit path.
func (p Path) String() string { return p.dotted }

// ArrayIndex reports whether a part of a dotted path is also a list
// position, as Mongo reads "a.0.b": decimal digits without a leading zero
// (but "0" itself), small enough for an int.
func ArrayIndex(part string) (int, bool) {
	if part == "" || len(part) > 9 || (part[0] == '0' && len(part) > 1) {
		return 0, false
	}
	for i := 0; i < len(part); i++ {
		if part[i] < '0' || part[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(part)
	return n, err == nil
}

// reach returns the values the path reaches from root, in document order;
// none when it is missing. Lists met on the way are entered only as the
// path says: an explicit path by its At and Elements steps, a dotted
// path (expand) at each key, one level deep.
func (p *Path) reach(root value) []value {
	cur := []value{root}
	var next []value
	for i, st := range p.steps {
		next = next[:0:0]
		for _, v := range cur {
			switch {
			case v.kind == kindObject && st.kind == stepKey:
				if f, ok := findField(v.fields, st.key); ok {
					next = append(next, f)
				}
			case v.kind != kindList:
			case st.kind == stepEach:
				next = append(next, v.list...)
			case st.kind == stepIndex:
				if st.index < len(v.list) {
					next = append(next, v.list[st.index])
				}
			case p.expand && i > 0: // stepKey on a list, dotted path
				if at, ok := ArrayIndex(st.key); ok && at < len(v.list) {
					next = append(next, v.list[at])
				}
				for _, e := range v.list {
					if e.kind == kindObject {
						if f, ok := findField(e.fields, st.key); ok {
							next = append(next, f)
						}
					}
				}
			}
		}
		if len(next) == 0 {
			return nil
		}
		cur = next
	}
	return cur
}

// Routes. The index keeps postings per route: the exact way from the root
// to a value, keys joined by '.', with a part "$" for entering a list (no
// key can be "$"). {"a": [{"b": 1}, [2]], "c": {"d": 3}} has values at
// routes a, a.$ (the object and the list [2]; scalar elements stay with
// their list, at a), a.$.b, c and c.d.
const routeElements = "$"

// postingsKey is where the index finds the postings of p: for a dotted
// path, the dotted path itself (the index maps it to every route it
// covers); for an explicit path, its one route. scan reports that postings
// cannot answer p exactly (a list position, or a path ending at the
// elements of a list) and documents must be read; prefix is then the
// postingsKey of the longest leading part of p that postings can answer,
// whose absence means the whole of p is missing (a dotted path for a
// dotted p, a route for an explicit one).
func (p *Path) postingsKey() (key string, scan bool, prefix string) {
	if p.expand {
		for i, st := range p.steps {
			if _, ok := ArrayIndex(st.key); ok && i > 0 {
				parts := make([]string, i)
				for j := range parts {
					parts[j] = p.steps[j].key
				}
				return p.dotted, true, strings.Join(parts, ".")
			}
		}
		return p.dotted, false, ""
	}
	var b strings.Builder
	for i, st := range p.steps {
		if st.kind == stepIndex || (st.kind == stepEach && i == len(p.steps)-1) {
			return b.String(), true, b.String()
		}
		if i > 0 {
			b.WriteByte('.')
		}
		if st.kind == stepEach {
			b.WriteString(routeElements)
		} else {
			b.WriteString(st.key)
		}
	}
	return b.String(), false, ""
}

// dottedOfRoute returns the dotted path a route is part of: its keys, when
// the route enters at most one list level after each key and does not end
// in a list's elements (a dotted path reaches into lists only so).
func dottedOfRoute(route string) (string, bool) {
	if !strings.Contains(route, "."+routeElements) {
		return route, true
	}
	parts := strings.Split(route, ".")
	keys := parts[:0:0]
	for i, part := range parts {
		if part != routeElements {
			keys = append(keys, part)
			continue
		}
		if i == len(parts)-1 || parts[i-1] == routeElements {
			return "", false
		}
	}
	return strings.Join(keys, "."), true
}
