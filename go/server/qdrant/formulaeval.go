package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// formulaPoint is what a formula reads of one candidate.
type formulaPoint struct {
	id      collection.ID
	doc     meta.Document
	matches []bool // formula.conds, in order
}

// rescore evaluates f for each point of the prefetched lists (lists[i]
// is prefetch i's, in Qdrant's scores) and answers them best first, at
// most limit. Conditions are evaluated once for all candidates (meta's
// index, among the candidates' ids), payloads read once.
func (f *formula) rescore(c *collection.Collection, lists [][]collection.Scored, limit int) ([]collection.Scored, error) {
	scores := make([]map[collection.ID]float64, len(lists))
	var cands []collection.ID
	seen := map[collection.ID]bool{}
	for i, list := range lists {
		scores[i] = make(map[collection.ID]float64, len(list))
		for _, s := range list {
			scores[i][s.ID] = s.Score
			if !seen[s.ID] {
				seen[s.ID] = true
				cands = append(cands, s.ID)
			}
		}
	}
	if len(cands) == 0 {
		return []collection.Scored{}, nil
	}
	points := make([]formulaPoint, len(cands))
	for i, id := range cands {
		points[i] = formulaPoint{id: id, matches: make([]bool, len(f.conds))}
	}
	if len(f.conds) > 0 {
		at := make(map[collection.ID]int, len(cands))
		for i, id := range cands {
			at[id] = i
		}
		among := idFilter(cands)
		for j, cond := range f.conds {
			hits, err := c.ScanIDs(meta.And(cond, among), collection.ID{}, false, 0)
			if err != nil {
				return nil, err
			}
			for _, id := range hits {
				if i, ok := at[id]; ok {
					points[i].matches[j] = true
				}
			}
		}
	}
	if f.payload {
		docs, err := c.Documents(cands)
		if err != nil {
			return nil, err
		}
		for i, raw := range docs {
			if raw == nil {
				continue // gone since the prefetch: an empty payload
			}
			if points[i].doc, err = meta.ReadDocument(raw); err != nil {
				return nil, fmt.Errorf("qdrant: stored payload of point %v: %w", pointID{cands[i]}, err)
			}
		}
	}
	out := make([]collection.Scored, len(points))
	for i := range points {
		score, err := f.eval(f.root, &points[i], scores)
		if err != nil {
			return nil, err
		}
		s32 := float32(score)
		if !finite(float64(s32)) {
			return nil, nonFinite(fmt.Sprintf("%v as f32 = %v", score, s32))
		}
		out[i] = collection.Scored{ID: points[i].id, Score: float64(s32)}
	}
	collection.SortByScore(out)
	return out[:min(limit, len(out))], nil
}

// eval is e's value for the point p.
func (f *formula) eval(e *expr, p *formulaPoint, scores []map[collection.ID]float64) (float64, error) {
	arg := func(i int) (float64, error) { return f.eval(e.kids[i], p, scores) }
	switch e.kind {
	case exprConst:
		return e.constant, nil
	case exprScore:
		if e.score < len(scores) {
			if s, ok := scores[e.score][p.id]; ok {
				return s, nil
			}
		}
		if d, ok := f.defaults[scoreDefault(e.score)]; ok && !isNull(d) {
			return numberOf(d, e.name)
		}
		return 0, nil
	case exprVariable:
		v, err := f.valueAt(e, p)
		if err != nil {
			return 0, err
		}
		return numberOf(v, e.name)
	case exprCondition:
		if p.matches[e.cond] {
			return 1, nil
		}
		return 0, nil
	case exprSum:
		var sum float64
		for i := range e.kids {
			x, err := arg(i)
			if err != nil {
				return 0, err
			}
			sum += x
		}
		return sum, nil
	case exprMax, exprMin:
		acc := math.Inf(1)
		if e.kind == exprMax {
			acc = math.Inf(-1)
		}
		for i := range e.kids {
			x, err := arg(i)
			if err != nil {
				return 0, err
			}
			if (e.kind == exprMax && x > acc) || (e.kind == exprMin && x < acc) {
				acc = x
			}
		}
		return acc, nil
	case exprMult:
		prod := 1.0
		for i := range e.kids {
			x, err := arg(i)
			if err != nil {
				return 0, err
			}
			if x == 0 {
				return x, nil // the rest are not evaluated
			}
			prod *= x
		}
		return prod, nil
	case exprDiv:
		left, err := arg(0)
		if err != nil || left == 0 {
			return left, err
		}
		right, err := arg(1)
		if err != nil {
			return 0, err
		}
		if right == 0 {
			if e.byZero != nil {
				return *e.byZero, nil
			}
			return 0, nonFinite(fmt.Sprintf("%v/%v", left, right))
		}
		if r := left / right; finite(r) {
			return r, nil
		}
		return 0, nonFinite(fmt.Sprintf("%v/%v", left, right))
	case exprPow:
		base, err := arg(0)
		if err != nil {
			return 0, err
		}
		exponent, err := arg(1)
		if err != nil {
			return 0, err
		}
		if (base >= 0 || (base != 0 && exponent == math.Trunc(exponent))) && !(base == 0 && exponent < 0) {
			if r := math.Pow(base, exponent); finite(r) {
				return r, nil
			}
		}
		return 0, nonFinite(fmt.Sprintf("%v^%v", base, exponent))
	case exprGeoDistance:
		v, err := f.valueAt(e, p)
		if err != nil {
			return 0, err
		}
		var g struct { // other keys are ignored, as local mode does
			Lon *float64 `json:"lon"`
			Lat *float64 `json:"lat"`
		}
		if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &g) != nil || g.Lon == nil || g.Lat == nil {
			return 0, badRequestf("Expected geo point for %s in the payload and/or in the formula defaults.", e.name)
		}
		return meta.GeoDistance(e.origin, meta.GeoPoint{Lon: *g.Lon, Lat: *g.Lat}), nil
	case exprDatetimeKey:
		v, err := f.valueAt(e, p)
		if err != nil {
			return 0, err
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			if t, ok := meta.ParseDatetime(s); ok {
				return float64(meta.DatetimeMicros(t)) / 1e6, nil
			}
		}
		return 0, badRequestf("Expected datetime for %s in the payload and/or in the formula defaults.", e.name)
	case exprLinDecay, exprExpDecay, exprGaussDecay:
		x, err := arg(0)
		if err != nil {
			return 0, err
		}
		target := 0.0
		if len(e.kids) > 1 {
			if target, err = arg(1); err != nil {
				return 0, err
			}
		}
		switch e.kind {
		case exprLinDecay:
			return max(0, -(1-e.midpoint)/e.scale*math.Abs(x-target)+1), nil
		case exprExpDecay:
			return math.Exp(math.Log(e.midpoint) / e.scale * math.Abs(x-target)), nil
		}
		d := x - target
		return math.Exp(math.Log(e.midpoint) / (e.scale * e.scale) * d * d), nil
	}
	x, err := arg(0)
	if err != nil {
		return 0, err
	}
	switch e.kind {
	case exprNeg:
		return -x, nil
	case exprAbs:
		return math.Abs(x), nil
	case exprSqrt:
		if x >= 0 {
			return math.Sqrt(x), nil
		}
		return 0, nonFinite(fmt.Sprintf("√%v", x))
	case exprExp:
		if r := math.Exp(x); finite(r) {
			return r, nil
		}
		return 0, nonFinite(fmt.Sprintf("exp(%v)", x))
	case exprLn:
		if x > 0 {
			return math.Log(x), nil
		}
		return 0, nonFinite(fmt.Sprintf("ln(%v)", x))
	case exprAcosh:
		if r := math.Acosh(x); x >= 1 && finite(r) {
			return r, nil
		}
		return 0, nonFinite(fmt.Sprintf("acosh(%v)", x))
	case exprLog10:
		if x > 0 {
			return math.Log10(x), nil
		}
		return 0, nonFinite(fmt.Sprintf("log10(%v)", x))
	}
	return 0, fmt.Errorf("qdrant: formula expression kind %d has no evaluator", e.kind)
}

// valueAt is the value a keyed expression reads, as local mode's
// try_extract_payload_value: the values at the key (a list's elements),
// else defaults[key] (an empty list is no value); one value stands for
// itself, several make a list.
func (f *formula) valueAt(e *expr, p *formulaPoint) (json.RawMessage, error) {
	var values []json.RawMessage
	for _, v := range p.doc.ValuesAt(e.path) {
		values = append(values, v)
	}
	if len(values) == 0 {
		d, ok := f.defaults[e.name]
		if !ok || isNull(d) {
			return nil, badRequestf("No value found for %s in the payload nor the formula defaults", e.name)
		}
		var list []json.RawMessage
		if t := bytes.TrimSpace(d); len(t) > 0 && t[0] == '[' && json.Unmarshal(t, &list) == nil {
			if len(list) == 0 {
				return nil, badRequestf("No value found for %s in the payload nor the formula defaults", e.name)
			}
			values = list
		} else {
			values = []json.RawMessage{d}
		}
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return mustJSON(values), nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// numberOf reads a JSON number (not a bool, not a string) for the
// variable name.
func numberOf(raw json.RawMessage, name string) (float64, error) {
	t := bytes.TrimSpace(raw)
	var x float64
	if len(t) == 0 || !(t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) || json.Unmarshal(t, &x) != nil {
		return 0, badRequestf("Expected number value for %s in the payload and/or in the formula defaults. Error: Value is not a number", name)
	}
	return x, nil
}
