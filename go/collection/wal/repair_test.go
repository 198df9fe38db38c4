package wal

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// repairLog is a log of records 1..30 in several segments.
func repairLog(t *testing.T) (*memfs.FS, []string) {
	t.Helper()
	fs := newMemLog(t, 1, 30, 2, WriterOptions{SegmentBytes: 150})
	names := walSegmentNames(t, fs)
	if len(names) < 3 {
		t.Fatalf("test log has %d segments", len(names))
	}
	return fs, names
}

// checkRepaired checks that a repaired log replays cleanly, even after a
// crash, to records 1..last, and can be appended to.
func checkRepaired(t *testing.T, fs *memfs.FS, last uint64) {
	t.Helper()
	fs.Crash(nil)
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
	if err != nil || info.TornFile != "" || info.DroppedFile != "" {
		t.Fatalf("replay after repair and a crash: %+v, %v", info, err)
	}
	checkRecords(t, recs, 1, last)
	w, err := NewWriter(fs, logDir, last+1, WriterOptions{SegmentBytes: 150})
	if err != nil {
		t.Fatalf("NewWriter after repair: %v", err)
	}
	appendRange(t, w, last+1, last+5, 2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, fs, logDir, 0, last+5)
}

func TestRepairCutsLogAtCorruptRecord(t *testing.T) {
	fs, names := repairLog(t)
	path := filepath.Join(logDir, names[0])
	seg := readFile(t, fs, path)
	ends := frameEnds(t, seg)
	seg[ends[2]+3] ^= 0xff // length of record 3
	writeFile(t, fs, path, seg)

	damaged := snapshot(t, fs, logDir)
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	// Record 3's own frame is damaged; 4..30 behind it are salvaged.
	checkSalvaged(t, recs, info, 1, 30, SeqRange{3, 3})
	if info.LastSeq != 30 || info.Dropped != 1 || info.Salvaged != 27 || info.DroppedFile != path || info.DroppedOffset != ends[2] ||
		!errors.Is(info.Corruption, ErrCorrupt) {
		t.Fatalf("info %+v", info)
	}
	checkBroken(t, fs, info, damaged, names...)
	if got := walSegmentNames(t, fs); len(got) != 1 {
		t.Fatalf("segments after repair: %v", got)
	}
	if got := readFile(t, fs, path); !bytes.Equal(got, seg[:ends[2]]) {
		t.Fatalf("damaged segment cut to %d bytes, want %d", len(got), ends[2])
	}
	checkRepaired(t, fs, 2)
}

// TestRepairSalvagesRecordsBehindABadHeader: one flipped bit in a segment
// header dropped every record behind it; they are intact and come back,
// and the segment is kept in a .broken copy.
func TestRepairSalvagesRecordsBehindABadHeader(t *testing.T) {
	fs, names := repairLog(t)
	path := filepath.Join(logDir, names[1])
	seg := readFile(t, fs, path)
	seg[0] ^= 1
	writeFile(t, fs, path, seg)
	damaged := snapshot(t, fs, logDir)

	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSalvaged(t, recs, info, 1, 30)
	first, _ := parseSegmentName(names[1])
	if info.Dropped != 0 || info.Salvaged != int(30-first+1) || info.DroppedFile != path || info.DroppedOffset != 0 {
		t.Fatalf("info %+v", info)
	}
	checkBroken(t, fs, info, damaged, names[1:]...)
	if got := walSegmentNames(t, fs); len(got) != 1 || got[0] != names[0] {
		t.Fatalf("segments after repair: %v", got)
	}
	checkRepaired(t, fs, first-1)
}

func TestRepairReportsTheSeqsOfAMissingSegment(t *testing.T) {
	fs, names := repairLog(t)
	gone, _ := parseSegmentName(names[1])
	if err := fs.Remove(filepath.Join(logDir, names[1])); err != nil {
		t.Fatal(err)
	}
	next, _ := parseSegmentName(names[2])
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSalvaged(t, recs, info, 1, 30, SeqRange{gone, next - 1})
	if info.Dropped != int(next-gone) || info.DroppedFile != filepath.Join(logDir, names[2]) || info.DroppedOffset != headerSize {
		t.Fatalf("info %+v, want %d dropped", info, next-gone)
	}
	checkRepaired(t, fs, gone-1)
}

func TestRepairSalvagesRecordsAfterAGap(t *testing.T) {
	fs := memfs.New()
	writeFile(t, fs, segPath(1), craftSegment(1, 2, 4, 5, 6))
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSalvaged(t, recs, info, 1, 6, SeqRange{3, 3})
	if info.Dropped != 1 {
		t.Fatalf("info %+v, want 1 dropped", info)
	}
	checkRepaired(t, fs, 2)
}

func TestRepairLeavesHealthyLogAlone(t *testing.T) {
	fs, _ := repairLog(t)
	before := snapshot(t, fs, logDir)
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil || info.DroppedFile != "" || info.Corruption != nil {
		t.Fatalf("%+v, %v", info, err)
	}
	checkRecords(t, recs, 1, 30)
	if !sameFiles(before, snapshot(t, fs, logDir)) {
		t.Fatal("Repair changed a healthy log")
	}
}

// TestRepairInterruptedByCrashCompletesNextTime stops a repair at each of
// its filesystem operations: after the crash, the damage must still be
// found, and a second repair must leave the same records.
func TestRepairInterruptedByCrashCompletesNextTime(t *testing.T) {
	damage := func(t *testing.T) *memfs.FS {
		fs, names := repairLog(t)
		path := filepath.Join(logDir, names[0])
		seg := readFile(t, fs, path)
		seg[frameEnds(t, seg)[2]+20] ^= 1
		writeFile(t, fs, path, seg)
		return fs
	}
	counter := errorfs.New(damage(t), errorfs.Rule{})
	if _, _, err := replayAll(counter, logDir, 0, ReplayOptions{Repair: true}); err != nil {
		t.Fatal(err)
	}
	steps := counter.Count(errorfs.OpAny)
	for n := 1; n <= steps; n++ {
		inner := damage(t)
		fs := errorfs.New(inner, errorfs.Rule{Op: errorfs.OpAny, N: n, Crash: true})
		replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
		inner.Crash(nil)
		recs, info, err := replayAll(inner, logDir, 0, ReplayOptions{Repair: true})
		if err != nil {
			t.Fatalf("step %d: second repair: %v", n, err)
		}
		// The first repair may have cut the later segments before the
		// crash: what is left of 4..30 is salvaged, the rest is reported.
		if len(recs) < 2 || recordsAre(recs[:2], 1, 2) != nil {
			t.Fatalf("step %d: records %v (info %+v)", n, recs, info)
		}
		if len(info.Lost) == 0 || info.Lost[0].From != 3 {
			t.Fatalf("step %d: lost %v, want seq 3 first", n, info.Lost)
		}
		checkRepaired(t, inner, 2)
	}
}

func walSegmentNames(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	segs, err := listSegments(fs, logDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, seg := range segs {
		names = append(names, filepath.Base(seg.path))
	}
	return names
}
