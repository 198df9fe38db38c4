package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebugAddrDoesNotLeakTheCommandLine guards issue 20 item 9:
// /debug/pprof/cmdline showed --api-key to anyone reaching --debug-addr.
func TestDebugAddrDoesNotLeakTheCommandLine(t *testing.T) {
	mux := debugMux()
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
	if w.Code != http.StatusNotFound || strings.Contains(w.Body.String(), os.Args[0]) {
		t.Errorf("/debug/pprof/cmdline: %d %q", w.Code, w.Body.String())
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1"} {
		w = httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			t.Errorf("%s: %d", path, w.Code)
		}
	}
}

// TestAPIKeyIsReadFromAFileOrTheEnvironment: a key kept off the command
// line never shows in ps.
func TestAPIKeyIsReadFromAFileOrTheEnvironment(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("  s3cret \nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STRATA_API_KEY", "from-env")
	for _, tc := range []struct {
		flag, file, key, from string
	}{
		{"", file, "s3cret", "--api-key-file"},
		{"", "", "from-env", "$STRATA_API_KEY"},
		{"on-the-command-line", "", "on-the-command-line", "--api-key"},
	} {
		key, from, err := readAPIKey(tc.flag, tc.file)
		if err != nil || key != tc.key || from != tc.from {
			t.Errorf("readAPIKey(%q, %q) = %q, %q, %v; want %q from %s", tc.flag, tc.file, key, from, err, tc.key, tc.from)
		}
	}
	if _, _, err := readAPIKey("k", file); err == nil {
		t.Error("both --api-key and --api-key-file were accepted")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if _, _, err := readAPIKey("", empty); err == nil {
		t.Error("an empty key file was accepted (the server would run unauthenticated)")
	}
	if _, _, err := readAPIKey("", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing key file was accepted")
	}
}
