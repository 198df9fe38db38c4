package wal

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/vfs/memfs"
)

// A log written with HEAD: records 1..30 in several segments.
func headedLog(t *testing.T) (*memfs.FS, []string) {
	t.Helper()
	fs := newMemLog(t, 1, 30, 2, WriterOptions{SegmentBytes: 150})
	return fs, walSegmentNames(t, fs)
}

func refusedNaming(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), what) {
		t.Fatalf("got %v, want ErrCorrupt naming %q", err, what)
	}
}

// TestReplayRefusesAMissingSegment: the newest segment deleted used to
// leave a shorter log that replayed without a word.
func TestReplayRefusesAMissingSegment(t *testing.T) {
	fs, names := headedLog(t)
	last := names[len(names)-1]
	if err := fs.Remove(filepath.Join(logDir, last)); err != nil {
		t.Fatal(err)
	}
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	refusedNaming(t, err, last)
	first, _ := parseSegmentName(last)
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSalvaged(t, recs, info, 1, first-1, SeqRange{From: first})
	if _, _, err := replayAll(fs, logDir, 0, ReplayOptions{}); err != nil {
		t.Fatalf("replay after the repair pointed HEAD at the newest segment left: %v", err)
	}
}

// TestReplayRefusesAnEmptiedSegment: a segment truncated to 0 bytes was
// taken for one a crash left while creating it, and removed.
func TestReplayRefusesAnEmptiedSegment(t *testing.T) {
	for _, which := range []int{0, -1} {
		fs, names := headedLog(t)
		name := names[(which+len(names))%len(names)]
		if err := fs.Truncate(filepath.Join(logDir, name), 0); err != nil {
			t.Fatal(err)
		}
		_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
		refusedNaming(t, err, name)
		refusedNaming(t, err, "emptied or damaged")
	}
}

// TestReplayRefusesARemovedLogDirectory: with HEAD required (the caller's
// checkpoint says the log keeps one), a removed log is not an empty one.
func TestReplayRefusesARemovedLogDirectory(t *testing.T) {
	fs, _ := headedLog(t)
	if err := fs.RemoveAll(logDir); err != nil {
		t.Fatal(err)
	}
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{RequireHead: true})
	refusedNaming(t, err, "no HEAD file")
	if _, _, err := replayAll(fs, logDir, 0, ReplayOptions{}); err != nil {
		t.Fatalf("without RequireHead a missing directory is an empty log: %v", err)
	}
	recs, info, err := replayAll(fs, logDir, 7, ReplayOptions{RequireHead: true, Repair: true})
	if err != nil || len(recs) != 0 || len(info.Lost) != 1 || info.Lost[0] != (SeqRange{From: 8}) {
		t.Fatalf("repair of a removed log: %v, %+v, %v", recs, info, err)
	}
}

// TestReplayTellsABitFlipInTheLastRecordFromATornWrite: a complete last
// frame with a wrong CRC and no zeroed bytes was cut as a torn tail.
func TestReplayTellsABitFlipInTheLastRecordFromATornWrite(t *testing.T) {
	fs, names := headedLog(t)
	path := filepath.Join(logDir, names[len(names)-1])
	seg := readFile(t, fs, path)
	ends := frameEnds(t, seg)
	seg[ends[len(ends)-2]+frameHeaderSize] ^= 0x10 // payload of record 30
	writeFile(t, fs, path, seg)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	refusedNaming(t, err, "not a torn write")
	damaged := snapshot(t, fs, logDir)
	recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSalvaged(t, recs, info, 1, 29, SeqRange{30, 30})
	checkBroken(t, fs, info, damaged, names[len(names)-1])

	// The same frame with its end zeroed is what a crash leaves: cut.
	fs, _ = headedLog(t)
	seg = readFile(t, fs, path)
	clear(seg[len(seg)-3:])
	writeFile(t, fs, path, seg)
	recs, info, err = replayAll(fs, logDir, 0, ReplayOptions{})
	if err != nil || info.TornFile != path || !strings.Contains(info.TornReason, "torn write") {
		t.Fatalf("zeroed end of the last frame: %+v, %v", info, err)
	}
	checkRecords(t, recs, 1, 29)
}

// TestWriterCreatesEverySegmentWhole: a crash at any step of NewWriter or
// a rotation leaves a log that replays (a leftover .tmp is ignored).
func TestWriterCreatesEverySegmentWhole(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, logDir, 1, WriterOptions{SegmentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 1, 4, 2)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= len(fs.Pending()); n++ {
		c := fs.CrashClone(memfs.KeepPrefix(n))
		_, info, err := replayAll(c, logDir, 0, ReplayOptions{})
		if err != nil {
			t.Fatalf("crash after %d of %d pending operations: %v", n, len(fs.Pending()), err)
		}
		if info.LastSeq != 0 && info.LastSeq != 4 {
			t.Fatalf("crash after %d: log ends at %d", n, info.LastSeq)
		}
	}
	w.Close()
}

func FuzzDecodeHead(f *testing.F) {
	f.Add(EncodeHead(1))
	f.Add(EncodeHead(0x123456789abcdef))
	f.Add([]byte("strata-wal-head 1 0000000000000001 00000000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, err := DecodeHead(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if seq == 0 || string(EncodeHead(seq)) != string(data) {
			t.Fatalf("decoded %d from %q, which is not its one encoding", seq, data)
		}
	})
}
