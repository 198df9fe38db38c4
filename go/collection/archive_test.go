package collection

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// archiveSchema has every kind of field an archive carries: dense,
// multivector and sparse.
func archiveSchema() Options {
	return Options{Vectors: []VectorField{
		{Name: "a", Dim: 4, Metric: metric.L2},
		{Name: "m", Dim: 2, Metric: metric.IP, Multivector: MaxSim},
	}, Sparse: []SparseField{{Name: "s"}}}
}

// fillArchived writes points of every field, string and integer ids,
// deletions and an expiring point, across two checkpoints (so that the
// fields have several segments and a deletes file), and returns the ids.
func fillArchived(t *testing.T, c *Collection) []ID {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var ids []ID
	for round := range 2 {
		n := 60
		batch := make([]ID, n)
		docs := make([]meta.Document, n)
		dense := make([]float32, 4*n)
		for i := range dense {
			dense[i] = rng.Float32()
		}
		var multi []float32
		var counts, points []int
		var indices []uint32
		var values []float32
		var sparseCounts []int
		for i := range batch {
			if i%3 == 0 {
				batch[i] = StringID(fmt.Sprintf("doc-%d-%d", round, i))
			} else {
				batch[i] = IntID(uint64(round*1000 + i))
			}
			d, err := meta.ParseDocument(fmt.Appendf(nil, `{"round": %d, "i": %d, "tags": ["x", %q]}`, round, i, batch[i].String()))
			if err != nil {
				t.Fatal(err)
			}
			docs[i] = d
			if i%2 == 0 {
				points = append(points, i)
				counts = append(counts, 1+i%3)
				for range 2 * (1 + i%3) {
					multi = append(multi, rng.Float32())
				}
			}
			sparseCounts = append(sparseCounts, 2)
			indices = append(indices, uint32(i), uint32(i+100))
			values = append(values, rng.Float32(), rng.Float32())
		}
		err := c.UpsertPoints(batch, map[string]FieldValues{
			"a": {Vectors: dense},
			"m": {Points: points, Vectors: multi, Counts: counts},
			"s": {Indices: indices, Vectors: values, Counts: sparseCounts},
		}, docs)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, batch...)
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Delete(ids[4:10]); err != nil {
		t.Fatal(err)
	}
	return ids
}

// archivedState is everything a reader sees of ids, as text.
func archivedState(t *testing.T, c *Collection, ids []ID) string {
	t.Helper()
	var out bytes.Buffer
	for _, field := range []string{"a", "m"} {
		found, vectors, counts, err := c.GetVectors(ids, field)
		if err != nil {
			t.Fatal(err)
		}
		bits := make([]uint32, len(vectors)) // byte-exact, not printed floats
		for i, v := range vectors {
			bits[i] = math.Float32bits(v)
		}
		fmt.Fprintln(&out, field, found, bits, counts)
	}
	found, docs, _, err := c.Get(ids, false)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "%v %q\n", found, docs)
	outIDs, dists := make([]ID, 10), make([]float32, 10)
	if _, err := c.QueryField("a", []float32{0.5, 0.5, 0.5, 0.5}, 10, 0, nil, nil, 1, outIDs, dists); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(&out, outIDs, dists, c.Len())
	return out.String()
}

func exportBytes(t *testing.T, c *Collection) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.Export(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRestoreGivesBackTheExportedCollection(t *testing.T) {
	root := t.TempDir()
	c, err := Create(filepath.Join(root, "src"), archiveSchema(), Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := fillArchived(t, c)
	want := archivedState(t, c, ids)
	archive := exportBytes(t, c)

	dst := filepath.Join(root, "dst")
	if _, err := Restore(bytes.NewReader(archive), dst, Tuning{}); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, dst, Tuning{})
	if got := archivedState(t, r, ids); got != want {
		t.Fatalf("restored collection differs:\n got %s\nwant %s", got, want)
	}
	// The restored collection takes writes and keeps them across a reopen.
	if _, err := r.Delete(ids[:1]); err != nil {
		t.Fatal(err)
	}
	want = archivedState(t, r, ids)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = mustOpen(t, dst, Tuning{})
	defer r.Close()
	if got := archivedState(t, r, ids); got != want {
		t.Fatalf("restored collection after a write and a reopen differs:\n got %s\nwant %s", got, want)
	}
	// An archive of the same state is the same bytes.
	if again := exportBytes(t, c); !bytes.Equal(again, archive) {
		t.Fatalf("a second export of an unchanged collection differs (%d and %d bytes)", len(again), len(archive))
	}
}

func TestRestoreRefusesAnExistingDirectory(t *testing.T) {
	root := t.TempDir()
	c := mustCreate(t, filepath.Join(root, "src"), Tuning{})
	defer c.Close()
	archive := exportBytes(t, c)
	if _, err := Restore(bytes.NewReader(archive), filepath.Join(root, "src"), Tuning{}); !errors.Is(err, ErrExists) {
		t.Fatalf("restore over a collection: %v, want ErrExists", err)
	}
}

// archiveEntries splits an archive into its entries.
type archiveEntry struct {
	hdr  tar.Header
	data []byte
}

func readEntries(t *testing.T, archive []byte) []archiveEntry {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	var out []archiveEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, archiveEntry{hdr: *h, data: data})
	}
}

func writeEntries(t *testing.T, entries []archiveEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRestoreOfABadArchiveLeavesNothing prevents a damaged, forged or
// foreign archive from becoming a collection, or leaving half of one: each
// fails with ErrArchive and the parent directory is as before.
func TestRestoreOfABadArchiveLeavesNothing(t *testing.T) {
	root := t.TempDir()
	c, err := Create(filepath.Join(root, "src"), archiveSchema(), Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fillArchived(t, c)
	archive := exportBytes(t, c)
	entries := readEntries(t, archive)
	find := func(prefix string) int {
		for i, e := range entries {
			if len(e.hdr.Name) >= len(prefix) && e.hdr.Name[:len(prefix)] == prefix {
				return i
			}
		}
		t.Fatalf("no entry %q", prefix)
		return -1
	}
	edit := func(fn func(es []archiveEntry) []archiveEntry) []byte {
		es := make([]archiveEntry, len(entries))
		for i, e := range entries {
			es[i] = archiveEntry{hdr: e.hdr, data: slices.Clone(e.data)}
		}
		return writeEntries(t, fn(es))
	}
	findSuffix := func(suffix string) int {
		for i, e := range entries {
			if strings.HasSuffix(e.hdr.Name, suffix) {
				return i
			}
		}
		t.Fatalf("no entry *%q", suffix)
		return -1
	}
	seg, state, meta := find("segments/"), findSuffix(".state"), find("snapshot/")
	cases := map[string][]byte{
		"empty":            nil,
		"not a tar stream": []byte("hello, this is not an archive at all"),
		"cut in a segment": archive[:len(archive)-len(entries[len(entries)-1].data)/2-1024],
		"cut after the manifest": func() []byte {
			return edit(func(es []archiveEntry) []archiveEntry { return es[:2] })
		}(),
		"version 3": edit(func(es []archiveEntry) []archiveEntry {
			es[0].data = bytes.Replace(es[0].data, []byte("snapshot 2 "), []byte("snapshot 3 "), 1)
			return es
		}),
		"a door entry in version 1": edit(func(es []archiveEntry) []archiveEntry {
			es[0].data = bytes.Replace(es[0].data, []byte("snapshot 2 "), []byte("snapshot 1 "), 1)
			return append(es, doorEntry("door/qdrant.settings", "{}"))
		}),
		"a door entry escaping": edit(func(es []archiveEntry) []archiveEntry {
			return append(es, doorEntry("door/../escaped", "x"))
		}),
		"a door entry not a door's": edit(func(es []archiveEntry) []archiveEntry {
			return append(es, doorEntry("door/CURRENT", "x"))
		}),
		"a door entry twice": edit(func(es []archiveEntry) []archiveEntry {
			return append(es, doorEntry("door/qdrant.settings", "{}"), doorEntry("door/qdrant.settings", "{}"))
		}),
		"door entries out of order": edit(func(es []archiveEntry) []archiveEntry {
			return append(es, doorEntry("door/qdrant.settings", "{}"), doorEntry("door/qdrant.payload-schema", "{}"))
		}),
		"a door entry cut short": func() []byte {
			whole := edit(func(es []archiveEntry) []archiveEntry {
				return append(es, doorEntry("door/qdrant.settings", strings.Repeat("x", 4096)))
			})
			return whole[:len(whole)-1024-2048]
		}(),
		"flipped bit in a segment": edit(func(es []archiveEntry) []archiveEntry {
			es[seg].data[len(es[seg].data)/2] ^= 0x10
			return es
		}),
		"flipped bit in a state run": edit(func(es []archiveEntry) []archiveEntry {
			es[state].data[len(es[state].data)-3] ^= 0x01
			return es
		}),
		"flipped bit in a snapshot file": edit(func(es []archiveEntry) []archiveEntry {
			es[meta].data[len(es[meta].data)-3] ^= 0x01
			return es
		}),
		"flipped bit in the manifest": edit(func(es []archiveEntry) []archiveEntry {
			es[1].data[10] ^= 0x01
			return es
		}),
		"path traversal": edit(func(es []archiveEntry) []archiveEntry {
			es[meta].hdr.Name = "snapshot/../../../escaped"
			return es
		}),
		"symlink in place of a file": edit(func(es []archiveEntry) []archiveEntry {
			es[meta].hdr = tar.Header{Typeflag: tar.TypeSymlink, Name: es[meta].hdr.Name, Linkname: "/etc/passwd"}
			es[meta].data = nil
			return es
		}),
		"file longer than its manifest says": edit(func(es []archiveEntry) []archiveEntry {
			es[seg].data = append(es[seg].data, 0)
			return es
		}),
		"entry after the last": edit(func(es []archiveEntry) []archiveEntry {
			return append(es, archiveEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "extra", Mode: 0o644}, data: []byte("x")})
		}),
		"entries swapped": edit(func(es []archiveEntry) []archiveEntry {
			es[2], es[3] = es[3], es[2]
			return es
		}),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(root, "dst")
			_, err := Restore(bytes.NewReader(bad), dst, Tuning{})
			if !errors.Is(err, ErrArchive) {
				t.Fatalf("restore: %v, want ErrArchive", err)
			}
			t.Log(err)
			names, rerr := os.ReadDir(root)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if len(names) != 1 || names[0].Name() != "src" {
				t.Fatalf("after a refused restore the directory holds %v", names)
			}
			if _, serr := os.Stat(filepath.Join(root, "escaped")); serr == nil {
				t.Fatal("an entry escaped the collection directory")
			}
		})
	}
}

// TestWritesDuringExportSucceed prevents an export from holding writers
// back while it copies: a write made while the export is stalled mid-copy
// is acknowledged, and the archive holds the state from the export's start.
func TestWritesDuringExportSucceed(t *testing.T) {
	root := t.TempDir()
	c := mustCreate(t, filepath.Join(root, "src"), Tuning{CheckpointBytes: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	if err := c.Upsert(IntIDs([]uint64{1, 2, 3}), randomVectors(rng, 3), nil); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := c.Export(pw)
		pw.CloseWithError(err)
		done <- err
	}()
	// Once the first bytes arrive the export holds its snapshot and is
	// blocked on this reader.
	first := make([]byte, 512)
	if _, err := io.ReadFull(pr, first); err != nil {
		t.Fatal(err)
	}
	if err := c.Upsert(IntIDs([]uint64{4}), randomVectors(rng, 1), nil); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "dst")
	if _, err := Restore(bytes.NewReader(append(first, rest...)), dst, Tuning{}); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, dst, Tuning{})
	defer r.Close()
	if r.Len() != 3 || c.Len() != 4 {
		t.Fatalf("restored %d points, source %d; want 3 and 4", r.Len(), c.Len())
	}
}

func doorEntry(name, data string) archiveEntry {
	return archiveEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}, data: []byte(data)}
}

// TestArchiveCarriesDoorStateFiles guards version 2's door entries: the
// door state files of a collection directory (<door>.<what>) go into the
// archive and come back beside the restored collection, byte for byte,
// and nothing else of the directory does; a version 1 archive (no door
// entries) still restores.
func TestArchiveCarriesDoorStateFiles(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	c, err := Create(src, archiveSchema(), Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fillArchived(t, c)
	files := map[string]string{"qdrant.payload-schema": `{"indexes":{"a":{"type":"keyword"}}}`, "qdrant.settings": `{"vectors_map":true}`}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "notes.txt.bak"), []byte("not a door's"), 0o644); err != nil {
		t.Fatal(err)
	}
	archive := exportBytes(t, c)
	dst := filepath.Join(root, "dst")
	if _, err := Restore(bytes.NewReader(archive), dst, Tuning{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Fatalf("door state %s restored as %q (%v), want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "notes.txt.bak")); err == nil {
		t.Fatal("a file that is no door state file went into the archive")
	}
	// The same archive as version 1 without its door entries.
	var v1 []archiveEntry
	for _, e := range readEntries(t, archive) {
		if !strings.HasPrefix(e.hdr.Name, archiveDoorDir) {
			v1 = append(v1, e)
		}
	}
	v1[0].data = bytes.Replace(v1[0].data, []byte("snapshot 2 "), []byte("snapshot 1 "), 1)
	old := filepath.Join(root, "old")
	if _, err := Restore(bytes.NewReader(writeEntries(t, v1)), old, Tuning{}); err != nil {
		t.Fatalf("a version 1 archive: %v", err)
	}
	if r, err := Open(old, Tuning{}); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
}
