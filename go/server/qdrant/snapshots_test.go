package qdrant

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func upload(t *testing.T, hs interface {
	Client() *http.Client
}, base, name string, archive []byte) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("snapshot", "x.snapshot")
	if err != nil {
		t.Fatal(err)
	}
	part.Write(archive)
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/collections/"+name+"/snapshots/upload?wait=true", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// okCall returns a call to hs that must answer 200.
func okCall(t *testing.T, hs *httptest.Server) func(method, path, body string) map[string]any {
	return func(method, path, body string) map[string]any {
		t.Helper()
		code, out := call(t, hs, method, path, body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, path, code, out)
		}
		return out
	}
}

// download GETs a snapshot at path and checks it against its description
// (size and checksum).
func download(t *testing.T, hs *httptest.Server, path string, desc map[string]any) []byte {
	t.Helper()
	resp, err := hs.Client().Get(hs.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sum := sha256.Sum256(data)
	if resp.StatusCode != 200 || hex.EncodeToString(sum[:]) != desc["checksum"] || int(desc["size"].(float64)) != len(data) {
		t.Fatalf("download %s: %d, %d bytes, checksum %v", path, resp.StatusCode, len(data), desc["checksum"])
	}
	return data
}

// TestSnapshotsRoundTripAndRefuseBadInput creates, lists, downloads,
// recovers (file, own URL, upload) and deletes a snapshot, and checks that
// bad locations and bad archives are 4xx that change nothing.
func TestSnapshotsRoundTripAndRefuseBadInput(t *testing.T) {
	hs := newTestDoor(t, "")
	mustOK := okCall(t, hs)
	mustOK("PUT", "/collections/c", `{"vectors": {"size": 3, "distance": "Dot"}}`)
	mustOK("PUT", "/collections/c/points", `{"points": [
		{"id": 1, "vector": [0.1, 0.2, 0.3], "payload": {"a": "x"}},
		{"id": "5c56c793-69f3-4fbf-87e6-c4bf54c28c26", "vector": [1, 2, 3.25], "payload": {"n": [1, 2]}}]}`)
	scroll := func(name string) string {
		out := mustOK("POST", "/collections/"+name+"/points/scroll", `{"with_vector": true, "with_payload": true}`)
		b, _ := json.Marshal(out["result"])
		return string(b)
	}
	want := scroll("c")

	desc := mustOK("POST", "/collections/c/snapshots?wait=true", "")["result"].(map[string]any)
	name := desc["name"].(string)
	if !strings.HasPrefix(name, "c-") || !strings.HasSuffix(name, ".snapshot") || desc["checksum"] == nil {
		t.Fatalf("snapshot description %v", desc)
	}
	list := mustOK("GET", "/collections/c/snapshots", "")["result"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["name"] != name {
		t.Fatalf("list %v", list)
	}
	archive := download(t, hs, "/collections/c/snapshots/"+name, desc)

	// Writes after the snapshot are gone once it is recovered over c.
	mustOK("PUT", "/collections/c/points", `{"points": [{"id": 9, "vector": [1, 1, 1]}]}`)
	own := hs.URL + "/collections/c/snapshots/" + name
	mustOK("PUT", "/collections/c/snapshots/recover", `{"location": "`+own+`"}`)
	if got := scroll("c"); got != want {
		t.Fatalf("recovered from its own URL:\n got %s\nwant %s", got, want)
	}
	if code, out := upload(t, hs, hs.URL, "up", archive); code != 200 || out["result"] != true {
		t.Fatalf("upload: %d %v", code, out)
	}
	if got := scroll("up"); got != want {
		t.Fatalf("recovered from an upload:\n got %s\nwant %s", got, want)
	}

	refused := map[string]string{
		"another server":          `{"location": "http://example.com/collections/c/snapshots/` + name + `"}`,
		"outside the directory":   `{"location": "file:///etc/passwd"}`,
		"traversal":               `{"location": "file://` + filepath.Join(t.TempDir(), "..", "x.snapshot") + `"}`,
		"another scheme":          `{"location": "s3://bucket/x.snapshot"}`,
		"wrong checksum":          `{"location": "` + own + `", "checksum": "00"}`,
		"bad snapshot name":       `{"location": "` + hs.URL + `/collections/c/snapshots/..%2f..%2fCURRENT"}`,
		"unknown field":           `{"location": "` + own + `", "fetch": true}`,
		"unknown priority":        `{"location": "` + own + `", "priority": "first"}`,
		"missing snapshot's file": `{"location": "` + hs.URL + `/collections/c/snapshots/c-1-x.snapshot"}`,
	}
	for why, body := range refused {
		code, out := call(t, hs, "PUT", "/collections/c/snapshots/recover", body)
		if code != 400 && code != 404 {
			t.Errorf("%s: %d %v", why, code, out)
		}
	}
	for why, bad := range map[string][]byte{
		"garbage":   []byte("not an archive"),
		"truncated": archive[:len(archive)/2],
		"flipped":   append(append([]byte{}, archive[:len(archive)-2000]...), append([]byte{archive[len(archive)-2000] ^ 1}, archive[len(archive)-1999:]...)...),
	} {
		code, out := upload(t, hs, hs.URL, "c", bad)
		if code != 400 {
			t.Errorf("upload of a %s archive: %d %v", why, code, out)
		}
		// The message names the archive's entries, not where the server
		// unpacked it (nor the upload's temporary file).
		msg := fmt.Sprint(out["status"])
		for _, private := range []string{os.TempDir(), ".creating-", ".restoring-", ".upload-"} {
			if strings.Contains(msg, private) {
				t.Errorf("upload of a %s archive: the 400 names %q: %s", why, private, msg)
			}
		}
	}
	if got := scroll("c"); got != want {
		t.Fatalf("after refused recoveries the collection changed:\n got %s\nwant %s", got, want)
	}

	mustOK("DELETE", "/collections/c/snapshots/"+name, "")
	if code, _ := call(t, hs, "DELETE", "/collections/c/snapshots/"+name, ""); code != 404 {
		t.Fatalf("deleting a deleted snapshot: %d", code)
	}
	if list := mustOK("GET", "/collections/c/snapshots", "")["result"].([]any); len(list) != 0 {
		t.Fatalf("list after delete: %v", list)
	}
	if code, _ := call(t, hs, "GET", "/collections/c/snapshots/"+url.PathEscape(name), ""); code != 404 {
		t.Fatalf("download of a deleted snapshot: %d", code)
	}
}

// TestRecoveredCollectionKeepsTheDoorsState guards the door state in the
// archive (version 2's door entries): a collection recovered from a
// snapshot reports the payload_schema, the update_collection settings
// and the vectors {"": ...} form of the one the snapshot was taken of.
func TestRecoveredCollectionKeepsTheDoorsState(t *testing.T) {
	hs := newTestDoor(t, "")
	mustOK := okCall(t, hs)
	mustOK("PUT", "/collections/s", `{"vectors": {"": {"size": 2, "distance": "Dot"}}}`)
	mustOK("PUT", "/collections/s/points?wait=true", `{"points": [{"id": 1, "vector": [1, 0], "payload": {"a": "x"}}]}`)
	mustOK("PUT", "/collections/s/index?wait=true", `{"field_name": "a", "field_schema": "keyword"}`)
	mustOK("PATCH", "/collections/s", `{"optimizers_config": {"indexing_threshold": 1234}, "metadata": {"team": "x"}}`)
	info := func(name string) string {
		res := mustOK("GET", "/collections/"+name, "")["result"].(map[string]any)
		b, _ := json.Marshal(map[string]any{"config": res["config"], "payload_schema": res["payload_schema"]})
		return string(b)
	}
	want := info("s")
	if !strings.Contains(want, `"team"`) || !strings.Contains(want, `"keyword"`) || !strings.Contains(want, "1234") {
		t.Fatalf("the state to carry is not there to begin with: %s", want)
	}
	desc := mustOK("POST", "/collections/s/snapshots", "")["result"].(map[string]any)
	archive := download(t, hs, "/collections/s/snapshots/"+desc["name"].(string), desc)
	if code, out := upload(t, hs, hs.URL, "s2", archive); code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	if got := info("s2"); got != want {
		t.Fatalf("recovered collection:\n got %s\nwant %s", got, want)
	}
	// Over the collection itself, after its state changed: the snapshot's comes back.
	mustOK("DELETE", "/collections/s/index/a?wait=true", "")
	if code, out := upload(t, hs, hs.URL, "s", archive); code != 200 {
		t.Fatalf("upload over s: %d %v", code, out)
	}
	if got := info("s"); got != want {
		t.Fatalf("recovered over itself:\n got %s\nwant %s", got, want)
	}
}
