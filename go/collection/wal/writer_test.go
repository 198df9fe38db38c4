package wal

import (
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// dirBytes sums the sizes of dir's segments.
// dirBytes is the bytes the segments in dir hold up to the end of their
// records (the zeros after them in a preallocated segment not counted).
func dirBytes(t *testing.T, fs vfs.FS, dir string) int64 {
	t.Helper()
	var total int64
	for name, b := range snapshot(t, fs, dir) {
		if _, ok := parseSegmentName(name); ok {
			ends := frameEnds(t, b)
			total += ends[len(ends)-1]
		}
	}
	return total
}

func segmentSeqs(t *testing.T, fs vfs.FS) []uint64 {
	t.Helper()
	segs, err := listSegments(fs, logDir)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, s := range segs {
		seqs = append(seqs, s.seq)
	}
	return seqs
}

func TestRotationNamesSegmentsForTheirFirstRecord(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, logDir, 1, WriterOptions{SegmentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for seq := uint64(1); seq <= 12; seq++ {
		if _, err := w.Append([][]byte{make([]byte, 30)}); err != nil {
			t.Fatal(err)
		}
	}
	// Each segment: a 16-byte header and 46-byte frames; rotation happens
	// before the write once the segment is past 100 bytes, so every
	// segment holds 2 records.
	if got, want := segmentSeqs(t, fs), []uint64{1, 3, 5, 7, 9, 11}; !slices.Equal(got, want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	if w.Bytes() != dirBytes(t, fs, logDir) {
		t.Fatalf("Bytes() = %d, segments hold %d", w.Bytes(), dirBytes(t, fs, logDir))
	}
	if w.NextSeq() != 13 {
		t.Fatalf("NextSeq() = %d", w.NextSeq())
	}
}

func TestExplicitRotateOfEmptySegmentDoesNothing(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, logDir, 7, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	w.Append([][]byte{{1}})
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	if got := segmentSeqs(t, fs); !slices.Equal(got, []uint64{7, 8}) {
		t.Fatalf("segments %v", got)
	}
}

// TestRemoveThroughKeepsEveryNeededRecord removes through every seq and
// checks that replaying from there still returns every later record, and
// that the active segment is never removed.
func TestRemoveThroughKeepsEveryNeededRecord(t *testing.T) {
	for through := uint64(0); through <= 26; through++ {
		fs := memfs.New()
		w, err := NewWriter(fs, logDir, 1, WriterOptions{SegmentBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		appendRange(t, w, 1, 25, 2)
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := w.RemoveThrough(through); err != nil {
			t.Fatal(err)
		}
		if w.Bytes() != dirBytes(t, fs, logDir) {
			t.Fatalf("through %d: Bytes() = %d, segments hold %d", through, w.Bytes(), dirBytes(t, fs, logDir))
		}
		seqs := segmentSeqs(t, fs)
		if seqs[0] > through+1 {
			t.Fatalf("through %d: removed a needed segment: %v", through, seqs)
		}
		if len(seqs) > 1 && seqs[1] <= through+1 {
			t.Fatalf("through %d: kept an unneeded segment: %v", through, seqs)
		}
		fs.Crash(nil) // removals must be durable
		after := min(through, 25)
		checkLog(t, fs, logDir, after, 25)
	}
}

func TestNewWriterCountsOldSegmentsAndRemovesThem(t *testing.T) {
	fs := newMemLog(t, 1, 20, 2, WriterOptions{SegmentBytes: 100})
	old := segmentSeqs(t, fs)
	w, err := NewWriter(fs, logDir, 21, WriterOptions{SegmentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Bytes() != dirBytes(t, fs, logDir) {
		t.Fatalf("Bytes() = %d, segments hold %d", w.Bytes(), dirBytes(t, fs, logDir))
	}
	if err := w.RemoveThrough(20); err != nil {
		t.Fatal(err)
	}
	if got := segmentSeqs(t, fs); !slices.Equal(got, []uint64{21}) {
		t.Fatalf("after removing old segments %v: %v", old, got)
	}
}

func TestNewWriterReplacesSegmentLeftEmpty(t *testing.T) {
	for _, contents := range [][]byte{nil, []byte("STRAT"), appendHeader(nil), append(appendHeader(nil), 1, 2, 3)} {
		fs := newMemLog(t, 1, 4, 2, WriterOptions{})
		writeFile(t, fs, segPath(5), contents)
		writeFile(t, fs, segPath(9), contents) // left by an earlier repair
		w, err := NewWriter(fs, logDir, 5, WriterOptions{})
		if err != nil {
			t.Fatalf("%q: %v", contents, err)
		}
		appendRange(t, w, 5, 6, 2)
		w.Close()
		if got := segmentSeqs(t, fs); !slices.Equal(got, []uint64{1, 5}) {
			t.Fatalf("%q: segments %v", contents, got)
		}
		checkLog(t, fs, logDir, 0, 6)
	}
}

func TestNewWriterRefusesToOverwriteRecords(t *testing.T) {
	fs := newMemLog(t, 1, 10, 2, WriterOptions{SegmentBytes: 60})
	seqs := segmentSeqs(t, fs)
	before := snapshot(t, fs, logDir)
	for _, next := range []uint64{seqs[1], seqs[1] - 1, 0} {
		if _, err := NewWriter(fs, logDir, next, WriterOptions{}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("NewWriter(%d): got %v, want ErrInvalid", next, err)
		}
	}
	if !sameFiles(before, snapshot(t, fs, logDir)) {
		t.Fatal("a refused NewWriter changed the log")
	}
}

func TestNewWriterMakesItsDirectoryDurable(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, "/a/b/wal", 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 1, 3, 3)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil)
	checkLog(t, fs, "/a/b/wal", 0, 3)
}

func TestAppendRejectsOversizedPayloadWithoutPoisoning(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, logDir, 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The slice is never touched, so its pages are never faulted in.
	huge := make([]byte, MaxPayload+1)
	if _, err := w.Append([][]byte{{1}, huge}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
	if w.NextSeq() != 1 {
		t.Fatalf("NextSeq() = %d after a rejected batch", w.NextSeq())
	}
	if first, err := w.Append([][]byte{payloadFor(1)}); err != nil || first != 1 {
		t.Fatalf("Append after a rejected batch: %d, %v", first, err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRecords(t, recs, 1, 1)
}

func TestAppendOfNothingWritesNothing(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, logDir, 3, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := w.Bytes()
	if first, err := w.Append(nil); err != nil || first != 3 || w.NextSeq() != 3 || w.Bytes() != before {
		t.Fatalf("Append(nil) = %d, %v; NextSeq %d, Bytes %d", first, err, w.NextSeq(), w.Bytes())
	}
}

// checkPoisoned checks that every call on w now fails with ErrPoisoned
// and the injected cause, that none reaches the filesystem, and that Close
// only releases the file, without retrying fsync.
func checkPoisoned(t *testing.T, w *Writer, fs *errorfs.FS) {
	t.Helper()
	ops, syncs := fs.Count(errorfs.OpAny), fs.Count(errorfs.OpSync)
	calls := map[string]func() error{
		"Append":        func() error { _, err := w.Append([][]byte{{1}}); return err },
		"Sync":          w.Sync,
		"Rotate":        w.Rotate,
		"RemoveThrough": func() error { return w.RemoveThrough(100) },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrPoisoned) || !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("%s on a poisoned writer: %v", name, err)
		}
	}
	if n := fs.Count(errorfs.OpAny); n != ops {
		t.Fatalf("a poisoned writer made %d filesystem calls", n-ops)
	}
	if err := w.Close(); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("Close on a poisoned writer: %v", err)
	}
	if fs.Count(errorfs.OpSync) != syncs {
		t.Fatal("Close of a poisoned writer called fsync")
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
}

func TestFailedWritePoisonsWriter(t *testing.T) {
	inner := memfs.New()
	// Writes: header, HEAD, batch 1, batch 2 (fails).
	fs := errorfs.New(inner, errorfs.Rule{Op: errorfs.OpWrite, N: 4})
	w, err := NewWriter(fs, logDir, 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 1, 2, 2)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([][]byte{payloadFor(3)}); !errors.Is(err, ErrPoisoned) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("failed Append returned %v", err)
	}
	if w.NextSeq() != 3 {
		t.Fatalf("NextSeq() = %d after a failed Append", w.NextSeq())
	}
	checkPoisoned(t, w, fs)
	checkLog(t, inner, logDir, 0, 2)
}

// TestFailedSyncIsNeverRetried: after a failed fsync the kernel may have
// dropped the dirty pages and cleared the error, so a second fsync could
// succeed without the data being on disk.
func TestFailedSyncIsNeverRetried(t *testing.T) {
	inner := memfs.New()
	// Syncs: the header, HEAD, then the first Sync call.
	fs := errorfs.New(inner, errorfs.Rule{Op: errorfs.OpSync, N: 3})
	w, err := NewWriter(fs, logDir, 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 1, 2, 2)
	if err := w.Sync(); !errors.Is(err, ErrPoisoned) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("failed Sync returned %v", err)
	}
	checkPoisoned(t, w, fs)
}

func TestFailedRotationPoisonsWriter(t *testing.T) {
	// Every filesystem step of a rotation: fsync and close of the old
	// segment, create, header write, fsync, directory fsync of the new.
	for _, op := range []errorfs.Op{errorfs.OpSync, errorfs.OpClose, errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSyncDir} {
		t.Run(op.String(), func(t *testing.T) {
			// The same steps run twice: once to count the operations
			// before the rotation, then failing the first one in it.
			start := func(fs *errorfs.FS) *Writer {
				w, err := NewWriter(fs, logDir, 1, WriterOptions{})
				if err != nil {
					t.Fatal(err)
				}
				appendRange(t, w, 1, 2, 2)
				if err := w.Sync(); err != nil {
					t.Fatal(err)
				}
				return w
			}
			counter := errorfs.New(memfs.New(), errorfs.Rule{})
			start(counter)
			inner := memfs.New()
			fs := errorfs.New(inner, errorfs.Rule{Op: op, N: counter.Count(op) + 1})
			w := start(fs)
			if err := w.Rotate(); !errors.Is(err, ErrPoisoned) || !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("failed Rotate returned %v", err)
			}
			checkPoisoned(t, w, fs)
			// Whatever the rotation left, the synced records replay.
			checkLog(t, inner, logDir, 0, 2)
		})
	}
}

func TestFailedDirectorySyncAfterRemovalPoisonsWriter(t *testing.T) {
	inner := memfs.New()
	writeLog(t, inner, logDir, 1, 10, 2, WriterOptions{SegmentBytes: 60})
	fs := errorfs.New(inner, errorfs.Rule{Op: errorfs.OpSyncDir, N: 3}) // 1, 2: NewWriter (segment, HEAD)
	w, err := NewWriter(fs, logDir, 11, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveThrough(10); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("RemoveThrough with a failing directory fsync: %v", err)
	}
	checkPoisoned(t, w, fs)
}

func TestCallsAfterCloseFail(t *testing.T) {
	w, err := NewWriter(memfs.New(), logDir, 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([][]byte{{1}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v", err)
	}
}

// TestNextSeqAndBytesReadConcurrently runs under -race: the two getters
// may be called while another goroutine appends.
func TestNextSeqAndBytesReadConcurrently(t *testing.T) {
	w, err := NewWriter(memfs.New(), filepath.Join(logDir), 1, WriterOptions{SegmentBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := uint64(0)
		for {
			select {
			case <-done:
				return
			default:
			}
			n := w.NextSeq()
			if n < last || w.Bytes() < headerSize {
				t.Error("NextSeq went backwards or Bytes is too small")
				return
			}
			last = n
		}
	}()
	appendRange(t, w, 1, 200, 3)
	close(done)
	wg.Wait()
}

func TestRefusedNewWriterRemovesNothing(t *testing.T) {
	fs := newMemLog(t, 1, 10, 2, WriterOptions{})
	writeFile(t, fs, segPath(11), appendHeader(nil)) // empty: removable
	writeFile(t, fs, segPath(20), append(appendHeader(nil), craftSegment(20)[headerSize:]...))
	before := snapshot(t, fs, logDir)
	if _, err := NewWriter(fs, logDir, 11, WriterOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
	if !sameFiles(before, snapshot(t, fs, logDir)) {
		t.Fatal("a refused NewWriter changed the log")
	}
}
