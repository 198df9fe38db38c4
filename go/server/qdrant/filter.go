package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// A Qdrant filter compiles to a tree of nodes. Most conditions have the
// same meaning as a strata (meta) filter and become one; has_id names ids,
// which documents do not hold; a few conditions differ from meta on lists
// (a two-sided range must hold for one element, except needs one element
// outside the list) or have no meta form (values_count, text): those are
// checked on each candidate document that a meta superset selects. A tree
// of meta nodes only is one meta filter; any other tree is evaluated into
// an ascending id list (see evalSet).
type node struct {
	kind  nodeKind
	meta  any                // nodeMeta: the filter; nodeCheck: a superset of the matches
	check func(doc any) bool // nodeCheck
	ids   []uint64           // nodeIDs, ascending and unique
	kids  []*node            // nodeAnd, nodeOr, nodeNot (one), nodeAtLeast
	min   int                // nodeAtLeast: how many kids must hold
}

type nodeKind uint8

const (
	nodeMeta nodeKind = iota
	nodeCheck
	nodeIDs
	nodeAnd
	nodeOr
	nodeNot
	nodeAtLeast
)

// maxCombinations bounds the meta expansion of min_should (a $or of $and
// over every choice of min_count conditions); larger ones are evaluated
// as sets.
const maxCombinations = 256

var (
	matchAll     = map[string]any{}
	matchNothing = map[string]any{"$nor": []any{map[string]any{}}}
)

// plan is a compiled filter.
type plan struct{ root *node }

// compileFilter compiles a Qdrant filter (absent or null: everything).
func compileFilter(raw json.RawMessage) (*plan, error) {
	if !present(raw) {
		return &plan{root: &node{kind: nodeMeta, meta: matchAll}}, nil
	}
	root, err := compileClauses(raw, "filter")
	if err != nil {
		return nil, err
	}
	return &plan{root: root}, nil
}

// clauses is Qdrant's Filter; each clause is one condition or a list.
type clauses struct {
	Must      json.RawMessage `json:"must"`
	Should    json.RawMessage `json:"should"`
	MustNot   json.RawMessage `json:"must_not"`
	MinShould *struct {
		Conditions []json.RawMessage `json:"conditions"`
		MinCount   int               `json:"min_count"`
	} `json:"min_should"`
}

func compileClauses(raw json.RawMessage, at string) (*node, error) {
	var f clauses
	if err := strictUnmarshal(raw, &f); err != nil {
		return nil, badRequestf("%s: not a Qdrant filter {must, should, must_not, min_should}: %v", at, err)
	}
	and := &node{kind: nodeAnd}
	must, err := compileList(f.Must, at+".must")
	if err != nil {
		return nil, err
	}
	and.kids = append(and.kids, must...)
	should, err := compileList(f.Should, at+".should")
	if err != nil {
		return nil, err
	}
	if len(should) > 0 { // an empty should restricts nothing, as in Qdrant
		and.kids = append(and.kids, &node{kind: nodeOr, kids: should})
	}
	mustNot, err := compileList(f.MustNot, at+".must_not")
	if err != nil {
		return nil, err
	}
	for _, k := range mustNot {
		and.kids = append(and.kids, &node{kind: nodeNot, kids: []*node{k}})
	}
	if ms := f.MinShould; ms != nil {
		kids := make([]*node, len(ms.Conditions))
		for i, c := range ms.Conditions {
			if kids[i], err = compileCondition(c, fmt.Sprintf("%s.min_should.conditions[%d]", at, i)); err != nil {
				return nil, err
			}
		}
		switch {
		case ms.MinCount > len(kids):
			and.kids = append(and.kids, &node{kind: nodeMeta, meta: matchNothing})
		case ms.MinCount > 0:
			and.kids = append(and.kids, &node{kind: nodeAtLeast, kids: kids, min: ms.MinCount})
		}
	}
	return and, nil
}

func compileList(raw json.RawMessage, at string) ([]*node, error) {
	if !present(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if bytes.TrimSpace(raw)[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, badRequestf("%s: %v", at, err)
		}
	} else {
		list = []json.RawMessage{raw}
	}
	out := make([]*node, len(list))
	for i, c := range list {
		var err error
		if out[i], err = compileCondition(c, fmt.Sprintf("%s[%d]", at, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compileCondition compiles one condition; its kind is told by its keys.
func compileCondition(raw json.RawMessage, at string) (*node, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return nil, badRequestf("%s: a condition must be a JSON object", at)
	}
	switch {
	case keys["key"] != nil:
		return compileField(raw, at)
	case keys["has_id"] != nil:
		return compileHasID(keys["has_id"], at)
	case keys["is_empty"] != nil:
		key, err := onlyKey(keys["is_empty"], at+".is_empty")
		if err != nil {
			return nil, err
		}
		return isEmpty(key), nil
	case keys["is_null"] != nil:
		key, err := onlyKey(keys["is_null"], at+".is_null")
		if err != nil {
			return nil, err
		}
		return isNull(key), nil
	case keys["must"] != nil || keys["should"] != nil || keys["must_not"] != nil || keys["min_should"] != nil:
		return compileClauses(raw, at)
	}
	for name := range keys {
		return nil, unsupportedf("%s: the %q condition", at, name)
	}
	return &node{kind: nodeAnd}, nil // {}: an empty filter
}

func onlyKey(raw json.RawMessage, at string) (string, error) {
	var pf struct {
		Key string `json:"key"`
	}
	if err := strictUnmarshal(raw, &pf); err != nil {
		return "", badRequestf("%s: want {\"key\": ...}: %v", at, err)
	}
	return pf.Key, checkKey(pf.Key, at)
}

func checkKey(key, at string) error {
	if strings.Contains(key, "[") {
		return unsupportedf("%s: array projections in keys (%q)", at, key)
	}
	if err := meta.CheckPath(key); err != nil {
		return badRequestf("%s: key %q: %v", at, key, err)
	}
	return nil
}

func compileHasID(raw json.RawMessage, at string) (*node, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequestf("%s.has_id: a list of point ids: %v", at, err)
	}
	ids, err := parseIDs(list)
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return &node{kind: nodeIDs, ids: slices.Compact(ids)}, nil
}

type fieldCondition struct {
	Key            string          `json:"key"`
	Match          json.RawMessage `json:"match"`
	Range          json.RawMessage `json:"range"`
	ValuesCount    json.RawMessage `json:"values_count"`
	IsEmpty        *bool           `json:"is_empty"`
	IsNull         *bool           `json:"is_null"`
	GeoBoundingBox json.RawMessage `json:"geo_bounding_box"`
	GeoRadius      json.RawMessage `json:"geo_radius"`
	GeoPolygon     json.RawMessage `json:"geo_polygon"`
}

func compileField(raw json.RawMessage, at string) (*node, error) {
	var fc fieldCondition
	if err := strictUnmarshal(raw, &fc); err != nil {
		return nil, unsupportedf("%s: field condition: %v", at, err)
	}
	if err := checkKey(fc.Key, at); err != nil {
		return nil, err
	}
	for name, v := range map[string]json.RawMessage{"geo_bounding_box": fc.GeoBoundingBox, "geo_radius": fc.GeoRadius, "geo_polygon": fc.GeoPolygon} {
		if present(v) {
			return nil, unsupportedf("%s: the %s condition", at, name)
		}
	}
	var parts []*node
	if present(fc.Match) {
		n, err := compileMatch(fc.Key, fc.Match, at+".match")
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	if present(fc.Range) {
		n, err := compileRange(fc.Key, fc.Range, at+".range")
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	if present(fc.ValuesCount) {
		b, err := parseBounds(fc.ValuesCount, at+".values_count")
		if err != nil {
			return nil, err
		}
		key := fc.Key
		parts = append(parts, &node{kind: nodeCheck, meta: matchAll, check: func(doc any) bool {
			v, ok := valueAt(doc, key)
			n := 0
			switch {
			case !ok:
			case isList(v):
				n = len(v.([]any))
			default:
				n = 1
			}
			return b.holds(float64(n))
		}})
	}
	for _, flag := range []struct {
		set  *bool
		make func(string) *node
	}{{fc.IsEmpty, isEmpty}, {fc.IsNull, isNull}} {
		if flag.set == nil {
			continue
		}
		n := flag.make(fc.Key)
		if !*flag.set {
			n = &node{kind: nodeNot, kids: []*node{n}}
		}
		parts = append(parts, n)
	}
	if len(parts) == 0 {
		return nil, badRequestf("%s: a field condition needs match, range, values_count, is_empty or is_null", at)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return &node{kind: nodeAnd, kids: parts}, nil
}

func compileMatch(key string, raw json.RawMessage, at string) (*node, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return nil, badRequestf("%s: want one of {value}, {any}, {except}, {text}", at)
	}
	decodeScalars := func(raw json.RawMessage) ([]any, error) {
		var list []any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&list); err != nil {
			return nil, badRequestf("%s: a list of strings or integers: %v", at, err)
		}
		for _, v := range list {
			if !isScalar(v) {
				return nil, badRequestf("%s: %v is not a string, integer or bool", at, v)
			}
		}
		return list, nil
	}
	for name, v := range m {
		switch name {
		case "value":
			vals, err := decodeScalars(append(append([]byte{'['}, v...), ']'))
			if err != nil {
				return nil, err
			}
			return &node{kind: nodeMeta, meta: map[string]any{key: map[string]any{"$eq": vals[0]}}}, nil
		case "any":
			vals, err := decodeScalars(v)
			if err != nil {
				return nil, err
			}
			return &node{kind: nodeMeta, meta: map[string]any{key: map[string]any{"$in": vals}}}, nil
		case "except":
			vals, err := decodeScalars(v)
			if err != nil {
				return nil, err
			}
			excluded := map[string]bool{}
			for _, x := range vals {
				excluded[scalarKey(x)] = true
			}
			// Qdrant: at least one value outside the list; a missing
			// field (no value) does not match.
			return &node{kind: nodeCheck, meta: map[string]any{key: map[string]any{"$exists": true}}, check: func(doc any) bool {
				for _, x := range valuesAt(doc, key) {
					if isScalar(x) && !excluded[scalarKey(x)] {
						return true
					}
				}
				return false
			}}, nil
		case "text":
			var text string
			if err := json.Unmarshal(v, &text); err != nil {
				return nil, badRequestf("%s.text: a string: %v", at, err)
			}
			want := words(text)
			// Qdrant without a full-text index: every word of the query
			// (lower-cased, split at non-alphanumerics) among the words of a
			// string value.
			return &node{kind: nodeCheck, meta: map[string]any{key: map[string]any{"$exists": true}}, check: func(doc any) bool {
				for _, x := range valuesAt(doc, key) {
					s, ok := x.(string)
					if !ok {
						continue
					}
					have := words(s)
					all := true
					for _, w := range want {
						if !slices.Contains(have, w) {
							all = false
							break
						}
					}
					if all {
						return true
					}
				}
				return false
			}}, nil
		default:
			return nil, unsupportedf("%s: match %q", at, name)
		}
	}
	return nil, nil // unreachable: m has one key
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// bounds is a Qdrant Range or ValuesCount.
type bounds struct {
	gt, gte, lt, lte *float64
}

func parseBounds(raw json.RawMessage, at string) (bounds, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil {
		return bounds{}, badRequestf("%s: want {gt, gte, lt, lte}: %v", at, err)
	}
	var b bounds
	for name, v := range r {
		var dst **float64
		switch name {
		case "gt":
			dst = &b.gt
		case "gte":
			dst = &b.gte
		case "lt":
			dst = &b.lt
		case "lte":
			dst = &b.lte
		default:
			return bounds{}, badRequestf("%s: unknown bound %q", at, name)
		}
		if !present(v) {
			continue
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil {
			return bounds{}, unsupportedf("%s.%s = %s: only numeric ranges (datetime ranges are not supported)", at, name, truncate(string(v)))
		}
		*dst = &x
	}
	return b, nil
}

func (b bounds) holds(x float64) bool {
	return (b.gt == nil || x > *b.gt) && (b.gte == nil || x >= *b.gte) &&
		(b.lt == nil || x < *b.lt) && (b.lte == nil || x <= *b.lte)
}

func (b bounds) ops() map[string]any {
	ops := map[string]any{}
	for name, v := range map[string]*float64{"$gt": b.gt, "$gte": b.gte, "$lt": b.lt, "$lte": b.lte} {
		if v != nil {
			ops[name] = *v
		}
	}
	return ops
}

func compileRange(key string, raw json.RawMessage, at string) (*node, error) {
	b, err := parseBounds(raw, at)
	if err != nil {
		return nil, err
	}
	ops := b.ops()
	if len(ops) == 0 {
		// No bound: Qdrant matches any numeric value.
		ops = map[string]any{"$gte": -1e308}
	}
	filter := map[string]any{key: ops}
	if len(ops) == 1 {
		return &node{kind: nodeMeta, meta: filter}, nil
	}
	// Meta applies each bound to a list separately; Qdrant wants one
	// element within all of them. Meta's answer is a superset: check it.
	return &node{kind: nodeCheck, meta: filter, check: func(doc any) bool {
		for _, x := range valuesAt(doc, key) {
			if n, ok := x.(json.Number); ok {
				if f, err := n.Float64(); err == nil && b.holds(f) {
					return true
				}
			}
		}
		return false
	}}, nil
}

// isEmpty: the field is missing, null, or a list of nulls only ([] too).
func isEmpty(key string) *node {
	superset := map[string]any{"$or": []any{map[string]any{key: nil}, map[string]any{key: map[string]any{"$eq": []any{}}}}}
	return &node{kind: nodeCheck, meta: superset, check: func(doc any) bool {
		v, ok := valueAt(doc, key)
		if !ok || v == nil {
			return true
		}
		if list, isList := v.([]any); isList {
			for _, x := range list {
				if x != nil {
					return false
				}
			}
			return true
		}
		return false
	}}
}

// isNull: the field is present and null (a list holding null is not).
func isNull(key string) *node {
	return &node{kind: nodeCheck, meta: map[string]any{key: map[string]any{"$exists": true, "$eq": nil}},
		check: func(doc any) bool {
			v, ok := valueAt(doc, key)
			return ok && v == nil
		}}
}

func isList(v any) bool { _, ok := v.([]any); return ok }

func isScalar(v any) bool {
	switch v.(type) {
	case string, json.Number, bool:
		return true
	}
	return false
}

// scalarKey makes equal JSON scalars equal map keys (1 and 1.0 alike).
func scalarKey(v any) string {
	switch x := v.(type) {
	case string:
		return "s" + x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return fmt.Sprintf("n%g", f)
		}
		return "n" + x.String()
	case bool:
		return fmt.Sprintf("b%t", x)
	}
	return ""
}

// valueAt follows a dotted path through objects (a list on the way ends
// it, as in meta).
func valueAt(doc any, path string) (any, bool) {
	v := doc
	for _, part := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// valuesAt is the field's values: a list's elements, or the one value.
func valuesAt(doc any, path string) []any {
	v, ok := valueAt(doc, path)
	if !ok {
		return nil
	}
	if list, isList := v.([]any); isList {
		return list
	}
	return []any{v}
}

// pureMeta reports whether n is meta filters only, so one meta filter.
func pureMeta(n *node) bool {
	switch n.kind {
	case nodeMeta:
		return true
	case nodeCheck, nodeIDs:
		return false
	case nodeAtLeast:
		if combinations(len(n.kids), n.min) > maxCombinations {
			return false
		}
	}
	for _, k := range n.kids {
		if !pureMeta(k) {
			return false
		}
	}
	return true
}

func combinations(n, k int) int {
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1)
		if c > maxCombinations {
			return c
		}
	}
	return c
}

// metaFilter writes a pure-meta tree as one meta filter.
func metaFilter(n *node) any {
	switch n.kind {
	case nodeMeta:
		return n.meta
	case nodeAnd:
		if len(n.kids) == 0 {
			return matchAll
		}
		if len(n.kids) == 1 {
			return metaFilter(n.kids[0])
		}
		return map[string]any{"$and": metaFilters(n.kids)}
	case nodeOr:
		return map[string]any{"$or": metaFilters(n.kids)}
	case nodeNot:
		return map[string]any{"$nor": metaFilters(n.kids)}
	case nodeAtLeast:
		var alternatives []any
		var choose func(start int, picked []*node)
		choose = func(start int, picked []*node) {
			if len(picked) == n.min {
				alternatives = append(alternatives, map[string]any{"$and": metaFilters(picked)})
				return
			}
			for i := start; i < len(n.kids); i++ {
				choose(i+1, append(picked[:len(picked):len(picked)], n.kids[i]))
			}
		}
		choose(0, nil)
		return map[string]any{"$or": alternatives}
	}
	panic("qdrant: metaFilter of a node that is not pure meta")
}

func metaFilters(kids []*node) []any {
	out := make([]any, len(kids))
	for i, k := range kids {
		out[i] = metaFilter(k)
	}
	return out
}

func parseMeta(v any) (*meta.Filter, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	f, err := meta.ParseFilter(data)
	if err != nil {
		return nil, badRequestf("filter: %v", err)
	}
	return f, nil
}

// forQuery returns the plan as Query's arguments: a meta filter, or an
// id list (ascending) when the tree is not pure meta.
func (p *plan) forQuery(c *collection.Collection) (*meta.Filter, []uint64, error) {
	if pureMeta(p.root) {
		f, err := parseMeta(metaFilter(p.root))
		return f, nil, err
	}
	ids, err := evalSet(c, p.root, nil)
	if ids == nil {
		ids = []uint64{}
	}
	return nil, ids, err
}

// ids returns the matching ids, ascending.
func (p *plan) ids(c *collection.Collection) ([]uint64, error) {
	return evalSet(c, p.root, nil)
}

// evalSet evaluates n into the ascending list of matching ids; all is the
// collection's ids, computed once when a negation needs it.
func evalSet(c *collection.Collection, n *node, all *[]uint64) ([]uint64, error) {
	if all == nil {
		all = new([]uint64)
	}
	universe := func() []uint64 {
		if *all == nil {
			*all = c.ScanIDs(nil, 0, false, 0)
		}
		return *all
	}
	if pureMeta(n) {
		f, err := parseMeta(metaFilter(n))
		if err != nil {
			return nil, err
		}
		return c.ScanIDs(f, 0, false, 0), nil
	}
	switch n.kind {
	case nodeIDs:
		return intersect(n.ids, universe()), nil
	case nodeCheck:
		f, err := parseMeta(n.meta)
		if err != nil {
			return nil, err
		}
		candidates := c.ScanIDs(f, 0, false, 0)
		ids := make([]int64, len(candidates))
		for i, id := range candidates {
			ids[i] = int64(id)
		}
		var out []uint64
		for i, raw := range c.Documents(ids) {
			if raw == nil {
				continue // deleted meanwhile
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil {
				return nil, fmt.Errorf("qdrant: stored document of id %d: %w", candidates[i], err)
			}
			if n.check(doc) {
				out = append(out, candidates[i])
			}
		}
		return out, nil
	case nodeNot:
		kid, err := evalSet(c, n.kids[0], all)
		if err != nil {
			return nil, err
		}
		return subtract(universe(), kid), nil
	}
	sets := make([][]uint64, len(n.kids))
	for i, k := range n.kids {
		var err error
		if sets[i], err = evalSet(c, k, all); err != nil {
			return nil, err
		}
	}
	counts := map[uint64]int{}
	for _, s := range sets {
		for _, id := range s {
			counts[id]++
		}
	}
	need := map[nodeKind]int{nodeAnd: len(sets), nodeOr: 1, nodeAtLeast: n.min}[n.kind]
	if n.kind == nodeAnd && len(sets) == 0 {
		return universe(), nil
	}
	var out []uint64
	for id, k := range counts {
		if k >= need {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// intersect and subtract take ascending lists.
func intersect(a, b []uint64) []uint64 {
	var out []uint64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

func subtract(a, b []uint64) []uint64 {
	var out []uint64
	j := 0
	for _, id := range a {
		for j < len(b) && b[j] < id {
			j++
		}
		if j < len(b) && b[j] == id {
			continue
		}
		out = append(out, id)
	}
	return out
}
