package qdrant

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// formulaDoor is a door with collection f: three points on a Dot field
// whose payloads a formula reads (a number, a list, a datetime, a geo
// point, a string).
func formulaDoor(t *testing.T) func(body string) (int, []float64, []float64, map[string]any) {
	t.Helper()
	hs := newTestDoor(t, "")
	call(t, hs, "PUT", "/collections/f", `{"vectors":{"size":2,"distance":"Dot"}}`)
	points := `{"points":[
		{"id":1,"vector":[1,0],"payload":{"n":2,"l":[5],"w":"2024-01-02T00:00:00Z","g":{"lon":0,"lat":0},"s":"x"}},
		{"id":2,"vector":[0.5,0],"payload":{"n":-1,"l":[1,2],"w":"2024-01-01T00:00:00Z","g":{"lon":1,"lat":0}}},
		{"id":3,"vector":[0.25,0],"payload":{"n":0,"s":"x"}}]}`
	if st, out := call(t, hs, "PUT", "/collections/f/points?wait=true", points); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	return func(body string) (int, []float64, []float64, map[string]any) {
		t.Helper()
		st, out := call(t, hs, "POST", "/collections/f/points/query", body)
		if st != 200 {
			return st, nil, nil, out
		}
		var ids, scores []float64
		for _, p := range out["result"].(map[string]any)["points"].([]any) {
			pt := p.(map[string]any)
			ids, scores = append(ids, pt["id"].(float64)), append(scores, pt["score"].(float64))
		}
		return st, ids, scores, out
	}
}

const prefetchAll = `"prefetch":{"query":[1,0],"limit":10},`

// TestFormulaScoresAsLocalModeComputes guards the evaluator against
// hand-computed scores of qdrant-client's local mode semantics: $score
// is the prefetch's score, a condition counts 1, defaults stand in for
// missing values, mult stops at a zero factor (so a missing value after
// it is no error), div by zero takes by_zero_default, and decays,
// datetimes and geo distances are Qdrant's.
func TestFormulaScoresAsLocalModeComputes(t *testing.T) {
	query := formulaDoor(t)
	day := 86400.0
	for _, c := range []struct {
		formula string
		ids     string
		scores  []float64
	}{
		{`{"sum":["$score",{"mult":[0.5,"n"]}]}`, "[1 3 2]", []float64{2, 0.25, 0}},
		{`{"sum":["$score",{"key":"s","match":{"value":"x"}}]}`, "[1 3 2]", []float64{2, 1.25, 0.5}},
		{`{"mult":["n","missing"]}`, "", nil}, // point 3's n = 0 stops it; the others have no "missing"
		{`{"div":{"left":1,"right":"n","by_zero_default":7}}`, "[3 1 2]", []float64{7, 0.5, -1}},
		{`{"max":["n",{"neg":"n"}]}`, "[1 2 3]", []float64{2, 1, 0}},
		{`{"exp_decay":{"x":{"datetime_key":"w"},"target":{"datetime":"2024-01-02T00:00:00Z"},"scale":` +
			fmt.Sprint(day) + `}}`, "[1 2 3]", []float64{1, 0.5, 0.5}}, // 3 takes the default w
		{`{"lin_decay":{"x":"n","target":2,"scale":4,"midpoint":0.5}}`, "[1 3 2]", []float64{1, 0.75, 0.625}},
		{`{"gauss_decay":{"x":"n","scale":1}}`, "[3 2 1]", []float64{1, 0.5, 0.0625}},
		{`"$score[1]"`, "[1 2 3]", []float64{0, 0, 0}},
		{`{"pow":{"base":"n","exponent":2}}`, "[1 2 3]", []float64{4, 1, 0}},
	} {
		body := `{` + prefetchAll + `"query":{"formula":` + c.formula + `,"defaults":{"w":"2024-01-03T00:00:00Z"}}}`
		st, ids, scores, out := query(body)
		if c.ids == "" {
			if st != 400 {
				t.Errorf("%s: %d %v, want 400", c.formula, st, out)
			}
			continue
		}
		if st != 200 {
			t.Errorf("%s: %d %v", c.formula, st, out)
			continue
		}
		if fmt.Sprint(ids) != c.ids || len(scores) != len(c.scores) {
			t.Errorf("%s: ids %v scores %v, want %s %v", c.formula, ids, scores, c.ids, c.scores)
			continue
		}
		for i := range scores {
			if math.Abs(scores[i]-c.scores[i]) > 1e-6 {
				t.Errorf("%s: scores %v, want %v", c.formula, scores, c.scores)
				break
			}
		}
	}
	// geo: point 2 is 1° of longitude at the equator from the origin.
	st, ids, scores, out := query(`{` + prefetchAll + `"query":{"formula":{"geo_distance":{"origin":{"lon":0,"lat":0},"to":"g"}},` +
		`"defaults":{"g":{"lon":0,"lat":1}}}}`)
	want := 6371008.8 * math.Pi / 180
	if st != 200 || fmt.Sprint(ids) != "[2 3 1]" || math.Abs(scores[0]-want) > 1 || math.Abs(scores[1]-want) > 1 || scores[2] != 0 {
		t.Errorf("geo_distance: %d %v %v %v, want [2 3 1] [%v %v 0]", st, ids, scores, out, want, want)
	}
}

// TestInvalidFormulasAnswer400 prevents a formula that cannot be
// evaluated from answering anything but a 400 naming the problem: a
// missing value, a value that is not a number, a non-finite result, bad
// decay parameters, a formula without prefetch, a nesting too deep.
func TestInvalidFormulasAnswer400(t *testing.T) {
	query := formulaDoor(t)
	deep := strings.Repeat(`{"neg":`, maxFormulaDepth+2) + "1" + strings.Repeat("}", maxFormulaDepth+2)
	for _, c := range []struct{ body, says string }{
		{`{` + prefetchAll + `"query":{"formula":"missing"}}`, "No value found for missing"},
		{`{` + prefetchAll + `"query":{"formula":"l"}}`, "Expected number value for l"},
		{`{` + prefetchAll + `"query":{"formula":"s"}}`, "Expected number value for s"},
		{`{` + prefetchAll + `"query":{"formula":{"ln":"n"}}}`, "non-finite"},
		{`{` + prefetchAll + `"query":{"formula":{"div":{"left":1,"right":"n"}}}}`, "non-finite"},
		{`{` + prefetchAll + `"query":{"formula":{"exp":1000}}}`, "non-finite"},
		{`{` + prefetchAll + `"query":{"formula":{"mult":[1e30,1e30]}}}`, "as f32"},
		{`{` + prefetchAll + `"query":{"formula":{"exp_decay":{"x":1,"midpoint":1}}}}`, "midpoint"},
		{`{` + prefetchAll + `"query":{"formula":{"gauss_decay":{"x":1,"scale":0}}}}`, "scale"},
		{`{` + prefetchAll + `"query":{"formula":"$score[x]"}}`, "score pattern"},
		{`{` + prefetchAll + `"query":{"formula":{"max":[]}}}`, "at least one operand"},
		{`{` + prefetchAll + `"query":{"formula":{"datetime":"yesterday"}}}`, "not a datetime"},
		{`{` + prefetchAll + `"query":{"formula":{"frobnicate":1}}}`, "frobnicate"},
		{`{` + prefetchAll + `"query":{"formula":1,"extra":2}}`, "extra"},
		{`{` + prefetchAll + `"query":{"formula":` + deep + `}}`, "deeper than"},
		{`{"query":{"formula":"$score"}}`, "needs prefetch"},
	} {
		st, _, _, out := query(c.body)
		if msg := fmt.Sprint(out["status"]); st != 400 || !strings.Contains(msg, c.says) {
			t.Errorf("%.80s: %d %s, want 400 saying %q", c.body, st, msg, c.says)
		}
	}
}

// TestOrderByQueryOrdersAndScoresOne guards {"order_by"} as a query:
// the points in the key's order with their order_value and local mode's
// score 1.0, offset and prefetch restricting them, and score_threshold
// refused as local mode refuses it.
func TestOrderByQueryOrdersAndScoresOne(t *testing.T) {
	query := formulaDoor(t)
	st, ids, scores, out := query(`{"query":{"order_by":{"key":"n","direction":"desc"}},"limit":2,"offset":1}`)
	if st != 200 || fmt.Sprint(ids) != "[3 2]" || fmt.Sprint(scores) != "[1 1]" {
		t.Errorf("order_by desc offset 1: %d %v %v %v", st, ids, scores, out)
	}
	st, ids, scores, out = query(`{"prefetch":{"query":[1,0],"limit":2},"query":{"order_by":"n"}}`)
	if st != 200 || fmt.Sprint(ids) != "[2 1]" || fmt.Sprint(scores) != "[1 1]" {
		t.Errorf("order_by over a prefetch: %d %v %v, want [2 1] (point 3 not prefetched)", st, ids, out)
	}
	st, ids, _, out = query(`{"query":{"order_by":"w"}}`)
	if st != 200 || fmt.Sprint(ids) != "[2 1]" {
		t.Errorf("order_by a datetime: %d %v %v", st, ids, out)
	}
	if st, _, _, out := query(`{"query":{"order_by":"n"},"score_threshold":0.5}`); st != 400 {
		t.Errorf("order_by with score_threshold: %d %v, want 400", st, out)
	}
	st, ids, scores, out = query(`{"filter":{"must":[{"key":"s","match":{"value":"x"}}]}}`)
	if st != 200 || fmt.Sprint(ids) != "[1 3]" || fmt.Sprint(scores) != "[1 1]" {
		t.Errorf("a query without a vector: %d %v %v %v, want [1 3] scored 1", st, ids, scores, out)
	}
}

// TestQueryByExampleInsidePrefetch guards queries by example in a
// prefetch (as local mode answers them): a point id, recommend, discover
// and context each pick the candidates the level above re-scores or
// fuses, and the ids a level names are left out of it and of every level
// below it (local mode's ignore_mentioned_ids_filter on that level's
// filter). Points on the Dot field f: 1 [1,0], 2 [0.5,0], 3 [0.25,0].
func TestQueryByExampleInsidePrefetch(t *testing.T) {
	query := formulaDoor(t)
	for _, tc := range []struct{ body, ids, scores string }{
		// nearest to point 1 without it: 2 then 3; re-scored by [1,0].
		{`{"prefetch":{"query":1,"limit":5},"query":[1,0]}`, "[2 3]", "[0.5 0.25]"},
		{`{"prefetch":{"query":{"nearest":1},"limit":1},"query":[1,0]}`, "[2]", "[0.5]"},
		// best_score of positive 2 (dot 0.5x): point 1 first, 2 left out.
		{`{"prefetch":{"query":{"recommend":{"positive":[2],"strategy":"best_score"}},"limit":1},"query":[1,0]}`, "[1]", "[1]"},
		// sum_scores of [1,0] minus [-1,0] = 2x: 1 (2), 2 (1), 3 (0.5); fused alone by rrf.
		{`{"prefetch":{"query":{"recommend":{"positive":[[1,0]],"negative":[[-1,0]],"strategy":"sum_scores"}},"limit":2},"query":{"fusion":"rrf"}}`, "[1 2]", "[0.5 0.33333]"},
		// discover, target point 3, left out: the candidates are 1 and 2.
		{`{"prefetch":{"query":{"discover":{"target":3,"context":[{"positive":[1,0],"negative":[-1,0]}]}},"limit":5},"query":[1,0]}`, "[1 2]", "[1 0.5]"},
		// context: every point on the positive side; point 1 named, so left out.
		{`{"prefetch":{"query":{"context":[{"positive":1,"negative":[-1,0]}]},"limit":5},"query":[1,0]}`, "[2 3]", "[0.5 0.25]"},
		// a top-level query by id leaves its point out of the prefetches too.
		{`{"prefetch":{"query":[1,0],"limit":5},"query":2}`, "[1 3]", "[0.5 0.125]"},
		// no query over a prefetch: the prefetched points in id order, scored 1.
		{`{"prefetch":{"query":[1,0],"limit":2}}`, "[1 2]", "[1 1]"},
	} {
		st, ids, scores, out := query(tc.body)
		rounded := make([]float64, len(scores))
		for i, s := range scores {
			rounded[i] = math.Round(s*1e5) / 1e5
		}
		if st != 200 || fmt.Sprint(ids) != tc.ids || fmt.Sprint(rounded) != tc.scores {
			t.Errorf("%s: %d %v %v %v, want %s %s", tc.body, st, ids, rounded, out, tc.ids, tc.scores)
		}
	}
	if st, _, _, out := query(`{"prefetch":{"query":{"nearest":[1,0],"mmr":{}},"limit":2,"score_threshold":0.1},"query":[1,0]}`); st != 400 {
		t.Errorf("mmr with score_threshold in a prefetch: %d %v, want 400", st, out)
	}
	if st, _, _, out := query(`{"prefetch":{"query":{"recommend":{"positive":[99]}},"limit":2},"query":[1,0]}`); st != 404 && st != 400 {
		t.Errorf("a missing example id in a prefetch: %d %v, want 4xx", st, out)
	}
}

// FuzzFormulaOf prevents a formula request from crashing the door: any
// body either parses or is a 400, and a parsed formula evaluates to a
// number or a 400 for a point with an empty payload.
func FuzzFormulaOf(f *testing.F) {
	for _, seed := range []string{
		`{"formula":{"sum":["$score",{"mult":[0.5,"n"]}]},"defaults":{"n":1}}`,
		`{"formula":{"div":{"left":1,"right":"$score[2]","by_zero_default":3}}}`,
		`{"formula":{"gauss_decay":{"x":{"datetime_key":"w"},"target":{"datetime":"2024-01-01"},"scale":5}},"defaults":{"w":"2024-01-02"}}`,
		`{"formula":{"geo_distance":{"origin":{"lon":1,"lat":2},"to":"g"}},"defaults":{"g":{"lon":0,"lat":0}}}`,
		`{"formula":{"key":"a","match":{"value":1}}}`,
		`{"formula":{"max":[{"pow":{"base":-2,"exponent":0.5}},{"acosh":3}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		form, isFormula, err := formulaOf(body)
		if err != nil || !isFormula {
			return
		}
		p := formulaPoint{matches: make([]bool, len(form.conds))}
		_, err = form.eval(form.root, &p, nil)
		if err != nil && !errors.Is(err, ErrBadRequest) {
			t.Fatalf("%s: evaluation failed with %v, not a 400", body, err)
		}
	})
}
