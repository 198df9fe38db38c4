package qdrant

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
)

// TestPayloadKeysEditAsLocalMode replays set_payload with a key and
// delete_payload of nested keys against the answers of qdrant-client's
// local mode (testdata/payload_keys.json, made by its own setter and
// deleter): objects made where a key meets a non-object, [] where a list
// step meets a non-list, nothing past a list's end, each element through
// [], and a null in the payload removing the key.
func TestPayloadKeysEditAsLocalMode(t *testing.T) {
	data, err := os.ReadFile("testdata/payload_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Payload json.RawMessage
		Cases   []struct {
			Doc, Set, Delete json.RawMessage
			Key              string
		}
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	src, err := meta.ParseDocument(golden.Payload)
	if err != nil {
		t.Fatal(err)
	}
	canonical := func(raw json.RawMessage) string {
		d, err := meta.ParseDocument(raw)
		if err != nil {
			t.Fatal(err)
		}
		return string(d.JSON())
	}
	for _, c := range golden.Cases {
		doc, err := meta.ParseDocument(c.Doc)
		if err != nil {
			t.Fatal(err)
		}
		path, err := checkKey(c.Key, "key")
		if err != nil {
			t.Fatalf("key %q: %v", c.Key, err)
		}
		set, err := doc.SetAt(path, src)
		if err != nil {
			t.Fatalf("%s set at %q: %v", c.Doc, c.Key, err)
		}
		if got, want := string(set.JSON()), canonical(c.Set); got != want {
			t.Errorf("%s set at %q:\n got  %s\n want %s", c.Doc, c.Key, got, want)
		}
		del, err := doc.DeleteAt(path)
		if err != nil {
			t.Fatalf("%s delete %q: %v", c.Doc, c.Key, err)
		}
		if got, want := string(del.JSON()), canonical(c.Delete); got != want {
			t.Errorf("%s delete %q:\n got  %s\n want %s", c.Doc, c.Key, got, want)
		}
		if string(doc.JSON()) != canonical(c.Doc) {
			t.Fatalf("SetAt or DeleteAt changed their receiver %s", c.Doc)
		}
	}
	if len(golden.Cases) < 50 {
		t.Fatalf("%d cases: the golden file is cut", len(golden.Cases))
	}
}
