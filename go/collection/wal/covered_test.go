package wal

import (
	"errors"
	"path/filepath"
	"sort"
	"testing"
)

// TestSkipCoveredReadsFromTheSnapshot: with SkipCovered, Replay after a
// seq in the third of several segments passes the same records as a full
// replay and reports the same last seq, without reading the segments
// before (a flipped bit there goes unnoticed), and VerifyCovered then
// finds that flip, naming the file and offset, as a full Replay does.
func TestSkipCoveredReadsFromTheSnapshot(t *testing.T) {
	fs := newMemLog(t, 1, 60, 3, WriterOptions{SegmentBytes: 200})
	files := snapshot(t, fs, logDir)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) < 4 {
		t.Fatalf("test log has %d segments, want 4 or more", len(names))
	}
	seqOf := func(i int) uint64 {
		seq, ok := parseSegmentName(names[i])
		if !ok {
			t.Fatalf("segment name %q", names[i])
		}
		return seq
	}
	// after: the last record of segment 1 and the first of segment 2
	// (segment 2 is then covered too only in the first case).
	for _, tc := range []struct {
		after   uint64
		skipped int
	}{{seqOf(2) - 1, 2}, {seqOf(2), 2}, {seqOf(3) - 1, 3}, {0, 0}, {60, len(names) - 1}} {
		full, fullInfo, err := replayAll(fs, logDir, tc.after, ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		recs, info, err := replayAll(fs, logDir, tc.after, ReplayOptions{SkipCovered: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := recordsAre(recs, tc.after+1, 60); err != nil {
			t.Fatalf("after %d: %v", tc.after, err)
		}
		if len(full) != len(recs) || info.LastSeq != fullInfo.LastSeq || info.Skipped != tc.skipped {
			t.Fatalf("after %d: %d records, last seq %d, %d skipped; a full replay: %d, %d (want %d skipped)",
				tc.after, len(recs), info.LastSeq, info.Skipped, len(full), fullInfo.LastSeq, tc.skipped)
		}
		if err := VerifyCovered(fs, logDir, tc.after, nil); err != nil {
			t.Fatalf("after %d: VerifyCovered of an intact log: %v", tc.after, err)
		}
	}

	// A flipped byte in the payload of segment 0's second frame.
	after := seqOf(2)
	path := filepath.Join(logDir, names[0])
	seg := readFile(t, fs, path)
	ends := frameEnds(t, seg)
	damaged := append([]byte(nil), seg...)
	damaged[ends[1]+frameHeaderSize-1] ^= 0x10
	writeFile(t, fs, path, damaged)
	before := snapshot(t, fs, logDir)
	recs, _, err := replayAll(fs, logDir, after, ReplayOptions{SkipCovered: true})
	if err != nil {
		t.Fatalf("SkipCovered read the damaged covered segment: %v", err)
	}
	if err := recordsAre(recs, after+1, 60); err != nil {
		t.Fatal(err)
	}
	_, _, fullErr := replayAll(fs, logDir, after, ReplayOptions{})
	checkRefused(t, fs, fullErr, path, ends[1], before)
	err = VerifyCovered(fs, logDir, after, nil)
	checkRefused(t, fs, err, path, ends[1], before)

	// A pause's error stops it; a covered segment removed (a Writer's
	// RemoveThrough) needs no check.
	stop := errors.New("stop")
	if err := VerifyCovered(fs, logDir, after, func() error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("VerifyCovered with a stopping pause: %v", err)
	}
	if err := fs.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := VerifyCovered(fs, logDir, after, nil); err != nil {
		t.Fatalf("VerifyCovered without the damaged (removed) segment: %v", err)
	}
}
