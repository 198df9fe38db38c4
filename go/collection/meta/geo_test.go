package meta

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// geoDocGen makes documents with geo points, datetimes and text under a
// few keys, in the shapes Qdrant payloads take them: a point, a list of
// points, points inside a list of objects, look-alikes that are not
// points, and datetimes in every format ParseDatetime reads.
type geoDocGen struct{ r *rand.Rand }

var (
	genDatetimes = []string{`"2024-01-01"`, `"2024-01-01T00:00:00Z"`, `"2024-01-01 00:00:00+00:00"`,
		`"2024-01-01T01:00:00+01:00"`, `"2024-01-01T00:00:00.000001Z"`, `"2023-12-31T23:59:59.999999"`,
		`"2024-02-29T12:00"`, `"2024-06-15 12:30:00 UTC"`, `"2024-06-15T12:30:00-05"`, `"not a date"`,
		`"2023-02-29"`, `"2024-01-01T00:00:00.1234567z"`, `" 2024-03-01"`, `1704067200`}
	genTexts = []string{`"red car"`, `"the red fast car"`, `"car red"`, `"Red, Car!"`, `"blue"`, `""`, `3`}
)

func (g geoDocGen) coord(limit float64) string {
	// Coarse values collide with the shapes' edges, which are strict; now
	// and then one lies beyond ±limit, as a payload may hold.
	return fmt.Sprint(float64(g.r.IntN(11)-5) * limit / 4)
}

func (g geoDocGen) point() string {
	switch g.r.IntN(10) {
	case 0:
		return `{"lat": 1}`
	case 1:
		return `{"lat": "1", "lon": 2}`
	case 2:
		return `[1, 2]`
	}
	return fmt.Sprintf(`{"lon": %s, "lat": %s, "name": "p"}`, g.coord(180), g.coord(90))
}

func (g geoDocGen) document() string {
	var parts []string
	switch g.r.IntN(5) {
	case 0:
	case 1, 2:
		parts = append(parts, `"loc": `+g.point())
	case 3:
		pts := make([]string, g.r.IntN(4))
		for i := range pts {
			pts[i] = g.point()
		}
		parts = append(parts, `"loc": [`+strings.Join(pts, ",")+`]`)
	default:
		parts = append(parts, fmt.Sprintf(`"loc": null, "shops": [{"at": %s}, {"at": %s}]`, g.point(), g.point()))
	}
	if g.r.IntN(4) > 0 {
		w := genDatetimes[g.r.IntN(len(genDatetimes))]
		if g.r.IntN(4) == 0 {
			w = "[" + w + "," + genDatetimes[g.r.IntN(len(genDatetimes))] + "]"
		}
		parts = append(parts, `"when": `+w)
	}
	if g.r.IntN(3) > 0 {
		parts = append(parts, `"txt": `+genTexts[g.r.IntN(len(genTexts))])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (g geoDocGen) pt(lonLimit, latLimit float64) GeoPoint {
	return GeoPoint{Lon: float64(g.r.IntN(9)-4) * lonLimit / 4, Lat: float64(g.r.IntN(9)-4) * latLimit / 4}
}

func (g geoDocGen) leaf() *Filter {
	paths := []string{"loc", "shops.at", "shops"}
	p, _ := ParsePath(paths[g.r.IntN(len(paths))])
	if g.r.IntN(4) == 0 {
		p, _ = NewPath(Key("shops"), Elements(), Key("at"))
	}
	when, _ := ParsePath("when")
	txt, _ := ParsePath("txt")
	switch g.r.IntN(7) {
	case 0:
		return mustOK(GeoBoundingBox(p, g.pt(180, 90), g.pt(180, 90)))
	case 1:
		return mustOK(GeoRadius(p, g.pt(180, 90), []float64{0, 1, 5e5, 5e6, 2e7}[g.r.IntN(5)]))
	case 2:
		ext := []GeoPoint{g.pt(180, 90), g.pt(180, 90), g.pt(180, 90), g.pt(180, 90)}
		if g.r.IntN(2) == 0 {
			ext = []GeoPoint{{-90, -45}, {90, -45}, {90, 45}, {-90, 45}, {-90, -45}}
		}
		var holes [][]GeoPoint
		if g.r.IntN(2) == 0 {
			holes = [][]GeoPoint{{{-45, -22.5}, {45, -22.5}, {0, 22.5}}}
		}
		f, err := GeoPolygon(p, ext, holes)
		if err != nil {
			return None() // a degenerate random ring
		}
		return f
	case 3, 4:
		var b TimeBounds
		for _, dst := range []**time.Time{&b.Gt, &b.Gte, &b.Lt, &b.Lte} {
			if g.r.IntN(3) == 0 {
				s := strings.Trim(genDatetimes[g.r.IntN(8)], `"`)
				t, _ := ParseDatetime(s)
				*dst = &t
			}
		}
		return DatetimeRange(when, b)
	case 5:
		q := []string{"red car", "car red", "red", "fast car", "blue red"}[g.r.IntN(5)]
		return []func(Path, string) *Filter{Words, AnyWord, Phrase}[g.r.IntN(3)](txt, q)
	}
	return Nested(mustOK(ParsePath("shops")), mustOK(GeoRadius(mustOK(ParsePath("at")), g.pt(180, 90), 5e6)))
}

func (g geoDocGen) tree(depth int) *Filter {
	if depth >= 2 || g.r.IntN(2) == 0 {
		return g.leaf()
	}
	kids := []*Filter{g.tree(depth + 1), g.tree(depth + 1)}
	switch g.r.IntN(3) {
	case 0:
		return And(kids...)
	case 1:
		return Or(kids...)
	}
	return Not(kids[0])
}

// TestGeoDatetimeAndTextLeavesAgreeWithMatch is the model test of the geo,
// datetime and text conditions: Index.Select (postings, the lat/lon
// narrowing, the postings of instants) against Filter.Match
// on every document, after puts, replacements and deletes.
func TestGeoDatetimeAndTextLeavesAgreeWithMatch(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 26))
			g := geoDocGen{r}
			x := NewIndex()
			m := model{}
			hits := 0
			for round := range 4 {
				for range 150 {
					id := uint64(r.IntN(300))
					if r.IntN(8) == 0 {
						x.Delete([]uint64{id})
						delete(m, id)
						continue
					}
					d := mustDoc(t, g.document())
					x.Put(id, d)
					m[id] = d
				}
				for i := range 200 {
					f := g.tree(0)
					want := m.matching(f)
					hits += len(want)
					if got := x.Select(f); !slices.Equal(got, want) {
						t.Fatalf("round %d filter %d: Select\n got  %v\n want %v", round, i, got, want)
					}
				}
			}
			if hits == 0 {
				t.Fatal("no filter matched anything: the test tests nothing")
			}
		})
	}
}

// TestGeoLeavesFollowLocalMode pins the shapes' meaning on hand-picked
// points, as qdrant-client's local mode answers them: strict edges, the
// antimeridian, holes, lists of points, and what is not a point.
func TestGeoLeavesFollowLocalMode(t *testing.T) {
	docs := []string{
		`{}`, `{"loc": {"lon": 0, "lat": 0}}`, `{"loc": {"lon": 10, "lat": 10}}`,
		`{"loc": {"lon": 179, "lat": 5}}`, `{"loc": [{"lon": 50, "lat": 50}, {"lon": 1, "lat": 1}]}`,
		`{"loc": {"lat": 1}}`, `{"loc": {"lon": true, "lat": 1}}`, `{"loc": [1, 1]}`,
		`{"loc": {"lon": 5, "lat": 5, "city": "x"}}`,
	}
	p := mustOK(ParsePath("loc"))
	cases := []struct {
		name string
		f    *Filter
		want []uint64
	}{
		{"box: edges are outside", mustOK(GeoBoundingBox(p, GeoPoint{0, 10}, GeoPoint{10, 0})), []uint64{4, 8}},
		{"box across the antimeridian", mustOK(GeoBoundingBox(p, GeoPoint{170, 10}, GeoPoint{-170, 0})), []uint64{3}},
		{"radius: closer than", mustOK(GeoRadius(p, GeoPoint{0, 0}, GeoDistance(GeoPoint{0, 0}, GeoPoint{1, 1}))), []uint64{1}},
		{"radius just past (1, 1)", mustOK(GeoRadius(p, GeoPoint{0, 0}, 157500)), []uint64{1, 4}},
		{"polygon with a hole; boundary outside", mustOK(GeoPolygon(p,
			[]GeoPoint{{-20, -20}, {20, -20}, {20, 20}, {-20, 20}, {-20, -20}},
			[][]GeoPoint{{{-2, -2}, {2, -2}, {2, 2}, {-2, 2}, {-2, -2}}})), []uint64{2, 8}},
		{"polygon boundary point", mustOK(GeoPolygon(p, []GeoPoint{{0, 0}, {10, 0}, {10, 10}, {0, 10}}, nil)), []uint64{4, 8}},
	}
	x := NewIndex()
	for i, s := range docs {
		x.Put(uint64(i), mustDoc(t, s))
	}
	for _, c := range cases {
		if got := x.Select(c.f); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := GeoPolygon(p, []GeoPoint{{0, 0}, {1, 1}, {0, 0}}, nil); err == nil {
		t.Error("a ring of two distinct points accepted")
	}
	// Moscow-London, the figure local mode's own test pins.
	if d := GeoDistance(GeoPoint{37.6173, 55.7558}, GeoPoint{-0.1278, 51.5074}); d < 2.4e6 || d > 2.6e6 {
		t.Errorf("Moscow-London %v m", d)
	}
}

func TestParseDatetimeReadsQdrantsFormats(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return tm
	}
	good := map[string]time.Time{
		"2024-05-01":                          utc("2024-05-01T00:00:00Z"),
		"2024-5-1":                            utc("2024-05-01T00:00:00Z"),
		"2024-05-01T10:30":                    utc("2024-05-01T10:30:00Z"),
		"2024-05-01 10:30:15":                 utc("2024-05-01T10:30:15Z"),
		"2024-05-01T10:30:15.5":               utc("2024-05-01T10:30:15.5Z"),
		"2024-05-01T10:30:15.123456789":       utc("2024-05-01T10:30:15.123456Z"),
		"2024-05-01T10:30:15Z":                utc("2024-05-01T10:30:15Z"),
		"2024-05-01T10:30:15z":                utc("2024-05-01T10:30:15Z"),
		"2024-05-01T10:30:15+02:00":           utc("2024-05-01T08:30:15Z"),
		"2024-05-01T10:30:15-0130":            utc("2024-05-01T12:00:15Z"),
		"2024-05-01T10:30:15+02":              utc("2024-05-01T08:30:15Z"),
		"2024-05-01 10:30:15.25 +02:00":       utc("2024-05-01T08:30:15.25Z"),
		"2024-05-01 10:30:15 UTC":             utc("2024-05-01T10:30:15Z"),
		"  2024-05-01":                        utc("2024-05-01T00:00:00Z"),
		"2024-02-29":                          utc("2024-02-29T00:00:00Z"),
		"2024-05-01T10:30:15.000001+00:00:00": utc("2024-05-01T10:30:15.000001Z"),
	}
	for s, want := range good {
		got, ok := ParseDatetime(s)
		if !ok || !got.Equal(want) {
			t.Errorf("ParseDatetime(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "2024", "2024-05", "2024-05-01T", "2024-05-01T10", "2024-05-01T10:30Z",
		"2023-02-29", "2024-13-01", "2024-05-01T24:00", "2024-05-01T10:30:60", "2024-05-01 ", "20240501",
		"2024-05-01T10:30:15+2", "2024-05-01T10:30:15+24:00", "2024-05-01T10:30:15.", "0000-01-01", "x2024-05-01"} {
		if got, ok := ParseDatetime(s); ok {
			t.Errorf("ParseDatetime(%q) = %v, accepted", s, got)
		}
	}
}

func TestDatetimeRangeComparesInstants(t *testing.T) {
	docs := []string{`{"w": "2024-01-01T01:00:00+01:00"}`, `{"w": "2024-01-01T00:00:00.000001"}`,
		`{"w": ["x", "2023-12-31"]}`, `{"w": 1704067200}`, `{"w": "2024-01-01"}`}
	x := NewIndex()
	for i, s := range docs {
		x.Put(uint64(i), mustDoc(t, s))
	}
	p := mustOK(ParsePath("w"))
	midnight, _ := ParseDatetime("2024-01-01T00:00:00Z")
	cases := []struct {
		b    TimeBounds
		want []uint64
	}{
		{TimeBounds{Gte: &midnight}, []uint64{0, 1, 4}},
		{TimeBounds{Gt: &midnight}, []uint64{1}},
		{TimeBounds{Lte: &midnight}, []uint64{0, 2, 4}},
		{TimeBounds{Lt: &midnight}, []uint64{2}},
		{TimeBounds{}, []uint64{0, 1, 2, 4}},
	}
	for _, c := range cases {
		f := DatetimeRange(p, c.b)
		if got := x.Select(f); !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.b, got, c.want)
		}
	}
}

func TestTextModesFollowLocalMode(t *testing.T) {
	docs := []string{`{"t": "the red fast car"}`, `{"t": "car red"}`, `{"t": ["blue", "Red car!"]}`, `{"t": 1}`}
	x := NewIndex()
	for i, s := range docs {
		x.Put(uint64(i), mustDoc(t, s))
	}
	p := mustOK(ParsePath("t"))
	for _, c := range []struct {
		name string
		f    *Filter
		want []uint64
	}{
		{"text: every word", Words(p, "car RED"), []uint64{0, 1, 2}},
		{"text_any: one word", AnyWord(p, "blue fast"), []uint64{0, 2}},
		{"phrase: consecutive, in order", Phrase(p, "red car"), []uint64{2}},
		{"phrase of one word", Phrase(p, "fast"), []uint64{0}},
		{"text_any without words", AnyWord(p, "!"), nil},
	} {
		if got := x.Select(c.f); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestOrderValuesReadNumbersAndDatetimes(t *testing.T) {
	d := mustDoc(t, `{"v": [3, "2024-01-01", "x", true, null, 1.5]}`)
	got := d.OrderValues(mustOK(ParsePath("v")))
	want := []OrderValue{{Number: 3}, {Micros: 1704067200000000, IsTime: true}, {Number: 1.5}}
	if !slices.Equal(got, want) {
		t.Errorf("OrderValues = %+v, want %+v", got, want)
	}
}

func mustOK[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
