package wal

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/vfs/memfs"
)

// craftSegment builds a segment holding frames with the given sequence
// numbers and their usual payloads, valid CRCs included.
func craftSegment(seqs ...uint64) []byte {
	b := appendHeader(nil)
	for _, seq := range seqs {
		b = appendFrame(b, seq, payloadFor(seq))
	}
	return b
}

// checkRefused checks that Replay failed with ErrCorrupt naming path and
// offset, and left the log as it was.
func checkRefused(t *testing.T, fs *memfs.FS, err error, path string, off int64, before map[string][]byte) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	if want := fmt.Sprintf("in file %q at offset %d: ", path, off); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	if !sameFiles(before, snapshot(t, fs, logDir)) {
		t.Fatal("a refused replay changed the log")
	}
}

// TestBitFlipNeverYieldsWrongRecord flips every bit of a small log of
// three segments. Replay must either succeed with a prefix of the records,
// having cut a torn tail that holds the flipped bit in the last frame of
// the last segment, or fail with ErrCorrupt naming the damaged file (or
// ErrVersion, for the version field), changing nothing. It must never
// return a record that was not written.
func TestBitFlipNeverYieldsWrongRecord(t *testing.T) {
	fs := newMemLog(t, 1, 20, 3, WriterOptions{SegmentBytes: 200})
	files := snapshot(t, fs, logDir)
	if len(files) != 3 {
		t.Fatalf("test log has %d segments, want 3", len(files))
	}
	outcomes := map[string]int{}
	lastName := segmentName(0)
	for name := range files {
		lastName = max(lastName, name)
	}
	for name, seg := range files {
		path := filepath.Join(logDir, name)
		ends := frameEnds(t, seg)
		lastFrame := ends[len(ends)-2]
		for off := range seg {
			for bit := range 8 {
				what := fmt.Sprintf("%s byte %d bit %d", name, off, bit)
				damaged := bytes.Clone(seg)
				damaged[off] ^= 1 << bit
				fs := memfs.New()
				restore(t, fs, logDir, files)
				writeFile(t, fs, path, damaged)
				before := snapshot(t, fs, logDir)

				recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
				switch {
				case err == nil:
					outcomes["torn"]++
					if rerr := recordsAre(recs, 1, info.LastSeq); rerr != nil {
						t.Fatalf("%s: %v", what, rerr)
					}
					if info.LastSeq == 20 {
						t.Fatalf("%s: flipped bit went unnoticed", what)
					}
					if name != lastName || int64(off) < lastFrame || info.TornFile != path || info.TornOffset != lastFrame {
						t.Fatalf("%s: replay succeeded with %d records and %+v; only damage to the last frame (at %d) of %s may be cut",
							what, len(recs), info, lastFrame, lastName)
					}
				case errors.Is(err, ErrVersion):
					outcomes["version"]++
					if off < 8 || off >= 12 {
						t.Fatalf("%s: ErrVersion for a flip outside the version field: %v", what, err)
					}
				case errors.Is(err, ErrCorrupt):
					outcomes["corrupt"]++
					if !strings.Contains(err.Error(), fmt.Sprintf("in file %q", path)) {
						t.Fatalf("%s: error does not name the damaged file: %v", what, err)
					}
					if !sameFiles(before, snapshot(t, fs, logDir)) {
						t.Fatalf("%s: a refused replay changed the log", what)
					}
				default:
					t.Fatalf("%s: %v", what, err)
				}
			}
		}
	}
	if outcomes["torn"] == 0 || outcomes["corrupt"] == 0 || outcomes["version"] == 0 {
		t.Fatalf("outcomes %v: the sweep missed a kind of damage", outcomes)
	}
	t.Logf("outcomes: %v", outcomes)
}

func TestReplayRefusesCorruptionBeforeValidRecords(t *testing.T) {
	fs := newMemLog(t, 1, 10, 10, WriterOptions{})
	seg := readFile(t, fs, segPath(1))
	ends := frameEnds(t, seg)
	seg[ends[3]-1] ^= 0x10 // last byte of the third frame; seven valid frames follow
	writeFile(t, fs, segPath(1), seg)
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(1), ends[2], before)
	if !strings.Contains(err.Error(), "crc mismatch") {
		t.Fatalf("error does not say what is wrong: %v", err)
	}
}

func TestReplayRefusesTornFrameInNonLastSegment(t *testing.T) {
	fs := newMemLog(t, 1, 10, 2, WriterOptions{SegmentBytes: 60})
	seg := readFile(t, fs, segPath(1))
	ends := frameEnds(t, seg)
	writeFile(t, fs, segPath(1), seg[:len(seg)-3]) // looks torn, but a segment follows
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(1), ends[len(ends)-2], before)
}

func TestReplayRefusesBadHeaderInNonLastSegment(t *testing.T) {
	fs := newMemLog(t, 1, 10, 2, WriterOptions{SegmentBytes: 60})
	seg := readFile(t, fs, segPath(1))
	clear(seg[:headerSize])
	writeFile(t, fs, segPath(1), seg)
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(1), 0, before)
}

func TestReplayRefusesBadHeaderOfLastSegmentHoldingRecords(t *testing.T) {
	fs := newMemLog(t, 1, 10, 10, WriterOptions{})
	seg := readFile(t, fs, segPath(1))
	copy(seg, "STRATWAX")
	writeFile(t, fs, segPath(1), seg)
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(1), 0, before)
}

func TestReplayRefusesGapBetweenSegments(t *testing.T) {
	fs := newMemLog(t, 1, 20, 2, WriterOptions{SegmentBytes: 60})
	names, _ := fs.ReadDir(logDir)
	if len(names) < 3 {
		t.Fatalf("only %d segments", len(names))
	}
	if err := fs.Remove(filepath.Join(logDir, names[1])); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, filepath.Join(logDir, names[2]), headerSize, before)
}

func TestReplayRefusesMisorderedSeq(t *testing.T) {
	for _, seqs := range [][]uint64{{1, 2, 4, 5}, {1, 2, 2, 3}, {1, 2, 1, 2}} {
		fs := memfs.New()
		seg := craftSegment(seqs...)
		writeFile(t, fs, segPath(1), seg)
		before := snapshot(t, fs, logDir)
		_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
		checkRefused(t, fs, err, segPath(1), frameEnds(t, seg)[2], before)
	}
}

func TestReplayRefusesMisorderedSeqEvenInLastFrame(t *testing.T) {
	// A whole frame with a valid CRC is not a torn write.
	fs := memfs.New()
	seg := craftSegment(1, 2, 4)
	writeFile(t, fs, segPath(1), seg)
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(1), frameEnds(t, seg)[2], before)
}

func TestReplayRefusesFirstRecordNotMatchingSegmentName(t *testing.T) {
	fs := memfs.New()
	writeFile(t, fs, segPath(5), craftSegment(6, 7))
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(5), headerSize, before)
}

func TestReplayRefusesSegmentNamedZero(t *testing.T) {
	fs := memfs.New()
	writeFile(t, fs, segPath(0), craftSegment(0))
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	checkRefused(t, fs, err, segPath(0), 0, before)
}

// TestReplayRefusesLogStartingAfterCheckpoint: records between the
// checkpoint and the log's first record are lost; Repair says which.
func TestReplayRefusesLogStartingAfterCheckpoint(t *testing.T) {
	fs := newMemLog(t, 5, 10, 2, WriterOptions{})
	before := snapshot(t, fs, logDir)
	_, _, err := replayAll(fs, logDir, 2, ReplayOptions{})
	checkRefused(t, fs, err, segPath(5), headerSize, before)
	if !strings.Contains(err.Error(), "records 3 to 4") {
		t.Fatalf("error does not name the missing records: %v", err)
	}
	recs, info, err := replayAll(fs, logDir, 2, ReplayOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSalvaged(t, recs, info, 3, 10, SeqRange{3, 4})
	if !errors.Is(info.Corruption, ErrCorrupt) {
		t.Fatalf("info %+v", info)
	}
}

func TestReplayRefusesNewerFormatVersion(t *testing.T) {
	fs := newMemLog(t, 1, 4, 2, WriterOptions{})
	seg := readFile(t, fs, segPath(1))
	le.PutUint32(seg[8:], version+1)
	writeFile(t, fs, segPath(1), seg)
	before := snapshot(t, fs, logDir)
	for _, opts := range []ReplayOptions{{}, {Repair: true}} {
		if _, _, err := replayAll(fs, logDir, 0, opts); !errors.Is(err, ErrVersion) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("Repair=%v: got %v, want ErrVersion", opts.Repair, err)
		}
		if !sameFiles(before, snapshot(t, fs, logDir)) {
			t.Fatalf("Repair=%v: replay of a newer log changed it", opts.Repair)
		}
	}
}

func TestCorruptErrorNamesFileAndOffset(t *testing.T) {
	fs := memfs.New()
	seg := craftSegment(1, 2, 3)
	ends := frameEnds(t, seg)
	seg[ends[1]+frameHeaderSize] ^= 1 // first payload byte of record 2
	writeFile(t, fs, segPath(1), seg)
	_, _, err := replayAll(fs, logDir, 0, ReplayOptions{})
	want := fmt.Sprintf(`wal: corrupt record: in file "/db/wal/0000000000000001.wal" at offset %d: crc mismatch: stored `, ends[1])
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q, want it to start %q", err, want)
	}
}
