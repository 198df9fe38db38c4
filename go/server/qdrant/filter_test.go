package qdrant

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// qdrantGen builds random Qdrant filters (as JSON) and payloads over a
// small vocabulary, so that conditions often hit: lists, nulls, missing
// fields, nested objects, numbers that collide as 1 and 1.0.
type qdrantGen struct{ r *rand.Rand }

var (
	qdrantKeys    = []string{"a", "b", "c", "o.x", "o.y", "missing"}
	qdrantScalars = []string{`1`, `1.0`, `2`, `-1`, `0`, `2.5`, `10`, `"a"`, `"b"`, `"red car"`, `"Red"`, `true`, `false`}
	// qdrantOperands are what Qdrant's match takes: strings, integers, bools.
	qdrantOperands = []string{`1`, `2`, `-1`, `0`, `10`, `"a"`, `"b"`, `"red car"`, `"Red"`, `true`, `false`}
)

func (g qdrantGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g qdrantGen) value(depth int) string {
	switch n := g.r.IntN(10); {
	case n == 0:
		return "null"
	case n < 6 || depth > 0:
		return g.pick(qdrantScalars)
	case n < 9:
		items := make([]string, g.r.IntN(4))
		for i := range items {
			items[i] = g.pick(append([]string{"null"}, qdrantScalars...))
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	return fmt.Sprintf(`{"x": %s, "y": %s}`, g.value(1), g.value(1))
}

func (g qdrantGen) payload() string {
	var parts []string
	for _, k := range []string{"a", "b", "c", "o"} {
		if g.r.IntN(4) > 0 {
			parts = append(parts, fmt.Sprintf("%q: %s", k, g.value(0)))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (g qdrantGen) bounds() string {
	var parts []string
	for _, b := range []string{"gt", "gte", "lt", "lte"} {
		if g.r.IntN(3) == 0 {
			parts = append(parts, fmt.Sprintf("%q: %s", b, g.pick([]string{"-1", "0", "1", "2", "2.5", "3"})))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (g qdrantGen) list() string {
	items := make([]string, 1+g.r.IntN(3))
	for i := range items {
		items[i] = g.pick(qdrantScalars[6:]) // strings, bools and integers as Qdrant takes them
		if g.r.IntN(2) == 0 {
			items[i] = g.pick([]string{"1", "2", "-1", "0", "10"})
		}
	}
	return "[" + strings.Join(items, ",") + "]"
}

func (g qdrantGen) condition(depth int) string {
	key := g.pick(qdrantKeys)
	n := g.r.IntN(14)
	if depth >= 2 && n >= 12 {
		n = g.r.IntN(12)
	}
	switch n {
	case 0:
		return fmt.Sprintf(`{"key": %q, "match": {"value": %s}}`, key, g.pick(qdrantOperands))
	case 1:
		return fmt.Sprintf(`{"key": %q, "match": {"any": %s}}`, key, g.list())
	case 2:
		return fmt.Sprintf(`{"key": %q, "match": {"except": %s}}`, key, g.list())
	case 3:
		return fmt.Sprintf(`{"key": %q, "match": {"text": %q}}`, key, g.pick([]string{"red", "car red", "a", "RED", "", "_"}))
	case 4, 5:
		return fmt.Sprintf(`{"key": %q, "range": %s}`, key, g.bounds())
	case 6:
		return fmt.Sprintf(`{"key": %q, "values_count": %s}`, key, g.bounds())
	case 7:
		return fmt.Sprintf(`{"is_empty": {"key": %q}}`, key)
	case 8:
		return fmt.Sprintf(`{"is_null": {"key": %q}}`, key)
	case 9:
		return fmt.Sprintf(`{"key": %q, "is_empty": %t, "is_null": %t}`, key, g.r.IntN(2) == 0, g.r.IntN(2) == 0)
	case 10:
		ids := make([]string, g.r.IntN(5))
		for i := range ids {
			ids[i] = fmt.Sprint(g.r.IntN(45))
		}
		return `{"has_id": [` + strings.Join(ids, ",") + `]}`
	case 11:
		return fmt.Sprintf(`{"key": %q, "match": {"value": %s}, "range": %s}`, key, g.pick(qdrantOperands), g.bounds())
	}
	return g.filter(depth + 1)
}

func (g qdrantGen) conditions(depth int) string {
	items := make([]string, g.r.IntN(4))
	for i := range items {
		items[i] = g.condition(depth)
	}
	return "[" + strings.Join(items, ",") + "]"
}

func (g qdrantGen) filter(depth int) string {
	var parts []string
	for _, clause := range []string{"must", "should", "must_not"} {
		if g.r.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf("%q: %s", clause, g.conditions(depth)))
		}
	}
	if g.r.IntN(4) == 0 {
		parts = append(parts, fmt.Sprintf(`"min_should": {"conditions": %s, "min_count": %d}`, g.conditions(depth), g.r.IntN(4)))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func testCollection(t testing.TB, payloads []string) *collection.Collection {
	t.Helper()
	c, err := collection.Create(t.TempDir(), collection.Options{Dim: 2, Metric: metric.L2}, collection.Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ids := make([]uint64, len(payloads))
	vectors := make([]float32, 2*len(payloads))
	docs := make([]meta.Document, len(payloads))
	for i, p := range payloads {
		ids[i] = uint64(i)
		if docs[i], err = meta.ParseDocument([]byte(p)); err != nil {
			t.Fatalf("payload %s: %v", p, err)
		}
	}
	if err := c.Upsert(collection.IntIDs(ids), vectors, docs); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFilterTranslationAgreesWithLegacy is the differential test of the
// translation: random Qdrant filters over random payloads, compiled into
// meta's tree and evaluated by its index, must select exactly the points
// the previous translation (its own walker, set algebra and JSON round
// trip into ParseFilter, kept in legacyfilter_test.go) selected.
func TestFilterTranslationAgreesWithLegacy(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 21))
		g := qdrantGen{r}
		payloads := make([]string, 40)
		for i := range payloads {
			payloads[i] = g.payload()
		}
		c := testCollection(t, payloads)
		if _, err := c.Delete(collection.IntIDs([]uint64{3, 17})); err != nil {
			t.Fatal(err)
		}
		for range 400 {
			raw := g.filter(0)
			old, err := legacyCompileFilter(json.RawMessage(raw))
			if err != nil {
				t.Fatalf("legacy %s: %v", raw, err)
			}
			want, err := old.ids(c)
			if err != nil {
				t.Fatalf("legacy %s: %v", raw, err)
			}
			f, err := compileFilter(json.RawMessage(raw))
			if err != nil {
				t.Fatalf("compile %s: %v", raw, err)
			}
			got := scanIDs(c, f, 0, false, 0)
			if !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("seed %d: %s\n got  %v\n want %v (legacy)", seed, raw, got, want)
			}
			if n := count(c, f); n != len(want) {
				t.Fatalf("seed %d: %s: Count %d, want %d", seed, raw, n, len(want))
			}
		}
	}
}

// TestFilterTranslationRefusesWhatItCannotTranslate keeps every refusal a
// 400 naming the construct, never a wrong answer or a 500.
func TestFilterTranslationRefusesWhatItCannotTranslate(t *testing.T) {
	for _, tc := range []struct{ filter, says string }{
		{`[]`, "not a Qdrant filter"},
		{`{"must": 5}`, "filter.must"},
		{`{"must": [5]}`, "a condition must be a JSON object"},
		{`{"must": [{"nested": {"key": "a"}}]}`, `want {"key": ..., "filter": {...}}`},
		{`{"must": [{"nested": {"key": "a", "filter": {"must": 5}}}]}`, "nested.filter.must"},
		{`{"must": [{"nested": {"key": "a[x]", "filter": {}}}]}`, "nested.key: key \"a[x]\": [x] is neither [] nor a list position"},
		{`{"must": [{"key": "a[", "match": {"value": 1}}]}`, "unclosed '['"},
		{`{"must": [{"key": "a[]b", "match": {"value": 1}}]}`, `unexpected "b" after a part`},
		{`{"must": [{"key": "a.", "match": {"value": 1}}]}`, `unexpected "." after a part`},
		{`{"must": [{"key": "\"a", "match": {"value": 1}}]}`, "unterminated quote"},
		{`{"must": [{"key": "\"a.b\"", "match": {"value": 1}}]}`, "no document key holds '.'"},
		{`{"must": [{"key": "a[-1]", "match": {"value": 1}}]}`, "neither [] nor a list position"},
		{`{"must": [{"key": "", "match": {"value": 1}}]}`, "empty field path"},
		{`{"must": [{"key": "a..b", "match": {"value": 1}}]}`, "empty part"},
		{`{"must": [{"key": "a"}]}`, "needs match, range"},
		{`{"must": [{"key": "a", "geo_radius": {}}]}`, "geo_radius"},
		{`{"must": [{"key": "a", "match": {}}]}`, "want one of"},
		{`{"must": [{"key": "a", "match": {"value": 1, "any": [1]}}]}`, "want one of"},
		{`{"must": [{"key": "a", "match": {"value": null}}]}`, "not a string, integer or bool"},
		{`{"must": [{"key": "a", "match": {"value": [1]}}]}`, "not a string, integer or bool"},
		{`{"must": [{"key": "a", "match": {"value": 2.5}}]}`, "not a string, integer or bool"},
		{`{"must": [{"key": "a", "match": {"any": [1, 1e0]}}]}`, "not a string, integer or bool"},
		{`{"must": [{"key": "a", "match": {"value": 9007199254740993}}]}`, "beyond ±2^53"},
		{`{"must": [{"key": "a", "match": {"any": 1}}]}`, "a list of strings or integers"},
		{`{"must": [{"key": "a", "match": {"except": [{}]}}]}`, "not a string, integer or bool"},
		{`{"must": [{"key": "a", "match": {"text": 1}}]}`, "a string"},
		{`{"must": [{"key": "a", "match": {"prefix": "x"}}]}`, `match "prefix"`},
		{`{"must": [{"key": "a", "match": {"phrase": 1}}]}`, "phrase: a string"},
		{`{"must": [{"key": "a", "range": {"gt": "2024-13-01"}}]}`, "is not a datetime"},
		{`{"must": [{"key": "a", "range": {"gt": "2024-01-01", "lt": 5}}]}`, "not both"},
		{`{"must": [{"key": "a", "geo_radius": {"center": {"lon": 0, "lat": 91}, "radius": 1}}]}`, "latitude"},
		{`{"must": [{"key": "a", "geo_bounding_box": {"top_left": {"lon": 0}, "bottom_right": {"lon": 1, "lat": 1}}}]}`, "top_left: a geo point"},
		{`{"must": [{"key": "a", "geo_polygon": {"exterior": {"points": [{"lon": 0, "lat": 0}, {"lon": 1, "lat": 0}, {"lon": 0, "lat": 0}]}}}]}`, "at least 4"},
		{`{"must": [{"key": "a", "geo_polygon": {"exterior": {"points": [{"lon": 0, "lat": 0}, {"lon": 1, "lat": 0}, {"lon": 1, "lat": 1}, {"lon": 0, "lat": 1}]}}}]}`, "closed line"},
		{`{"must": [{"key": "a", "range": {"over": 1}}]}`, `unknown bound "over"`},
		{`{"must": [{"key": "a", "range": 1}]}`, "want {gt, gte, lt, lte}"},
		{`{"must": [{"key": "a", "values_count": {"gt": "x"}}]}`, "values_count.gt"},
		{`{"must": [{"is_empty": {"key": "a", "x": 1}}]}`, "want {\"key\""},
		{`{"must": [{"has_id": "x"}]}`, "has_id"},
		{`{"must": [{"has_id": [-1]}]}`, ""},
		{`{"min_should": {"conditions": [5], "min_count": 1}}`, "min_should.conditions[0]"},
		{`{"must": [{"key": "a", "match": {"value": 1}, "bogus": 1}]}`, "field condition"},
	} {
		_, err := compileFilter(json.RawMessage(tc.filter))
		if err == nil || !errors.Is(err, ErrBadRequest) || status(err) != 400 || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v (status %d), want a 400 saying %q", tc.filter, err, status(err), tc.says)
		}
	}
}

// TestFilterTranslationCornerCases pins answers the random test reaches
// rarely: empty clauses, min_should beyond its conditions, a condition
// given alone instead of in a list, must_not of several conditions.
func TestFilterTranslationCornerCases(t *testing.T) {
	c := testCollection(t, []string{`{"a": 1}`, `{"a": [1, 2]}`, `{"a": "x"}`, `{}`, `{"a": null}`})
	for _, tc := range []struct {
		filter string
		want   []uint64
	}{
		{`null`, []uint64{0, 1, 2, 3, 4}},
		{`{}`, []uint64{0, 1, 2, 3, 4}},
		{`{"should": []}`, []uint64{0, 1, 2, 3, 4}},
		{`{"must": [{}]}`, []uint64{0, 1, 2, 3, 4}},
		{`{"must": {"key": "a", "match": {"value": 1}}}`, []uint64{0, 1}},
		{`{"must_not": [{"key": "a", "match": {"value": 1}}, {"is_null": {"key": "a"}}]}`, []uint64{2, 3}},
		{`{"min_should": {"conditions": [{"key": "a", "match": {"value": 1}}], "min_count": 2}}`, nil},
		{`{"min_should": {"conditions": [{"key": "a", "match": {"value": 1}}], "min_count": 0}}`, []uint64{0, 1, 2, 3, 4}},
		{`{"min_should": {"conditions": [{"key": "a", "match": {"value": 1}}, {"key": "a", "match": {"value": 2}}, {"has_id": [2]}], "min_count": 2}}`, []uint64{1}},
		{`{"must": [{"key": "a", "range": {}}]}`, []uint64{0, 1}},
		{`{"must": [{"key": "a", "match": {"any": []}}]}`, nil},
		{`{"must": [{"has_id": [4, 0, 4, 99]}]}`, []uint64{0, 4}},
		{`{"must": [{"key": "a", "values_count": {"gte": 2}}]}`, []uint64{1}},
	} {
		f, err := compileFilter(json.RawMessage(tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if got := scanIDs(c, f, 0, false, 0); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
			t.Errorf("%s: got %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func newFilledDoor(t *testing.T) *httptest.Server {
	t.Helper()
	hs := newTestDoor(t, "")
	if st, out := call(t, hs, "PUT", "/collections/c", `{"vectors":{"size":2,"distance":"Euclid"}}`); st != 200 {
		t.Fatalf("create: %d %v", st, out)
	}
	body := `{"points":[
		{"id":1,"vector":[1,0],"payload":{"n":3,"s":"café"}},
		{"id":2,"vector":[2,0],"payload":{"n":1,"s":"b"}},
		{"id":3,"vector":[3,0],"payload":{"n":2}},
		{"id":4,"vector":[4,0],"payload":{"s":"d"}}]}`
	if st, out := call(t, hs, "PUT", "/collections/c/points?wait=true", body); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	return hs
}

func pointIDs(t *testing.T, points any) []int {
	t.Helper()
	var ids []int
	for _, p := range points.([]any) {
		ids = append(ids, int(p.(map[string]any)["id"].(float64)))
	}
	return ids
}

// TestQdrantRoutesTakeTheCompiledFilter covers every route that takes a
// filter, now that each passes meta's tree straight to the collection:
// scroll (with and without order_by), query without a vector, count,
// and payload and point deletion selected by filter.
func TestQdrantRoutesTakeTheCompiledFilter(t *testing.T) {
	hs := newFilledDoor(t)
	has := `{"must":[{"key":"n","range":{"gte":1}}]}`
	st, out := call(t, hs, "POST", "/collections/c/points/scroll", `{"filter":`+has+`,"order_by":{"key":"n","direction":"desc"}}`)
	if got := pointIDs(t, out["result"].(map[string]any)["points"]); st != 200 || !slices.Equal(got, []int{1, 3, 2}) {
		t.Fatalf("scroll order_by: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/c/points/scroll", `{"filter":`+has+`,"limit":1,"offset":2}`)
	if got := pointIDs(t, out["result"].(map[string]any)["points"]); st != 200 || !slices.Equal(got, []int{2}) || out["result"].(map[string]any)["next_page_offset"].(float64) != 3 {
		t.Fatalf("scroll page: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/c/points/query", `{"filter":`+has+`,"limit":2,"offset":1}`)
	if got := pointIDs(t, out["result"].(map[string]any)["points"]); st != 200 || !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("query without a vector: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/c/points/query", `{"query":[0,0],"filter":{"must_not":[{"has_id":[1]}]},"limit":2}`)
	if got := pointIDs(t, out["result"].(map[string]any)["points"]); st != 200 || !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("query with has_id: %d %v", st, out)
	}
	if st, out = call(t, hs, "POST", "/collections/c/points/count", `{"filter":{"should":[{"has_id":[4]},{"key":"n","match":{"value":2}}]}}`); st != 200 || out["result"].(map[string]any)["count"].(float64) != 2 {
		t.Fatalf("count: %d %v", st, out)
	}
	if st, out = call(t, hs, "POST", "/collections/c/points/payload?wait=true", `{"payload":{"t":"x"},"filter":{"must":[{"key":"s","match":{"text":"CAFÉ"}}]}}`); st != 200 {
		t.Fatalf("set payload by filter: %d %v", st, out)
	}
	if st, out = call(t, hs, "GET", "/collections/c/points/1", ``); st != 200 || out["result"].(map[string]any)["payload"].(map[string]any)["t"] != "x" {
		t.Fatalf("payload after set: %d %v", st, out)
	}
	if st, out = call(t, hs, "POST", "/collections/c/points/delete?wait=true", `{"filter":{"must":[{"is_empty":{"key":"n"}}]}}`); st != 200 {
		t.Fatalf("delete by filter: %d %v", st, out)
	}
	if st, out = call(t, hs, "POST", "/collections/c/points/count", `{}`); st != 200 || out["result"].(map[string]any)["count"].(float64) != 3 {
		t.Fatalf("count after delete: %d %v", st, out)
	}
	if st, out = call(t, hs, "POST", "/collections/c/points/scroll", `{"order_by":"s"}`); st != 200 || len(out["result"].(map[string]any)["points"].([]any)) != 0 {
		t.Fatalf("order_by over strings: %d %v", st, out)
	}
}

// TestQdrantDoorRefusesTextThatIsNotUTF8 (or a lone surrogate escape,
// which encoding/json turns into U+FFFD as well) and integers it would
// round:
// upsert, set and overwrite payload, and filters answer 400 and store
// nothing, instead of keeping U+FFFD or 2^53 in place of what was sent.
func TestQdrantDoorRefusesTextThatIsNotUTF8(t *testing.T) {
	hs := newFilledDoor(t)
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "/collections/c/points?wait=true", "{\"points\":[{\"id\":9,\"vector\":[1,1],\"payload\":{\"s\":\"a\xffb\"}}]}"},
		{"POST", "/collections/c/points/payload?wait=true", "{\"payload\":{\"s\":\"a\xffb\"},\"points\":[1]}"},
		{"POST", "/collections/c/points/payload?wait=true", "{\"payload\":{\"\xff\":1},\"points\":[1]}"},
		{"PUT", "/collections/c/points/payload?wait=true", "{\"payload\":{\"s\":\"\xc3\"},\"points\":[1]}"},
		{"POST", "/collections/c/points/scroll", "{\"filter\":{\"must\":[{\"key\":\"s\",\"match\":{\"value\":\"caf\xe9\"}}]}}"},
		{"POST", "/collections/c/points/payload?wait=true", `{"payload":{"\udc00":1},"points":[1]}`},
		{"PUT", "/collections/c/points/payload?wait=true", `{"payload":{"k\ud800":1},"points":[1]}`},
		{"POST", "/collections/c/points/scroll", `{"filter":{"must":[{"key":"s","match":{"text":"\ud800"}}]}}`},
		{"PUT", "/collections/c/points?wait=true", `{"points":[{"id":9,"vector":[1,1],"payload":{"n":9007199254740993}}]}`},
		{"POST", "/collections/c/points/payload?wait=true", `{"payload":{"n":1180591620717411303424},"points":[1]}`},
		{"PUT", "/collections/c/points/payload?wait=true", `{"payload":{"n":-9007199254740993},"points":[1]}`},
		{"POST", "/collections/c/points/count", `{"filter":{"must":[{"key":"n","match":{"any":[9007199254740993]}}]}}`},
	} {
		st, out := call(t, hs, tc.method, tc.path, tc.body)
		if st != 400 || out["status"] == nil {
			t.Errorf("%s %s %q: %d %v, want 400", tc.method, tc.path, tc.body, st, out)
		}
	}
	st, out := call(t, hs, "GET", "/collections/c/points/1", ``)
	if p := out["result"].(map[string]any)["payload"].(map[string]any); st != 200 || p["s"] != "café" || p["n"].(float64) != 3 || len(p) != 2 {
		t.Fatalf("point 1 changed: %d %v", st, out)
	}
	if st, out := call(t, hs, "GET", "/collections/c/points/9", ``); st != 404 {
		t.Fatalf("refused point stored: %d %v", st, out)
	}
	if st, out := call(t, hs, "PUT", "/collections/c/points?wait=true", `{"points":[{"id":9,"vector":[1,1],"payload":{"n":9007199254740992,"m":1.5e18}}]}`); st != 200 {
		t.Fatalf("2^53 refused: %d %v", st, out)
	}
	req, _ := http.NewRequest("GET", hs.URL+"/collections/c/points/9", nil)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `"n":9007199254740992`) || !strings.Contains(string(raw), `"m":1.5e+18`) {
		t.Fatalf("numbers changed on the way back: %s", raw)
	}
}

// TestFilterKeysReachListsAsQdrantDoes pins Qdrant's array projections,
// nested condition and the counting conditions over lists of objects on
// the examples of Qdrant's filtering guide (point id = position).
func TestFilterKeysReachListsAsQdrantDoes(t *testing.T) {
	c := testCollection(t, []string{
		0: `{"dinosaur": "t-rex", "diet": [{"food": "leaves", "likes": false}, {"food": "meat", "likes": true}]}`,
		1: `{"dinosaur": "diplodocus", "diet": [{"food": "leaves", "likes": true}, {"food": "meat", "likes": false}]}`,
		2: `{"country": {"name": "Germany", "cities": [{"name": "Berlin", "population": 3.7, "sightseeing": ["Brandenburg Gate", "Reichstag"]}, {"name": "Munich", "population": 1.5, "sightseeing": ["Marienplatz", "Olympiapark"]}]}}`,
		3: `{"country": {"name": "Japan", "cities": [{"name": "Tokyo", "population": 9.3, "sightseeing": ["Tokyo tower", "Tokyo skytree"]}, {"name": "Osaka", "population": 2.7, "sightseeing": ["Osaka castle", "Universal studios Japan"]}]}}`,
		4: `{"country": {"name": "Japan", "cities": [{"name": "Kyoto", "population": 1.5, "sightseeing": ["Kiyomizu-dera", "Fushimi Inari Taisha"]}]}}`,
		5: `{"country": {"name": "Brazil", "cities": [{"name": "Brasilia", "population": 4.7, "sightseeing": []}]}}`,
		6: `{"country": {"name": "Germany", "cities": [{"name": "Dresden", "population": 0.6, "sightseeing": [null]}, {"name": "Bonn"}]}}`,
		7: `{"diet": {"food": "meat", "likes": true}, "country": {"cities": {"population": 3}}}`,
		8: `{"diet": [[{"food": "meat", "likes": true}], "meat"], "grid": [[1, 2], [3]]}`,
	})
	for _, tc := range []struct {
		filter string
		want   []uint64
	}{
		{`{"must": [{"key": "diet[].food", "match": {"value": "meat"}}, {"key": "diet[].likes", "match": {"value": true}}]}`, []uint64{0, 1}},
		{`{"must": [{"nested": {"key": "diet", "filter": {"must": [{"key": "food", "match": {"value": "meat"}}, {"key": "likes", "match": {"value": true}}]}}}]}`, []uint64{0}},
		{`{"must": [{"nested": {"key": "diet[]", "filter": {"must_not": [{"key": "likes", "match": {"value": true}}]}}}]}`, []uint64{0, 1}},
		// a plain object, and the lists inside a list, are no elements of nested
		{`{"must": [{"nested": {"key": "diet", "filter": {}}}]}`, []uint64{0, 1}},
		{`{"must": [{"nested": {"key": "diet[]", "filter": {"must": [{"key": "food", "match": {"value": "meat"}}]}}}]}`, []uint64{0, 1}},
		{`{"must": [{"key": "diet.food", "match": {"value": "meat"}}]}`, []uint64{7}}, // no [] , no list
		{`{"must": [{"key": "diet[].food", "match": {"value": "meat"}}]}`, []uint64{0, 1}},
		{`{"must": [{"key": "diet[][].food", "match": {"value": "meat"}}]}`, []uint64{8}},
		{`{"must": [{"key": "diet[]", "match": {"value": "meat"}}]}`, []uint64{8}},
		{`{"must": [{"key": "diet[1].food", "match": {"value": "meat"}}]}`, []uint64{0, 1}},
		{`{"must": [{"key": "diet[0].food", "match": {"value": "meat"}}]}`, nil},
		{`{"must": [{"key": "country.cities[].population", "range": {"gte": 9.0}}]}`, []uint64{3}},
		{`{"must": [{"key": "country.cities[].population", "range": {"gt": 1, "lt": 2}}]}`, []uint64{2, 4}},
		{`{"must": [{"key": "country.cities[].sightseeing", "match": {"value": "Osaka castle"}}]}`, []uint64{3}},
		{`{"must": [{"key": "country.cities[].sightseeing", "values_count": {"gt": 1}}]}`, []uint64{2, 3, 4}},
		{`{"must": [{"key": "country.cities[].sightseeing", "values_count": {"lt": 1}}]}`, []uint64{0, 1, 5, 7, 8}}, // 6: [null] counts 1
		{`{"must": [{"key": "country.cities", "values_count": {"gte": 2}}]}`, []uint64{2, 3, 6}},
		{`{"must": [{"is_empty": {"key": "country.cities[].sightseeing"}}]}`, []uint64{0, 1, 5, 7, 8}},
		{`{"must": [{"is_null": {"key": "country.cities[].sightseeing"}}]}`, []uint64{6}},
		{`{"must": [{"key": "country.cities[].name", "is_empty": false}]}`, []uint64{2, 3, 4, 5, 6}},
		{`{"must": [{"key": "country.cities.population", "range": {"gte": 1}}]}`, []uint64{7}},
		{`{"must": [{"key": "grid[]", "values_count": {"gte": 2}}]}`, []uint64{8}},
		{`{"must": [{"key": "grid", "match": {"value": 3}}]}`, nil},
		{`{"must": [{"key": "grid[]", "match": {"value": 3}}]}`, []uint64{8}},
		{`{"must": [{"key": "grid[1]", "match": {"value": 3}}]}`, []uint64{8}},
		{`{"must": [{"key": "grid[]", "match": {"except": [1, 2, 3]}}]}`, nil},
	} {
		f, err := compileFilter(json.RawMessage(tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if got := scanIDs(c, f, 0, false, 0); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
			t.Errorf("%s: got %v, want %v", tc.filter, got, tc.want)
		}
	}
}

// FuzzCompileFilter: the translation never panics and refuses with a 400
// only; what it accepts, meta's index answers as meta's reference
// evaluator does, over payloads holding lists of objects and lists of
// lists.
func FuzzCompileFilter(f *testing.F) {
	payloads := []string{
		`{}`,
		`{"a": [{"b": 1, "c": [2, {"d": "x"}]}, {"b": null}, [1, [2]], 3], "o": {"x": [{"y": true}]}}`,
		`{"a": [[{"b": 1}], {"b": [1, 2]}, []], "o": {"x": {"y": "red car"}}, "c": [null]}`,
		`{"a": {"b": 1}, "c": []}`,
		`{"g": {"lon": 1, "lat": 2}, "w": "2024-01-01T10:00:00+01:00", "t": "red fast car"}`,
		`{"g": [{"lon": -179, "lat": -2}, {"lat": 1}], "w": ["2023-12-31", 3], "o": {"x": [{"g": {"lon": 0, "lat": 0}}]}}`,
	}
	for _, s := range []string{`{}`, `{"must": [{"key": "a[].b", "match": {"value": 1}}]}`,
		`{"must": [{"nested": {"key": "a", "filter": {"must_not": [{"key": "b", "is_null": true}]}}}]}`,
		`{"should": [{"key": "a[0]", "values_count": {"gte": 2}}, {"is_empty": {"key": "a[].c[]"}}]}`,
		`{"must": [{"key": "o.x[].y", "match": {"any": [true]}}, {"key": "a[][].b", "range": {"lt": 2}}]}`,
		`{"must_not": [{"key": "\"a\"[1]", "match": {"except": [1]}}, {"is_null": {"key": "c"}}]}`,
		`{"must": [{"key": "g", "geo_radius": {"center": {"lon": 1, "lat": 2}, "radius": 1000}}]}`,
		`{"should": [{"key": "g[]", "geo_bounding_box": {"top_left": {"lon": 170, "lat": 5}, "bottom_right": {"lon": -170, "lat": -5}}}]}`,
		`{"must": [{"key": "o.x[].g", "geo_polygon": {"exterior": {"points": [{"lon": -1, "lat": -1}, {"lon": 1, "lat": -1}, {"lon": 1, "lat": 1}, {"lon": -1, "lat": -1}]}}}]}`,
		`{"must": [{"key": "w", "range": {"gte": "2024-01-01T09:00:00Z", "lt": "2024-01-02"}}]}`,
		`{"must": [{"key": "t", "match": {"phrase": "fast car"}}, {"key": "t", "match": {"text_any": "blue red"}}]}`} {
		f.Add([]byte(s))
	}
	c := testCollection(f, payloads)
	docs := make([]meta.Document, len(payloads))
	for i, p := range payloads {
		docs[i], _ = meta.ParseDocument([]byte(p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		flt, err := compileFilter(json.RawMessage(data))
		if err != nil {
			if status(err) != 400 {
				t.Fatalf("%s: %v (status %d), want a 400", data, err, status(err))
			}
			return
		}
		var want []uint64
		for i, d := range docs {
			if flt.MatchID(uint64(i), d) {
				want = append(want, uint64(i))
			}
		}
		if got := scanIDs(c, flt, 0, false, 0); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("%s: index %v, reference %v", data, got, want)
		}
	})
}
