package wal

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/vfs/errorfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// tornLog is a log of several segments whose last one holds a dozen frames.
func tornLog(t *testing.T) (files map[string][]byte, lastName string, lastFirst uint64) {
	t.Helper()
	fs := newMemLog(t, 1, 60, 4, WriterOptions{SegmentBytes: 300})
	files = snapshot(t, fs, logDir)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	if len(names) < 3 {
		t.Fatalf("test log has only %d segments", len(names))
	}
	lastName = names[len(names)-1]
	lastFirst, _ = parseSegmentName(lastName)
	return files, lastName, lastFirst
}

// intactFrames counts the frames at the start of the segment damaged that
// are byte-for-byte those of original, and returns where they end.
func intactFrames(t *testing.T, original, damaged []byte) (n int, end int64) {
	t.Helper()
	ends := frameEnds(t, original)
	end = headerSize
	for _, e := range ends[1:] {
		if e > int64(len(damaged)) || !bytes.Equal(original[end:e], damaged[end:e]) {
			break
		}
		n, end = n+1, e
	}
	return n, end
}

// TestReplayCutsTornTailAtEveryByte cuts the last segment short at every
// byte, and separately zeroes it from every byte on (a crash after the
// file grew but before its data reached the disk): Replay must return
// exactly the records whose frames are intact, cut the rest off, and
// leave a log that replays cleanly and can be appended to.
func TestReplayCutsTornTailAtEveryByte(t *testing.T) {
	files, lastName, lastFirst := tornLog(t)
	seg := files[lastName]
	path := filepath.Join(logDir, lastName)
	for _, zeroed := range []bool{false, true} {
		for cut := 0; cut <= len(seg); cut++ {
			damaged := bytes.Clone(seg[:cut])
			if zeroed {
				damaged = append(damaged, make([]byte, len(seg)-cut)...)
			}
			what := fmt.Sprintf("zeroed=%v cut=%d", zeroed, cut)
			fs := memfs.New()
			restore(t, fs, logDir, files)
			writeFile(t, fs, path, damaged)

			recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			headerIntact := len(damaged) >= headerSize && bytes.Equal(damaged[:headerSize], seg[:headerSize])
			n, end := 0, int64(0)
			if headerIntact {
				n, end = intactFrames(t, seg, damaged)
			}
			lastSeq := lastFirst - 1 + uint64(n)
			if err := recordsAre(recs, 1, lastSeq); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			// A segment without a whole header is removed, and reported
			// even when empty. Zeros after the intact frames are the
			// unused end of a preallocated segment: not torn, left as
			// they are.
			wantTorn := int64(len(damaged)) - end
			kept := seg[:end]
			if headerIntact && allZero(damaged[end:]) {
				wantTorn, kept = 0, damaged
			}
			reported := wantTorn > 0 || !headerIntact
			if reported && (info.TornFile != path || info.TornOffset != end || info.TornBytes != wantTorn) ||
				!reported && info.TornFile != "" || info.LastSeq != lastSeq {
				t.Fatalf("%s: info %+v, want %d torn bytes at %d", what, info, wantTorn, end)
			}
			if _, err := fs.Stat(path); headerIntact == (err != nil) {
				t.Fatalf("%s: segment exists: %v, want %v", what, err == nil, headerIntact)
			}
			if headerIntact {
				if got := readFile(t, fs, path); !bytes.Equal(got, kept) {
					t.Fatalf("%s: segment cut to %d bytes, want %d", what, len(got), len(kept))
				}
			}
			// Only synced state counts: the cut must have been durable.
			fs.Crash(nil)
			recs, info, err = replayAll(fs, logDir, 0, ReplayOptions{})
			if err != nil || info.TornFile != "" || recordsAre(recs, 1, lastSeq) != nil {
				t.Fatalf("%s: second replay after a crash: %d records, %+v, %v", what, len(recs), info, err)
			}
			w, err := NewWriter(fs, logDir, lastSeq+1, WriterOptions{SegmentBytes: 300})
			if err != nil {
				t.Fatalf("%s: NewWriter: %v", what, err)
			}
			appendRange(t, w, lastSeq+1, 70, 3)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs, _, err = replayAll(fs, logDir, 0, ReplayOptions{})
			if err != nil || recordsAre(recs, 1, 70) != nil {
				t.Fatalf("%s: after appending again: %d records, %v", what, len(recs), err)
			}
		}
	}
}

// TestFailedAppendLeavesOnlyCompleteFrames tears an Append's single write
// after every byte: the writer is poisoned, and Replay later returns the
// earlier records plus exactly those of the torn batch whose frames made
// it whole.
func TestFailedAppendLeavesOnlyCompleteFrames(t *testing.T) {
	batch := [][]byte{payloadFor(11), payloadFor(12), payloadFor(13)}
	batchBytes := 0
	for _, p := range batch {
		batchBytes += frameHeaderSize + len(p)
	}
	for torn := 1; torn < batchBytes; torn++ {
		inner := memfs.New()
		writeLog(t, inner, logDir, 1, 10, 4, WriterOptions{})
		// Writes: the new segment's header, HEAD, then the batch.
		fs := errorfs.New(inner, errorfs.Rule{Op: errorfs.OpWrite, N: 3, TornBytes: torn})
		w, err := NewWriter(fs, logDir, 11, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(batch); !errors.Is(err, ErrPoisoned) || !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("torn=%d: Append returned %v", torn, err)
		}
		w.Close()
		complete := 0
		for end := 0; complete < len(batch); complete++ {
			end += frameHeaderSize + len(batch[complete])
			if end > torn {
				break
			}
		}
		recs, info, err := replayAll(inner, logDir, 0, ReplayOptions{})
		if err != nil {
			t.Fatalf("torn=%d: %v", torn, err)
		}
		if err := recordsAre(recs, 1, 10+uint64(complete)); err != nil {
			t.Fatalf("torn=%d: %v", torn, err)
		}
		if info.TornFile == "" && complete < len(batch) && torn > 0 {
			// A tear exactly at a frame boundary leaves nothing to cut.
			frameBoundary := 0
			for _, p := range batch[:complete] {
				frameBoundary += frameHeaderSize + len(p)
			}
			if frameBoundary != torn {
				t.Fatalf("torn=%d: no torn tail reported: %+v", torn, info)
			}
		}
	}
}

func TestReplayRemovesLastSegmentWithTornHeader(t *testing.T) {
	header := appendHeader(nil)
	for size := 0; size <= headerSize; size++ {
		for _, zeroed := range []bool{false, true} {
			if size == headerSize && !zeroed {
				continue // a whole header is not torn
			}
			fs := newMemLog(t, 1, 10, 4, WriterOptions{})
			removeHead(t, fs) // a log written before HEAD; with HEAD this is damage
			torn := bytes.Clone(header[:size])
			if zeroed {
				clear(torn)
			}
			writeFile(t, fs, segPath(11), torn)
			recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
			if err != nil {
				t.Fatalf("size %d zeroed %v: %v", size, zeroed, err)
			}
			checkRecords(t, recs, 1, 10)
			if info.TornFile != segPath(11) || info.TornOffset != 0 || info.TornBytes != int64(size) {
				t.Fatalf("size %d zeroed %v: info %+v", size, zeroed, info)
			}
			if _, err := fs.CrashClone(nil).Stat(segPath(11)); err == nil {
				t.Fatalf("size %d zeroed %v: torn segment still there after a crash", size, zeroed)
			}
		}
	}
}

func TestReplayKeepsEmptyLastSegment(t *testing.T) {
	fs := newMemLog(t, 1, 10, 4, WriterOptions{})
	w, err := NewWriter(fs, logDir, 11, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
	if err != nil || info.TornFile != "" || info.LastSeq != 10 {
		t.Fatalf("%+v, %v", info, err)
	}
	checkRecords(t, recs, 1, 10)
	// The next writer replaces the empty segment named for its first record.
	w, err = NewWriter(fs, logDir, 11, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 11, 12, 2)
	w.Close()
	checkLog(t, fs, logDir, 0, 12)
}
