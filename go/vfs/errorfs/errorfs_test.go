package errorfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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

func TestOpNumberingStaysStable(t *testing.T) {
	// Tests elsewhere store rules by number in their failure messages and
	// sweeps; renumbering would silently change what they inject.
	want := map[Op]string{
		OpAny: "any", OpCreate: "create", OpOpen: "open", OpWrite: "write", OpRead: "read",
		OpSync: "sync", OpClose: "close", OpRename: "rename", OpRemove: "remove",
		OpSyncDir: "syncdir", OpStat: "stat", OpMkdir: "mkdir", OpReadDir: "readdir",
		OpTruncate: "truncate", OpLock: "lock",
	}
	for op, name := range want {
		if op.String() != name {
			t.Errorf("Op(%d) is %q, want %q", int(op), op, name)
		}
	}
	if OpStat != 10 || OpLock != 14 {
		t.Fatalf("OpStat = %d, OpLock = %d: existing numbering changed", OpStat, OpLock)
	}
}

// TestNewOpsFailWithoutReachingDisk checks that a failing mkdir, readdir,
// truncate, lock or remove-all leaves the directory as it was.
func TestNewOpsFailWithoutReachingDisk(t *testing.T) {
	cases := []struct {
		op  Op
		run func(fs *FS, dir string) error
		// unchanged reports what would differ had the call reached the disk.
		unchanged func(dir string) error
	}{
		{OpMkdir, func(fs *FS, dir string) error { return fs.MkdirAll(filepath.Join(dir, "d")) },
			func(dir string) error { return absent(filepath.Join(dir, "d")) }},
		{OpReadDir, func(fs *FS, dir string) error { _, err := fs.ReadDir(dir); return err },
			func(string) error { return nil }},
		{OpTruncate, func(fs *FS, dir string) error { return fs.Truncate(filepath.Join(dir, "f"), 1) },
			func(dir string) error { return sizeIs(filepath.Join(dir, "f"), 3) }},
		{OpLock, func(fs *FS, dir string) error { _, err := fs.Lock(filepath.Join(dir, "LOCK")); return err },
			func(dir string) error { return absent(filepath.Join(dir, "LOCK")) }},
		{OpRemove, func(fs *FS, dir string) error { return fs.RemoveAll(filepath.Join(dir, "f")) },
			func(dir string) error { return sizeIs(filepath.Join(dir, "f"), 3) }},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("abc"), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := New(vfs.Default, Rule{Op: c.op, N: 1})
			if err := c.run(fs, dir); !errors.Is(err, ErrInjected) {
				t.Fatalf("got %v, want ErrInjected", err)
			}
			if err := c.unchanged(dir); err != nil {
				t.Fatalf("the failed %v reached the disk: %v", c.op, err)
			}
			if fs.Count(c.op) != 1 {
				t.Fatalf("Count(%v) = %d", c.op, fs.Count(c.op))
			}
			if err := c.run(fs, dir); err != nil {
				t.Fatalf("second %v after a non-crash failure: %v", c.op, err)
			}
		})
	}
}

func TestLockReleaseCountsAsCloseAndReleases(t *testing.T) {
	name := filepath.Join(t.TempDir(), "LOCK")
	fs := New(vfs.Default, Rule{Op: OpClose, N: 1})
	l, err := fs.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); !errors.Is(err, ErrInjected) {
		t.Fatalf("release: got %v, want ErrInjected", err)
	}
	// The failed release still dropped the lock, as a dying process would.
	l, err = vfs.Default.Lock(name)
	if err != nil {
		t.Fatalf("lock after a failed release: %v", err)
	}
	l.Close()
}

func absent(name string) error {
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s exists (%v)", name, err)
	}
	return nil
}

func sizeIs(name string, size int64) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	if fi.Size() != size {
		return fmt.Errorf("%s has %d bytes, want %d", name, fi.Size(), size)
	}
	return nil
}

// A full disk stays full until it is freed: a Persist rule must fail every
// later operation of its kind, carry the cause it was given, leave other
// kinds working, and stop once SetRule clears it.
func TestPersistFailsEveryLaterOpOfItsKindUntilCleared(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, Rule{Op: OpWrite, N: 1, Persist: true, Err: syscall.ENOSPC})
	f, err := fs.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range 3 {
		if _, err := f.Write([]byte("x")); !errors.Is(err, ErrInjected) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("write %d on the full disk: got %v, want ErrInjected and ENOSPC", i+1, err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("a sync, another kind, on the full disk: %v", err)
	}
	fs.SetRule(Rule{})
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("write after the rule was cleared: %v", err)
	}
}
