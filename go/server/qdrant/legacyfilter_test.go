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

// legacy*: the Qdrant filter translation as it was before it compiled
// straight into meta's tree (JSON round trip, own walker), kept only as
// the other side of TestFilterTranslationAgreesWithLegacy. Five answers
// that differed from qdrant-client's local mode are corrected here as in
// the translation (lines marked "corrected"), so that the test checks the
// translation rather than the corrections, which tree_test.go and
// tests/test_qdrant.py pin: values_count counts null as 0, except matches
// objects, text without words matches nothing, [null] is not empty, and a
// list holding null is null.
//
// A Qdrant filter compiles to a tree of nodes. Most conditions have the
// same meaning as a strata (meta) filter and become one; has_id names ids,
// which documents do not hold; a few conditions differ from meta on lists
// (a two-sided range must hold for one element, except needs one element
// outside the list) or have no meta form (values_count, text): those are
// checked on each candidate document that a meta superset selects. A tree
// of meta nodes only is one meta filter; any other tree is evaluated into
// an ascending id list (see legacyEvalSet).
type legacyNode struct {
	kind  legacyNodeKind
	meta  any                // legacyNodeMeta: the filter; legacyNodeCheck: a superset of the matches
	check func(doc any) bool // legacyNodeCheck
	ids   []uint64           // legacyNodeIDs, ascending and unique
	kids  []*legacyNode      // legacyNodeAnd, legacyNodeOr, legacyNodeNot (one), legacyNodeAtLeast
	min   int                // legacyNodeAtLeast: how many kids must hold
}

type legacyNodeKind uint8

const (
	legacyNodeMeta legacyNodeKind = iota
	legacyNodeCheck
	legacyNodeIDs
	legacyNodeAnd
	legacyNodeOr
	legacyNodeNot
	legacyNodeAtLeast
)

// legacyMaxCombinations legacyBounds the meta expansion of min_should (a $or of $and
// over every choice of min_count conditions); larger ones are evaluated
// as sets.
const legacyMaxCombinations = 256

var (
	legacyMatchAll     = map[string]any{}
	legacyMatchNothing = map[string]any{"$nor": []any{map[string]any{}}}
)

// legacyPlan is a compiled filter.
type legacyPlan struct{ root *legacyNode }

// legacyCompileFilter compiles a Qdrant filter (absent or null: everything).
func legacyCompileFilter(raw json.RawMessage) (*legacyPlan, error) {
	if !present(raw) {
		return &legacyPlan{root: &legacyNode{kind: legacyNodeMeta, meta: legacyMatchAll}}, nil
	}
	root, err := legacyCompileClauses(raw, "filter")
	if err != nil {
		return nil, err
	}
	return &legacyPlan{root: root}, nil
}

// legacyClauses is Qdrant's Filter; each clause is one condition or a list.
type legacyClauses struct {
	Must      json.RawMessage `json:"must"`
	Should    json.RawMessage `json:"should"`
	MustNot   json.RawMessage `json:"must_not"`
	MinShould *struct {
		Conditions []json.RawMessage `json:"conditions"`
		MinCount   int               `json:"min_count"`
	} `json:"min_should"`
}

func legacyCompileClauses(raw json.RawMessage, at string) (*legacyNode, error) {
	var f legacyClauses
	if err := strictUnmarshal(raw, &f); err != nil {
		return nil, badRequestf("%s: not a Qdrant filter {must, should, must_not, min_should}: %v", at, err)
	}
	and := &legacyNode{kind: legacyNodeAnd}
	must, err := legacyCompileList(f.Must, at+".must")
	if err != nil {
		return nil, err
	}
	and.kids = append(and.kids, must...)
	should, err := legacyCompileList(f.Should, at+".should")
	if err != nil {
		return nil, err
	}
	if len(should) > 0 { // an empty should restricts nothing, as in Qdrant
		and.kids = append(and.kids, &legacyNode{kind: legacyNodeOr, kids: should})
	}
	mustNot, err := legacyCompileList(f.MustNot, at+".must_not")
	if err != nil {
		return nil, err
	}
	for _, k := range mustNot {
		and.kids = append(and.kids, &legacyNode{kind: legacyNodeNot, kids: []*legacyNode{k}})
	}
	if ms := f.MinShould; ms != nil {
		kids := make([]*legacyNode, len(ms.Conditions))
		for i, c := range ms.Conditions {
			if kids[i], err = legacyCompileCondition(c, fmt.Sprintf("%s.min_should.conditions[%d]", at, i)); err != nil {
				return nil, err
			}
		}
		switch {
		case ms.MinCount > len(kids):
			and.kids = append(and.kids, &legacyNode{kind: legacyNodeMeta, meta: legacyMatchNothing})
		case ms.MinCount > 0:
			and.kids = append(and.kids, &legacyNode{kind: legacyNodeAtLeast, kids: kids, min: ms.MinCount})
		}
	}
	return and, nil
}

func legacyCompileList(raw json.RawMessage, at string) ([]*legacyNode, error) {
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
	out := make([]*legacyNode, len(list))
	for i, c := range list {
		var err error
		if out[i], err = legacyCompileCondition(c, fmt.Sprintf("%s[%d]", at, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// legacyCompileCondition compiles one condition; its kind is told by its keys.
func legacyCompileCondition(raw json.RawMessage, at string) (*legacyNode, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return nil, badRequestf("%s: a condition must be a JSON object", at)
	}
	switch {
	case keys["key"] != nil:
		return legacyCompileField(raw, at)
	case keys["has_id"] != nil:
		return legacyCompileHasID(keys["has_id"], at)
	case keys["is_empty"] != nil:
		key, err := legacyOnlyKey(keys["is_empty"], at+".is_empty")
		if err != nil {
			return nil, err
		}
		return legacyIsEmpty(key), nil
	case keys["is_null"] != nil:
		key, err := legacyOnlyKey(keys["is_null"], at+".is_null")
		if err != nil {
			return nil, err
		}
		return legacyIsNull(key), nil
	case keys["must"] != nil || keys["should"] != nil || keys["must_not"] != nil || keys["min_should"] != nil:
		return legacyCompileClauses(raw, at)
	}
	for name := range keys {
		return nil, unsupportedf("%s: the %q condition", at, name)
	}
	return &legacyNode{kind: legacyNodeAnd}, nil // {}: an empty filter
}

func legacyOnlyKey(raw json.RawMessage, at string) (string, error) {
	var pf struct {
		Key string `json:"key"`
	}
	if err := strictUnmarshal(raw, &pf); err != nil {
		return "", badRequestf("%s: want {\"key\": ...}: %v", at, err)
	}
	return pf.Key, legacyCheckKey(pf.Key, at)
}

func legacyCheckKey(key, at string) error {
	if strings.Contains(key, "[") {
		return unsupportedf("%s: array projections in keys (%q)", at, key)
	}
	if err := meta.CheckPath(key); err != nil {
		return badRequestf("%s: key %q: %v", at, key, err)
	}
	return nil
}

func legacyCompileHasID(raw json.RawMessage, at string) (*legacyNode, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequestf("%s.has_id: a list of point ids: %v", at, err)
	}
	ids, err := parseIDs(list)
	if err != nil {
		return nil, err
	}
	ints := make([]uint64, len(ids))
	for i, id := range ids {
		ints[i] = id.Int() // the legacy translation knew integer ids only
	}
	slices.Sort(ints)
	return &legacyNode{kind: legacyNodeIDs, ids: slices.Compact(ints)}, nil
}

type legacyFieldCondition struct {
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

func legacyCompileField(raw json.RawMessage, at string) (*legacyNode, error) {
	var fc legacyFieldCondition
	if err := strictUnmarshal(raw, &fc); err != nil {
		return nil, unsupportedf("%s: field condition: %v", at, err)
	}
	if err := legacyCheckKey(fc.Key, at); err != nil {
		return nil, err
	}
	for name, v := range map[string]json.RawMessage{"geo_bounding_box": fc.GeoBoundingBox, "geo_radius": fc.GeoRadius, "geo_polygon": fc.GeoPolygon} {
		if present(v) {
			return nil, unsupportedf("%s: the %s condition", at, name)
		}
	}
	var parts []*legacyNode
	if present(fc.Match) {
		n, err := legacyCompileMatch(fc.Key, fc.Match, at+".match")
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	if present(fc.Range) {
		n, err := legacyCompileRange(fc.Key, fc.Range, at+".range")
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	if present(fc.ValuesCount) {
		b, err := legacyParseBounds(fc.ValuesCount, at+".values_count")
		if err != nil {
			return nil, err
		}
		key := fc.Key
		parts = append(parts, &legacyNode{kind: legacyNodeCheck, meta: legacyMatchAll, check: func(doc any) bool {
			v, ok := legacyValueAt(doc, key)
			n := 0
			switch {
			case !ok, v == nil: // corrected: null counts 0
			case legacyIsList(v):
				n = len(v.([]any))
			default:
				n = 1
			}
			return b.holds(float64(n))
		}})
	}
	for _, flag := range []struct {
		set  *bool
		make func(string) *legacyNode
	}{{fc.IsEmpty, legacyIsEmpty}, {fc.IsNull, legacyIsNull}} {
		if flag.set == nil {
			continue
		}
		n := flag.make(fc.Key)
		if !*flag.set {
			n = &legacyNode{kind: legacyNodeNot, kids: []*legacyNode{n}}
		}
		parts = append(parts, n)
	}
	if len(parts) == 0 {
		return nil, badRequestf("%s: a field condition needs match, range, values_count, is_empty or is_null", at)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return &legacyNode{kind: legacyNodeAnd, kids: parts}, nil
}

func legacyCompileMatch(key string, raw json.RawMessage, at string) (*legacyNode, error) {
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
			if !legacyIsScalar(v) {
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
			return &legacyNode{kind: legacyNodeMeta, meta: map[string]any{key: map[string]any{"$eq": vals[0]}}}, nil
		case "any":
			vals, err := decodeScalars(v)
			if err != nil {
				return nil, err
			}
			return &legacyNode{kind: legacyNodeMeta, meta: map[string]any{key: map[string]any{"$in": vals}}}, nil
		case "except":
			vals, err := decodeScalars(v)
			if err != nil {
				return nil, err
			}
			excluded := map[string]bool{}
			for _, x := range vals {
				excluded[legacyScalarKey(x)] = true
			}
			// Qdrant: at least one value outside the list; a missing
			// field (no value) does not match.
			return &legacyNode{kind: legacyNodeCheck, meta: map[string]any{key: map[string]any{"$exists": true}}, check: func(doc any) bool {
				for _, x := range legacyValuesAt(doc, key) {
					if _, isObject := x.(map[string]any); isObject || (legacyIsScalar(x) && !excluded[legacyScalarKey(x)]) { // corrected: objects match
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
			want := legacyWords(text)
			// Qdrant without a full-text index: every word of the query
			// (lower-cased, split at non-alphanumerics) among the legacyWords of a
			// string value.
			return &legacyNode{kind: legacyNodeCheck, meta: map[string]any{key: map[string]any{"$exists": true}}, check: func(doc any) bool {
				for _, x := range legacyValuesAt(doc, key) {
					s, ok := x.(string)
					if !ok {
						continue
					}
					have := legacyWords(s)
					all := len(want) > 0 // corrected: no word, no match
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

func legacyWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// legacyBounds is a Qdrant Range or ValuesCount.
type legacyBounds struct {
	gt, gte, lt, lte *float64
}

func legacyParseBounds(raw json.RawMessage, at string) (legacyBounds, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil {
		return legacyBounds{}, badRequestf("%s: want {gt, gte, lt, lte}: %v", at, err)
	}
	var b legacyBounds
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
			return legacyBounds{}, badRequestf("%s: unknown bound %q", at, name)
		}
		if !present(v) {
			continue
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil {
			return legacyBounds{}, unsupportedf("%s.%s = %s: only numeric ranges (datetime ranges are not supported)", at, name, truncate(string(v)))
		}
		*dst = &x
	}
	return b, nil
}

func (b legacyBounds) holds(x float64) bool {
	return (b.gt == nil || x > *b.gt) && (b.gte == nil || x >= *b.gte) &&
		(b.lt == nil || x < *b.lt) && (b.lte == nil || x <= *b.lte)
}

func (b legacyBounds) ops() map[string]any {
	ops := map[string]any{}
	for name, v := range map[string]*float64{"$gt": b.gt, "$gte": b.gte, "$lt": b.lt, "$lte": b.lte} {
		if v != nil {
			ops[name] = *v
		}
	}
	return ops
}

func legacyCompileRange(key string, raw json.RawMessage, at string) (*legacyNode, error) {
	b, err := legacyParseBounds(raw, at)
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
		return &legacyNode{kind: legacyNodeMeta, meta: filter}, nil
	}
	// Meta applies each bound to a list separately; Qdrant wants one
	// element within all of them. Meta's answer is a superset: check it.
	return &legacyNode{kind: legacyNodeCheck, meta: filter, check: func(doc any) bool {
		for _, x := range legacyValuesAt(doc, key) {
			if n, ok := x.(json.Number); ok {
				if f, err := n.Float64(); err == nil && b.holds(f) {
					return true
				}
			}
		}
		return false
	}}, nil
}

// legacyIsEmpty: the field is missing, null, or [].
func legacyIsEmpty(key string) *legacyNode {
	superset := map[string]any{"$or": []any{map[string]any{key: nil}, map[string]any{key: map[string]any{"$eq": []any{}}}}}
	return &legacyNode{kind: legacyNodeCheck, meta: superset, check: func(doc any) bool {
		v, ok := legacyValueAt(doc, key)
		if !ok || v == nil {
			return true
		}
		list, isList := v.([]any)
		return isList && len(list) == 0 // corrected: [null] is not empty
	}}
}

// legacyIsNull: the field is null or a list holding null.
func legacyIsNull(key string) *legacyNode {
	return &legacyNode{kind: legacyNodeCheck, meta: map[string]any{key: map[string]any{"$exists": true, "$eq": nil}},
		check: func(doc any) bool {
			v, ok := legacyValueAt(doc, key)
			return ok && (v == nil || slices.Contains(legacyValuesAt(doc, key), nil)) // corrected: a list holding null
		}}
}

func legacyIsList(v any) bool { _, ok := v.([]any); return ok }

func legacyIsScalar(v any) bool {
	switch v.(type) {
	case string, json.Number, bool:
		return true
	}
	return false
}

// legacyScalarKey makes equal JSON scalars equal map keys (1 and 1.0 alike).
func legacyScalarKey(v any) string {
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

// legacyValueAt follows a dotted path through objects (a list on the way ends
// it, as in meta).
func legacyValueAt(doc any, path string) (any, bool) {
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

// legacyValuesAt is the field's values: a list's elements, or the one value.
func legacyValuesAt(doc any, path string) []any {
	v, ok := legacyValueAt(doc, path)
	if !ok {
		return nil
	}
	if list, legacyIsList := v.([]any); legacyIsList {
		return list
	}
	return []any{v}
}

// legacyPureMeta reports whether n is meta filters only, so one meta filter.
func legacyPureMeta(n *legacyNode) bool {
	switch n.kind {
	case legacyNodeMeta:
		return true
	case legacyNodeCheck, legacyNodeIDs:
		return false
	case legacyNodeAtLeast:
		if legacyCombinations(len(n.kids), n.min) > legacyMaxCombinations {
			return false
		}
	}
	for _, k := range n.kids {
		if !legacyPureMeta(k) {
			return false
		}
	}
	return true
}

func legacyCombinations(n, k int) int {
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1)
		if c > legacyMaxCombinations {
			return c
		}
	}
	return c
}

// legacyMetaFilter writes a pure-meta tree as one meta filter.
func legacyMetaFilter(n *legacyNode) any {
	switch n.kind {
	case legacyNodeMeta:
		return n.meta
	case legacyNodeAnd:
		if len(n.kids) == 0 {
			return legacyMatchAll
		}
		if len(n.kids) == 1 {
			return legacyMetaFilter(n.kids[0])
		}
		return map[string]any{"$and": legacyMetaFilters(n.kids)}
	case legacyNodeOr:
		return map[string]any{"$or": legacyMetaFilters(n.kids)}
	case legacyNodeNot:
		return map[string]any{"$nor": legacyMetaFilters(n.kids)}
	case legacyNodeAtLeast:
		var alternatives []any
		var choose func(start int, picked []*legacyNode)
		choose = func(start int, picked []*legacyNode) {
			if len(picked) == n.min {
				alternatives = append(alternatives, map[string]any{"$and": legacyMetaFilters(picked)})
				return
			}
			for i := start; i < len(n.kids); i++ {
				choose(i+1, append(picked[:len(picked):len(picked)], n.kids[i]))
			}
		}
		choose(0, nil)
		return map[string]any{"$or": alternatives}
	}
	panic("qdrant: legacyMetaFilter of a legacyNode that is not pure meta")
}

func legacyMetaFilters(kids []*legacyNode) []any {
	out := make([]any, len(kids))
	for i, k := range kids {
		out[i] = legacyMetaFilter(k)
	}
	return out
}

func legacyParseMeta(v any) (*meta.Filter, error) {
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

// ids returns the matching ids, ascending.
func (p *legacyPlan) ids(c *collection.Collection) ([]uint64, error) {
	return legacyEvalSet(c, p.root, nil)
}

// legacyEvalSet evaluates n into the ascending list of matching ids; all is the
// collection's ids, computed once when a negation needs it.
func legacyEvalSet(c *collection.Collection, n *legacyNode, all *[]uint64) ([]uint64, error) {
	if all == nil {
		all = new([]uint64)
	}
	universe := func() []uint64 {
		if *all == nil {
			*all = scanIDs(c, nil, 0, false, 0)
		}
		return *all
	}
	if legacyPureMeta(n) {
		f, err := legacyParseMeta(legacyMetaFilter(n))
		if err != nil {
			return nil, err
		}
		return scanIDs(c, f, 0, false, 0), nil
	}
	switch n.kind {
	case legacyNodeIDs:
		return legacyIntersect(n.ids, universe()), nil
	case legacyNodeCheck:
		f, err := legacyParseMeta(n.meta)
		if err != nil {
			return nil, err
		}
		candidates := scanIDs(c, f, 0, false, 0)
		ids := make([]int64, len(candidates))
		for i, id := range candidates {
			ids[i] = int64(id)
		}
		var out []uint64
		for i, raw := range documents(c, ids) {
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
	case legacyNodeNot:
		kid, err := legacyEvalSet(c, n.kids[0], all)
		if err != nil {
			return nil, err
		}
		return legacySubtract(universe(), kid), nil
	}
	sets := make([][]uint64, len(n.kids))
	for i, k := range n.kids {
		var err error
		if sets[i], err = legacyEvalSet(c, k, all); err != nil {
			return nil, err
		}
	}
	counts := map[uint64]int{}
	for _, s := range sets {
		for _, id := range s {
			counts[id]++
		}
	}
	need := map[legacyNodeKind]int{legacyNodeAnd: len(sets), legacyNodeOr: 1, legacyNodeAtLeast: n.min}[n.kind]
	if n.kind == legacyNodeAnd && len(sets) == 0 {
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

// legacyIntersect and legacySubtract take ascending lists.
func legacyIntersect(a, b []uint64) []uint64 {
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

func legacySubtract(a, b []uint64) []uint64 {
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
