package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/server"
)

func newTestDoor(t *testing.T, key string) *httptest.Server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: t.TempDir(), APIKey: key, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return hs
}

func call(t *testing.T, hs *httptest.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, hs.URL+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// TestListConditionsFollowQdrantNotMeta guards the conditions whose meta
// translation would be wrong on lists: a two-sided range needs one element
// inside both bounds, except needs one element outside the list, is_null
// and is_empty follow qdrant-client's local mode.
func TestListConditionsFollowQdrantNotMeta(t *testing.T) {
	hs := newTestDoor(t, "")
	if st, out := call(t, hs, "PUT", "/collections/c", `{"vectors":{"size":2,"distance":"Dot"}}`); st != 200 {
		t.Fatalf("create: %d %v", st, out)
	}
	payloads := []string{`{"v":[0,10]}`, `{"v":[3]}`, `{"v":null}`, `{"v":[null,1]}`, `{}`, `{"v":[]}`, `{"v":["a","b"]}`, `{"v":["a"]}`}
	var points []string
	for i, p := range payloads {
		points = append(points, fmt.Sprintf(`{"id":%d,"vector":[1,%d],"payload":%s}`, i, i, p))
	}
	if st, out := call(t, hs, "PUT", "/collections/c/points?wait=true", `{"points":[`+join(points)+`]}`); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	for _, tc := range []struct {
		filter string
		want   []int
	}{
		{`{"must":[{"key":"v","range":{"gt":1,"lt":5}}]}`, []int{1}},
		{`{"must":[{"key":"v","range":{"gt":1}}]}`, []int{0, 1}},
		{`{"must":[{"key":"v","match":{"except":["a"]}}]}`, []int{0, 1, 3, 6}},
		{`{"must":[{"is_null":{"key":"v"}}]}`, []int{2, 3}}, // a list holding null is null (qdrant#10101)
		{`{"must":[{"is_empty":{"key":"v"}}]}`, []int{2, 4, 5}},
		{`{"must_not":[{"has_id":[0,1,2,3]}],"should":[{"key":"v","values_count":{"gte":1}}]}`, []int{6, 7}},
		{`{"must":[{"key":"v","values_count":{"gte":2}}],"should":[]}`, []int{0, 3, 6}},
		{`{"min_should":{"min_count":2,"conditions":[{"has_id":[6,7]},{"key":"v","match":{"value":"a"}},{"key":"v","match":{"any":["b"]}}]}}`, []int{6, 7}},
	} {
		st, out := call(t, hs, "POST", "/collections/c/points/scroll", `{"limit":100,"filter":`+tc.filter+`}`)
		if st != 200 {
			t.Fatalf("%s: %d %v", tc.filter, st, out)
		}
		var got []int
		for _, p := range out["result"].(map[string]any)["points"].([]any) {
			got = append(got, int(p.(map[string]any)["id"].(float64)))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.filter, got, tc.want)
		}
		st, out = call(t, hs, "POST", "/collections/c/points/count", `{"filter":`+tc.filter+`}`)
		if n := out["result"].(map[string]any)["count"]; st != 200 || n != float64(len(tc.want)) {
			t.Errorf("count %s: %d %v", tc.filter, st, out)
		}
	}
}

// TestSearchRoutesAnswerAsQuery guards the older search API (qdrant-client
// 1.20 no longer calls it) against drifting from the query API.
func TestSearchRoutesAnswerAsQuery(t *testing.T) {
	hs := newTestDoor(t, "")
	call(t, hs, "PUT", "/collections/e", `{"vectors":{"size":2,"distance":"Euclid"}}`)
	call(t, hs, "PUT", "/collections/e/points", `{"batch":{"ids":[1,2,3],"vectors":[[0,0],[3,4],[6,8]],"payloads":[{"k":1},{"k":2},{"k":3}]}}`)
	st, out := call(t, hs, "POST", "/collections/e/points/search", `{"vector":[0,0],"limit":2,"offset":1,"with_payload":["k"]}`)
	hits, _ := out["result"].([]any)
	if st != 200 || len(hits) != 2 || fmt.Sprint(hits[0]) != "map[id:2 payload:map[k:2] score:5 vector:<nil> version:0]" {
		t.Fatalf("search: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/e/points/search/batch", `{"searches":[{"vector":{"name":"","vector":[6,8]},"limit":1,"score_threshold":1}]}`)
	if batch, _ := out["result"].([]any); st != 200 || len(batch) != 1 || fmt.Sprint(batch[0]) != "[map[id:3 payload:<nil> score:0 vector:<nil> version:0]]" {
		t.Fatalf("search batch: %d %v", st, out)
	}
}

func join(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p)
	}
	return b.String()
}

// TestErrorsHaveQdrantsShape guards the error body qdrant-client parses
// and the status of each kind of refusal.
func TestErrorsHaveQdrantsShape(t *testing.T) {
	hs := newTestDoor(t, "k")
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/collections", "", 401},
		{"GET", "/collections/nope?api-key=x", "", 401},
	} {
		if st, out := call(t, hs, tc.method, tc.path, tc.body); st != tc.status || out["status"].(map[string]any)["error"] == "" {
			t.Errorf("%s %s: %d %v", tc.method, tc.path, st, out)
		}
	}
	do := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, hs.URL+path, bytes.NewReader([]byte(body)))
		req.Header.Set("api-key", "k")
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	do("PUT", "/collections/c", `{"vectors":{"size":2,"distance":"Cosine"}}`)
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/collections/nope", "", 404},
		{"PUT", "/collections/c", `{"vectors":{"size":2,"distance":"Cosine"}}`, 409},
		{"PUT", "/collections/c/points", `{"points":[{"id":1,"vector":[1,2,3]}]}`, 400},
		{"PUT", "/collections/c/points", `{"points":[{"id":-1,"vector":[1,2]}]}`, 400},
		{"PUT", "/collections/c/points", `{"points":[{"id":9223372036854775808,"vector":[1,2]}]}`, 400},
		{"PUT", "/collections/c/points", `{"points":[{"id":1,"vector":[1,2],"payload":{"a.b":1}}]}`, 400},
		{"POST", "/collections/c/points/query", `{"query":{"recommend":{"positive":[1]}}}`, 404},
		{"POST", "/collections/c/points/query", `{"query":{"recommend":{"positive":[[1,2]],"strategy":"worst"}}}`, 400},
		{"POST", "/collections/c/points/query", `{"query":{"formula":{}}}`, 400},
		{"POST", "/collections/c/points/query", `{"query":[1,2],"unknown_field":1}`, 400},
		{"POST", "/collections/c/points/count", `{"filter":{"must":[{"key":"a","match":{"prefix":"x"}}]}}`, 400},
		{"POST", "/collections/c/points/payload", `{"payload":{"a":1},"points":[77]}`, 404},
		{"GET", "/no/such/route", "", 404},
	} {
		st, out := do(tc.method, tc.path, tc.body)
		errBody, _ := out["status"].(map[string]any)
		if st != tc.status || errBody == nil || errBody["error"] == "" {
			t.Errorf("%s %s %s: got %d %v, want %d", tc.method, tc.path, tc.body, st, out, tc.status)
		}
	}
	if st, out := do("GET", "/", ""); st != 200 || out["version"] != Version {
		t.Errorf("GET /: %d %v", st, out)
	}
}
