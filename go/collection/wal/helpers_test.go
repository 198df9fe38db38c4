package wal

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

const logDir = "/db/wal"

// payloadFor is the payload of record seq in every test log: its length
// varies (including empty) so frames end at many different offsets.
func payloadFor(seq uint64) []byte {
	n := int(seq*7) % 23
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seq*31 + uint64(i))
	}
	return b
}

type record struct {
	seq     uint64
	payload []byte
}

// writeLog appends records first..last in batches of batch records, syncs
// and closes the writer.
func writeLog(t *testing.T, fs vfs.FS, dir string, first, last uint64, batch int, opts WriterOptions) {
	t.Helper()
	w, err := NewWriter(fs, dir, first, opts)
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, first, last, batch)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendRange(t *testing.T, w *Writer, first, last uint64, batch int) {
	t.Helper()
	for seq := first; seq <= last; {
		var payloads [][]byte
		for i := 0; i < batch && seq+uint64(i) <= last; i++ {
			payloads = append(payloads, payloadFor(seq+uint64(i)))
		}
		got, err := w.Append(payloads)
		if err != nil {
			t.Fatal(err)
		}
		if got != seq {
			t.Fatalf("Append returned first seq %d, want %d", got, seq)
		}
		seq += uint64(len(payloads))
	}
}

// replayAll replays the log and returns copies of the records.
func replayAll(fs vfs.FS, dir string, after uint64, opts ReplayOptions) ([]record, ReplayInfo, error) {
	var recs []record
	info, err := Replay(fs, dir, after, opts, func(seq uint64, payload []byte) error {
		recs = append(recs, record{seq, bytes.Clone(payload)})
		return nil
	})
	return recs, info, err
}

// checkRecords checks that recs are exactly records first..last as
// written by writeLog.
func checkRecords(t *testing.T, recs []record, first, last uint64) {
	t.Helper()
	if err := recordsAre(recs, first, last); err != nil {
		t.Fatal(err)
	}
}

func recordsAre(recs []record, first, last uint64) error {
	if want := int(last + 1 - first); len(recs) != want {
		return fmt.Errorf("got %d records, want %d (seq %d to %d)", len(recs), want, first, last)
	}
	for i, r := range recs {
		want := first + uint64(i)
		if r.seq != want || !bytes.Equal(r.payload, payloadFor(want)) {
			return fmt.Errorf("record %d is seq %d payload %x, want seq %d payload %x", i, r.seq, r.payload, want, payloadFor(want))
		}
	}
	return nil
}

func readFile(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLog checks that replaying the log in dir after after returns
// exactly records after+1..last.
func checkLog(t *testing.T, fs vfs.FS, dir string, after, last uint64) {
	t.Helper()
	recs, _, err := replayAll(fs, dir, after, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs, after+1, last)
}

// writeFile replaces name with data, durably.
func writeFile(t *testing.T, fs vfs.FS, name string, data []byte) {
	t.Helper()
	mkdirDurable(t, fs, filepath.Dir(name))
	if err := fs.RemoveAll(name); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(filepath.Dir(name)); err != nil {
		t.Fatal(err)
	}
}

// mkdirDurable creates dir and fsyncs it and every parent.
func mkdirDurable(t *testing.T, fs vfs.FS, dir string) {
	t.Helper()
	if err := fs.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if err := fs.SyncDir(d); err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}

// snapshot reads every file in dir but HEAD: a test that restores it
// replays a log as written before HEAD existed, whose rules (a torn
// segment header is a crash, not damage) it checks. Logs with HEAD are
// tested in head_test.go.
func snapshot(t *testing.T, fs vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string][]byte, len(names))
	for _, n := range names {
		if n == HeadName {
			continue
		}
		files[n] = readFile(t, fs, filepath.Join(dir, n))
	}
	return files
}

// restore replaces dir's contents with files.
func restore(t *testing.T, fs vfs.FS, dir string, files map[string][]byte) {
	t.Helper()
	if err := fs.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for n, b := range files {
		writeFile(t, fs, filepath.Join(dir, n), b)
	}
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for n, x := range a {
		if y, ok := b[n]; !ok || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// frameEnds returns the offsets at which the frames of a valid segment
// end, starting with the header's end; zeros after the last frame (the
// unused end of a preallocated segment) are not a frame.
func frameEnds(t *testing.T, seg []byte) []int64 {
	t.Helper()
	ends := []int64{headerSize}
	for off := int64(headerSize); off < int64(len(seg)); {
		if allZero(seg[off:]) {
			return ends
		}
		off += frameHeaderSize + int64(le.Uint32(seg[off:]))
		ends = append(ends, off)
	}
	if ends[len(ends)-1] != int64(len(seg)) {
		t.Fatalf("segment of %d bytes does not end on a frame", len(seg))
	}
	return ends
}

func newMemLog(t *testing.T, first, last uint64, batch int, opts WriterOptions) *memfs.FS {
	t.Helper()
	fs := memfs.New()
	writeLog(t, fs, logDir, first, last, batch, opts)
	return fs
}

func segPath(seq uint64) string { return filepath.Join(logDir, segmentName(seq)) }

// removeHead makes fs's log one written before HEAD existed.
func removeHead(t *testing.T, fs vfs.FS) {
	t.Helper()
	if err := fs.Remove(filepath.Join(logDir, HeadName)); err != nil {
		t.Fatal(err)
	}
}

// salvagedAre checks that recs are records first..last as written by
// writeLog except those in lost, and that info reports exactly lost.
func salvagedAre(recs []record, info ReplayInfo, first, last uint64, lost ...SeqRange) error {
	if !slices.Equal(info.Lost, lost) {
		return fmt.Errorf("lost %v, want %v", info.Lost, lost)
	}
	isLost := func(seq uint64) bool {
		for _, r := range lost {
			if seq >= r.From && (r.Through == 0 || seq <= r.Through) {
				return true
			}
		}
		return false
	}
	i := 0
	for seq := first; seq <= last; seq++ {
		if isLost(seq) {
			continue
		}
		if i >= len(recs) {
			return fmt.Errorf("got %d records, seq %d missing", len(recs), seq)
		}
		if r := recs[i]; r.seq != seq || !bytes.Equal(r.payload, payloadFor(seq)) {
			return fmt.Errorf("record %d is seq %d payload %x, want seq %d", i, r.seq, r.payload, seq)
		}
		i++
	}
	if i != len(recs) {
		return fmt.Errorf("got %d records, want %d", len(recs), i)
	}
	return nil
}

func checkSalvaged(t *testing.T, recs []record, info ReplayInfo, first, last uint64, lost ...SeqRange) {
	t.Helper()
	if err := salvagedAre(recs, info, first, last, lost...); err != nil {
		t.Fatalf("%v (info %+v)", err, info)
	}
}

// checkBroken checks that Repair kept a copy of each of the segments
// (file name, original bytes) before it changed them.
func checkBroken(t *testing.T, fs vfs.FS, info ReplayInfo, originals map[string][]byte, names ...string) {
	t.Helper()
	if len(info.Broken) != len(names) {
		t.Fatalf("broken copies %v, want copies of %v", info.Broken, names)
	}
	for i, name := range names {
		if want := filepath.Join(logDir, name) + brokenSuffix; info.Broken[i] != want {
			t.Fatalf("broken copy %d is %s, want %s", i, info.Broken[i], want)
		}
		if got := readFile(t, fs, info.Broken[i]); !bytes.Equal(got, originals[name]) {
			t.Fatalf("%s holds %d bytes, not the %d of the damaged segment", info.Broken[i], len(got), len(originals[name]))
		}
	}
}
