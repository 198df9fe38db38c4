package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/strata-db/strata/go/server/guard"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// testServer is a Server behind a real loopback socket.
type testServer struct {
	*Server
	url    string
	client *http.Client
	token  string
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(s)
	hs.Config = s.HTTPServer(Timeouts{})
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	return &testServer{Server: s, url: hs.URL, client: hs.Client(), token: cfg.APIKey}
}

// do sends a request and returns the status and the decoded JSON answer.
func (ts *testServer) do(t testing.TB, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: answer %d is not JSON: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

func (ts *testServer) must(t testing.TB, method, path string, body any) map[string]any {
	t.Helper()
	status, out := ts.do(t, method, path, body)
	if status/100 != 2 {
		t.Fatalf("%s %s: status %d: %v", method, path, status, out)
	}
	return out
}

// fill creates collection name (dim 4, l2) holding points 0..n-1 with
// vector (i, i%7, i%3, 1) and document {"i": i, "odd": i%2==1, "text": ...}.
func (ts *testServer) fill(t testing.TB, name string, n int) {
	t.Helper()
	ts.must(t, "POST", "/collections", map[string]any{"name": name, "dim": 4, "metric": "l2", "seed": 7})
	ids := make([]int, n)
	vecs := make([][]float32, n)
	docs := make([]map[string]any, n)
	for i := range n {
		ids[i] = i
		vecs[i] = []float32{float32(i), float32(i % 7), float32(i % 3), 1}
		docs[i] = map[string]any{"i": i, "odd": i%2 == 1, "text": fmt.Sprintf("point %d", i)}
	}
	ts.must(t, "POST", "/collections/"+name+"/upsert", map[string]any{"ids": ids, "vectors": vecs, "metadata": docs})
}

func resultIDs(t testing.TB, results any) []int {
	t.Helper()
	var ids []int
	for _, r := range results.([]any) {
		ids = append(ids, int(r.(map[string]any)["id"].(float64)))
	}
	return ids
}

func TestEveryRouteAnswersThroughASocket(t *testing.T) {
	ts := newTestServer(t, Config{})
	if out := ts.must(t, "GET", "/health", nil); out["status"] != "ok" {
		t.Fatalf("health: %v", out)
	}
	ts.fill(t, "books", 50)
	list := ts.must(t, "GET", "/collections", nil)["collections"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["name"] != "books" || list[0].(map[string]any)["count"] != 50.0 {
		t.Fatalf("list: %v", list)
	}
	if info := ts.must(t, "GET", "/collections/books", nil); info["dim"] != 4.0 || info["metric"] != "l2" {
		t.Fatalf("info: %v", info)
	}

	// One query: nearest first, with distances and documents.
	out := ts.must(t, "POST", "/collections/books/query", map[string]any{"vector": []float32{10, 3, 1, 1}, "k": 3})
	res := out["results"].([]any)
	if ids := resultIDs(t, res); ids[0] != 10 || len(ids) != 3 {
		t.Fatalf("query: %v", res)
	}
	first := res[0].(map[string]any)
	if first["distance"] != 0.0 || first["metadata"].(map[string]any)["text"] != "point 10" {
		t.Fatalf("query result: %v", first)
	}
	// A batch answers a list per query; a filter restricts; include picks fields.
	out = ts.must(t, "POST", "/collections/books/query", map[string]any{
		"vectors": [][]float32{{10, 3, 1, 1}, {20, 6, 2, 1}}, "k": 2, "filter": map[string]any{"odd": true},
		"include": []string{"vectors"}})
	batch := out["results"].([]any)
	if len(batch) != 2 {
		t.Fatalf("batch: %v", batch)
	}
	for q, want := range [][]int{{9, 11}, {17, 19}} {
		got := resultIDs(t, batch[q])
		sort.Ints(got)
		sort.Ints(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("filtered query %d: got %v, want %v", q, got, want)
		}
		r := batch[q].([]any)[0].(map[string]any)
		if _, ok := r["metadata"]; ok || r["vector"] == nil {
			t.Fatalf("include [vectors]: %v", r)
		}
	}
	// exact: the planner scans.
	out = ts.must(t, "POST", "/collections/books/query", map[string]any{"vector": []float32{0, 0, 0, 0}, "k": 5, "exact": true})
	if out["stats"].(map[string]any)["plan"] != "exact" {
		t.Fatalf("exact query: %v", out["stats"])
	}

	if out := ts.must(t, "POST", "/collections/books/count", map[string]any{"filter": map[string]any{"i": map[string]any{"$lt": 10}}}); out["count"] != 10.0 {
		t.Fatalf("count: %v", out)
	}
	// scan pages through every point in id order.
	var scanned []int
	var after any
	for {
		body := map[string]any{"limit": 16, "filter": map[string]any{"odd": false}, "include": []string{}}
		if after != nil {
			body["after"] = after
		}
		out := ts.must(t, "POST", "/collections/books/scan", body)
		scanned = append(scanned, resultIDs(t, out["points"])...)
		if after = out["next_after"]; after == nil {
			break
		}
	}
	if len(scanned) != 25 || scanned[0] != 0 || scanned[24] != 48 || !sort.IntsAreSorted(scanned) {
		t.Fatalf("scan: %v", scanned)
	}
	out = ts.must(t, "POST", "/collections/books/get", map[string]any{"ids": []int{3, 999, 1}})
	if ids := resultIDs(t, out["points"]); fmt.Sprint(ids) != "[3 1]" {
		t.Fatalf("get: %v", out)
	}
	point := ts.must(t, "GET", "/collections/books/points/8?include=vector", nil)
	if fmt.Sprint(point["vector"]) != "[8 1 2 1]" || point["metadata"].(map[string]any)["i"] != 8.0 {
		t.Fatalf("point: %v", point)
	}
	ts.must(t, "POST", "/collections/books/metadata", map[string]any{"ids": []int{8}, "metadata": []any{map[string]any{"text": "new"}}})
	if point := ts.must(t, "GET", "/collections/books/points/8", nil); fmt.Sprint(point["metadata"]) != "map[text:new]" {
		t.Fatalf("after metadata update: %v", point)
	}
	if out := ts.must(t, "POST", "/collections/books/delete", map[string]any{"ids": []int{1, 2, 1000}}); out["deleted"] != 2.0 {
		t.Fatalf("delete ids: %v", out)
	}
	if out := ts.must(t, "POST", "/collections/books/delete", map[string]any{"filter": map[string]any{"i": map[string]any{"$gte": 40}}}); out["deleted"] != 10.0 {
		t.Fatalf("delete filter: %v", out)
	}
	ts.must(t, "POST", "/collections/books/checkpoint", nil)
	if info := ts.must(t, "GET", "/collections/books", nil); info["count"] != 38.0 || info["seq"] != info["last_checkpoint_seq"] {
		t.Fatalf("after checkpoint: %v", info)
	}
	if status, _ := ts.do(t, "GET", "/collections/books/points/1", nil); status != http.StatusNotFound {
		t.Fatalf("deleted point: status %d", status)
	}
	for _, m := range []string{"BREW", "WHEN", "BREW"} { // invented methods share one series
		if status, _ := ts.do(t, m, "/collections/books/query", nil); status != http.StatusMethodNotAllowed {
			t.Fatalf("%s: status %d, want 405", m, status)
		}
	}
	metrics := ts.get(t, "/metrics")
	if strings.Contains(metrics, "BREW") {
		t.Errorf("/metrics labels a series with an invented method")
	}
	for _, want := range []string{`strata_collection_points{collection="books"} 38`, `strata_collection_vacuums_total{collection="books"} 0`,
		`strata_collection_renumbers_total{collection="books"} 0`,
		`strata_http_requests_total{door="native",method="other",route="/collections/{name}/query",status="405"} 3`,
		`strata_http_requests_total{door="native",method="POST",route="/collections/{name}/query",status="200"} 3`,
		"strata_wal_fsync_duration_seconds_bucket", "strata_group_commit_writes_count", "strata_checkpoint_duration_seconds_bucket", "go_goroutines",
		"process_cpu_seconds_total", `strata_http_request_duration_seconds_bucket{door="native",method="POST",route="/collections/{name}/upsert"`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	ts.must(t, "DELETE", "/collections/books", nil)
	if status, out := ts.do(t, "GET", "/collections/books", nil); status != http.StatusNotFound {
		t.Fatalf("dropped collection: %d %v", status, out)
	}
	if page := ts.get(t, "/"); !strings.Contains(page, "<html") {
		t.Fatalf("playground page: %.200s", page)
	}
}

func (ts *testServer) get(t testing.TB, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.url+path, nil)
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
	return string(raw)
}

func TestCollectionsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, Config{DataDir: dir})
	ts.fill(t, "kept", 20)
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	ts2 := newTestServer(t, Config{DataDir: dir})
	if info := ts2.must(t, "GET", "/collections/kept", nil); info["count"] != 20.0 {
		t.Fatalf("after restart: %v", info)
	}
}

func TestExactQueryEqualsBruteForce(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 300)
	q := []float32{123.4, 2, 1, 1}
	out := ts.must(t, "POST", "/collections/c/query", map[string]any{"vector": q, "k": 10, "exact": true, "include": []string{"distances"}})
	got := resultIDs(t, out["results"])
	type pair struct {
		d  float64
		id int
	}
	var all []pair
	for i := range 300 {
		v := []float64{float64(i), float64(i % 7), float64(i % 3), 1}
		d := 0.0
		for j := range v {
			d += (v[j] - float64(q[j])) * (v[j] - float64(q[j]))
		}
		all = append(all, pair{d, i})
	}
	sort.Slice(all, func(a, b int) bool { return all[a].d < all[b].d || all[a].d == all[b].d && all[a].id < all[b].id })
	for i, id := range got {
		if math.Abs(all[i].d-out["results"].([]any)[i].(map[string]any)["distance"].(float64)) > 1e-3 {
			t.Fatalf("exact result %d: id %d, want %d (distances %v)", i, id, all[i].id, out["results"])
		}
	}
}

func TestAPIKeyGuardsEveryRouteButHealth(t *testing.T) {
	ts := newTestServer(t, Config{APIKey: "s3cret"})
	ts.fill(t, "c", 3)
	for _, token := range []string{"", "wrong", "s3cre", "S3CRET", "s3cret2"} {
		anon := &testServer{Server: ts.Server, url: ts.url, client: ts.client, token: token}
		for _, path := range []string{"/collections", "/collections/c", "/metrics"} {
			if status, out := anon.do(t, "GET", path, nil); status != http.StatusUnauthorized ||
				out["error"].(map[string]any)["code"] != CodeUnauthorized {
				t.Errorf("token %q, GET %s: %d %v", token, path, status, out)
			}
		}
		if status, _ := anon.do(t, "POST", "/collections/c/query", `{"vector":[1,2,3,4]}`); status != http.StatusUnauthorized {
			t.Errorf("token %q, query: %d", token, status)
		}
		if status, _ := anon.do(t, "GET", "/health", nil); status != http.StatusOK {
			t.Errorf("token %q, /health: %d", token, status)
		}
	}
}

func TestSlowClientIsDisconnected(t *testing.T) {
	s, err := New(Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := s.HTTPServer(Timeouts{ReadHeader: 200 * time.Millisecond, Read: 300 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a request line, then silence.
	if _, err := conn.Write([]byte("POST /collections HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server kept a stalled client for %v: %v", time.Since(start), err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Fatalf("stalled client disconnected after %v", elapsed)
	}
}

func TestConcurrentQueriesAndWrites(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 100)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				id := 1000 + w*100 + i
				if w%2 == 0 {
					ts.must(t, "POST", "/collections/c/upsert", map[string]any{"ids": []int{id},
						"vectors": [][]float32{{float32(id), 1, 1, 1}}})
				} else {
					ts.must(t, "POST", "/collections/c/query", map[string]any{"vector": []float32{float32(i), 1, 1, 1}, "k": 5})
				}
			}
		}()
	}
	wg.Wait()
	if info := ts.must(t, "GET", "/collections/c", nil); info["count"] != 140.0 {
		t.Fatalf("count after concurrent upserts: %v", info["count"])
	}
}

// TestChunkedBodiesAreReadWhole: a body without Content-Length is read to
// its end (through several growths of the pooled buffer) and a body that
// announces its length is read exactly; neither loses or repeats a byte.
func TestChunkedBodiesAreReadWhole(t *testing.T) {
	ts := newTestServer(t, Config{Limits: guard.Limits{MaxBodyBytes: 1 << 20}})
	ts.fill(t, "c", 10)
	pad := strings.Repeat("y", 5000) // past readUpTo's first 512 bytes
	for _, chunked := range []bool{true, false} {
		body := fmt.Sprintf(`{"ids":[77],"vectors":[[7,7,7,7]],"metadata":[{"pad":%q,"chunked":%t}]}`, pad, chunked)
		req, _ := http.NewRequest("POST", ts.url+"/collections/c/upsert", io.MultiReader(strings.NewReader(body)))
		if chunked {
			req.ContentLength = -1
		} else {
			req.ContentLength = int64(len(body))
		}
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chunked=%t: status %d", chunked, resp.StatusCode)
		}
		got := ts.get(t, "/collections/c/points/77")
		if !strings.Contains(got, pad) || !strings.Contains(got, fmt.Sprintf(`"chunked":%t`, chunked)) {
			t.Fatalf("chunked=%t: the stored point is %.200s...", chunked, got)
		}
	}
}
