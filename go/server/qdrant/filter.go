package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-db/strata/go/collection/meta"
)

// A Qdrant filter is translated here, clause by clause, into meta's filter
// tree (meta's tree.go): must is And, should is Or, must_not is And of
// Nots, min_should is AtLeast, has_id is IDs, and each field condition is
// the meta condition of the same meaning (a two-sided range is Within, one
// element inside both bounds; except is Except; text is Words; nested is
// Nested; text, text_any and phrase are Words, AnyWord and Phrase; a
// range of datetime strings is DatetimeRange; the geo conditions are
// meta's). Keys become explicit meta paths, with Qdrant's list steps
// (checkKey). Meta's index evaluates the tree; nothing is evaluated here.

// compileFilter translates a Qdrant filter (absent or null: everything).
func compileFilter(raw json.RawMessage) (*meta.Filter, error) {
	if !present(raw) {
		return meta.All(), nil
	}
	return compileClauses(raw, "filter")
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

func compileClauses(raw json.RawMessage, at string) (*meta.Filter, error) {
	var f clauses
	if err := strictUnmarshal(raw, &f); err != nil {
		return nil, badRequestf("%s: not a Qdrant filter {must, should, must_not, min_should}: %v", at, err)
	}
	must, err := compileList(f.Must, at+".must")
	if err != nil {
		return nil, err
	}
	should, err := compileList(f.Should, at+".should")
	if err != nil {
		return nil, err
	}
	if len(should) > 0 { // an empty should restricts nothing, as in Qdrant
		must = append(must, meta.Or(should...))
	}
	mustNot, err := compileList(f.MustNot, at+".must_not")
	if err != nil {
		return nil, err
	}
	for _, k := range mustNot {
		must = append(must, meta.Not(k))
	}
	if ms := f.MinShould; ms != nil {
		kids := make([]*meta.Filter, len(ms.Conditions))
		for i, c := range ms.Conditions {
			if kids[i], err = compileCondition(c, fmt.Sprintf("%s.min_should.conditions[%d]", at, i)); err != nil {
				return nil, err
			}
		}
		must = append(must, meta.AtLeast(ms.MinCount, kids...))
	}
	return meta.And(must...), nil
}

func compileList(raw json.RawMessage, at string) ([]*meta.Filter, error) {
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
	out := make([]*meta.Filter, len(list))
	for i, c := range list {
		var err error
		if out[i], err = compileCondition(c, fmt.Sprintf("%s[%d]", at, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compileCondition compiles one condition; its kind is told by its keys.
func compileCondition(raw json.RawMessage, at string) (*meta.Filter, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return nil, badRequestf("%s: a condition must be a JSON object", at)
	}
	switch {
	case keys["key"] != nil:
		return compileField(raw, at)
	case keys["has_id"] != nil:
		return compileHasID(keys["has_id"], at)
	case keys["has_vector"] != nil:
		if len(keys) != 1 {
			return nil, badRequestf("%s: has_vector stands alone in its condition", at)
		}
		var name string
		if err := json.Unmarshal(keys["has_vector"], &name); err != nil {
			return nil, badRequestf("%s.has_vector: a vector name: %v", at, err)
		}
		return meta.HasVector(name), nil
	case keys["is_empty"] != nil:
		path, err := onlyKey(keys["is_empty"], at+".is_empty")
		if err != nil {
			return nil, err
		}
		return meta.IsEmpty(path), nil
	case keys["is_null"] != nil:
		path, err := onlyKey(keys["is_null"], at+".is_null")
		if err != nil {
			return nil, err
		}
		return meta.IsNull(path), nil
	case keys["nested"] != nil:
		return compileNested(keys["nested"], at+".nested")
	case keys["must"] != nil || keys["should"] != nil || keys["must_not"] != nil || keys["min_should"] != nil:
		return compileClauses(raw, at)
	}
	for name := range keys {
		return nil, unsupportedf("%s: the %q condition", at, name)
	}
	return meta.All(), nil // {}: an empty filter
}

func onlyKey(raw json.RawMessage, at string) (meta.Path, error) {
	var pf struct {
		Key string `json:"key"`
	}
	if err := strictUnmarshal(raw, &pf); err != nil {
		return meta.Path{}, badRequestf("%s: want {\"key\": ...}: %v", at, err)
	}
	return checkKey(pf.Key, at)
}

// checkKey turns a Qdrant key into an explicit meta path, with Qdrant's
// meaning: "a.b" is b of the object a (nothing when a is a list),
// "a[].b" is b of each object of the list a, "a[0]" its first element
// and "a[]" every element. A key part may be quoted ("a.\"b c\"").
func checkKey(key, at string) (meta.Path, error) {
	steps, err := parseKey(key)
	if err != nil {
		return meta.Path{}, badRequestf("%s: key %q: %v", at, key, err)
	}
	p, err := meta.NewPath(steps...)
	if err != nil {
		return meta.Path{}, badRequestf("%s: key %q: %v", at, key, err)
	}
	return p, nil
}

// parseKey reads Qdrant's key syntax: parts separated by '.', each a key
// (quoted, or up to the next '.' or '[') followed by any number of [] and
// [n].
func parseKey(key string) ([]meta.PathStep, error) {
	if key == "" {
		return nil, fmt.Errorf("empty field path")
	}
	var steps []meta.PathStep
	rest := key
	for {
		var name string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			name, rest = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexAny(rest, ".[]\"")
			if end < 0 {
				end = len(rest)
			}
			name, rest = rest[:end], rest[end:]
		}
		if name == "" {
			return nil, fmt.Errorf("empty part")
		}
		steps = append(steps, meta.Key(name))
		for strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '['")
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			if inner == "" {
				steps = append(steps, meta.Elements())
				continue
			}
			i, ok := meta.ArrayIndex(inner)
			if !ok {
				return nil, fmt.Errorf("[%s] is neither [] nor a list position [n]", inner)
			}
			steps = append(steps, meta.At(i))
		}
		if rest == "" {
			return steps, nil
		}
		if rest[0] != '.' || len(rest) == 1 {
			return nil, fmt.Errorf("unexpected %q after a part", rest)
		}
		rest = rest[1:]
	}
}

// compileNested compiles {"key": k, "filter": f}: an object of the list at
// k matching f as a whole, f's keys relative to the object. k may end in
// [], which says the same.
func compileNested(raw json.RawMessage, at string) (*meta.Filter, error) {
	var nc struct {
		Key    string          `json:"key"`
		Filter json.RawMessage `json:"filter"`
	}
	if err := strictUnmarshal(raw, &nc); err != nil || !present(nc.Filter) {
		return nil, badRequestf("%s: want {\"key\": ..., \"filter\": {...}}", at)
	}
	path, err := checkKey(strings.TrimSuffix(nc.Key, "[]"), at+".key")
	if err != nil {
		return nil, err
	}
	f, err := compileClauses(nc.Filter, at+".filter")
	if err != nil {
		return nil, err
	}
	return meta.Nested(path, f), nil
}

func compileHasID(raw json.RawMessage, at string) (*meta.Filter, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequestf("%s.has_id: a list of point ids: %v", at, err)
	}
	ids, err := parseIDs(list)
	if err != nil {
		return nil, err
	}
	return idFilter(ids), nil
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

func compileField(raw json.RawMessage, at string) (*meta.Filter, error) {
	var fc fieldCondition
	if err := strictUnmarshal(raw, &fc); err != nil {
		return nil, unsupportedf("%s: field condition: %v", at, err)
	}
	path, err := checkKey(fc.Key, at)
	if err != nil {
		return nil, err
	}
	var parts []*meta.Filter
	for _, geo := range []struct {
		name    string
		raw     json.RawMessage
		compile func(meta.Path, json.RawMessage, string) (*meta.Filter, error)
	}{{"geo_bounding_box", fc.GeoBoundingBox, compileGeoBox}, {"geo_radius", fc.GeoRadius, compileGeoRadius},
		{"geo_polygon", fc.GeoPolygon, compileGeoPolygon}} {
		if present(geo.raw) {
			f, err := geo.compile(path, geo.raw, at+"."+geo.name)
			if err != nil {
				return nil, err
			}
			parts = append(parts, f)
		}
	}
	if present(fc.Match) {
		f, err := compileMatch(path, fc.Match, at+".match")
		if err != nil {
			return nil, err
		}
		parts = append(parts, f)
	}
	if present(fc.Range) {
		f, err := compileRange(path, fc.Range, at+".range")
		if err != nil {
			return nil, err
		}
		parts = append(parts, f)
	}
	if present(fc.ValuesCount) {
		b, err := parseBounds(fc.ValuesCount, at+".values_count")
		if err != nil {
			return nil, err
		}
		f, err := meta.ValuesCount(path, b)
		if err != nil {
			return nil, badRequestf("%s.values_count: %v", at, err)
		}
		parts = append(parts, f)
	}
	for _, flag := range []struct {
		set  *bool
		make func(meta.Path) *meta.Filter
	}{{fc.IsEmpty, meta.IsEmpty}, {fc.IsNull, meta.IsNull}} {
		if flag.set == nil {
			continue
		}
		f := flag.make(path)
		if !*flag.set {
			f = meta.Not(f)
		}
		parts = append(parts, f)
	}
	if len(parts) == 0 {
		return nil, badRequestf("%s: a field condition needs match, range, geo_bounding_box, geo_radius, geo_polygon, values_count, is_empty or is_null", at)
	}
	return meta.And(parts...), nil
}

func compileMatch(path meta.Path, raw json.RawMessage, at string) (*meta.Filter, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return nil, badRequestf("%s: want one of {value}, {any}, {except}, {text}, {text_any}, {phrase}", at)
	}
	for name, v := range m {
		switch name {
		case "value":
			s, err := scalar(v, at+".value")
			if err != nil {
				return nil, err
			}
			return meta.Eq(path, s), nil
		case "any", "except":
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				return nil, badRequestf("%s.%s: a list of strings or integers: %v", at, name, err)
			}
			vals := make([]meta.Scalar, len(list))
			for i, item := range list {
				var err error
				if vals[i], err = scalar(item, fmt.Sprintf("%s.%s[%d]", at, name, i)); err != nil {
					return nil, err
				}
			}
			if name == "any" {
				return meta.In(path, vals...), nil
			}
			return meta.Except(path, vals...), nil
		case "text", "text_any", "phrase":
			var text string
			if err := json.Unmarshal(v, &text); err != nil {
				return nil, badRequestf("%s.%s: a string: %v", at, name, err)
			}
			// Qdrant's default word tokenizer (a full-text index's, and
			// the one it uses without one): every word of the query
			// among the words of a string value, one of them, or all of
			// them consecutively; no word, no match.
			return map[string]func(meta.Path, string) *meta.Filter{
				"text": meta.Words, "text_any": meta.AnyWord, "phrase": meta.Phrase}[name](path, text), nil
		default:
			return nil, unsupportedf("%s: match %q", at, name)
		}
	}
	return nil, nil // unreachable: m has one key
}

// scalar reads a match operand: a string, an integer or a bool, as in
// Qdrant. Integers are read as meta reads them in documents, so one that
// meta cannot hold exactly is refused rather than rounded.
func scalar(raw json.RawMessage, at string) (meta.Scalar, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		if bytes.ContainsAny(raw, ".eE") {
			// Qdrant matches integers only; a float never equals one there.
			return meta.Scalar{}, badRequestf("%s: %s is not a string, integer or bool", at, truncate(string(raw)))
		}
		s, err := meta.ParseNumber(raw)
		if err != nil {
			return meta.Scalar{}, badRequestf("%s: %v", at, err)
		}
		return s, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return meta.Scalar{}, badRequestf("%s: %v", at, err)
	}
	switch x := v.(type) {
	case string:
		return meta.String(x), nil
	case bool:
		return meta.Bool(x), nil
	}
	return meta.Scalar{}, badRequestf("%s: %s is not a string, integer or bool", at, truncate(string(raw)))
}

// compileRange reads a Qdrant Range (numbers) or DatetimeRange (RFC 3339
// strings, or the other formats Qdrant reads: meta.ParseDatetime); one
// range does not mix them.
func compileRange(path meta.Path, raw json.RawMessage, at string) (*meta.Filter, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, badRequestf("%s: want {gt, gte, lt, lte}: %v", at, err)
	}
	strs, nums := 0, 0
	for _, v := range r {
		switch v = bytes.TrimSpace(v); {
		case !present(v):
		case v[0] == '"':
			strs++
		default:
			nums++
		}
	}
	if strs == 0 {
		b, err := parseBounds(raw, at)
		if err != nil {
			return nil, err
		}
		f, err := meta.Within(path, b)
		if err != nil {
			return nil, badRequestf("%s: %v", at, err)
		}
		return f, nil
	}
	if nums > 0 {
		return nil, badRequestf("%s: a range is numbers or datetimes, not both", at)
	}
	var b meta.TimeBounds
	for name, v := range r {
		var dst **time.Time
		switch name {
		case "gt":
			dst = &b.Gt
		case "gte":
			dst = &b.Gte
		case "lt":
			dst = &b.Lt
		case "lte":
			dst = &b.Lte
		default:
			return nil, badRequestf("%s: unknown bound %q", at, name)
		}
		if !present(v) {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, badRequestf("%s.%s: %v", at, name, err)
		}
		t, ok := meta.ParseDatetime(s)
		if !ok {
			return nil, badRequestf("%s.%s: %q is not a datetime (RFC 3339, or YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][zone])", at, name, truncate(s))
		}
		*dst = &t
	}
	return meta.DatetimeRange(path, b), nil
}

// geoPoint is Qdrant's GeoPoint.
type geoPoint struct {
	Lon *float64 `json:"lon"`
	Lat *float64 `json:"lat"`
}

// point checks a GeoPoint as Qdrant does: both coordinates, latitude in
// [-90, 90] and longitude in [-180, 180].
func (g *geoPoint) point(at string) (meta.GeoPoint, error) {
	if g == nil || g.Lon == nil || g.Lat == nil {
		return meta.GeoPoint{}, badRequestf("%s: a geo point {\"lon\": ..., \"lat\": ...}", at)
	}
	if *g.Lat < -90 || *g.Lat > 90 {
		return meta.GeoPoint{}, badRequestf("%s.lat: %v is not a latitude in [-90, 90]", at, *g.Lat)
	}
	if *g.Lon < -180 || *g.Lon > 180 {
		return meta.GeoPoint{}, badRequestf("%s.lon: %v is not a longitude in [-180, 180]", at, *g.Lon)
	}
	return meta.GeoPoint{Lon: *g.Lon, Lat: *g.Lat}, nil
}

func compileGeoBox(path meta.Path, raw json.RawMessage, at string) (*meta.Filter, error) {
	var box struct {
		TopLeft     *geoPoint `json:"top_left"`
		BottomRight *geoPoint `json:"bottom_right"`
	}
	if err := strictUnmarshal(raw, &box); err != nil {
		return nil, badRequestf("%s: want {top_left, bottom_right}: %v", at, err)
	}
	tl, err := box.TopLeft.point(at + ".top_left")
	if err != nil {
		return nil, err
	}
	br, err := box.BottomRight.point(at + ".bottom_right")
	if err != nil {
		return nil, err
	}
	f, err := meta.GeoBoundingBox(path, tl, br)
	if err != nil {
		return nil, badRequestf("%s: %v", at, err)
	}
	return f, nil
}

func compileGeoRadius(path meta.Path, raw json.RawMessage, at string) (*meta.Filter, error) {
	var gr struct {
		Center *geoPoint `json:"center"`
		Radius *float64  `json:"radius"`
	}
	if err := strictUnmarshal(raw, &gr); err != nil || gr.Radius == nil {
		return nil, badRequestf("%s: want {center, radius} (radius in metres)", at)
	}
	c, err := gr.Center.point(at + ".center")
	if err != nil {
		return nil, err
	}
	f, err := meta.GeoRadius(path, c, *gr.Radius)
	if err != nil {
		return nil, badRequestf("%s: %v", at, err)
	}
	return f, nil
}

type geoLine struct {
	Points []geoPoint `json:"points"`
}

// ring checks a polygon ring as Qdrant does: at least 4 points, the last
// the same as the first.
func (l *geoLine) ring(at string) ([]meta.GeoPoint, error) {
	if l == nil || len(l.Points) < 4 {
		return nil, badRequestf("%s: polygon invalid, the size must be at least 4", at)
	}
	pts := make([]meta.GeoPoint, len(l.Points))
	for i := range l.Points {
		var err error
		if pts[i], err = l.Points[i].point(fmt.Sprintf("%s.points[%d]", at, i)); err != nil {
			return nil, err
		}
	}
	if pts[0] != pts[len(pts)-1] {
		return nil, badRequestf("%s: polygon invalid, the first and the last points should be same to form a closed line", at)
	}
	return pts, nil
}

func compileGeoPolygon(path meta.Path, raw json.RawMessage, at string) (*meta.Filter, error) {
	var gp struct {
		Exterior  *geoLine  `json:"exterior"`
		Interiors []geoLine `json:"interiors"`
	}
	if err := strictUnmarshal(raw, &gp); err != nil {
		return nil, badRequestf("%s: want {exterior: {points}, interiors: [{points}]}: %v", at, err)
	}
	ext, err := gp.Exterior.ring(at + ".exterior")
	if err != nil {
		return nil, err
	}
	var holes [][]meta.GeoPoint
	for i := range gp.Interiors {
		h, err := gp.Interiors[i].ring(fmt.Sprintf("%s.interiors[%d]", at, i))
		if err != nil {
			return nil, err
		}
		holes = append(holes, h)
	}
	f, err := meta.GeoPolygon(path, ext, holes)
	if err != nil {
		return nil, badRequestf("%s: %v", at, err)
	}
	return f, nil
}

// parseBounds reads a Qdrant Range or ValuesCount.
func parseBounds(raw json.RawMessage, at string) (meta.Bounds, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil {
		return meta.Bounds{}, badRequestf("%s: want {gt, gte, lt, lte}: %v", at, err)
	}
	var b meta.Bounds
	for name, v := range r {
		var dst **float64
		switch name {
		case "gt":
			dst = &b.Gt
		case "gte":
			dst = &b.Gte
		case "lt":
			dst = &b.Lt
		case "lte":
			dst = &b.Lte
		default:
			return meta.Bounds{}, badRequestf("%s: unknown bound %q", at, name)
		}
		if !present(v) {
			continue
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil {
			return meta.Bounds{}, badRequestf("%s.%s = %s: a number", at, name, truncate(string(v)))
		}
		*dst = &x
	}
	return b, nil
}
