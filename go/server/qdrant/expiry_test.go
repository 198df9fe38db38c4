package qdrant

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestStrataTTLExtension prevents the Qdrant door from dropping strata's
// expiry fields: a point (or batch entry) already expired is gone for
// scroll, count and query, a later one stays, the last of repeated ids
// keeps its own expiry, and mixing the two fields is a 400.
func TestStrataTTLExtension(t *testing.T) {
	past := time.Now().Add(-time.Hour).Unix()
	for _, named := range []bool{false, true} {
		hs := newTestDoor(t, "")
		vectors := `{"size":2,"distance":"Euclid"}`
		vec := func(x int) string { return fmt.Sprintf("[%d,0]", x) }
		if named {
			vectors = `{"v":{"size":2,"distance":"Euclid"}}`
			vec = func(x int) string { return fmt.Sprintf(`{"v":[%d,0]}`, x) }
		}
		if st, out := call(t, hs, "PUT", "/collections/c", `{"vectors":`+vectors+`}`); st != 200 {
			t.Fatalf("create: %d %v", st, out)
		}
		body := fmt.Sprintf(`{"points":[{"id":1,"vector":%s,"strata_expires_at":%d},{"id":2,"vector":%s},`+
			`{"id":3,"vector":%s,"strata_expires_at":%d},{"id":3,"vector":%s,"strata_expires_at":%d}]}`,
			vec(1), past, vec(2), vec(3), past+7200*24*365, vec(3), past)
		if st, out := call(t, hs, "PUT", "/collections/c/points?wait=true", body); st != 200 {
			t.Fatalf("named %v: upsert: %d %v", named, st, out)
		}
		batch := fmt.Sprintf(`{"batch":{"ids":[4,5],"vectors":[%s,%s],"strata_ttl":[3600,0]}}`, vec(4), vec(5))
		if named {
			batch = `{"batch":{"ids":[4,5],"vectors":{"v":[[4,0],[5,0]]},"strata_ttl":[3600,0]}}`
		}
		if st, out := call(t, hs, "PUT", "/collections/c/points?wait=true", batch); st != 200 {
			t.Fatalf("named %v: batch upsert: %d %v", named, st, out)
		}
		st, out := call(t, hs, "POST", "/collections/c/points/scroll", `{"limit":100}`)
		if st != 200 {
			t.Fatalf("scroll: %d %v", st, out)
		}
		var got []int
		for _, p := range out["result"].(map[string]any)["points"].([]any) {
			got = append(got, int(p.(map[string]any)["id"].(float64)))
		}
		if !slices.Equal(got, []int{2, 4}) {
			t.Errorf("named %v: scroll answered %v, want [2 4] (1, 3 and 5 expired)", named, got)
		}
		if _, out := call(t, hs, "POST", "/collections/c/points/count", `{}`); out["result"].(map[string]any)["count"] != 2.0 {
			t.Errorf("named %v: count %v, want 2", named, out)
		}
		mixed := fmt.Sprintf(`{"points":[{"id":6,"vector":%s,"strata_ttl":5},{"id":7,"vector":%s,"strata_expires_at":5}]}`, vec(6), vec(7))
		if st, _ := call(t, hs, "PUT", "/collections/c/points?wait=true", mixed); st != 400 {
			t.Errorf("named %v: mixed strata_ttl and strata_expires_at: status %d, want 400", named, st)
		}
		if st, _ := call(t, hs, "PUT", "/collections/c/points?wait=true", fmt.Sprintf(`{"points":[{"id":8,"vector":%s,"strata_ttl":-1}]}`, vec(8))); st/100 != 4 {
			t.Errorf("named %v: a negative strata_ttl: status %d, want 4xx", named, st)
		}
	}
}
