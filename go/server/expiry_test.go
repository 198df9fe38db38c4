package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUpsertTTLOverREST prevents the native door from dropping or
// misreading "ttl" and "expires_at": an upsert already expired is gone for
// get, scan, count and query; one with a ttl answers its expires_at; null
// in a list never expires; a bad value is a 422 naming it.
func TestUpsertTTLOverREST(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.must(t, "POST", "/collections", map[string]any{"name": "c", "dim": 2, "metric": "l2", "fsync": "never"})
	past := float64(time.Now().Add(-time.Hour).Unix())
	ts.must(t, "POST", "/collections/c/upsert", map[string]any{"ids": []any{1, "b", 3}, "vectors": [][]float32{{1, 0}, {2, 0}, {3, 0}},
		"expires_at": []any{past, nil, past}})
	before := float64(time.Now().Unix())
	ts.must(t, "POST", "/collections/c/upsert", map[string]any{"ids": []int{4}, "vectors": [][]float32{{4, 0}}, "ttl": 3600})
	if got := ts.must(t, "POST", "/collections/c/count", map[string]any{}); got["count"] != 2.0 {
		t.Fatalf("count = %v, want 2", got["count"])
	}
	got := ts.must(t, "POST", "/collections/c/get", map[string]any{"ids": []any{1, "b", 3, 4}, "include": []string{"expires_at"}})
	points := got["points"].([]any)
	if len(points) != 2 {
		t.Fatalf("get answered %v, want b and 4", points)
	}
	b, four := points[0].(map[string]any), points[1].(map[string]any)
	if b["id"] != "b" || b["expires_at"] != nil {
		t.Fatalf("point b = %v, want no expiry", b)
	}
	if at, _ := four["expires_at"].(float64); at < before+3600 || at > float64(time.Now().Unix())+3601 {
		t.Fatalf("point 4 expires at %v, want about %v", four["expires_at"], before+3600)
	}
	scan := ts.must(t, "POST", "/collections/c/scan", map[string]any{})
	if n := len(scan["points"].([]any)); n != 2 {
		t.Fatalf("scan answered %d points, want 2", n)
	}
	q := ts.must(t, "POST", "/collections/c/query", map[string]any{"vector": []float32{1, 0}, "k": 10})
	var hits []string
	for _, h := range q["results"].([]any) {
		hits = append(hits, fmt.Sprint(h.(map[string]any)["id"]))
	}
	if strings.Join(hits, " ") != "b 4" {
		t.Fatalf("query answered %v, want b and 4 only", hits)
	}
	for _, body := range []map[string]any{
		{"ids": []int{5}, "vectors": [][]float32{{5, 0}}, "ttl": -1},
		{"ids": []int{5}, "vectors": [][]float32{{5, 0}}, "ttl": 1, "expires_at": 1},
		{"ids": []int{5}, "vectors": [][]float32{{5, 0}}, "ttl": []any{1, 2}},
		{"ids": []int{5}, "vectors": [][]float32{{5, 0}}, "ttl": "soon"},
		{"ids": []int{5}, "vectors": map[string]any{"": [][]float32{{5, 0}}}, "expires_at": []any{-5}},
	} {
		status, answer := ts.do(t, "POST", "/collections/c/upsert", body)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("%v: status %d (%v), want 422", body, status, answer)
		}
	}
	if status, _ := ts.do(t, "POST", "/collections/c/query", map[string]any{"vector": []float32{1, 0}, "include": []string{"expires_at"}}); status != http.StatusUnprocessableEntity {
		t.Errorf("a query including expires_at: status %d, want 422", status)
	}
}
