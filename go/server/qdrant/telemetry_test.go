package qdrant

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/server"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// newMetricsDoor is a door over a new server whose /metrics it serves.
func newMetricsDoor(t *testing.T) *Handler {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: t.TempDir(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log, Metrics: srv.MetricsHandler()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMetricsAndTelemetryCountThisDoorsRequests: the Qdrant port answers
// GET /metrics with the server's series, this door's requests among them
// (door="qdrant", by route pattern), and GET /telemetry with the
// collections and their points.
func TestMetricsAndTelemetryCountThisDoorsRequests(t *testing.T) {
	h := newMetricsDoor(t)
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

// TestMetricsCountTheGRPCDoorsCalls: calls over gRPC are counted in the
// same request series as REST's, as door="qdrant-grpc" by full method,
// and a refused call by its HTTP-equivalent status.
func TestMetricsCountTheGRPCDoorsCalls(t *testing.T) {
	h := newMetricsDoor(t)
	d := newGRPCDoorOn(t, h)
	ctx := context.Background()
	createDot2(t, ctx, d, "c")
	if _, err := d.collections.Get(ctx, &pb.GetCollectionInfoRequest{CollectionName: "missing"}); err == nil {
		t.Fatal("info of a missing collection answered")
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var create, missing bool
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.Contains(line, `door="qdrant-grpc"`) || strings.HasPrefix(line, "#") {
			continue
		}
		create = create || strings.Contains(line, `/qdrant.Collections/Create"`)
		missing = missing || (strings.Contains(line, `/qdrant.Collections/Get"`) && strings.Contains(line, `"404"`))
	}
	if !create || !missing {
		t.Errorf("/metrics: gRPC Create counted %v, refused Get counted as 404 %v in\n%s", create, missing, body)
	}
}
