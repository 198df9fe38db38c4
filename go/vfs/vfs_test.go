package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestCreateRefusesToClobberExistingFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Create(name); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an existing file: got %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(name); string(b) != "keep" {
		t.Fatalf("existing file changed to %q", b)
	}
}

func TestDefaultRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tmp, final := filepath.Join(dir, "tmp"), filepath.Join(dir, "final")
	f, err := Default.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("xxcdef")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("ab"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Default.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	if err := Default.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp name still exists after rename: %v", err)
	}
	r, err := Default.Open(final)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 6)
	if _, err := r.ReadAt(buf, 0); err != nil || string(buf) != "abcdef" {
		t.Fatalf("read back %q, %v", buf, err)
	}
	if fi, err := r.Stat(); err != nil || fi.Size() != 6 {
		t.Fatalf("Stat: %v, %v", fi, err)
	}
	if err := Default.Remove(final); err != nil {
		t.Fatal(err)
	}
}
