package server

import (
	"net/http"
	"testing"
)

// TestCreateTakesTheMemoryPlacement: POST /collections passes "memory" to
// the engine (top level for the unnamed field, in a field's spec with
// "vectors"), GET reports it, and a bad value is a 4xx naming it.
func TestCreateTakesTheMemoryPlacement(t *testing.T) {
	ts := newTestServer(t, Config{})
	if code, body := ts.do(t, "POST", "/collections", map[string]any{"name": "m", "dim": 4, "memory": "mmap"}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, body)
	}
	if code, body := ts.do(t, "POST", "/collections", map[string]any{"name": "n",
		"vectors": map[string]any{"a": map[string]any{"dim": 4, "memory": "mmap"}, "b": map[string]any{"dim": 4}}}); code != http.StatusCreated {
		t.Fatalf("create with vectors: %d %v", code, body)
	}
	for name, want := range map[string][]string{"m": {"mmap"}, "n": {"mmap", "ram"}} {
		code, body := ts.do(t, "GET", "/collections/"+name, nil)
		if code != http.StatusOK {
			t.Fatalf("get %s: %d %v", name, code, body)
		}
		vectors := body["vectors"].([]any)
		for i, w := range want {
			if got := vectors[i].(map[string]any)["memory"]; got != w {
				t.Fatalf("%s field %d: memory %v, want %s", name, i, got, w)
			}
		}
	}
	for _, bad := range []map[string]any{
		{"name": "x", "dim": 4, "memory": "disk"},
		{"name": "y", "memory": "mmap", "vectors": map[string]any{"a": map[string]any{"dim": 4}}},
	} {
		if code, body := ts.do(t, "POST", "/collections", bad); code/100 != 4 {
			t.Fatalf("create %v: %d %v, want a 4xx", bad, code, body)
		}
	}
}
