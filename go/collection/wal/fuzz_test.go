package wal

import (
	"bytes"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/strata-db/strata/go/vfs/memfs"
)

// referenceFrames parses a segment named for seq 1 the simple way, frame
// after frame from the header on, stopping at the first frame that is not
// exactly right. Whatever Replay returns must be a prefix of this.
func referenceFrames(seg []byte) []record {
	if len(seg) < 16 || string(seg[:16]) != "STRATWAL\x01\x00\x00\x00\x00\x00\x00\x00" &&
		string(seg[:16]) != "STRATWAL\x02\x00\x00\x00\x00\x00\x00\x00" {
		return nil
	}
	var recs []record
	for off := 16; len(seg)-off >= 16; {
		length := int(le.Uint32(seg[off:]))
		stored, seq := le.Uint32(seg[off+4:]), le.Uint64(seg[off+8:])
		if length > len(seg)-off-16 || seq != uint64(len(recs))+1 {
			break
		}
		if crc32.Checksum(seg[off+8:off+16+length], crc32.MakeTable(crc32.Castagnoli)) != stored {
			break
		}
		recs = append(recs, record{seq, seg[off+16 : off+16+length]})
		off += 16 + length
	}
	return recs
}

// allWritten reports whether every record is a valid frame somewhere in
// seg, in ascending seq order: all a salvage may return.
func allWritten(recs []record, seg []byte) bool {
	for i, r := range recs {
		if i > 0 && r.seq <= recs[i-1].seq {
			return false
		}
		frame := appendFrame(nil, r.seq, r.payload)
		if !bytes.Contains(seg, frame) {
			return false
		}
	}
	return true
}

func isPrefix(recs, of []record) bool {
	if len(recs) > len(of) {
		return false
	}
	for i, r := range recs {
		if r.seq != of[i].seq || !bytes.Equal(r.payload, of[i].payload) {
			return false
		}
	}
	return true
}

// FuzzReplay replays arbitrary bytes as the only segment of a log: Replay
// must not panic, must return only a prefix of the frames a plain parse
// finds, must fail only with ErrCorrupt or ErrVersion and then change
// nothing, and Repair must always leave a log that replays cleanly.
func FuzzReplay(f *testing.F) {
	f.Add(craftSegment(1, 2, 3))
	f.Add(craftSegment(1, 2, 3)[:60])
	f.Add(appendHeader(nil))
	f.Add([]byte{})
	// Version 2 as a crash leaves it: preallocated zeros after the
	// records; a torn last record followed by zeros; version 1 with zeros
	// (a torn tail there).
	prealloc := append(craftSegment(1, 2, 3), make([]byte, 300)...)
	f.Add(prealloc)
	torn := bytes.Clone(prealloc)
	clear(torn[len(craftSegment(1, 2))+20 : len(craftSegment(1, 2, 3))])
	f.Add(torn)
	v1 := craftSegment(1, 2, 3)
	le.PutUint32(v1[8:], versionAppend)
	f.Add(append(v1, make([]byte, 40)...))
	f.Fuzz(func(t *testing.T, seg []byte) {
		want := referenceFrames(seg)
		fs := memfs.New()
		writeFile(t, fs, segPath(1), seg)
		before := snapshot(t, fs, logDir)

		recs, info, err := replayAll(fs, logDir, 0, ReplayOptions{})
		if !isPrefix(recs, want) {
			t.Fatalf("Replay returned %d records that are not a prefix of the %d valid frames", len(recs), len(want))
		}
		switch {
		case err == nil:
			if len(recs) != len(want) || info.LastSeq != uint64(len(want)) {
				t.Fatalf("Replay succeeded with %d records, %+v; the segment holds %d valid frames", len(recs), info, len(want))
			}
		case errors.Is(err, ErrCorrupt), errors.Is(err, ErrVersion):
			if !sameFiles(before, snapshot(t, fs, logDir)) {
				t.Fatalf("a refused replay (%v) changed the log", err)
			}
		default:
			t.Fatalf("unexpected error: %v", err)
		}

		recs, info, err = replayAll(fs, logDir, 0, ReplayOptions{Repair: true})
		if errors.Is(err, ErrVersion) {
			return
		}
		if err != nil || !isPrefix(recs[:min(len(recs), len(want))], want) || !allWritten(recs, seg) {
			t.Fatalf("Repair: %d records, %v", len(recs), err)
		}
		// The log is cut at the first damage: what replays afterwards is
		// the records before it; those salvaged after it were passed on.
		kept := len(recs) - info.Salvaged
		again, info2, err := replayAll(fs, logDir, 0, ReplayOptions{})
		if err != nil || info2.TornFile != "" || len(again) != kept || !isPrefix(again, recs) {
			t.Fatalf("replay after Repair: %d records (had %d), %+v, %v", len(again), len(recs), info2, err)
		}
	})
}
