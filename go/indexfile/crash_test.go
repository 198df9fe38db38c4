package indexfile

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
)

// replaceSetup writes an old index at dir/index.strata and returns it with
// the sections of a new one, big enough that Write flushes several times.
func replaceSetup(t *testing.T) (dir, path string, old []byte, newSections []Section) {
	rng := rand.New(rand.NewPCG(17, 18))
	dir = t.TempDir()
	path, old = writeFile(t, dir, hnswLikeSections(rng, 100, 8))
	newSections = hnswLikeSections(rng, 30000, 16) // about 4 MiB: several bufio flushes
	return dir, path, old, newSections
}

// tempFiles lists Write's leftovers in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// checkOldFileKept checks that a failed Write left path byte-identical and
// readable, and removed its temporary file.
func checkOldFileKept(t *testing.T, dir, path string, old []byte, err error, what string) {
	t.Helper()
	if !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("%s: Write returned %v, want the injected error", what, err)
	}
	now, rerr := os.ReadFile(path)
	if rerr != nil || !bytes.Equal(now, old) {
		t.Fatalf("%s: old file changed or lost (%v)", what, rerr)
	}
	if f, rerr := Read(vfs.Default, path, ReadOptions{}); rerr != nil {
		t.Fatalf("%s: old file unreadable: %v", what, rerr)
	} else {
		f.Close()
	}
	if tmps := tempFiles(t, dir); len(tmps) > 0 {
		t.Fatalf("%s: temporary files left behind: %v", what, tmps)
	}
}

func failWrite(t *testing.T, rule errorfs.Rule) {
	dir, path, old, sections := replaceSetup(t)
	fs := errorfs.New(vfs.Default, rule)
	err := Write(fs, path, sections)
	if !fs.Injected() {
		t.Fatalf("rule %+v never fired", rule)
	}
	checkOldFileKept(t, dir, path, old, err, rule.Op.String()+" failure")
}

func TestWriteDoesNotReplaceOnCreateFailure(t *testing.T) {
	failWrite(t, errorfs.Rule{Op: errorfs.OpCreate, N: 1})
}

func TestWriteDoesNotReplaceOnTornWrite(t *testing.T) {
	failWrite(t, errorfs.Rule{Op: errorfs.OpWrite, N: 2, TornBytes: 1000})
}

func TestWriteDoesNotReplaceOnHeaderWriteFailure(t *testing.T) {
	// The header and table go last, with WriteAt; count the writes first.
	_, path, _, sections := replaceSetup(t)
	counter := errorfs.New(vfs.Default, errorfs.Rule{})
	if err := Write(counter, path, sections); err != nil {
		t.Fatal(err)
	}
	failWrite(t, errorfs.Rule{Op: errorfs.OpWrite, N: counter.Count(errorfs.OpWrite), TornBytes: 7})
}

func TestWriteDoesNotReplaceOnFsyncFailure(t *testing.T) {
	failWrite(t, errorfs.Rule{Op: errorfs.OpSync, N: 1})
}

func TestWriteDoesNotReplaceOnCloseFailure(t *testing.T) {
	failWrite(t, errorfs.Rule{Op: errorfs.OpClose, N: 1})
}

func TestWriteDoesNotReplaceOnRenameFailure(t *testing.T) {
	failWrite(t, errorfs.Rule{Op: errorfs.OpRename, N: 1})
}

// After the rename there is nothing left to undo: the new file is in place,
// complete, and the error says its durability is unknown.
func TestWriteReportsDirSyncFailureWithNewFileInPlace(t *testing.T) {
	dir, path, _, sections := replaceSetup(t)
	fs := errorfs.New(vfs.Default, errorfs.Rule{Op: errorfs.OpSyncDir, N: 1})
	err := Write(fs, path, sections)
	if !errors.Is(err, errorfs.ErrInjected) || strings.Contains(err.Error(), "removing") {
		t.Fatalf("got %v, want the injected error alone", err)
	}
	f, err := Read(vfs.Default, path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, f, sections)
	f.Close()
	if tmps := tempFiles(t, dir); len(tmps) > 0 {
		t.Fatalf("temporary files left behind: %v", tmps)
	}
}

// Every operation Write performs, failed in turn: before the rename the old
// file survives untouched and no temporary file is left; the only later
// operation, the directory fsync, leaves the new file.
func TestWriteFailureAtAnyStepKeepsAWholeFile(t *testing.T) {
	_, path, _, sections := replaceSetup(t)
	counter := errorfs.New(vfs.Default, errorfs.Rule{})
	if err := Write(counter, path, sections); err != nil {
		t.Fatal(err)
	}
	steps := counter.Count(errorfs.OpAny)
	if steps < 8 {
		t.Fatalf("Write took only %d steps; the sweep would prove little", steps)
	}
	for n := 1; n <= steps; n++ {
		dir, path, old, sections := replaceSetup(t)
		fs := errorfs.New(vfs.Default, errorfs.Rule{Op: errorfs.OpAny, N: n, TornBytes: 100})
		err := Write(fs, path, sections)
		if n == steps {
			if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), "directory") {
				t.Fatalf("step %d (last, directory fsync): %v", n, err)
			}
			continue
		}
		checkOldFileKept(t, dir, path, old, err, "step "+strconv.Itoa(n))
	}
}

// A crash (every operation from step n on fails, including cleanup) leaves
// path holding the old file or the new one, each whole, never a mixture.
// The temporary file may be left behind; the package doc says so.
func TestCrashDuringWriteLeavesOldOrNewFile(t *testing.T) {
	_, path, _, sections := replaceSetup(t)
	counter := errorfs.New(vfs.Default, errorfs.Rule{})
	if err := Write(counter, path, sections); err != nil {
		t.Fatal(err)
	}
	steps := counter.Count(errorfs.OpAny)
	for n := 1; n <= steps; n++ {
		_, path, old, sections := replaceSetup(t)
		fs := errorfs.New(vfs.Default, errorfs.Rule{Op: errorfs.OpAny, N: n, TornBytes: 4096, Crash: true})
		if err := Write(fs, path, sections); err == nil {
			t.Fatalf("crash at step %d: Write succeeded", n)
		}
		now, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(now, old) {
			continue
		}
		f, err := Read(vfs.Default, path, ReadOptions{})
		if err != nil {
			t.Fatalf("crash at step %d: path holds neither the old file nor a readable new one: %v", n, err)
		}
		checkSections(t, f, sections)
		f.Close()
	}
}

// A disk that fails a read has not shown the file to be corrupt; calling it
// corrupt could lead a caller to delete a good index.
func TestReadReportsIOErrorsAsIOErrorsNotCorruption(t *testing.T) {
	sections := hnswLikeSections(rand.New(rand.NewPCG(1, 1)), 100, 8)
	path, _ := writeFile(t, t.TempDir(), sections)
	counter := errorfs.New(vfs.Default, errorfs.Rule{})
	f, err := Read(counter, path, ReadOptions{MmapTags: []uint32{tagVectors}})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, op := range []errorfs.Op{errorfs.OpOpen, errorfs.OpStat, errorfs.OpRead} {
		for n := 1; n <= counter.Count(op); n++ {
			fs := errorfs.New(vfs.Default, errorfs.Rule{Op: op, N: n})
			_, err := Read(fs, path, ReadOptions{MmapTags: []uint32{tagVectors}})
			if !errors.Is(err, errorfs.ErrInjected) || errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s %d failed: got %v, want the injected error and not ErrCorrupt", op, n, err)
			}
		}
	}
}
