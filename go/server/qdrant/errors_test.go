package qdrant

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/errkind"
)

// TestCreateOutOfRangeAnswersTheEnginesMessage prevents the Qdrant door
// from keeping bounds of its own (it capped ef_construct at 2^20 with its
// own wording, M at 256 as "unsupported"): the engine's limit and message
// answer, with Qdrant's 400.
func TestCreateOutOfRangeAnswersTheEnginesMessage(t *testing.T) {
	hs := newTestDoor(t, "")
	for _, c := range []struct{ body, want string }{
		{`{"vectors": {"size": 4, "distance": "Cosine"}, "hnsw_config": {"ef_construct": 4294967296}}`,
			"ef_construction must be in [1, 1048576], got 4294967296"},
		{`{"vectors": {"size": 4, "distance": "Cosine"}, "hnsw_config": {"m": 300}}`,
			"M must be in [2, 256], got 300"},
		{`{"vectors": {"size": 65537, "distance": "Cosine"}}`,
			"dim must be in [1, 65536], got 65537"},
	} {
		status, out := call(t, hs, "PUT", "/collections/c", c.body)
		st, _ := out["status"].(map[string]any)
		msg, _ := st["error"].(string)
		if status != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q, want 400 with %q", c.body, status, msg, c.want)
		}
	}
	if status, out := call(t, hs, "GET", "/collections/c", ""); status != http.StatusNotFound {
		t.Errorf("a refused create left a collection: %d %v", status, out)
	}
}

// TestEveryKindHasOneStatus prevents a kind from reaching a Qdrant client
// as 500 (kept for bugs, damaged files and unexplained I/O errors).
func TestEveryKindHasOneStatus(t *testing.T) {
	want := map[errkind.Kind]int{
		errkind.Internal: 500, errkind.Invalid: 400, errkind.Type: 400, errkind.NotFound: 404,
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
		if got := status(fmt.Errorf("context: %w", errkind.New(k, "x"))); got != w {
			t.Errorf("kind %v: %d, want %d", k, got, w)
		}
	}
}

// scanIDs, documents and count are the collection's reads for tests on an
// open collection, where their error (ErrClosed) cannot happen.
func scanIDs(c *collection.Collection, f *meta.Filter, after uint64, hasAfter bool, limit int) []uint64 {
	ids, err := c.ScanIDs(f, collection.IntID(after), hasAfter, limit)
	if err != nil {
		panic(err)
	}
	out := make([]uint64, len(ids))
	for i, id := range ids {
		out[i] = id.Int()
	}
	return out
}

func documents(c *collection.Collection, ids []int64) [][]byte {
	in := make([]collection.ID, len(ids))
	for i, id := range ids {
		in[i] = collection.IntID(uint64(id))
		if id < 0 {
			in[i] = collection.NoID
		}
	}
	docs, err := c.Documents(in)
	if err != nil {
		panic(err)
	}
	return docs
}

func count(c *collection.Collection, f *meta.Filter) int {
	n, err := c.Count(f)
	if err != nil {
		panic(err)
	}
	return n
}
