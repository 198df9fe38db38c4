package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"

	"github.com/strata-db/strata/go/vfs"
)

// listSegments returns dir's segments in sequence order, ignoring other
// files. A missing directory is an empty log.
func listSegments(fs vfs.FS, dir string) ([]segmentFile, error) {
	names, err := fs.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("wal: listing %q: %w", dir, err)
	}
	var segs []segmentFile
	for _, name := range names {
		if seq, ok := parseSegmentName(name); ok {
			segs = append(segs, segmentFile{seq: seq, path: segmentPath(dir, seq)})
		}
	}
	slices.SortFunc(segs, func(a, b segmentFile) int { return compareSeq(a.seq, b.seq) })
	return segs, nil
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readWindow is how much of a segment is read at a time, so that small
// records cost a slice operation rather than a system call each.
const readWindow = 1 << 20

// segmentReader reads one segment through a window of its bytes. It never
// reads, or allocates for, bytes beyond the size it was opened with, so a
// corrupt length costs nothing.
type segmentReader struct {
	f      vfs.File
	path   string
	size   int64
	window []byte
	winOff int64 // file offset of window[0]

	// preallocated is set by header for a version 2 segment, whose bytes
	// after the last record are zeros the writer put there in advance.
	preallocated bool
}

func openSegment(fs vfs.FS, path string) (*segmentReader, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wal: opening segment: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: stat of segment %q: %w", path, err)
	}
	return &segmentReader{f: f, path: path, size: fi.Size()}, nil
}

func (r *segmentReader) Close() error { return r.f.Close() }

// bytes returns the file's bytes [off, off+n), which the caller has
// checked lie within the file. The slice is valid until the next call.
func (r *segmentReader) bytes(off int64, n int) ([]byte, error) {
	if off >= r.winOff && off+int64(n) <= r.winOff+int64(len(r.window)) {
		return r.window[off-r.winOff:][:n], nil
	}
	want := int(min(max(int64(n), readWindow), r.size-off))
	if cap(r.window) < want {
		r.window = make([]byte, want)
	}
	r.window = r.window[:want]
	r.winOff = off
	if _, err := r.f.ReadAt(r.window, off); err != nil {
		r.window = r.window[:0]
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("wal: segment %q shrank to less than %d bytes while being read", r.path, r.size)
		}
		return nil, fmt.Errorf("wal: reading %d bytes of %q at offset %d: %w", want, r.path, off, err)
	}
	return r.window[:n], nil
}

// header returns what is wrong with the segment's header, or "".
func (r *segmentReader) header() (problem string, newer bool, err error) {
	if r.size < headerSize {
		return fmt.Sprintf("short segment header: %d of %d bytes", r.size, headerSize), false, nil
	}
	h, err := r.bytes(0, headerSize)
	if err != nil {
		return "", false, err
	}
	problem, newer = checkHeader(h)
	r.preallocated = problem == "" && le.Uint32(h[8:]) == version
	return problem, newer, nil
}

// nextNonZero returns the offset of the first byte at or after off that is
// not zero, or the file's size if there is none.
func (r *segmentReader) nextNonZero(off int64) (int64, error) {
	for off < r.size {
		n := int(min(int64(len(zeroBlock)), r.size-off))
		b, err := r.bytes(off, n)
		if err != nil {
			return 0, err
		}
		if !allZero(b) {
			return off + int64(bytes.IndexFunc(b, func(c rune) bool { return c != 0 })), nil
		}
		off += int64(n)
	}
	return r.size, nil
}

// skipZeros returns where a scan for frames that found the 16 bytes at off
// all zero goes on: no frame can start before the 15 bytes preceding the
// next non-zero byte, since its seq (the header's last 8 bytes) is not 0.
// This makes scanning the unused end of a preallocated segment cost a
// memory compare, not a frame check per byte.
func (r *segmentReader) skipZeros(off int64) (int64, error) {
	p, err := r.nextNonZero(off + frameHeaderSize)
	if err != nil {
		return 0, err
	}
	return max(off+1, p-(frameHeaderSize-1)), nil
}

// frame is one record read from a segment; payload points into the
// reader's window.
type frame struct {
	seq     uint64
	payload []byte
	end     int64 // offset just past the frame
}

// frameAt reads the frame at off. A non-empty problem says why the bytes
// there are not a valid frame; err is a failure to read. A frame whose
// length fits in the file but whose CRC fails comes back with its seq and
// end set and no payload (see zeroedBlock).
func (r *segmentReader) frameAt(off int64) (fr frame, problem string, err error) {
	left := r.size - off
	if left < frameHeaderSize {
		return frame{}, fmt.Sprintf("short frame header: %d of %d bytes", left, frameHeaderSize), nil
	}
	h, err := r.bytes(off, frameHeaderSize)
	if err != nil {
		return frame{}, "", err
	}
	if allZero(h) {
		return frame{}, "zeroed frame header", nil
	}
	length, stored, seq := le.Uint32(h), le.Uint32(h[4:]), le.Uint64(h[8:])
	if length > MaxPayload {
		return frame{}, fmt.Sprintf("bad length %d, more than the maximum %d", length, MaxPayload), nil
	}
	if int64(length) > left-frameHeaderSize {
		return frame{}, fmt.Sprintf("short frame: payload of %d bytes, %d bytes left", length, left-frameHeaderSize), nil
	}
	b, err := r.bytes(off, frameHeaderSize+int(length))
	if err != nil {
		return frame{}, "", err
	}
	payload := b[frameHeaderSize:]
	if computed := frameCRC(seq, payload); computed != stored {
		// The frame is whole: end says so, and seq is what its header
		// claims (it may be damaged too).
		return frame{seq: seq, end: off + frameHeaderSize + int64(length)},
			fmt.Sprintf("crc mismatch: stored %#08x, computed %#08x", stored, computed), nil
	}
	return frame{seq: seq, payload: payload, end: off + frameHeaderSize + int64(length)}, "", nil
}

// scanFrames looks at every offset from start on for valid frames that
// could continue a log whose last record is floor and whose next record
// would have started at anchor (where the damage is): a frame d bytes
// after anchor can hold at most seq floor+1+d/16, since every frame takes
// at least 16 bytes. That bound lets the scan skip almost every offset
// without computing a CRC. Each frame found becomes the new floor and
// anchor. With first, it stops at the first frame found.
func (r *segmentReader) scanFrames(start, anchor int64, floor uint64, first bool) (count int, newFloor uint64, err error) {
	for off := start; r.size-off >= frameHeaderSize; {
		h, err := r.bytes(off, frameHeaderSize)
		if err != nil {
			return count, floor, err
		}
		if allZero(h) {
			if off, err = r.skipZeros(off); err != nil {
				return count, floor, err
			}
			continue
		}
		length, seq := le.Uint32(h), le.Uint64(h[8:])
		plausible := seq > floor && seq-floor <= 1+uint64(off-anchor)/frameHeaderSize &&
			int64(length) <= r.size-off-frameHeaderSize
		if !plausible {
			off++
			continue
		}
		fr, problem, err := r.frameAt(off)
		if err != nil {
			return count, floor, err
		}
		if problem != "" {
			off++
			continue
		}
		count++
		if first {
			return count, fr.seq, nil
		}
		floor, off, anchor = fr.seq, fr.end, fr.end
	}
	return count, floor, nil
}

// blockSize is the smallest unit a disk writes whole: a crash can lose an
// aligned block of an unsynced write, leaving zeros (a file extended past
// it), but does not change bits inside a block it kept.
const blockSize = 512

// zeroedBlock reports whether the bytes [from, to) of the file end in a
// zero byte or hold a blockSize-aligned piece that is all zeros: the marks
// a crash leaves on a frame whose length reached the disk but part of
// whose bytes did not (a zeroed tail, or a lost block). A complete frame
// with a bad CRC and neither mark is not a torn write: its bits changed
// after it was written.
func (r *segmentReader) zeroedBlock(from, to int64) (bool, error) {
	if to > from {
		b, err := r.bytes(to-1, 1)
		if err != nil || b[0] == 0 {
			return err == nil, err
		}
	}
	for start := from; start < to; {
		end := min((start/blockSize+1)*blockSize, to)
		b, err := r.bytes(start, int(end-start))
		if err != nil {
			return false, err
		}
		if allZero(b) {
			return true, nil
		}
		start = end
	}
	return false, nil
}

// salvageFrames calls visit for every valid frame from start on, in file
// order, whose seq is greater than that of the last one visited (floor at
// first): after damage it resynchronises on the next valid frame. A frame
// d bytes after the end of the previous one (or after anchor) can hold at
// most seq floor+1+d/16, which lets the scan skip almost every offset
// without computing a CRC. It returns the end of the last frame visited,
// or start if there was none.
func (r *segmentReader) salvageFrames(start, anchor int64, floor uint64, visit func(fr frame) error) (int64, error) {
	end := start
	for off := start; r.size-off >= frameHeaderSize; {
		h, err := r.bytes(off, frameHeaderSize)
		if err != nil {
			return end, err
		}
		if allZero(h) {
			if off, err = r.skipZeros(off); err != nil {
				return end, err
			}
			continue
		}
		length, seq := le.Uint32(h), le.Uint64(h[8:])
		// At start itself any later seq may follow (the damage can be a
		// valid frame in the wrong place: a gap, a missing segment).
		plausible := seq > floor && (off == start || seq-floor <= 1+uint64(off-anchor)/frameHeaderSize) &&
			int64(length) <= r.size-off-frameHeaderSize
		if !plausible {
			off++
			continue
		}
		fr, problem, err := r.frameAt(off)
		if err != nil {
			return end, err
		}
		if problem != "" {
			off++
			continue
		}
		if err := visit(fr); err != nil {
			return end, err
		}
		floor, off, anchor, end = fr.seq, fr.end, fr.end, fr.end
	}
	return end, nil
}
