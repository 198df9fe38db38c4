package server

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
)

// The repro: a create refused after its directory was made (a
// text field listed twice) answered 422 and left the directory, so every
// later create of the name answered 409 and GET and DELETE 404.
func TestCreateThatFailsLeavesNoDirectory(t *testing.T) {
	ts := newTestServer(t, Config{})
	status, out := ts.do(t, "POST", "/collections", map[string]any{"name": "docs", "dim": 4,
		"text_fields": []string{"title", "title"}})
	if status != 422 {
		t.Fatalf("create with a text field listed twice: %d %v", status, out)
	}
	entries, err := os.ReadDir(ts.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("the refused create left %s/%s", ts.cfg.DataDir, entries[0].Name())
	}
	ts.must(t, "POST", "/collections", map[string]any{"name": "docs", "dim": 4})
}

func TestServerStartsWhenOneCollectionIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, Config{DataDir: dir})
	ts.fill(t, "good", 5)
	ts.fill(t, "bad", 5)
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	// Every snapshot damaged: the engine has nothing to fall back on.
	snapshots, err := filepath.Glob(filepath.Join(dir, "bad", "snapshots", "*", "*"))
	if err != nil || len(snapshots) == 0 {
		t.Fatalf("snapshot files of bad: %v %v", snapshots, err)
	}
	for _, f := range snapshots {
		if err := os.WriteFile(f, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ts = newTestServer(t, Config{DataDir: dir})
	if out := ts.must(t, "GET", "/collections/good", nil); out["count"] != 5.0 || out["state"] != "ready" {
		t.Fatalf("the healthy collection: %v", out)
	}
	health := ts.must(t, "GET", "/health", nil)
	if health["status"] != "degraded" || health["collections"] != 2.0 || health["failed"] != 1.0 {
		t.Fatalf("health with a corrupt collection: %v", health)
	}
	status, out := ts.do(t, "GET", "/collections/bad", nil)
	if status != 503 || out["error"].(map[string]any)["code"] != CodeFailed ||
		!strings.Contains(out["error"].(map[string]any)["message"].(string), "corrupt") {
		t.Fatalf("info of the corrupt collection: %d %v, want 503 saying what is wrong", status, out)
	}
	status, out = ts.do(t, "POST", "/collections/bad/query", map[string]any{"vector": []float32{1, 2, 3, 4}, "k": 1})
	if status != 503 || out["error"].(map[string]any)["code"] != CodeFailed {
		t.Fatalf("query of the corrupt collection: %d %v", status, out)
	}
	list := ts.must(t, "GET", "/collections", nil)["collections"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["name"] != "bad" || list[0].(map[string]any)["state"] != "failed" ||
		list[1].(map[string]any)["state"] != "ready" {
		t.Fatalf("list: %v", list)
	}
	metrics := ts.get(t, "/metrics")
	for _, want := range []string{`strata_collection_failed{collection="bad"} 1`,
		`strata_collection_failed{collection="good"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Dropping it frees the name.
	ts.must(t, "DELETE", "/collections/bad", nil)
	ts.fill(t, "bad", 1)
}

func TestReopenRouteRecoversAFailedCollection(t *testing.T) {
	fsys := errorfs.New(vfs.Default, errorfs.Rule{})
	ts := newTestServer(t, Config{Tuning: collection.Tuning{FS: fsys},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ts.fill(t, "docs", 3)
	fsys.SetRule(errorfs.Rule{Op: errorfs.OpSync, N: fsys.Count(errorfs.OpSync) + 1})
	upsert := map[string]any{"ids": []int{9}, "vectors": [][]float32{{1, 2, 3, 4}}}
	if status, out := ts.do(t, "POST", "/collections/docs/upsert", upsert); status/100 == 2 {
		t.Fatalf("upsert with a failed fsync: %d %v", status, out)
	}
	if status, _ := ts.do(t, "POST", "/collections/docs/upsert", upsert); status != 503 {
		t.Fatalf("upsert after a failed fsync: %d, want 503", status)
	}
	if info := ts.must(t, "GET", "/collections/docs", nil); info["state"] != "failed" {
		t.Fatalf("info of the failed collection: %v", info)
	}
	if info := ts.must(t, "POST", "/collections/docs/reopen", nil); info["state"] != "ready" || info["reopens"] != 1.0 ||
		(info["count"] != 3.0 && info["count"] != 4.0) { // the unacknowledged write may have reached the log
		t.Fatalf("reopen: %v", info)
	}
	ts.must(t, "POST", "/collections/docs/upsert", upsert)
	if !strings.Contains(ts.get(t, "/metrics"), `strata_collection_reopens_total{collection="docs"} 1`) {
		t.Error("/metrics does not count the re-open")
	}
	if status, _ := ts.do(t, "POST", "/collections/nope/reopen", nil); status != 404 {
		t.Fatalf("reopen of an unknown collection: %d", status)
	}
}

func TestDroppedCollectionLeavesNoMetricSeries(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "docs", 3)
	ts.must(t, "POST", "/collections/docs/checkpoint", nil)
	if !strings.Contains(ts.get(t, "/metrics"), `strata_wal_fsync_duration_seconds_count{collection="docs"}`) {
		t.Fatal("/metrics has no fsync series of the collection to begin with")
	}
	ts.must(t, "DELETE", "/collections/docs", nil)
	if metrics := ts.get(t, "/metrics"); strings.Contains(metrics, `collection="docs"`) {
		for _, line := range strings.Split(metrics, "\n") {
			if strings.Contains(line, `collection="docs"`) {
				t.Fatalf("/metrics still reports the dropped collection: %s", line)
			}
		}
	}
}

// A request that held a collection while it was re-opened got
// collection.ErrClosed, which said 404 collection_not_found of a
// collection that was there; a dropped one must still say 404.
func TestRequestBesideAReopenIsToldToRetry(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "docs", 1)
	held, err := ts.Collection("docs")
	if err != nil {
		t.Fatal(err)
	}
	ts.must(t, "POST", "/collections/docs/reopen", nil)
	err = held.Upsert(collection.IntIDs([]uint64{5}), []float32{1, 2, 3, 4}, nil)
	if !errors.Is(err, collection.ErrClosed) {
		t.Fatalf("the old collection after a re-open: %v", err)
	}
	if status, code := classify(ts.closedUnder("docs", err)); status != 503 || code != CodeFailed {
		t.Fatalf("beside a re-open: %d %s, want 503 %s", status, code, CodeFailed)
	}
	ts.must(t, "DELETE", "/collections/docs", nil)
	if status, code := classify(ts.closedUnder("docs", err)); status != 404 || code != CodeCollectionNotFound {
		t.Fatalf("beside a drop: %d %s, want 404 %s", status, code, CodeCollectionNotFound)
	}
}
