package crashtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// sequential makes ops one at a time (one worker) on a memfs collection
// until the log holds walBytes, and returns the FS, the journal and the
// acked events after each op.
func sequential(t *testing.T, walBytes int64, checkpointFirst bool) (*memfs.FS, []Event) {
	t.Helper()
	fs := memfs.New()
	// No background reaper: each log record is one op's.
	w := Workload{Seed: 11, Workers: 1, Ops: 1, Dim: 8, Fsync: collection.FsyncAlways, CheckpointBytes: -1, ReapInterval: -1}
	c, err := w.OpenOrCreate(fs, "/col")
	if err != nil {
		t.Fatal(err)
	}
	j, _ := NewJournal("", false)
	for i := 0; ; i++ {
		if i == 20 && checkpointFirst {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
		if int64(segmentBytes(t, fs)) >= walBytes && (i > 20 || !checkpointFirst) {
			break
		}
		w.FirstOp = uint64(1000 * (i + 1))
		if err := w.Run(c, j); err != nil {
			t.Fatal(err)
		}
	}
	// c stays open: Close would checkpoint and empty the log. With
	// FsyncAlways every acknowledged op is durable, so the clone holds all.
	return fs.CrashClone(nil), j.Events()
}

func segmentBytes(t *testing.T, fs vfs.FS) int {
	names, _ := fs.ReadDir("/col/wal")
	total := 0
	for _, n := range names {
		if path.Ext(n) == ".wal" {
			data, err := vfs.ReadFile(fs, "/col/wal/"+n)
			if err != nil {
				t.Fatal(err)
			}
			ends := frameEnds(data)
			total = 16
			if len(ends) > 0 {
				total = ends[len(ends)-1]
			}
		}
	}
	return total
}

// lastSegment returns the path and contents of the newest log segment.
func lastSegment(t *testing.T, fs vfs.FS) (string, []byte) {
	t.Helper()
	names, _ := fs.ReadDir("/col/wal")
	var name string
	for _, n := range names {
		if path.Ext(n) == ".wal" {
			name = "/col/wal/" + n
		}
	}
	data, err := vfs.ReadFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	return name, data
}

// frameEnds lists where each frame of a segment ends (see package wal),
// up to the zeros after the records of a preallocated segment.
func frameEnds(seg []byte) []int {
	var ends []int
	for off := 16; off+16 <= len(seg); {
		if bytes.Count(seg[off:], []byte{0}) == len(seg)-off {
			break
		}
		off += 16 + int(binary.LittleEndian.Uint32(seg[off:]))
		if off > len(seg) {
			break
		}
		ends = append(ends, off)
	}
	return ends
}

// TestTornWALWriteAtEveryByteKeepsWholeRecords tears the log at every byte
// of an 8 KiB segment (the soak tier; CI at every third), as a crash
// inside the write crossing that byte would: recovery must keep exactly
// the records that are whole. The
// segment is preallocated, so a torn write leaves the zeros that were
// there after the byte (inPlace); cutting the file there is what a crash
// leaves of a segment written before preallocation (format 1), or of a
// preallocated one whose zeros had not reached the disk.
func TestTornWALWriteAtEveryByteKeepsWholeRecords(t *testing.T) {
	racetest.AnswersOnly(t)
	base, events := sequential(t, 8<<10, false)
	name, seg := lastSegment(t, base)
	ends := frameEnds(seg)
	// The CI tier tears at every third of the positions (cut or zeroed
	// alternately, so each mode meets every kind of byte): at every one,
	// 18,000 opens took 5 of CI's minutes. The soak tier tears at all.
	stride := tier(61, 3, 1)
	for i := 0; i <= 2*ends[len(ends)-1]; i += stride {
		cut, inPlace := i/2, i%2 == 1
		fs := base.CrashClone(nil)
		torn := seg[:cut]
		if inPlace {
			torn = append(bytes.Clone(torn), make([]byte, len(seg)-cut)...)
		}
		if err := rewrite(fs, name, torn); err != nil {
			t.Fatal(err)
		}
		whole := 0
		for whole < len(ends) && ends[whole] <= cut {
			whole++
		}
		// Zeroing bytes that were zeros (the end of a payload) tears
		// nothing: that frame is whole.
		for inPlace && whole < len(ends) && cut <= ends[whole] &&
			bytes.Count(seg[cut:ends[whole]], []byte{0}) == ends[whole]-cut {
			whole++
		}
		c, err := collection.Open("/col", collection.Tuning{FS: fs, CheckpointBytes: -1, ReapInterval: -1})
		if cut < 16 && !(inPlace && cut > 8) {
			// Segments are created whole (temporary name, rename): no
			// crash leaves a short header, so this is an emptied segment.
			// (Zeroed from byte 9 on, past the version's low byte, the
			// header reads as whole, and the zeros as an empty segment.)
			if !errors.Is(err, collection.ErrCorrupt) {
				t.Fatalf("log cut at byte %d, inside the segment header: got %v, want ErrCorrupt", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("log torn at byte %d of %d (in place %v): recovery: %v", cut, len(seg), inPlace, err)
		}
		if _, _, err := Verify(c, Model{}, events[:2*whole], Cut{Acked: 2 * whole, Attempted: 2 * whole}); err != nil {
			t.Fatalf("log torn at byte %d of %d (in place %v, %d whole records): %v", cut, len(seg), inPlace, whole, err)
		}
		c.Close()
	}
}

// TestBitFlipInWALOrSnapshotNeverYieldsWrongData flips one bit in each
// byte of the log and of every file of the live snapshot: recovery must
// refuse with ErrCorrupt, or cut a torn-looking log tail (a prefix of the
// writes), or, for a snapshot, yield exactly what was written (by falling
// back to the previous snapshot and the log since it).
func TestBitFlipInWALOrSnapshotNeverYieldsWrongData(t *testing.T) {
	racetest.AnswersOnly(t)
	base, events := sequential(t, 4<<10, true)
	seq, err := snapshotSeq(base)
	if err != nil {
		t.Fatal(err)
	}
	walName, _ := lastSegment(t, base)
	snap := fmt.Sprintf("/col/snapshots/%016x/", seq)
	var older []string
	if names, err := base.ReadDir("/col/snapshots"); err == nil {
		for _, n := range names {
			if len(n) == 16 && n != fmt.Sprintf("%016x", seq) {
				older = append(older, n)
			}
		}
	}
	// The segment the live checkpoint wrote (not one the previous
	// snapshot shares, which has no fallback: package snapshot).
	segment := LiveOnlySegment(base, "/col", seq, older)
	if segment == "" {
		t.Fatal("the live snapshot wrote no segment of its own")
	}
	files := []string{walName, segment, "/col/segments/" + snapshot.StateRunName(seq), snap + "MANIFEST", "/col/CURRENT"}
	// Every third byte in CI (the bit flipped moves with the byte); every
	// byte in the soak tier.
	stride := tier(37, 3, 1)
	flips := 0
	for _, name := range files {
		data, err := vfs.ReadFile(base, name)
		if err != nil {
			t.Fatal(err)
		}
		if name == walName {
			// The records and a few of the preallocated zeros after
			// them, not the megabyte of zeros.
			ends := frameEnds(data)
			data = data[:min(len(data), ends[len(ends)-1]+64)]
		}
		for at := 0; at < len(data); at += stride {
			fs := base.CrashClone(nil)
			flipped := append([]byte(nil), data...)
			flipped[at] ^= 1 << (at % 8)
			if err := rewrite(fs, name, flipped); err != nil {
				t.Fatal(err)
			}
			flips++
			where := fmt.Sprintf("bit %d of byte %d of %s", at%8, at, name)
			c, err := collection.Open("/col", collection.Tuning{FS: fs, CheckpointBytes: -1})
			if err != nil {
				if name != walName {
					t.Fatalf("%s: the previous snapshot was not fallen back on: %v", where, err)
				}
				if !errors.Is(err, collection.ErrCorrupt) && !errors.Is(err, indexfile.ErrCorrupt) {
					t.Fatalf("%s: %v is not ErrCorrupt", where, err)
				}
				continue
			}
			cut := Cut{Acked: len(events), Attempted: len(events)}
			if name == walName {
				// A damaged last record reads as a torn tail; the 20
				// ops before the checkpoint are in the snapshot.
				cut.Acked = 40
			}
			_, _, err = Verify(c, Model{}, events, cut)
			c.Close()
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		}
	}
	t.Logf("%d bit flips", flips)
}

// snapshotSeq is the live snapshot (the previous one, snapshot 0, is
// kept beside it to fall back on).
func snapshotSeq(fs vfs.FS) (uint64, error) {
	return snapshot.ReadCurrent(fs, "/col")
}

func rewrite(fs vfs.FS, name string, data []byte) error {
	if err := fs.Remove(name); err != nil {
		return err
	}
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}
