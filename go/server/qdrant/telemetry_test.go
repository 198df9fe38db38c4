package qdrant

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/server"
)

// TestMetricsAndTelemetryCountThisDoorsRequests: the Qdrant port answers
// GET /metrics with the server's series, this door's requests among them
// (door="qdrant", by route pattern), and GET /telemetry with the
// collections and their points.
func TestMetricsAndTelemetryCountThisDoorsRequests(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: t.TempDir(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log, Metrics: srv.MetricsHandler()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	call(t, hs, "PUT", "/collections/c", `{"vectors": {"size": 2, "distance": "Dot"}}`)
	call(t, hs, "PUT", "/collections/c/points", `{"points": [{"id": 1, "vector": [1, 0]}, {"id": 2, "vector": [0, 1]}]}`)
	code, out := call(t, hs, "GET", "/telemetry", "")
	if got := jsonOf(t, out["result"].(map[string]any)["collections"]); code != 200 ||
		got != `{"collections":[{"id":"c","points":2}],"number_of_collections":1}` {
		t.Errorf("telemetry: %d %s", code, got)
	}
	resp, err := hs.Client().Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{`door="qdrant"`, `route="/collections/{name}/points"`, `strata_collection_points{collection="c"} 2`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
