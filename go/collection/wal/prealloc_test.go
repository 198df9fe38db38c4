package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// crashedPreallocated writes records 1..last to a log whose segments are
// written ahead with zeros (segBytes each) and abandons the writer after a Sync, as a
// crash leaves it: the last segment ends in zeros.
func crashedPreallocated(t *testing.T, fs vfs.FS, last uint64, segBytes int64) {
	t.Helper()
	w, err := NewWriter(fs, logDir, 1, WriterOptions{SegmentBytes: segBytes})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 1, last, 3)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Abandon()
}

// TestReplayReadsZerosAfterRecordsAsTheEnd: the unused end of a
// preallocated segment is the end of the log, not a torn tail: nothing is
// reported or cut, and a new writer goes on after the records.
func TestReplayReadsZerosAfterRecordsAsTheEnd(t *testing.T) {
	fs := memfs.New()
	crashedPreallocated(t, fs, 40, 4096)
	before := snapshot(t, fs, logDir)
	seg := before[segmentName(1)]
	if len(seg) != 4096 || !allZero(seg[len(seg)-100:]) {
		t.Fatalf("the abandoned segment has %d bytes, want 4096 ending in zeros", len(seg))
	}
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{RequireHead: true})
	if err != nil || info.TornFile != "" {
		t.Fatalf("replay: %+v, %v", info, err)
	}
	checkRecords(t, recs, 1, 40)
	if !sameFiles(before, snapshot(t, fs, logDir)) {
		t.Fatal("replay changed a log that ends in zeros")
	}
	w, err := NewWriter(fs, logDir, 41, WriterOptions{SegmentBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 41, 50, 2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, fs, logDir, 0, 50)
}

// TestReplayCutsTornRecordFollowedByZeros: a crash inside the write of the
// last record of a preallocated segment leaves part of it and the zeros
// that were there: the records before it are kept and it is cut off.
func TestReplayCutsTornRecordFollowedByZeros(t *testing.T) {
	fs := memfs.New()
	crashedPreallocated(t, fs, 40, 4096)
	seg := readFile(t, fs, segPath(1))
	ends := frameEnds(t, seg)
	lastStart, lastEnd := ends[len(ends)-2], ends[len(ends)-1]
	for cut := lastStart + 1; cut < lastEnd; cut++ {
		torn := bytes.Clone(seg)
		clear(torn[cut:lastEnd])
		if bytes.Equal(torn, seg) {
			continue // the bytes zeroed were zeros
		}
		fs := memfs.New()
		writeFile(t, fs, segPath(1), torn)
		recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
		if err != nil || info.TornFile != segPath(1) || info.TornOffset != lastStart {
			t.Fatalf("cut %d: %+v, %v", cut, info, err)
		}
		checkRecords(t, recs, 1, 39)
	}
}

// TestZerosEndingAFormat1SegmentAreATornTail: in a segment written before
// preallocation, zeros after the last frame are what a crash after the
// file grew leaves: cut off and reported, as before.
func TestZerosEndingAFormat1SegmentAreATornTail(t *testing.T) {
	seg := craftSegment(1, 2, 3)
	le.PutUint32(seg[8:], versionAppend)
	end := int64(len(seg))
	seg = append(seg, make([]byte, 700)...)
	fs := memfs.New()
	writeFile(t, fs, segPath(1), seg)
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
	if err != nil || info.TornOffset != end || info.TornBytes != 700 {
		t.Fatalf("%+v, %v", info, err)
	}
	checkRecords(t, recs, 1, 3)
	if got := readFile(t, fs, segPath(1)); int64(len(got)) != end {
		t.Fatalf("segment cut to %d bytes, want %d", len(got), end)
	}
}

// TestWriterKeepsZerosAheadOfRecords checks the promise fdatasync relies
// on: every Append writes into bytes already written, except at most once
// per half of zeroFillBytes, and a finished segment is cut to its records.
func TestWriterKeepsZerosAheadOfRecords(t *testing.T) {
	fs := memfs.New()
	const segBytes = 8 << 20
	w, err := NewWriter(fs, logDir, 1, WriterOptions{SegmentBytes: segBytes})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 2048)
	grew := 0
	for seq := uint64(1); w.activeSize < segBytes-zeroFillBytes; seq++ {
		filled := w.filled
		if _, err := w.Append([][]byte{payload}); err != nil {
			t.Fatal(err)
		}
		if w.activeSize > filled {
			t.Fatalf("seq %d: records end at %d, past the %d bytes written before", seq, w.activeSize, filled)
		}
		if w.filled != filled {
			grew++
		}
		if w.filled < min(w.activeSize+zeroFillBytes/2, segBytes) {
			t.Fatalf("seq %d: zeros reach %d, records %d", seq, w.filled, w.activeSize)
		}
	}
	if limit := int(w.activeSize/(zeroFillBytes/2)) + 1; grew > limit {
		t.Fatalf("zeros written %d times for %d bytes of records", grew, w.activeSize)
	}
	size := w.activeSize
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, fs, segPath(1)); int64(len(got)) != size {
		t.Fatalf("closed segment has %d bytes, records %d", len(got), size)
	}
}

// TestOpenFormatLogs replays the logs kept in testdata, one per format
// version (format2 as a crash left it: preallocated, ending in zeros), so
// that a change that stops reading an old log fails here. Set
// STRATA_WAL_WRITE_TESTDATA=1 to write them again (only when the format is
// meant to change).
func TestOpenFormatLogs(t *testing.T) {
	if os.Getenv("STRATA_WAL_WRITE_TESTDATA") != "" {
		writeFormatTestdata(t)
	}
	for _, name := range []string{"format1", "format2"} {
		fs := memfs.New()
		entries, err := os.ReadDir(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join("testdata", name, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, fs, filepath.Join(logDir, e.Name()), data)
		}
		recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{RequireHead: true})
		if err != nil || info.TornFile != "" {
			t.Fatalf("%s: %+v, %v", name, info, err)
		}
		checkRecords(t, recs, 1, 30)
	}
}

func writeFormatTestdata(t *testing.T) {
	for _, name := range []string{"format1", "format2"} {
		fs := memfs.New()
		if name == "format1" {
			// Two segments of version 1: records 1..20 and 21..30.
			for _, r := range [][2]uint64{{1, 20}, {21, 30}} {
				var seqs []uint64
				for s := r[0]; s <= r[1]; s++ {
					seqs = append(seqs, s)
				}
				seg := craftSegment(seqs...)
				le.PutUint32(seg[8:], versionAppend)
				writeFile(t, fs, segPath(r[0]), seg)
			}
			if err := writeHead(fs, logDir, 21); err != nil {
				t.Fatal(err)
			}
		} else {
			crashedPreallocated(t, fs, 30, 512)
		}
		dir := filepath.Join("testdata", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, data := range snapshot(t, fs, logDir) {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		head := readFile(t, fs, filepath.Join(logDir, HeadName))
		if err := os.WriteFile(filepath.Join(dir, HeadName), head, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
