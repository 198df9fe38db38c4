// Package vfstest checks that a vfs.FS behaves as the operating system's
// filesystem does, so that code tested on memfs or errorfs behaves the same
// on disk.
package vfstest

import (
	"errors"
	"io"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

// Run runs every conformance check; newDir returns the filesystem and an
// empty directory in it, fresh for each check.
func Run(t *testing.T, newDir func(t *testing.T) (vfs.FS, string)) {
	checks := []struct {
		name string
		fn   func(t *testing.T, fs vfs.FS, dir string)
	}{
		{"CreateRefusesExistingName", createRefusesExistingName},
		{"WriteReadRoundTrip", writeReadRoundTrip},
		{"ReadPastEndReportsEOF", readPastEndReportsEOF},
		{"OpenIsReadOnly", openIsReadOnly},
		{"MissingNamesReportNotExist", missingNamesReportNotExist},
		{"RenameReplacesTarget", renameReplacesTarget},
		{"MkdirAllReadDirRemoveAll", mkdirAllReadDirRemoveAll},
		{"RemoveRefusesNonEmptyDirectory", removeRefusesNonEmptyDirectory},
		{"TruncateShrinksAndGrows", truncateShrinksAndGrows},
		{"LockIsExclusiveUntilClosed", lockIsExclusiveUntilClosed},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			fs, dir := newDir(t)
			c.fn(t, fs, dir)
		})
	}
}

func writeFile(t *testing.T, fs vfs.FS, name, contents string) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(contents)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, fs vfs.FS, name string) string {
	t.Helper()
	b, err := vfs.ReadFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func createRefusesExistingName(t *testing.T, fs vfs.FS, dir string) {
	name := filepath.Join(dir, "f")
	writeFile(t, fs, name, "keep")
	if _, err := fs.Create(name); !errors.Is(err, iofs.ErrExist) {
		t.Fatalf("Create over an existing file: got %v, want fs.ErrExist", err)
	}
	if got := readFile(t, fs, name); got != "keep" {
		t.Fatalf("existing file changed to %q", got)
	}
}

func writeReadRoundTrip(t *testing.T, fs vfs.FS, dir string) {
	name := filepath.Join(dir, "f")
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("xxcd")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("ef")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("ab"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("h"), 7); err != nil { // leaves a zero at 6
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 8 || fi.IsDir() {
		t.Fatalf("File.Stat: %v, %v", fi, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, fs, name); got != "abcdef\x00h" {
		t.Fatalf("read back %q", got)
	}
	if fi, err := fs.Stat(name); err != nil || fi.Size() != 8 || fi.Name() != "f" {
		t.Fatalf("FS.Stat: %v, %v", fi, err)
	}
	if fi, err := fs.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("FS.Stat of a directory: %v, %v", fi, err)
	}
}

func readPastEndReportsEOF(t *testing.T, fs vfs.FS, dir string) {
	name := filepath.Join(dir, "f")
	writeFile(t, fs, name, "abc")
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 1); n != 2 || !errors.Is(err, io.EOF) || string(buf[:n]) != "bc" {
		t.Fatalf("short ReadAt: %d, %v", n, err)
	}
	if n, err := f.ReadAt(buf, 3); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("ReadAt at the end: %d, %v", n, err)
	}
}

func openIsReadOnly(t *testing.T, fs vfs.FS, dir string) {
	name := filepath.Join(dir, "f")
	writeFile(t, fs, name, "abc")
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("Write through a handle from Open succeeded")
	}
	if got := readFile(t, fs, name); got != "abc" {
		t.Fatalf("file changed to %q", got)
	}
}

func missingNamesReportNotExist(t *testing.T, fs vfs.FS, dir string) {
	missing := filepath.Join(dir, "missing")
	if _, err := fs.Open(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Open: %v", err)
	}
	if _, err := fs.Stat(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Stat: %v", err)
	}
	if err := fs.Remove(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Remove: %v", err)
	}
	if err := fs.Rename(missing, filepath.Join(dir, "other")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Rename: %v", err)
	}
	if _, err := fs.ReadDir(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("ReadDir: %v", err)
	}
	if err := fs.Truncate(missing, 0); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Truncate: %v", err)
	}
	if _, err := fs.Create(filepath.Join(missing, "f")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Create in a missing directory: %v", err)
	}
	if err := fs.RemoveAll(missing); err != nil {
		t.Errorf("RemoveAll of a missing name: %v", err)
	}
}

func renameReplacesTarget(t *testing.T, fs vfs.FS, dir string) {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, fs, a, "new")
	writeFile(t, fs, b, "old")
	if err := fs.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, fs, b); got != "new" {
		t.Fatalf("target holds %q", got)
	}
	if _, err := fs.Stat(a); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("old name still there: %v", err)
	}
	sub := filepath.Join(dir, "sub")
	if err := fs.MkdirAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := fs.Rename(b, filepath.Join(sub, "c")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, fs, filepath.Join(sub, "c")); got != "new" {
		t.Fatalf("moved file holds %q", got)
	}
}

func mkdirAllReadDirRemoveAll(t *testing.T, fs vfs.FS, dir string) {
	deep := filepath.Join(dir, "x", "y", "z")
	if err := fs.MkdirAll(deep); err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll(deep); err != nil {
		t.Fatalf("MkdirAll of an existing directory: %v", err)
	}
	for _, n := range []string{"c", "a", "b"} {
		writeFile(t, fs, filepath.Join(dir, "x", n), n)
	}
	writeFile(t, fs, filepath.Join(deep, "f"), "f")
	names, err := fs.ReadDir(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c", "y"}; !slices.Equal(names, want) {
		t.Fatalf("ReadDir = %v, want %v", names, want)
	}
	if err := fs.MkdirAll(filepath.Join(dir, "x", "a", "sub")); err == nil {
		t.Fatal("MkdirAll through a file succeeded")
	}
	if err := fs.RemoveAll(filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if names, err := fs.ReadDir(dir); err != nil || len(names) != 0 {
		t.Fatalf("after RemoveAll: %v, %v", names, err)
	}
}

func removeRefusesNonEmptyDirectory(t *testing.T, fs vfs.FS, dir string) {
	sub := filepath.Join(dir, "sub")
	if err := fs.MkdirAll(sub); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fs, filepath.Join(sub, "f"), "f")
	if err := fs.Remove(sub); err == nil {
		t.Fatal("Remove of a non-empty directory succeeded")
	}
	if err := fs.Remove(filepath.Join(sub, "f")); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove(sub); err != nil {
		t.Fatalf("Remove of an empty directory: %v", err)
	}
}

func truncateShrinksAndGrows(t *testing.T, fs vfs.FS, dir string) {
	name := filepath.Join(dir, "f")
	writeFile(t, fs, name, "abcdef")
	if err := fs.Truncate(name, 2); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, fs, name); got != "ab" {
		t.Fatalf("after shrinking: %q", got)
	}
	if err := fs.Truncate(name, 4); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, fs, name); got != "ab\x00\x00" {
		t.Fatalf("after growing: %q", got)
	}
}

func lockIsExclusiveUntilClosed(t *testing.T, fs vfs.FS, dir string) {
	name := filepath.Join(dir, "LOCK")
	l, err := fs.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(name); err != nil {
		t.Fatalf("Lock did not create the file: %v", err)
	}
	if l2, err := fs.Lock(name); !errors.Is(err, vfs.ErrLocked) {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("second Lock: got %v, want ErrLocked", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = fs.Lock(name)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
