package qdrant

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestFullSnapshotHoldsEveryCollectionsArchive creates, lists, downloads
// and deletes a full-storage snapshot: one tar entry per collection, in
// name order, each an archive that recovers that collection, and the
// snapshot's checksum that of the downloaded bytes; names that are not a
// full snapshot's are refused.
func TestFullSnapshotHoldsEveryCollectionsArchive(t *testing.T) {
	hs := newTestDoor(t, "")
	mustOK := okCall(t, hs)
	scroll := func(name string) string {
		out := mustOK("POST", "/collections/"+name+"/points/scroll", `{"with_vector": true, "with_payload": true}`)
		b, _ := json.Marshal(out["result"])
		return string(b)
	}
	if list := mustOK("GET", "/snapshots", "")["result"].([]any); len(list) != 0 {
		t.Fatalf("full snapshots before any: %v", list)
	}
	for _, name := range []string{"b", "a"} {
		mustOK("PUT", "/collections/"+name, `{"vectors": {"size": 2, "distance": "Dot"}}`)
		mustOK("PUT", "/collections/"+name+"/points?wait=true",
			`{"points": [{"id": 1, "vector": [1, 0], "payload": {"in": "`+name+`"}}]}`)
	}
	want := map[string]string{"a": scroll("a"), "b": scroll("b")}
	desc := mustOK("POST", "/snapshots?wait=true", "")["result"].(map[string]any)
	name := desc["name"].(string)
	if !strings.HasPrefix(name, fullSnapshotPrefix) || !strings.HasSuffix(name, snapshotSuffix) {
		t.Fatalf("full snapshot description %v", desc)
	}
	second := mustOK("POST", "/snapshots", "")["result"].(map[string]any)["name"].(string)
	if second == name {
		t.Fatalf("two full snapshots named %s", name)
	}
	list := mustOK("GET", "/snapshots", "")["result"].([]any)
	var names []string
	for _, d := range list {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	if !slices.Contains(names, name) || !slices.Contains(names, second) || len(names) != 2 {
		t.Fatalf("full snapshots %v, want %s and %s", names, name, second)
	}
	if list := mustOK("GET", "/collections/a/snapshots", "")["result"].([]any); len(list) != 0 {
		t.Fatalf("a full snapshot listed as a collection's: %v", list)
	}

	file := download(t, hs, "/snapshots/"+name, desc)
	tr := tar.NewReader(bytes.NewReader(file))
	var entries []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, h.Name)
		archive, _ := io.ReadAll(tr)
		coll := strings.TrimSuffix(h.Name, snapshotSuffix)
		mustOK("PUT", "/collections/"+coll+"/points?wait=true", `{"points": [{"id": 2, "vector": [0, 1]}]}`)
		if code, out := upload(t, hs, hs.URL, coll, archive); code != 200 {
			t.Fatalf("recover %s from the full snapshot's entry: %d %v", coll, code, out)
		}
		if got := scroll(coll); got != want[coll] {
			t.Fatalf("%s recovered from the full snapshot:\n got %s\nwant %s", coll, got, want[coll])
		}
	}
	if !slices.Equal(entries, []string{"a.snapshot", "b.snapshot"}) {
		t.Fatalf("full snapshot entries %v", entries)
	}

	for _, bad := range []string{"a-1-x.snapshot", "..%2fCURRENT", "full-snapshot-x.txt"} {
		if code, out := call(t, hs, "DELETE", "/snapshots/"+bad, ""); code != 400 && code != 404 {
			t.Errorf("delete %s: %d %v", bad, code, out)
		}
		if code, out := call(t, hs, "GET", "/snapshots/"+bad, ""); code != 400 && code != 404 {
			t.Errorf("download %s: %d %v", bad, code, out)
		}
	}
	mustOK("DELETE", "/snapshots/"+name, "")
	if code, _ := call(t, hs, "DELETE", "/snapshots/"+name, ""); code != 404 {
		t.Fatalf("deleting a deleted full snapshot: %d", code)
	}
	if list := mustOK("GET", "/snapshots", "")["result"].([]any); len(list) != 1 {
		t.Fatalf("full snapshots after a delete: %v", list)
	}
}
