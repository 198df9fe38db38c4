package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/strata-db/strata/go/collection/meta"
)

// Qdrant's score boosting: {"formula": Expression, "defaults": {...}} as
// a query over prefetches. The expression is parsed once into a tree
// (parseFormula, this file) and evaluated for each prefetched candidate
// (formulaeval.go), with the meaning qdrant-client's local mode gives it
// (hybrid/formula.py), which is Qdrant's:
//
//	number                  a constant
//	"$score", "$score[i]"   the point's score in prefetch i (0 when absent, or defaults["$score[i]"])
//	"key"                   the number at a payload key (a one-element list counts as its element;
//	                        missing or [] takes defaults[key]; anything else is an error)
//	a condition             1 if the point matches it, else 0 (any Qdrant condition or filter)
//	{"sum": [...]}          Σ;  {"mult": [...]}: Π, stopping at the first 0
//	{"max": [...]}, {"min": [...]}            of at least one operand
//	{"neg"}, {"abs"}, {"sqrt"}, {"exp"}, {"ln"}, {"log10"}, {"acosh"}
//	{"div": {left, right, by_zero_default}}   left 0 gives 0 (right unread); right 0 gives the default or an error
//	{"pow": {base, exponent}}                 base ≥ 0, or a non-zero base with an integer exponent
//	{"geo_distance": {origin, to}}            metres from origin to the {lon, lat} at key to
//	{"datetime": s}, {"datetime_key": key}    seconds since the epoch
//	{"lin_decay" | "exp_decay" | "gauss_decay": {x, target, scale, midpoint}}
//	    lin: max(0, 1 − (1 − midpoint)·|x − target|/scale)
//	    exp: exp(ln(midpoint)·|x − target|/scale)
//	    gauss: exp(ln(midpoint)·(x − target)²/scale²)     target 0, scale 1, midpoint 0.5 by default
//	    (midpoint in (0, 1), for lin_decay in [0, 1]; scale > 0)
//
// defaults maps payload keys to values, and "$score" / "$score[i]" (one
// key: "$score" is "$score[0]") to a prefetch's score for points it
// did not return. max, min and acosh are REST only: Qdrant's gRPC
// Expression has no such variant.
//
// Arithmetic is float64 as in Python; a result that is not finite (or not
// finite as a float32, the score's type) fails the query with a 400 that
// names the expression, as local mode raises.

// maxFormulaDepth bounds an expression's nesting, so that a request
// cannot recurse the evaluator without end.
const maxFormulaDepth = 64

type exprKind uint8

const (
	exprConst exprKind = iota
	exprScore
	exprVariable
	exprCondition
	exprSum
	exprMult
	exprMax
	exprMin
	exprAcosh
	exprNeg
	exprAbs
	exprSqrt
	exprExp
	exprLn
	exprLog10
	exprDiv
	exprPow
	exprGeoDistance
	exprDatetimeKey
	exprLinDecay
	exprExpDecay
	exprGaussDecay
)

// expr is one node of a formula.
type expr struct {
	kind     exprKind
	constant float64   // exprConst; a datetime constant is one
	name     string    // exprVariable, exprDatetimeKey, exprGeoDistance: the key as written; exprScore: the variable
	path     meta.Path // the key as a meta path
	score    int       // exprScore: the prefetch
	cond     int       // exprCondition: index in formula.conds
	kids     []*expr   // operands: sum, mult; div and pow (2); decays: x and, if given, target
	byZero   *float64  // exprDiv
	origin   meta.GeoPoint
	midpoint float64 // decays
	scale    float64 // decays
}

// formula is a parsed formula query.
type formula struct {
	root     *expr
	conds    []*meta.Filter
	defaults map[string]json.RawMessage
	payload  bool // some node reads the payload
}

// formulaOf reads a query's formula, {"formula": ..., "defaults": ...};
// isFormula is false for any other query.
func formulaOf(raw json.RawMessage) (f *formula, isFormula bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, nil
	}
	q, err := objectFields(raw)
	if err != nil {
		return nil, false, nil
	}
	body, ok := q["formula"]
	if !ok {
		return nil, false, nil
	}
	for k := range q {
		if k != "formula" && k != "defaults" {
			return nil, true, badRequestf("query: a formula query is {\"formula\", \"defaults\"}, got the key %q", k)
		}
	}
	f = &formula{defaults: map[string]json.RawMessage{}}
	if d := q["defaults"]; present(d) {
		var given map[string]json.RawMessage
		if err := json.Unmarshal(d, &given); err != nil {
			return nil, true, badRequestf("query.defaults: an object of keys to values: %v", err)
		}
		for k, v := range given {
			// Keys read as variables: "$score" and "$score[0]" are one.
			e, err := f.variable(k, "query.defaults")
			if err != nil {
				return nil, true, err
			}
			if e.kind == exprScore {
				k = scoreDefault(e.score)
			}
			f.defaults[k] = v
		}
		f.payload = false // the keys' paths are not reads
	}
	if f.root, err = f.parse(body, "query.formula", 0); err != nil {
		return nil, true, err
	}
	return f, true, nil
}

// parse reads one expression at the JSON location at.
func (f *formula) parse(raw json.RawMessage, at string, depth int) (*expr, error) {
	if depth > maxFormulaDepth {
		return nil, badRequestf("%s: a formula nested deeper than %d levels", at, maxFormulaDepth)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, badRequestf("%s: an expression is missing", at)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequestf("%s: %v", at, err)
		}
		return f.variable(s, at)
	case '{':
	default:
		var x float64
		if err := json.Unmarshal(raw, &x); err != nil {
			return nil, badRequestf("%s: an expression is a number, a variable, a condition or an object, got %s", at, truncate(string(raw)))
		}
		return &expr{kind: exprConst, constant: x}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, badRequestf("%s: %v", at, err)
	}
	if len(obj) != 1 || isCondition(obj) {
		cond, err := compileCondition(raw, at)
		if err != nil {
			return nil, err
		}
		f.conds = append(f.conds, cond)
		return &expr{kind: exprCondition, cond: len(f.conds) - 1}, nil
	}
	for name, body := range obj {
		at := at + "." + name
		switch name {
		case "sum", "mult", "max", "min":
			var list []json.RawMessage
			if err := json.Unmarshal(body, &list); err != nil {
				return nil, badRequestf("%s: a list of expressions: %v", at, err)
			}
			e := &expr{kind: map[string]exprKind{"sum": exprSum, "mult": exprMult, "max": exprMax, "min": exprMin}[name]}
			if len(list) == 0 && (e.kind == exprMax || e.kind == exprMin) {
				return nil, badRequestf("%s: `%s` needs at least one operand", at, name)
			}
			for i, item := range list {
				kid, err := f.parse(item, fmt.Sprintf("%s[%d]", at, i), depth+1)
				if err != nil {
					return nil, err
				}
				e.kids = append(e.kids, kid)
			}
			return e, nil
		case "neg", "abs", "sqrt", "exp", "ln", "log10", "acosh":
			kid, err := f.parse(body, at, depth+1)
			if err != nil {
				return nil, err
			}
			kinds := map[string]exprKind{"neg": exprNeg, "abs": exprAbs, "sqrt": exprSqrt, "exp": exprExp, "ln": exprLn,
				"log10": exprLog10, "acosh": exprAcosh}
			return &expr{kind: kinds[name], kids: []*expr{kid}}, nil
		case "div":
			var d struct {
				Left          json.RawMessage `json:"left"`
				Right         json.RawMessage `json:"right"`
				ByZeroDefault *float64        `json:"by_zero_default"`
			}
			if err := strictUnmarshal(body, &d); err != nil {
				return nil, badRequestf("%s: {left, right, by_zero_default}: %v", at, err)
			}
			return f.pair(exprDiv, d.Left, d.Right, at+".left", at+".right", depth, d.ByZeroDefault)
		case "pow":
			var p struct {
				Base     json.RawMessage `json:"base"`
				Exponent json.RawMessage `json:"exponent"`
			}
			if err := strictUnmarshal(body, &p); err != nil {
				return nil, badRequestf("%s: {base, exponent}: %v", at, err)
			}
			return f.pair(exprPow, p.Base, p.Exponent, at+".base", at+".exponent", depth, nil)
		case "geo_distance":
			var g struct {
				Origin *geoPoint `json:"origin"`
				To     string    `json:"to"`
			}
			if err := strictUnmarshal(body, &g); err != nil || g.Origin == nil {
				return nil, badRequestf("%s: {origin: {lon, lat}, to: key}", at)
			}
			origin, err := g.Origin.point(at + ".origin")
			if err != nil {
				return nil, err
			}
			e, err := f.keyed(exprGeoDistance, g.To, at+".to")
			if err != nil {
				return nil, err
			}
			e.origin = origin
			return e, nil
		case "datetime":
			var s string
			if err := json.Unmarshal(body, &s); err != nil {
				return nil, badRequestf("%s: a datetime string: %v", at, err)
			}
			t, ok := meta.ParseDatetime(s)
			if !ok {
				return nil, badRequestf("%s: %q is not a datetime Qdrant reads", at, truncate(s))
			}
			return &expr{kind: exprConst, constant: float64(meta.DatetimeMicros(t)) / 1e6}, nil
		case "datetime_key":
			var key string
			if err := json.Unmarshal(body, &key); err != nil {
				return nil, badRequestf("%s: a payload key: %v", at, err)
			}
			return f.keyed(exprDatetimeKey, key, at)
		case "lin_decay", "exp_decay", "gauss_decay":
			return f.decay(name, body, at, depth)
		}
		return nil, badRequestf("%s: unknown expression %q", at, name)
	}
	panic("unreachable")
}

// isCondition tells a one-key object that is a condition from an
// expression by its key.
func isCondition(obj map[string]json.RawMessage) bool {
	for _, k := range []string{"key", "has_id", "has_vector", "is_empty", "is_null", "nested", "must", "should", "must_not", "min_should"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

func (f *formula) pair(kind exprKind, a, b json.RawMessage, atA, atB string, depth int, byZero *float64) (*expr, error) {
	left, err := f.parse(a, atA, depth+1)
	if err != nil {
		return nil, err
	}
	right, err := f.parse(b, atB, depth+1)
	if err != nil {
		return nil, err
	}
	return &expr{kind: kind, kids: []*expr{left, right}, byZero: byZero}, nil
}

// variable reads a string expression: a score variable or a payload key.
func (f *formula) variable(s, at string) (*expr, error) {
	rest, isScore := strings.CutPrefix(s, "$score")
	if !isScore {
		return f.keyed(exprVariable, s, at)
	}
	e := &expr{kind: exprScore, name: s}
	if rest == "" {
		return e, nil
	}
	inner, ok := strings.CutPrefix(rest, "[")
	if ok {
		inner, ok = strings.CutSuffix(inner, "]")
	}
	i, err := strconv.Atoi(inner)
	if !ok || err != nil || inner == "" || strings.Trim(inner, "0123456789") != "" {
		return nil, badRequestf("%s: invalid score pattern %q (\"$score\" or \"$score[i]\")", at, s)
	}
	e.score = i
	return e, nil
}

// scoreDefault is the defaults key of prefetch i's score.
func scoreDefault(i int) string { return "$score[" + strconv.Itoa(i) + "]" }

func (f *formula) keyed(kind exprKind, key, at string) (*expr, error) {
	path, err := checkKey(key, at)
	if err != nil {
		return nil, err
	}
	f.payload = true
	return &expr{kind: kind, name: key, path: path}, nil
}

func (f *formula) decay(name string, body json.RawMessage, at string, depth int) (*expr, error) {
	var d struct {
		X        json.RawMessage `json:"x"`
		Target   json.RawMessage `json:"target"`
		Scale    *float64        `json:"scale"`
		Midpoint *float64        `json:"midpoint"`
	}
	if err := strictUnmarshal(body, &d); err != nil {
		return nil, badRequestf("%s: {x, target, scale, midpoint}: %v", at, err)
	}
	kinds := map[string]exprKind{"lin_decay": exprLinDecay, "exp_decay": exprExpDecay, "gauss_decay": exprGaussDecay}
	e := &expr{kind: kinds[name], midpoint: 0.5, scale: 1}
	if d.Midpoint != nil {
		e.midpoint = *d.Midpoint
	}
	if e.kind == exprLinDecay && !(e.midpoint >= 0 && e.midpoint <= 1) {
		return nil, badRequestf("%s.midpoint: a linear decay's midpoint is in [0, 1], got %v", at, e.midpoint)
	}
	if e.kind != exprLinDecay && !(e.midpoint > 0 && e.midpoint < 1) {
		return nil, badRequestf("%s.midpoint: a decay's midpoint is in (0, 1), got %v", at, e.midpoint)
	}
	if d.Scale != nil {
		e.scale = *d.Scale
	}
	if !(e.scale > 0) {
		return nil, badRequestf("%s.scale must be positive, got %v", at, e.scale)
	}
	x, err := f.parse(d.X, at+".x", depth+1)
	if err != nil {
		return nil, err
	}
	e.kids = []*expr{x}
	if present(d.Target) {
		target, err := f.parse(d.Target, at+".target", depth+1)
		if err != nil {
			return nil, err
		}
		e.kids = append(e.kids, target)
	}
	return e, nil
}

// String is the expression as an error message names it.
func (e *expr) String() string {
	switch e.kind {
	case exprConst:
		return strconv.FormatFloat(e.constant, 'g', -1, 64)
	case exprScore, exprVariable:
		return strconv.Quote(e.name)
	}
	return fmt.Sprintf("expression %d", e.kind)
}

// nonFinite is local mode's error for a result that is not a number.
func nonFinite(what string) error {
	return badRequestf("The expression %s produced a non-finite number", what)
}

// finite reports whether x is a finite float64.
func finite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
