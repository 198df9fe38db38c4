package server

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The playground's page never needs the API key, and neither does its
// sentence encoder: a browser fetches both before a key is typed.
func TestPlaygroundModelFilesAreServedWithoutTheKeyAndNothingElseIs(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"embed.js": "window.strataEmbed = 1;", "model.json": "{}",
		"tfjs-backend-wasm-simd.wasm": "\x00asm", "group1-shard1of7": "weights"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "secret"), []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, Config{APIKey: "k", PlaygroundModel: dir})
	fetch := func(path string) (int, string, string) {
		resp, err := ts.client.Get(ts.url + path) // no key
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
	}
	for path, want := range map[string]string{"/model/embed.js": "text/javascript", "/model/model.json": "application/json",
		"/model/tfjs-backend-wasm-simd.wasm": "application/wasm", "/model/group1-shard1of7": "application/octet-stream"} {
		status, ctype, body := fetch(path)
		if status != http.StatusOK || !strings.HasPrefix(ctype, want) || body == "" {
			t.Errorf("GET %s: %d %q %q, want 200 %s", path, status, ctype, body, want)
		}
	}
	for _, path := range []string{"/model/missing.js", "/model/sub", "/model/%2E%2E"} {
		if status, _, body := fetch(path); status != http.StatusNotFound || !strings.Contains(body, `"not_found"`) {
			t.Errorf("GET %s: %d %s, want a 404 JSON error", path, status, body)
		}
	}
	// Deeper paths are no playground route: the key is asked for first.
	for _, path := range []string{"/model/..%2Fsecret", "/model/sub/x"} {
		if status, _, body := fetch(path); status != http.StatusUnauthorized {
			t.Errorf("GET %s: %d %s, want 401", path, status, body)
		}
	}
}

// Without a model directory the page still loads, and asks for the model
// in vain with a 404 that says why (it then searches with BM25 only).
func TestPlaygroundWithoutAModelAnswers404NamingTheFlag(t *testing.T) {
	ts := newTestServer(t, Config{})
	if page := ts.get(t, "/"); !strings.Contains(page, "/app.js") {
		t.Fatalf("playground page: %.200s", page)
	}
	status, out := ts.do(t, "GET", "/model/embed.js", nil)
	msg, _ := out["error"].(map[string]any)["message"].(string)
	if status != http.StatusNotFound || !strings.Contains(msg, "--playground-model") {
		t.Fatalf("GET /model/embed.js without a model: %d %v", status, out)
	}
}

// The npm package beside the page (node_modules, the build's 29 MB dist/)
// must not be embedded in every binary: only the page's own files are.
func TestPlaygroundEmbedsOnlyThePageFiles(t *testing.T) {
	if _, err := fs.Stat(playgroundFiles, "playground/model"); err == nil {
		t.Errorf("the binary embeds playground/model")
	}
	handlers := playgroundHandlers("")
	for _, want := range []string{"index.html", "app.js", "style.css"} {
		if handlers[want] == nil {
			t.Errorf("playground lacks %s", want)
		}
	}
}
