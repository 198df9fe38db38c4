package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

func TestCurrentRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, seq := range []uint64{0, 1, 0xdeadbeef, ^uint64(0)} {
		if err := WriteCurrent(vfs.Default, dir, seq); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCurrent(vfs.Default, dir)
		if err != nil || got != seq {
			t.Fatalf("ReadCurrent = %d, %v; want %d", got, err, seq)
		}
	}
}

func TestDecodeCurrentRejectsEveryBitFlip(t *testing.T) {
	good := EncodeCurrent(42)
	for i := range good {
		for bit := range 8 {
			bad := bytes.Clone(good)
			bad[i] ^= 1 << bit
			if seq, err := DecodeCurrent(bad); err == nil {
				t.Fatalf("flip of byte %d bit %d accepted as seq %d", i, bit, seq)
			} else if !errors.Is(err, ErrCorrupt) || !errors.Is(err, indexfile.ErrCorrupt) {
				t.Fatalf("flip of byte %d bit %d: %v does not match ErrCorrupt", i, bit, err)
			}
		}
	}
}

func TestReadCurrentMissingIsNotExist(t *testing.T) {
	if _, err := ReadCurrent(vfs.Default, t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want ErrNotExist", err)
	}
}

func testManifest() Manifest {
	return Manifest{Format: 1, Seq: 7, Dim: 4, Metric: "cosine", M: 16, EfConstruction: 200,
		Quantization: "none", Fsync: "always", Count: 3, Files: []File{{Name: "index.hnsw", Size: 5}}}
}

func TestManifestRoundTripChecksFiles(t *testing.T) {
	dir := t.TempDir()
	m := testManifest()
	if err := os.WriteFile(filepath.Join(dir, "index.hnsw"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteManifest(vfs.Default, dir, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(vfs.Default, dir)
	if err != nil || got.Seq != 7 || got.Files[0] != m.Files[0] {
		t.Fatalf("ReadManifest = %+v, %v", got, err)
	}
	// A listed file of the wrong size (a snapshot whose write was torn) is corrupt.
	if err := os.WriteFile(filepath.Join(dir, "index.hnsw"), []byte("1234"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(vfs.Default, dir); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short file: got %v, want ErrCorrupt", err)
	}
}

func TestDecodeManifestRejectsBadContent(t *testing.T) {
	good, err := EncodeManifest(testManifest())
	if err != nil {
		t.Fatal(err)
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x20
		if _, err := DecodeManifest(bad); err == nil {
			t.Fatalf("flip at byte %d accepted", i)
		}
	}
	for name, m := range map[string]Manifest{
		"format 3":       func() Manifest { m := testManifest(); m.Format = 3; return m }(),
		"wal_head in 1":  func() Manifest { m := testManifest(); m.Format, m.WALHead = 1, true; return m }(),
		"dim 0":          func() Manifest { m := testManifest(); m.Dim = 0; return m }(),
		"path traversal": func() Manifest { m := testManifest(); m.Files[0].Name = "../x"; return m }(),
	} {
		data, _ := EncodeManifest(m)
		if _, err := DecodeManifest(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.idx")
	m := Metadata{IDs: []uint64{1, 5, 9}, Offsets: []uint64{0, 2, 2, 9}, Data: []byte(`{}{"a":1}`)}
	if err := WriteMetadata(vfs.Default, path, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetadata(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalU64(got.IDs, m.IDs) || !equalU64(got.Offsets, m.Offsets) || !bytes.Equal(got.Data, m.Data) {
		t.Fatalf("got %+v", got)
	}
}

func TestReadMetadataRejectsUnsortedIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.idx")
	m := Metadata{IDs: []uint64{5, 1}, Offsets: []uint64{0, 0, 0}}
	if err := WriteMetadata(vfs.Default, path, m); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetadata(vfs.Default, path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzDecodeCurrent(f *testing.F) {
	f.Add(EncodeCurrent(0))
	f.Add(EncodeCurrent(123456789))
	f.Add([]byte("strata-current 1 zz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, err := DecodeCurrent(data)
		if err != nil {
			return
		}
		// An accepted line is canonical: it re-encodes byte for byte.
		if !bytes.Equal(EncodeCurrent(seq), data) {
			t.Fatalf("accepted %q, re-encodes as %q", data, EncodeCurrent(seq))
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	good, _ := EncodeManifest(testManifest())
	f.Add(good)
	v2 := testManifest()
	v2.Format, v2.WALHead = 2, true
	good2, _ := EncodeManifest(v2)
	f.Add(good2)
	v4 := Manifest{Format: 4, WALHead: true, Files: []File{{Name: "deletes.00.idx", Size: 40}},
		Vectors: []VectorField{{Name: "", Dim: 2, Metric: "l2", M: 16, EfConstruction: 200, Quantization: "none",
			Segments: []Segment{{File: "0000000000000001-0000.hnsw", Size: 9, Live: 1, Deleted: 1}}, DeletesFile: "deletes.00.idx"}}}
	good4, _ := EncodeManifest(v4)
	f.Add(good4)
	f.Add([]byte("{}\ncrc32c:00000000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if err := m.validate(); err != nil {
			t.Fatalf("accepted an invalid manifest: %v", err)
		}
	})
}

func FuzzReadMetadata(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed")
	if err := WriteMetadata(vfs.Default, seed, Metadata{IDs: []uint64{3}, Offsets: []uint64{0, 2}, Data: []byte("{}")}); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(seed)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "meta.idx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMetadata(vfs.Default, path)
		if err != nil {
			return
		}
		for i := range m.IDs {
			if m.Offsets[i+1] < m.Offsets[i] || m.Offsets[i+1] > uint64(len(m.Data)) {
				t.Fatalf("accepted bad offsets %v", m.Offsets)
			}
		}
	})
}

// FuzzReadIDTable reads arbitrary ids.idx files: ReadIDTable must not
// panic, and what it accepts must hold only what a collection writes.
func FuzzReadIDTable(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed")
	err := WriteIDTable(vfs.Default, seed, IDTable{Keys: []uint64{FirstStringKey, FirstStringKey + 2},
		Strings: []string{"doc-1", "é"}, Next: FirstStringKey + 3})
	if err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(seed)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), IDTableName)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		table, err := ReadIDTable(vfs.Default, path)
		if err != nil {
			if !errors.Is(err, indexfile.ErrCorrupt) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not corruption", err)
			}
			return
		}
		seen := map[string]bool{}
		for i, k := range table.Keys {
			s := table.Strings[i]
			if k < FirstStringKey || k >= table.Next || (i > 0 && k <= table.Keys[i-1]) || s == "" || len(s) > 512 || seen[s] {
				t.Fatalf("accepted entry %d: key %d %q (next %d)", i, k, s, table.Next)
			}
			seen[s] = true
		}
	})
}

// TestIDTableRoundTripAndRefusals prevents a damaged id table from loading:
// keys out of order, below 2^63 or not below next, a repeated string.
func TestIDTableRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	good := IDTable{Keys: []uint64{FirstStringKey, FirstStringKey + 5}, Strings: []string{"a", "bé"}, Next: FirstStringKey + 6}
	path := filepath.Join(dir, IDTableName)
	if err := WriteIDTable(vfs.Default, path, good); err != nil {
		t.Fatal(err)
	}
	got, err := ReadIDTable(vfs.Default, path)
	if err != nil || !slices.Equal(got.Keys, good.Keys) || !slices.Equal(got.Strings, good.Strings) || got.Next != good.Next {
		t.Fatalf("read back %+v, %v", got, err)
	}
	for name, bad := range map[string]IDTable{
		"descending":     {Keys: []uint64{FirstStringKey + 1, FirstStringKey}, Strings: []string{"a", "b"}, Next: FirstStringKey + 2},
		"integer key":    {Keys: []uint64{5}, Strings: []string{"a"}, Next: FirstStringKey},
		"not below next": {Keys: []uint64{FirstStringKey}, Strings: []string{"a"}, Next: FirstStringKey},
		"repeated":       {Keys: []uint64{FirstStringKey, FirstStringKey + 1}, Strings: []string{"a", "a"}, Next: FirstStringKey + 2},
		"empty string":   {Keys: []uint64{FirstStringKey}, Strings: []string{""}, Next: FirstStringKey + 1},
		"next too low":   {Next: 3},
	} {
		if err := WriteIDTable(vfs.Default, path, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadIDTable(vfs.Default, path); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestManifestSparseFieldsRoundTripAndRefusals prevents a manifest's
// sparse fields from being lost, or a damaged list from being loaded:
// a format 3 manifest with sparse fields reads back equal; a format 2 one
// with them, unsorted or repeated names, a name shared with a dense field,
// an unknown modifier and a file not listed (or listed for two fields) are
// corrupt; and a manifest without "sparse" (every one before sparse
// fields) reads as none.
func TestManifestSparseFieldsRoundTripAndRefusals(t *testing.T) {
	base := func() Manifest {
		return Manifest{Format: 3, WALHead: true, Seq: 3, Fsync: "always",
			Vectors: []VectorField{{Name: "d", Dim: 2, Metric: "l2", M: 16, EfConstruction: 200, Quantization: "none", IndexFile: "vectors.00.hnsw"}},
			Sparse:  []SparseField{{Name: "a", Modifier: "none", File: "sparse.00.idx"}, {Name: "b", Modifier: "idf", File: "sparse.01.idx"}},
			Files:   []File{{Name: "vectors.00.hnsw", Size: 1}, {Name: "sparse.00.idx", Size: 1}, {Name: "sparse.01.idx", Size: 1}, {Name: "meta.idx", Size: 1}}}
	}
	data, err := EncodeManifest(base())
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeManifest(data)
	if err != nil || len(got.Sparse) != 2 || got.Sparse[1] != base().Sparse[1] {
		t.Fatalf("round trip: %+v, %v", got.Sparse, err)
	}
	none := base()
	none.Sparse, none.Files = nil, []File{{Name: "vectors.00.hnsw", Size: 1}, {Name: "meta.idx", Size: 1}}
	data, _ = EncodeManifest(none)
	if bytes.Contains(data, []byte("sparse")) {
		t.Fatalf("a manifest without sparse fields names them: %s", data)
	}
	if got, err := DecodeManifest(data); err != nil || got.Sparse != nil {
		t.Fatalf("without sparse: %+v, %v", got.Sparse, err)
	}
	for name, edit := range map[string]func(*Manifest){
		"format 2":        func(m *Manifest) { *m = testManifest(); m.Sparse = base().Sparse },
		"unsorted":        func(m *Manifest) { m.Sparse[0].Name, m.Sparse[1].Name = "b", "a" },
		"repeated":        func(m *Manifest) { m.Sparse[1].Name = "a" },
		"dense name":      func(m *Manifest) { m.Sparse[0].Name = "d" },
		"modifier":        func(m *Manifest) { m.Sparse[0].Modifier = "bm42" },
		"file not listed": func(m *Manifest) { m.Sparse[0].File = "sparse.09.idx" },
		"file twice":      func(m *Manifest) { m.Sparse[1].File = "sparse.00.idx" },
		"dense file":      func(m *Manifest) { m.Sparse[0].File = "vectors.00.hnsw" },
	} {
		m := base()
		edit(&m)
		data, _ := EncodeManifest(m)
		if _, err := DecodeManifest(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}
