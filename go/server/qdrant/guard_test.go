package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/server"
	"github.com/strata-db/strata/go/server/guard"
)

// newGuardedDoors serves both doors over one server, as strata-server
// does: the Qdrant door with the native server's guard.
func newGuardedDoors(t *testing.T, limits guard.Limits) (native, door *httptest.Server) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: t.TempDir(), Logger: log, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	native, door = httptest.NewServer(srv), httptest.NewServer(h)
	t.Cleanup(func() {
		door.Close()
		native.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return native, door
}

func send(t *testing.T, hs *httptest.Server, method, path, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: answer %d is not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

func fillDoor(t *testing.T, hs *httptest.Server, n int) {
	t.Helper()
	if st, out := send(t, hs, "PUT", "/collections/c", `{"vectors":{"size":4,"distance":"Euclid"}}`); st != 200 {
		t.Fatalf("create: %d %v", st, out)
	}
	var points bytes.Buffer
	for i := range n {
		if i > 0 {
			points.WriteByte(',')
		}
		fmt.Fprintf(&points, `{"id":%d,"vector":[%d,1,2,3],"payload":{"i":%d}}`, i, i, i)
	}
	if st, out := send(t, hs, "PUT", "/collections/c/points", `{"points":[`+points.String()+`]}`); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
}

// TestCrossSiteDeleteIsRefusedOnTheQdrantDoor is issue 20 item 2 on the
// Qdrant port: a no-cors text/plain POST from any web page deleted every
// point.
func TestCrossSiteDeleteIsRefusedOnTheQdrantDoor(t *testing.T) {
	_, door := newGuardedDoors(t, guard.Limits{})
	fillDoor(t, door, 10)
	st, out := send(t, door, "POST", "/collections/c/points/delete", `{"filter":{}}`,
		"Content-Type", "text/plain;charset=UTF-8", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site")
	if errBody, _ := out["status"].(map[string]any); st != 403 || errBody == nil || !strings.Contains(errBody["error"].(string), "--allow-origin") {
		t.Errorf("the cross-site delete: %d %v", st, out)
	}
	if st, out = send(t, door, "POST", "/collections/c/points/delete", `{"filter":{}}`, "Content-Type", "text/plain"); st != 415 {
		t.Errorf("a text/plain delete: %d %v", st, out)
	}
	if _, out = send(t, door, "POST", "/collections/c/points/count", `{}`); out["result"].(map[string]any)["count"] != float64(10) {
		t.Fatalf("count after the refused deletes: %v", out)
	}
}

// TestQdrantBatchPastTheAnswerLimitIsRefused is issue 20 item 3 on the
// Qdrant door, where nothing bounded a batch: 100 searches × limit 10,000
// with vectors reached 4.4 GB at dimension 128.
func TestQdrantBatchPastTheAnswerLimitIsRefused(t *testing.T) {
	_, door := newGuardedDoors(t, guard.Limits{MaxAnswerBytes: 1 << 20})
	fillDoor(t, door, 30)
	search := `{"vector":[1,1,2,3],"limit":10000,"with_vector":true}`
	for _, path := range []string{"/collections/c/points/search/batch", "/collections/c/points/query/batch"} {
		body := `{"searches":[` + strings.Repeat(search+",", 99) + search + `]}`
		if path == "/collections/c/points/query/batch" {
			body = strings.ReplaceAll(body, `"vector"`, `"query"`)
		}
		st, out := send(t, door, "POST", path, body)
		if errBody, _ := out["status"].(map[string]any); st != 422 || errBody == nil ||
			!strings.Contains(errBody["error"].(string), "--max-answer-bytes") {
			t.Errorf("%s of 100 × 10,000 with vectors: %d %v", path, st, out)
		}
		// A small batch is answered, streamed search by search, whole.
		small := `{"searches":[` + strings.Repeat(`{"vector":[1,1,2,3],"limit":5},`, 2) + `{"vector":[1,1,2,3],"limit":5}]}`
		if path == "/collections/c/points/query/batch" {
			small = strings.ReplaceAll(small, `"vector"`, `"query"`)
		}
		st, out = send(t, door, "POST", path, small)
		if res, _ := out["result"].([]any); st != 200 || len(res) != 3 || out["status"] != "ok" {
			t.Errorf("%s of 3 × 5: %d %v", path, st, out)
		}
	}
}

// TestQdrantDoorRecordsRequestMetrics: the Qdrant door recorded no
// request metrics; now both doors' requests are series of one registry.
func TestQdrantDoorRecordsRequestMetrics(t *testing.T) {
	native, door := newGuardedDoors(t, guard.Limits{})
	fillDoor(t, door, 3)
	send(t, door, "POST", "/collections/c/points/query", `{"query":[1,1,2,3],"limit":2}`)
	send(t, door, "POST", "/collections/c/points/query", `{"query":[1,1,2,3],"limit":2}`, "Content-Type", "text/plain")
	resp, err := native.Client().Get(native.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`strata_http_requests_total{door="qdrant",method="POST",route="/collections/{name}/points/query",status="200"} 1`,
		`strata_http_requests_total{door="qdrant",method="POST",route="/collections/{name}/points/query",status="415"} 1`,
		`strata_http_requests_total{door="qdrant",method="PUT",route="/collections/{name}",status="200"} 1`,
		`strata_http_request_duration_seconds_bucket{door="qdrant",method="PUT",route="/collections/{name}/points"`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
