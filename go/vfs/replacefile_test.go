package vfs_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// TestReplaceFileSurvivesALeftoverTemporaryFile: a crash can leave
// name.tmp behind; the next replacement must not fail on it.
func TestReplaceFileSurvivesALeftoverTemporaryFile(t *testing.T) {
	fs := memfs.New()
	name := filepath.Join("/d", "CURRENT")
	if err := fs.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if err := vfs.ReplaceFile(fs, name, []byte("old")); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(name + ".tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Close()
	if err := vfs.ReplaceFile(fs, name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil) // only what was made durable survives
	if got, err := vfs.ReadFile(fs, name); err != nil || string(got) != "new" {
		t.Fatalf("after a crash: %q, %v", got, err)
	}
}
