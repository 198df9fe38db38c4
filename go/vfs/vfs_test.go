package vfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
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

// TestLockHeldByAnotherProcessFails runs this test binary again as a helper
// that takes the lock and holds it until its stdin closes.
func TestLockHeldByAnotherProcessFails(t *testing.T) {
	if name := os.Getenv("STRATA_VFS_LOCK_HELPER"); name != "" {
		l, err := Default.Lock(name)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		l.Close()
		os.Exit(0)
	}
	name := filepath.Join(t.TempDir(), "LOCK")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHeldByAnotherProcessFails$")
	cmd.Env = append(os.Environ(), "STRATA_VFS_LOCK_HELPER="+name)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The test framework may print lines of its own first.
	lines := bufio.NewScanner(stdout)
	var said []string
	for lines.Scan() && lines.Text() != "locked" {
		said = append(said, lines.Text())
	}
	if lines.Text() != "locked" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("helper did not take the lock; it said %q", said)
	}
	if l, err := Default.Lock(name); !errors.Is(err, ErrLocked) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("Lock held by another process: got %v, want ErrLocked", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	l, err := Default.Lock(name)
	if err != nil {
		t.Fatalf("Lock after the other process exited: %v", err)
	}
	l.Close()
}

func TestTruncateCutsExistingFileOnly(t *testing.T) {
	dir := t.TempDir()
	if err := Default.Truncate(filepath.Join(dir, "missing"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Truncate of a missing file: got %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Truncate created the file: %v", err)
	}
}
