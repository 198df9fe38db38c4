package wal

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

func TestAppendReplayRoundTrip(t *testing.T) {
	filesystems := map[string]func(t *testing.T) (vfs.FS, string){
		"os":    func(t *testing.T) (vfs.FS, string) { return vfs.Default, filepath.Join(t.TempDir(), "wal") },
		"memfs": func(t *testing.T) (vfs.FS, string) { return memfs.New(), logDir },
	}
	for name, newFS := range filesystems {
		t.Run(name, func(t *testing.T) {
			fs, dir := newFS(t)
			writeLog(t, fs, dir, 1, 300, 7, WriterOptions{SegmentBytes: 1000})
			for _, after := range []uint64{0, 1, 150, 299, 300, 1000} {
				recs, info, err := replayAll(fs, dir, after, ReplayOptions{})
				if err != nil {
					t.Fatalf("after %d: %v", after, err)
				}
				first := min(after+1, 301)
				checkRecords(t, recs, first, 300)
				if info.LastSeq != 300 || info.Records != len(recs) || info.TornFile != "" || info.DroppedFile != "" {
					t.Fatalf("after %d: info %+v", after, info)
				}
			}
		})
	}
}

func TestReplayOfMissingDirectoryIsEmpty(t *testing.T) {
	recs, info, err := replayAll(memfs.New(), "/nothing/here", 0, ReplayOptions{})
	if err != nil || len(recs) != 0 || !reflect.DeepEqual(info, ReplayInfo{}) {
		t.Fatalf("got %v, %+v, %v", recs, info, err)
	}
}

func TestReplayIgnoresFilesThatAreNotSegments(t *testing.T) {
	fs := newMemLog(t, 1, 10, 3, WriterOptions{})
	for _, name := range []string{"LOCK", "0000000000000001.wal.tmp", "000000000000000B.wal", "1.wal", "notes"} {
		writeFile(t, fs, filepath.Join(logDir, name), []byte("garbage"))
	}
	checkLog(t, fs, logDir, 0, 10)
}

// TestWriterWritesDocumentedFormat builds the expected bytes from the
// package doc by hand, so that a change to the encoder cannot silently
// change the format.
func TestWriterWritesDocumentedFormat(t *testing.T) {
	fs := memfs.New()
	w, err := NewWriter(fs, logDir, 0x1234, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([][]byte{[]byte("hello"), {}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []byte("STRATWAL\x02\x00\x00\x00\x00\x00\x00\x00")
	// CRCs computed with a bitwise CRC-32C (check value 0xe3069283) over
	// 34 12 00 00 00 00 00 00 "hello", and over 35 12 00 00 00 00 00 00.
	want = append(want, 5, 0, 0, 0)
	want = le.AppendUint32(want, 0xdee3debf)
	want = append(want, 0x34, 0x12, 0, 0, 0, 0, 0, 0)
	want = append(want, "hello"...)
	want = append(want, 0, 0, 0, 0)
	want = le.AppendUint32(want, 0x212282db)
	want = append(want, 0x35, 0x12, 0, 0, 0, 0, 0, 0)
	got := readFile(t, fs, filepath.Join(logDir, "0000000000001234.wal"))
	if !bytes.Equal(got, want) {
		t.Fatalf("segment bytes\n got %x\nwant %x", got, want)
	}
}

func TestReplayStopsWhenCallbackFails(t *testing.T) {
	fs := newMemLog(t, 1, 10, 10, WriterOptions{})
	stop := errors.New("stop here")
	var seen []uint64
	info, err := Replay(fs, logDir, 0, ReplayOptions{}, func(seq uint64, _ []byte) error {
		seen = append(seen, seq)
		if seq == 4 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !slices.Equal(seen, []uint64{1, 2, 3, 4}) || info.Records != 3 {
		t.Fatalf("err %v, seen %v, info %+v", err, seen, info)
	}
}

func TestSegmentNamesParseBack(t *testing.T) {
	for _, seq := range []uint64{1, 0xabc, 1 << 63, ^uint64(0)} {
		if got, ok := parseSegmentName(segmentName(seq)); !ok || got != seq {
			t.Fatalf("%d: name %q parses as %d, %v", seq, segmentName(seq), got, ok)
		}
	}
	for _, name := range []string{"000000000000000G.wal", "000000000000000A.wal", "0000000000000001.wax", "00000000000000001.wal"} {
		if _, ok := parseSegmentName(name); ok {
			t.Fatalf("%q parsed as a segment name", name)
		}
	}
}

func TestReplayWithoutCallbackVerifiesAndCutsTornTail(t *testing.T) {
	fs := newMemLog(t, 1, 10, 10, WriterOptions{})
	seg := readFile(t, fs, segPath(1))
	writeFile(t, fs, segPath(1), seg[:len(seg)-2])
	info, err := Replay(fs, logDir, 0, ReplayOptions{}, nil)
	if err != nil || info.LastSeq != 9 || info.Records != 0 || info.TornFile != segPath(1) {
		t.Fatalf("%+v, %v", info, err)
	}
}
