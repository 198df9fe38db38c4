package collection

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// FuzzReadArchive feeds the archive reader arbitrary bytes, seeded with
// real archives: it must refuse every one it cannot read with
// ErrArchive (never panic, never write outside its directory), and what
// it accepts must be exactly the files its manifest names, at their sizes.
func FuzzReadArchive(f *testing.F) {
	root := f.TempDir()
	c, err := Create(filepath.Join(root, "seed"), testOptions(), Tuning{CheckpointBytes: -1})
	if err != nil {
		f.Fatal(err)
	}
	var empty bytes.Buffer
	if _, err := c.Export(&empty); err != nil {
		f.Fatal(err)
	}
	f.Add(empty.Bytes())
	if err := c.Upsert(IntIDs([]uint64{1, 2, 3}), make([]float32, 3*testDim), nil); err != nil {
		f.Fatal(err)
	}
	var full bytes.Buffer
	if _, err := c.Export(&full); err != nil {
		f.Fatal(err)
	}
	if err := vfs.ReplaceFile(vfs.Default, filepath.Join(root, "seed", "qdrant.settings"), []byte(`{"vectors_map":true}`)); err != nil {
		f.Fatal(err)
	}
	var door bytes.Buffer
	if _, err := c.Export(&door); err != nil {
		f.Fatal(err)
	}
	c.Close()
	f.Add(door.Bytes())
	f.Add(full.Bytes())
	f.Add(full.Bytes()[:len(full.Bytes())/2])
	f.Add([]byte("strata-snapshot 1 0000000000000000\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := memfs.New()
		seq, err := readArchive(bytes.NewReader(data), fsys, "/restore")
		if err != nil {
			if !errors.Is(err, ErrArchive) {
				t.Fatalf("refused without ErrArchive: %v", err)
			}
			return
		}
		m, err := snapshot.ReadManifest(fsys, snapshotPath("/restore", seq))
		if err != nil {
			t.Fatalf("accepted an archive whose manifest does not read back: %v", err)
		}
		for _, s := range archiveSegments(m) {
			info, err := fsys.Stat(filepath.Join("/restore", snapshot.SegmentsDir, s.File))
			if err != nil || info.Size() != s.Size {
				t.Fatalf("segment %s: %v, %v", s.File, info, err)
			}
		}
		door, err := fsys.ReadDir("/restore")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range door {
			if info, err := fsys.Stat(filepath.Join("/restore", name)); err == nil && !info.IsDir() && !doorStateName.MatchString(name) {
				t.Fatalf("wrote %s, which is neither the snapshot's nor a door state file", name)
			}
		}
		names, err := fsys.ReadDir("/")
		if err != nil || len(names) != 1 || names[0] != "restore" {
			t.Fatalf("wrote outside its directory: %v %v", names, err)
		}
	})
}
