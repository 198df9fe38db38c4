package errorfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

func TestNthSyncFailsAndOthersPass(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, Rule{Op: OpSync, N: 2})
	f, err := fs.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("second sync: got %v, want ErrInjected", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("third sync after a non-crash failure: %v", err)
	}
	if !fs.Injected() || fs.Count(OpSync) != 3 || fs.Count(OpAny) != 4 {
		t.Fatalf("injected=%v syncs=%d all=%d", fs.Injected(), fs.Count(OpSync), fs.Count(OpAny))
	}
}

func TestTornWriteKeepsPrefixOnly(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a")
	fs := New(vfs.Default, Rule{Op: OpWrite, N: 2, TornBytes: 3})
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write([]byte("world")); n != 3 || !errors.Is(err, ErrInjected) {
		t.Fatalf("torn write returned %d, %v", n, err)
	}
	f.Close()
	if b, _ := os.ReadFile(name); string(b) != "hello wor" {
		t.Fatalf("file holds %q", b)
	}
}

func TestCrashFailsEverythingAfter(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, Rule{Op: OpAny, N: 2, Crash: true})
	f, err := fs.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrInjected) {
		t.Fatalf("write at the crash: %v", err)
	}
	if err := f.Close(); !errors.Is(err, ErrInjected) {
		t.Fatalf("close after the crash: %v", err)
	}
	if err := fs.Remove(filepath.Join(dir, "a")); !errors.Is(err, ErrInjected) {
		t.Fatalf("remove after the crash: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Fatalf("remove after the crash reached the disk: %v", err)
	}
}

func TestZeroRuleInjectsNothing(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, Rule{})
	f, err := fs.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if fs.Injected() || fs.Count(OpAny) != 4 {
		t.Fatalf("injected=%v count=%d", fs.Injected(), fs.Count(OpAny))
	}
}
