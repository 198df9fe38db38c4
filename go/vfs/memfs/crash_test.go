package memfs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

// durableFile creates name holding contents and makes both durable.
func durableFile(t *testing.T, fs *FS, name, contents string) {
	t.Helper()
	f := create(t, fs, name, contents)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := fs.SyncDir(dirOf(name)); err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, fs *FS, name, contents string) vfs.File {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(contents)); err != nil {
		t.Fatal(err)
	}
	return f
}

func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i+1]
		}
	}
	return "/"
}

// contents reads name, or reports "<missing>".
func contents(t *testing.T, fs *FS, name string) string {
	t.Helper()
	b, err := vfs.ReadFile(fs, name)
	if errors.Is(err, iofs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFileSyncedButDirectoryNotSyncedDisappears(t *testing.T) {
	fs := New()
	f := create(t, fs, "/new", "data")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fs.Crash(nil)
	if got := contents(t, fs, "/new"); got != "<missing>" {
		t.Fatalf("file whose directory was never synced survived a crash holding %q", got)
	}
}

func TestDurableNameWithUnsyncedContentsSurvivesEmpty(t *testing.T) {
	fs := New()
	f := create(t, fs, "/new", "data")
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fs.Crash(nil)
	if got := contents(t, fs, "/new"); got != "" {
		t.Fatalf("file holds %q after a crash, but its writes were never synced", got)
	}
}

func TestRenameBecomesDurableOnlyAfterSyncDir(t *testing.T) {
	for _, syncDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("syncDir=%v", syncDir), func(t *testing.T) {
			fs := New()
			durableFile(t, fs, "/a", "old")
			f := create(t, fs, "/a.tmp", "new")
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := fs.Rename("/a.tmp", "/a"); err != nil {
				t.Fatal(err)
			}
			if syncDir {
				if err := fs.SyncDir("/"); err != nil {
					t.Fatal(err)
				}
			}
			fs.Crash(nil)
			want := map[bool]string{false: "old", true: "new"}[syncDir]
			if got := contents(t, fs, "/a"); got != want {
				t.Fatalf("/a holds %q after the crash, want %q", got, want)
			}
			if got := contents(t, fs, "/a.tmp"); got != "<missing>" {
				t.Fatalf("/a.tmp holds %q after the crash", got)
			}
		})
	}
}

func TestRenameInOneDirectoryIsAtomic(t *testing.T) {
	fs := New()
	durableFile(t, fs, "/a", "old")
	durableFile(t, fs, "/b", "new")
	if err := fs.Rename("/b", "/a"); err != nil {
		t.Fatal(err)
	}
	ops := fs.Pending()
	if len(ops) != 1 || ops[0].Kind != OpRename || ops[0].Path != "/b" || ops[0].NewPath != "/a" {
		t.Fatalf("pending = %v, want one rename", ops)
	}
	for keep, want := range map[int][2]string{0: {"old", "new"}, 1: {"new", "<missing>"}} {
		c := fs.CrashClone(KeepPrefix(keep))
		if a, b := contents(t, c, "/a"), contents(t, c, "/b"); a != want[0] || b != want[1] {
			t.Fatalf("keeping %d: /a=%q /b=%q, want %q", keep, a, b, want)
		}
	}
}

func TestRenameAcrossDirectoriesNeedsBothSynced(t *testing.T) {
	fs := New()
	if err := fs.MkdirAll("/x"); err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll("/y"); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	durableFile(t, fs, "/x/f", "f")
	if err := fs.Rename("/x/f", "/y/f"); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/y"); err != nil {
		t.Fatal(err)
	}
	// Only the new directory was synced: the old name is still durable too.
	c := fs.CrashClone(nil)
	if got := contents(t, c, "/x/f") + "," + contents(t, c, "/y/f"); got != "f,f" {
		t.Fatalf("after syncing only the new directory: %q", got)
	}
	if err := fs.SyncDir("/x"); err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil)
	if got := contents(t, fs, "/x/f") + "," + contents(t, fs, "/y/f"); got != "<missing>,f" {
		t.Fatalf("after syncing both directories: %q", got)
	}
}

func TestRemoveNotSyncedComesBack(t *testing.T) {
	fs := New()
	durableFile(t, fs, "/a", "a")
	if err := fs.Remove("/a"); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, fs, "/a"); got != "<missing>" {
		t.Fatalf("removed file still readable: %q", got)
	}
	if got := contents(t, fs.CrashClone(nil), "/a"); got != "a" {
		t.Fatalf("unsynced remove became durable: %q", got)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil)
	if got := contents(t, fs, "/a"); got != "<missing>" {
		t.Fatalf("synced remove undone by a crash: %q", got)
	}
}

func TestCrashKeepsChosenPrefixOfWrites(t *testing.T) {
	fs := New()
	f := create(t, fs, "/f", "")
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"aa", "bb", "cc"} {
		if _, err := f.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	ops := fs.Pending()
	if len(ops) != 3 || ops[2] != (Op{Kind: OpWrite, Path: "/f", Offset: 4, Len: 2}) {
		t.Fatalf("pending = %v", ops)
	}
	for k, want := range []string{"", "aa", "aabb", "aabbcc"} {
		if got := contents(t, fs.CrashClone(KeepPrefix(k)), "/f"); got != want {
			t.Fatalf("keeping %d writes: %q, want %q", k, got, want)
		}
	}
	// A disk that reorders can keep a later write without an earlier one.
	if got := contents(t, fs.CrashClone(func(op int) bool { return op == 1 }), "/f"); got != "\x00\x00bb" {
		t.Fatalf("keeping only the second write: %q", got)
	}
	if got := contents(t, fs, "/f"); got != "aabbcc" {
		t.Fatalf("CrashClone changed the original: %q", got)
	}
}

func TestWriteUnitTearsWritesAtBoundaries(t *testing.T) {
	fs := NewWithOptions(Options{WriteUnit: 4})
	f := create(t, fs, "/f", "")
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("0123456789"), 2); err != nil {
		t.Fatal(err)
	}
	var spans [][2]int64
	for _, op := range fs.Pending() {
		spans = append(spans, [2]int64{op.Offset, op.Offset + int64(op.Len)})
	}
	if want := [][2]int64{{2, 4}, {4, 8}, {8, 12}}; !slices.Equal(spans, want) {
		t.Fatalf("write recorded as %v, want %v", spans, want)
	}
	if got := contents(t, fs.CrashClone(KeepPrefix(2)), "/f"); got != "\x00\x00012345" {
		t.Fatalf("torn write left %q", got)
	}
}

func TestSyncMakesOnlyThatFileDurable(t *testing.T) {
	fs := New()
	a := create(t, fs, "/a", "")
	b := create(t, fs, "/b", "")
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("a1"))
	b.Write([]byte("b1"))
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if ops := fs.Pending(); len(ops) != 1 || ops[0].Path != "/b" {
		t.Fatalf("pending after syncing /a: %v", ops)
	}
	fs.Crash(nil)
	if got := contents(t, fs, "/a") + "," + contents(t, fs, "/b"); got != "a1," {
		t.Fatalf("after the crash: %q", got)
	}
}

func TestTruncateIsDurable(t *testing.T) {
	fs := New()
	f := create(t, fs, "/f", "abcdef")
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Truncate("/f", 4); err != nil {
		t.Fatal(err)
	}
	if ops := fs.Pending(); len(ops) != 0 {
		t.Fatalf("pending after Truncate: %v", ops)
	}
	f.Close()
	fs.Crash(nil)
	if got := contents(t, fs, "/f"); got != "abcd" {
		t.Fatalf("after the crash: %q", got)
	}
}

func TestMkdirAllNeedsEveryParentSynced(t *testing.T) {
	fs := New()
	if err := fs.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.CrashClone(nil).Stat("/a"); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("/a survived although / was never synced: %v", err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if fi, err := fs.CrashClone(nil).Stat("/a/b"); err != nil || !fi.IsDir() {
		t.Fatalf("/a/b after syncing both parents: %v, %v", fi, err)
	}
}

func TestRemoveAllIsUndoneChildFirst(t *testing.T) {
	fs := New()
	if err := fs.MkdirAll("/d/e"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/", "/d", "/d/e"} {
		fs.SyncDir(d)
	}
	durableFile(t, fs, "/d/e/f", "f")
	if err := fs.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, op := range fs.Pending() {
		kinds = append(kinds, op.String())
	}
	want := []string{`remove "/d/e/f"`, `remove "/d/e"`, `remove "/d"`}
	if !slices.Equal(kinds, want) {
		t.Fatalf("pending = %q, want %q", kinds, want)
	}
	// Keeping only the first removal leaves the directories without the file.
	c := fs.CrashClone(KeepPrefix(1))
	if names, err := c.ReadDir("/d/e"); err != nil || len(names) != 0 {
		t.Fatalf("/d/e after keeping one removal: %v, %v", names, err)
	}
}

func TestHandlesFromBeforeACrashFail(t *testing.T) {
	fs := New()
	f := create(t, fs, "/f", "x")
	l, err := fs.Lock("/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil)
	if _, err := f.Write([]byte("y")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write through a pre-crash handle: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("sync through a pre-crash handle: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("releasing a pre-crash lock: %v", err)
	}
	// The crash released the lock (the file itself was never made durable).
	l2, err := fs.Lock("/LOCK")
	if err != nil {
		t.Fatalf("Lock after the crash: %v", err)
	}
	l2.Close()
}

func TestFdReportsNoDescriptor(t *testing.T) {
	fs := New()
	f := create(t, fs, "/f", "x")
	if f.Fd() != ^uintptr(0) {
		t.Fatalf("Fd = %d, want ^uintptr(0)", f.Fd())
	}
}

func TestClosedHandleFails(t *testing.T) {
	fs := New()
	f := create(t, fs, "/f", "x")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("y")); !errors.Is(err, iofs.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if err := f.Close(); !errors.Is(err, iofs.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

func TestRenameRefusesDirectoryIntoItself(t *testing.T) {
	fs := New()
	if err := fs.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Rename("/a", "/a/b/c"); err == nil {
		t.Fatal("renaming a directory into its own subtree succeeded")
	}
}

func TestConcurrentWritersAndCrashClone(t *testing.T) {
	fs := New()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("/f%d", i)
			f, err := fs.Create(name)
			if err != nil {
				t.Error(err)
				return
			}
			for range 100 {
				f.Write([]byte("abcd"))
			}
			f.Sync()
			f.Close()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			fs.CrashClone(nil)
			fs.Pending()
		}
	}()
	wg.Wait()
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil)
	for i := range 4 {
		if got := contents(t, fs, fmt.Sprintf("/f%d", i)); len(got) != 400 {
			t.Fatalf("/f%d has %d bytes after the crash", i, len(got))
		}
	}
}
