package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// TestDeletesRoundTripAndRefusals: a deletes file reads back as written,
// and one that does not fit its manifest (another segment count) or holds
// keys out of order is refused as corruption.
func TestDeletesRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "deletes.00.idx")
	want := [][]uint64{{1, 5, 9}, nil, {1 << 63, 1<<63 + 1}}
	if err := WriteDeletes(vfs.Default, path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDeletes(vfs.Default, path, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("segment %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ReadDeletes(vfs.Default, path, 2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read as 2 segments: %v, want ErrCorrupt", err)
	}
	if err := WriteDeletes(vfs.Default, path, [][]uint64{{3, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDeletes(vfs.Default, path, 1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a key twice: %v, want ErrCorrupt", err)
	}
}

// TestManifestSegmentRefusals: a format 4 manifest names segment files
// by their pattern, each once, with a deletes file exactly when a segment
// has deleted keys; format 3 has no segments.
func TestManifestSegmentRefusals(t *testing.T) {
	field := func(segs []Segment, deletes string) VectorField {
		return VectorField{Name: "", Dim: 2, Metric: "l2", M: 16, EfConstruction: 200, Quantization: "none",
			Segments: segs, DeletesFile: deletes}
	}
	ok := Segment{File: "0000000000000001-0000.hnsw", Size: 10, Live: 2}
	for _, tc := range []struct {
		name string
		m    Manifest
		good bool
	}{
		{"one segment", Manifest{Format: 4, WALHead: true, Vectors: []VectorField{field([]Segment{ok}, "")}}, true},
		{"deletes", Manifest{Format: 4, WALHead: true, Vectors: []VectorField{field([]Segment{{File: ok.File, Live: 1, Deleted: 1}}, "deletes.00.idx")},
			Files: []File{{Name: "deletes.00.idx"}}}, true},
		{"deletes file missing", Manifest{Format: 4, WALHead: true, Vectors: []VectorField{field([]Segment{{File: ok.File, Deleted: 1}}, "")}}, false},
		{"deletes file unlisted", Manifest{Format: 4, WALHead: true, Vectors: []VectorField{field([]Segment{{File: ok.File, Deleted: 1}}, "deletes.00.idx")}}, false},
		{"a segment twice", Manifest{Format: 4, WALHead: true, Vectors: []VectorField{field([]Segment{ok, ok}, "")}}, false},
		{"a path", Manifest{Format: 4, WALHead: true, Vectors: []VectorField{field([]Segment{{File: "../0000000000000001-0000.hnsw"}}, "")}}, false},
		{"segments in format 3", Manifest{Format: 3, WALHead: true, Vectors: []VectorField{field([]Segment{ok}, "")}}, false},
	} {
		data, err := EncodeManifest(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DecodeManifest(data)
		if (err == nil) != tc.good {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// FuzzReadDeletes reads arbitrary deletes files: ReadDeletes must not
// panic, and what it accepts must hold only what a checkpoint writes.
func FuzzReadDeletes(f *testing.F) {
	seed := filepath.Join(f.TempDir(), "seed")
	if err := WriteDeletes(vfs.Default, seed, [][]uint64{{1, 2}, nil, {7}}); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(seed)
	f.Add(data, 3)
	f.Fuzz(func(t *testing.T, data []byte, segments int) {
		if segments < 0 || segments > 64 {
			return
		}
		path := filepath.Join(t.TempDir(), "deletes.00.idx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadDeletes(vfs.Default, path, segments)
		if err != nil {
			if !errors.Is(err, indexfile.ErrCorrupt) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not corruption", err)
			}
			return
		}
		if len(got) != segments {
			t.Fatalf("%d segments, want %d", len(got), segments)
		}
		for i, d := range got {
			for j := 1; j < len(d); j++ {
				if d[j] <= d[j-1] {
					t.Fatalf("accepted segment %d out of order: %v", i, d)
				}
			}
		}
	})
}
