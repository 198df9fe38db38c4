package server

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/strata-db/strata/go/errkind"
)

// TestCreateTheFileCannotHoldIsRefusedAndTheServerStillStarts prevents
// issue 20 item 1: POST /collections with ef_construction 2^32 answered
// 201, the index file stored 0, and on the next start the collection was
// refused as corrupt, which made the whole server exit.
func TestCreateTheFileCannotHoldIsRefusedAndTheServerStillStarts(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, Config{DataDir: dir})
	ts.fill(t, "kept", 5)
	for _, body := range []string{
		`{"name": "big", "dim": 4, "ef_construction": 4294967296}`,
		`{"name": "big", "dim": 4, "ef_construction": 4294967496}`,
		`{"name": "big", "dim": 4, "M": 65536}`,
		`{"name": "big", "dim": 65537}`,
		`{"name": "big", "dim": 0}`,
		`{"name": "big", "dim": 4, "text_analyzer": "klingon"}`,
	} {
		status, out := ts.do(t, "POST", "/collections", body)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %v, want 422", body, status, out)
			continue
		}
		e, _ := out["error"].(map[string]any)
		if msg, _ := e["message"].(string); !strings.Contains(msg, "must be") && !strings.Contains(msg, "analyzer") {
			t.Errorf("%s: message %q does not say the bound", body, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Errorf("a refused create left %s behind", filepath.Join(dir, "big"))
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	ts2 := newTestServer(t, Config{DataDir: dir})
	if info := ts2.must(t, "GET", "/collections/kept", nil); info["count"] != 5.0 {
		t.Fatalf("after restart: %v", info)
	}
}

// TestQueryEfOverTheEngineLimitIsTheEnginesMessage prevents the server
// from keeping a bound of its own on ef (it refused above 2^16 while
// Python allowed 2^24): the engine's limit and wording answer.
func TestQueryEfOverTheEngineLimitIsTheEnginesMessage(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 5)
	status, out := ts.do(t, "POST", "/collections/c/query", `{"vector": [0, 0, 0, 0], "k": 1, "ef": 1048577}`)
	e, _ := out["error"].(map[string]any)
	if msg, _ := e["message"].(string); status != http.StatusUnprocessableEntity || !strings.Contains(msg, "ef must be in [0, 1048576], got 1048577") {
		t.Fatalf("ef 2^20+1: %d %v", status, out)
	}
	if status, out := ts.do(t, "POST", "/collections/c/query", `{"vector": [0, 0, 0, 0], "k": 1, "ef": 100000}`); status != http.StatusOK {
		t.Fatalf("ef 100000: %d %v", status, out)
	}
}

// TestEveryKindHasOneStatus prevents a kind from reaching a client as 500
// (kept for bugs, damaged files and unexplained I/O errors) and the
// environment's errors from being answered as the client's.
func TestEveryKindHasOneStatus(t *testing.T) {
	want := map[errkind.Kind]int{
		errkind.Internal: 500, errkind.Invalid: 422, errkind.Type: 422, errkind.NotFound: 404,
		errkind.NoFile: 404, errkind.Exists: 409, errkind.Closed: 404, errkind.Locked: 409,
		errkind.Failed: 503, errkind.Corrupt: 500, errkind.TooLarge: 413, errkind.NoSpace: 507,
		errkind.Exhausted: 503, errkind.ReadOnly: 503, errkind.Permission: 503, errkind.IO: 500,
	}
	for _, k := range errkind.All() {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %v: no status in this test; add it", k)
			continue
		}
		status, code := classify(fmt.Errorf("context: %w", errkind.New(k, "x")))
		if status != w || code == "" {
			t.Errorf("kind %v: %d %q, want %d", k, status, code, w)
		}
	}
	for _, c := range []struct {
		errno  syscall.Errno
		status int
		code   string
	}{
		{syscall.ENOSPC, 507, CodeNoSpace},
		{syscall.EMFILE, 503, CodeExhausted},
		{syscall.EROFS, 503, CodeReadOnly},
		{syscall.EACCES, 503, CodePermission},
	} {
		err := fmt.Errorf("collection: create /d/c: %w", &fs.PathError{Op: "mkdir", Path: "/d/c", Err: c.errno})
		if status, code := classify(err); status != c.status || code != c.code {
			t.Errorf("%v: %d %q, want %d %q", c.errno, status, code, c.status, c.code)
		}
	}
}
