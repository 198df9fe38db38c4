//go:build unix

package vfs

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCloseReleasesALockAChildProcessInherited hands the lock's descriptor
// to a child process, as fork does (the child's descriptor refers to the
// same open file description), and checks that the parent's Close releases
// the lock while the child still runs. With a lock released only by the
// last close of the description, the child kept the directory locked.
func TestCloseReleasesALockAChildProcessInherited(t *testing.T) {
	if os.Getenv("STRATA_VFS_INHERIT_HELPER") != "" {
		io.Copy(io.Discard, os.Stdin) // hold fd 3 until the parent is done
		os.Exit(0)
	}
	name := filepath.Join(t.TempDir(), "LOCK")
	l, err := Default.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCloseReleasesALockAChildProcessInherited$")
	cmd.Env = append(os.Environ(), "STRATA_VFS_INHERIT_HELPER=1")
	cmd.ExtraFiles = []*os.File{l.(*fileLock).f}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Default.Lock(name)
	if err != nil {
		t.Fatalf("Lock after Close, while a child holds the inherited descriptor: %v", err)
	}
	again.Close()
}

// TestLockConflictsWithinOneProcess: two opens in one process must not
// both hold the lock (POSIX record locks would let them).
func TestLockConflictsWithinOneProcess(t *testing.T) {
	name := filepath.Join(t.TempDir(), "LOCK")
	l, err := Default.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if second, err := Default.Lock(name); err == nil {
		second.Close()
		t.Fatal("a second Lock in the same process succeeded")
	}
}
