package qdrant

import (
	"fmt"
	"math"
	"testing"
)

// TestNearestWithMMRSkipsTheNearDuplicate guards {"nearest", "mmr"}
// (langchain-qdrant's max_marginal_relevance_search sends it): it was a
// 400 ("got 2 keys"). Point 2 nearly repeats point 1; with diversity the
// second pick is point 3, without it point 2, and candidates_limit bounds
// the points picked from (default: the limit). Scores are the similarities to the query, in
// pick order, as in qdrant-client's local mode.
func TestNearestWithMMRSkipsTheNearDuplicate(t *testing.T) {
	hs := newTestDoor(t, "")
	call(t, hs, "PUT", "/collections/m", `{"vectors":{"size":2,"distance":"Cosine"}}`)
	if st, out := call(t, hs, "PUT", "/collections/m/points",
		`{"batch":{"ids":[1,2,3],"vectors":[[1,0],[0.99,0.14],[0.7,0.7]]}}`); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	picks := func(body string) (ids []float64, scores []float64) {
		t.Helper()
		st, out := call(t, hs, "POST", "/collections/m/points/query", body)
		if st != 200 {
			t.Fatalf("%s: %d %v", body, st, out)
		}
		for _, p := range out["result"].(map[string]any)["points"].([]any) {
			pt := p.(map[string]any)
			ids, scores = append(ids, pt["id"].(float64)), append(scores, pt["score"].(float64))
		}
		return ids, scores
	}
	for _, c := range []struct{ mmr, want string }{
		{`{"diversity":0.9,"candidates_limit":3}`, "[1 3]"},
		{`{"diversity":0,"candidates_limit":3}`, "[1 2]"},
		{`{"diversity":0.9}`, "[1 2]"}, // candidates: the limit's 2 nearest
		{`{"candidates_limit":0}`, "[]"},
	} {
		ids, scores := picks(`{"query":{"nearest":[1,0],"mmr":` + c.mmr + `},"limit":2}`)
		if fmt.Sprint(ids) != c.want {
			t.Errorf("mmr %s: picked %v, want %v", c.mmr, ids, c.want)
		}
		if c.want == "[1 3]" && len(scores) == 2 && (math.Abs(scores[0]-1) > 1e-6 || math.Abs(scores[1]-math.Sqrt(0.5)) > 1e-6) {
			t.Errorf("mmr %s: scores %v, want the similarities [1 0.7071]", c.mmr, scores)
		}
	}
	for _, body := range []string{
		`{"query":{"nearest":[1,0],"mmr":{"diversity":2}},"limit":2}`,
		`{"query":{"nearest":[1,0],"mmr":{"candidates_limit":-1}},"limit":2}`,
		`{"query":{"nearest":[1,0],"mmr":{"lambda":0.5}},"limit":2}`,
		`{"query":{"nearest":[1,0],"mmr":{}},"limit":2,"score_threshold":0.5}`,
	} {
		if st, out := call(t, hs, "POST", "/collections/m/points/query", body); st != 400 {
			t.Errorf("%s: %d %v, want 400", body, st, out)
		}
	}
}
