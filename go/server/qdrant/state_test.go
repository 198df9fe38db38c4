package qdrant

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/server"
)

// openDoor serves a door over the data dir dir until the returned func
// stops it (a restart is stop, then openDoor again on dir).
func openDoor(t *testing.T, dir string) (*httptest.Server, func()) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log})
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	return hs, func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestPayloadIndexesAndAliasesSurviveARestart: the declarations of a
// collection's payload indexes and the aliases are in the data dir, not
// only in the process; a collection dropped and made again starts with
// no declarations and no aliases.
func TestPayloadIndexesAndAliasesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	hs, stop := openDoor(t, dir)
	must := func(method, path, body string) map[string]any {
		t.Helper()
		code, out := call(t, hs, method, path, body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, path, code, out)
		}
		return out
	}
	must("PUT", "/collections/c", `{"vectors": {"size": 2, "distance": "Dot"}}`)
	must("PUT", "/collections/c/points", `{"points": [{"id": 1, "vector": [1, 0], "payload": {"k": "a", "n": 3}}]}`)
	must("PUT", "/collections/c/index", `{"field_name": "k", "field_schema": "keyword"}`)
	must("PUT", "/collections/c/index", `{"field_name": "n", "field_schema": {"type": "integer", "range": true}}`)
	must("PUT", "/collections/c/index", `{"field_name": "gone", "field_schema": "bool"}`)
	must("DELETE", "/collections/c/index/gone", "")
	must("POST", "/collections/aliases", `{"actions": [{"create_alias": {"collection_name": "c", "alias_name": "al"}}]}`)
	stop()

	hs, stop = openDoor(t, dir)
	schema := func() string {
		t.Helper()
		out := must("GET", "/collections/al", "")["result"].(map[string]any)["payload_schema"]
		return strings.ReplaceAll(strings.TrimSpace(jsonOf(t, out)), " ", "")
	}
	want := `{"k":{"data_type":"keyword","points":1},"n":{"data_type":"integer","params":{"range":true,"type":"integer"},"points":1}}`
	if got := schema(); got != want {
		t.Errorf("after a restart payload_schema is %s, want %s", got, want)
	}
	if code, out := call(t, hs, "DELETE", "/collections/al", ""); code != 200 || out["result"] != false {
		t.Errorf("deleting an alias's name: %d %v, want 200 false (a collection's name only)", code, out)
	}
	must("DELETE", "/collections/c", "")
	must("PUT", "/collections/c", `{"vectors": {"size": 2, "distance": "Dot"}}`)
	if got := jsonOf(t, must("GET", "/collections/c", "")["result"].(map[string]any)["payload_schema"]); got != "{}" {
		t.Errorf("a collection made again reports %s, want no declarations", got)
	}
	if code, out := call(t, hs, "GET", "/collections/al", ""); code != http.StatusNotFound {
		t.Errorf("the alias of a deleted collection answers %d %v, want 404", code, out)
	}
	stop()
}

// TestDamagedStateFilesAreReportedNotForgotten: a damaged aliases file
// stops the door from starting, a damaged declarations file fails
// get_collection with a 500 naming it, rather than either silently
// starting empty.
func TestDamagedStateFilesAreReportedNotForgotten(t *testing.T) {
	dir := t.TempDir()
	hs, stop := openDoor(t, dir)
	call(t, hs, "PUT", "/collections/c", `{"vectors": {"size": 2, "distance": "Dot"}}`)
	call(t, hs, "PUT", "/collections/c/index", `{"field_name": "k", "field_schema": "keyword"}`)
	call(t, hs, "POST", "/collections/aliases", `{"actions": [{"create_alias": {"collection_name": "c", "alias_name": "al"}}]}`)
	stop()
	damage := func(path string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-2] ^= 1
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	damage(filepath.Join(dir, "c", payloadSchemaFile))
	hs, stop = openDoor(t, dir)
	code, out := call(t, hs, "GET", "/collections/c", "")
	if code != http.StatusInternalServerError || !strings.Contains(jsonOf(t, out), "payload index declarations") {
		t.Errorf("damaged declarations: %d %v, want a 500 naming them", code, out)
	}
	stop()

	damage(filepath.Join(dir, aliasFile))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log}); err == nil || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("damaged aliases: New answered %v, want an error naming them", err)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRetrieveOfARepeatedIDAnswersItsVectorsEachTime: a retrieve naming a
// point twice answered it twice, the first time without its named
// vectors (the differential test's seed 4 found it).
func TestRetrieveOfARepeatedIDAnswersItsVectorsEachTime(t *testing.T) {
	hs := newTestDoor(t, "")
	call(t, hs, "PUT", "/collections/c", `{"vectors": {"a": {"size": 2, "distance": "Dot"}}}`)
	call(t, hs, "PUT", "/collections/c/points", `{"points": [{"id": 7, "vector": {"a": [1, 2]}}]}`)
	code, out := call(t, hs, "POST", "/collections/c/points", `{"ids": [7, 7], "with_vector": true}`)
	if got := jsonOf(t, out["result"]); code != 200 || got != `[{"id":7,"payload":{},"vector":{"a":[1,2]}},{"id":7,"payload":{},"vector":{"a":[1,2]}}]` {
		t.Errorf("retrieve [7, 7]: %d %s", code, got)
	}
}
