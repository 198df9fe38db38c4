package demo

import (
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/server/registry"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// collections adapts a registry to Collections, as package server does.
type collections struct{ *registry.Registry }

func (c collections) Collection(name string) (*collection.Collection, error) { return c.Get(name) }
func (c collections) CreateCollection(name string, opts collection.Options) (*collection.Collection, error) {
	return c.Create(name, opts)
}

func writePyPIDemo(t *testing.T, docs []string, halves []uint16, rows, cols int) string {
	t.Helper()
	dir := t.TempDir()
	dict := []byte("{'descr': '<f2', 'fortran_order': False, 'shape': (" +
		itoa(rows) + ", " + itoa(cols) + "), }\n")
	npy := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
	npy = append(npy, dict...)
	for _, h := range halves {
		npy = binary.LittleEndian.AppendUint16(npy, h)
	}
	if err := os.WriteFile(filepath.Join(dir, "vectors.f16.npy"), npy, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs.jsonl"), []byte(strings.Join(docs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func itoa(n int) string { return string(rune('0' + n)) } // shapes below 10

func openRegistry(t *testing.T) collections {
	r, err := registry.Open("/data", registry.Options{FS: memfs.New(), Ticks: make(chan time.Time),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return collections{r}
}

func TestLoadReadsAPyPIDemoDirectoryOnce(t *testing.T) {
	dir := writePyPIDemo(t, []string{`{"id": 7, "name": "numpy"}`, `{"id": 8, "name": "scipy"}`},
		[]uint16{0x3c00, 0, 0, 0x3c00}, 2, 2)
	to := openRegistry(t)
	name, loaded, err := Load(to, dir)
	if err != nil || name != "pypi" || loaded != 2 {
		t.Fatalf("Load: %q %d %v", name, loaded, err)
	}
	c, _ := to.Get("pypi")
	found, docs, _, err := c.Get(collection.IntIDs([]uint64{1}), false)
	if err != nil || len(found) != 1 || !strings.Contains(string(docs[0]), "scipy") || strings.Contains(string(docs[0]), `"id"`) {
		t.Fatalf("point 1 (line 2): %v %q %v", found, docs, err)
	}
	if _, loaded, err := Load(to, dir); err != nil || loaded != 0 {
		t.Fatalf("second Load: loaded %d, %v; want 0 (already there)", loaded, err)
	}
}

func TestLoadRefusesDocumentsThatDoNotMatchTheVectors(t *testing.T) {
	dir := writePyPIDemo(t, []string{`{"name": "numpy"}`}, []uint16{0, 0, 0, 0}, 2, 2)
	if _, _, err := Load(openRegistry(t), dir); err == nil || !strings.Contains(err.Error(), "1 documents for 2 vectors") {
		t.Fatalf("Load with one document for two vectors: %v", err)
	}
}

// The playground's word search needs a BM25 index on the demo's text, also
// on a demo collection loaded before the index was part of it.
func TestLoadGivesTheDemoATextIndexEvenWhenMadeWithoutOne(t *testing.T) {
	dir := writePyPIDemo(t, []string{`{"name": "orjson", "summary": "fast json parser"}`,
		`{"name": "pillow", "summary": "imaging library"}`}, []uint16{0x3c00, 0, 0, 0x3c00}, 2, 2)
	to := openRegistry(t)
	if _, err := to.CreateCollection("pypi", collection.Options{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(to, dir); err != nil {
		t.Fatal(err)
	}
	c, _ := to.Get("pypi")
	if fields := c.TextFields(); len(fields) != 1 || fields[0].Field != "summary" {
		t.Fatalf("text fields after Load over an older demo: %+v, want summary", fields)
	}

	fresh := openRegistry(t)
	if _, _, err := Load(fresh, dir); err != nil {
		t.Fatal(err)
	}
	c, _ = fresh.Get("pypi")
	hits, err := c.QueryText(nil, collection.TextQuery{Text: "json"}, 10, 10, nil, 1, text.Fusion{})
	if err != nil || len(hits) != 1 || hits[0].ID != collection.IntID(0) {
		t.Fatalf("BM25 \"json\" over a fresh demo: %+v %v, want point 0", hits, err)
	}
}
