package wal

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
	"path/filepath"
	"sync/atomic"

	"github.com/strata-db/strata/go/vfs"
)

// WriterOptions configures a Writer.
type WriterOptions struct {
	// SegmentBytes is the size past which Append starts a new segment
	// before writing; 0 means DefaultSegmentBytes. A segment can exceed
	// it by one Append's worth of frames.
	SegmentBytes int64
}

// Writer appends records to the log in a directory. It is not safe for
// concurrent use, except that NextSeq and Bytes may be called at any time
// from any goroutine.
type Writer struct {
	fs           vfs.FS
	dir          string
	segmentBytes int64

	active     vfs.File // nil once closed, or after a failed rotation
	activeSeq  uint64   // the sequence number the active segment is named for
	activePath string
	activeSize int64        // where the next frame goes: the end of the records
	filled     int64        // the active segment's bytes [0, filled) are written
	old        []oldSegment // ascending

	nextSeq atomic.Uint64
	bytes   atomic.Int64

	buf    []byte // frames being encoded, reused across Appends
	failed error  // the failure that poisoned the writer
	closed bool
}

type oldSegment struct {
	seq  uint64
	path string
	size int64
}

// keepBuf is the largest encoding buffer kept between Appends; a larger one
// (a batch of big records) is dropped so it does not pin memory.
const keepBuf = 4 << 20

// NewWriter starts a new segment named for nextSeq, the sequence number the
// next record gets. Records already in dir must end at nextSeq-1: run
// Replay first and pass its LastSeq+1 (or, for an empty log, any number from
// 1 on). A segment file of that name may exist only if it holds no valid
// record (a crash left it empty); it is replaced. So may segments named for
// later numbers (a repair or a torn tail can leave one empty), which are
// removed; one that holds records is an error wrapping ErrInvalid.
//
// NewWriter creates dir (and its parents, fsyncing each parent) if needed,
// creates the new segment (see the package doc: temporary name, rename) and
// points HEAD at it, so the empty segment is durable and named by HEAD when
// it returns.
func NewWriter(fs vfs.FS, dir string, nextSeq uint64, opts WriterOptions) (*Writer, error) {
	if nextSeq == 0 {
		return nil, fmt.Errorf("%w: nextSeq must be at least 1", ErrInvalid)
	}
	if opts.SegmentBytes < 0 {
		return nil, fmt.Errorf("%w: SegmentBytes is %d", ErrInvalid, opts.SegmentBytes)
	}
	w := &Writer{fs: fs, dir: dir, segmentBytes: opts.SegmentBytes}
	if w.segmentBytes == 0 {
		w.segmentBytes = DefaultSegmentBytes
	}
	if err := makeDir(fs, dir); err != nil {
		return nil, err
	}
	segs, err := listSegments(fs, dir)
	if err != nil {
		return nil, err
	}
	var total int64
	var stale []segmentFile
	for _, seg := range segs {
		if seg.seq >= nextSeq {
			if err := checkNoRecords(fs, seg, nextSeq); err != nil {
				return nil, err
			}
			stale = append(stale, seg)
			continue
		}
		fi, err := fs.Stat(seg.path)
		if err != nil {
			return nil, fmt.Errorf("wal: stat of segment: %w", err)
		}
		w.old = append(w.old, oldSegment{seq: seg.seq, path: seg.path, size: fi.Size()})
		total += fi.Size()
	}
	// The new segment is renamed over a same-named empty one, and HEAD
	// names it, before any other empty segment goes: a crash in between
	// leaves HEAD naming a segment that still exists.
	if err := w.startSegment(nextSeq); err != nil {
		return nil, err
	}
	removed := false
	for _, seg := range stale {
		if seg.seq == nextSeq {
			continue // replaced by the rename
		}
		if err := fs.Remove(seg.path); err != nil {
			w.Abandon()
			return nil, fmt.Errorf("wal: removing empty segment: %w", err)
		}
		removed = true
	}
	if removed {
		if err := fs.SyncDir(dir); err != nil {
			w.Abandon()
			return nil, fmt.Errorf("wal: fsync %q after removing empty segments: %w", dir, err)
		}
	}
	w.nextSeq.Store(nextSeq)
	w.bytes.Store(total + w.activeSize)
	return w, nil
}

// makeDir creates dir if it is missing and makes each new directory
// durable by fsyncing its parent.
func makeDir(fs vfs.FS, dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		_, err := fs.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("wal: %w", err)
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("wal: creating log directory: %w", err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fs.SyncDir(filepath.Dir(missing[i])); err != nil {
			return fmt.Errorf("wal: fsync parent of new directory %q: %w", missing[i], err)
		}
	}
	return nil
}

// checkNoRecords checks that seg, named for a number at or after nextSeq,
// holds no valid record, so that NewWriter may remove it.
func checkNoRecords(fs vfs.FS, seg segmentFile, nextSeq uint64) error {
	r, err := openSegment(fs, seg.path)
	if err != nil {
		return err
	}
	found, _, err := r.scanFrames(0, 0, seg.seq-1, true)
	r.Close()
	if err != nil {
		return err
	}
	if found > 0 {
		return fmt.Errorf("%w: segment %q holds records from seq %d on, but nextSeq is %d: the log does not end at nextSeq-1 (pass Replay's LastSeq+1)",
			ErrInvalid, seg.path, seg.seq, nextSeq)
	}
	return nil
}

// startSegment creates the segment named for seq: its header is written
// and fsynced under a temporary name that is then renamed into place, and
// the directory fsynced, so that a file with a segment's name always holds
// a whole header; then HEAD is pointed at it, before any record goes in.
// On failure it removes what it created, as far as it can; a leftover
// temporary file is never read, and a segment newer than HEAD is allowed.
func (w *Writer) startSegment(seq uint64) (err error) {
	path := segmentPath(w.dir, seq)
	tmp := path + ".tmp"
	if _, err := w.fs.Stat(tmp); err == nil {
		if err := w.fs.Remove(tmp); err != nil {
			return fmt.Errorf("wal: removing leftover %q: %w", tmp, err)
		}
	}
	f, err := w.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("wal: creating segment: %w", err)
	}
	renamed := false
	defer func() {
		if err != nil {
			f.Close()
			name := tmp
			if renamed {
				name = path
			}
			if rerr := w.fs.Remove(name); rerr != nil {
				err = errors.Join(err, fmt.Errorf("wal: removing the segment that failed: %w", rerr))
			}
		}
	}()
	// The header and the first zeros go in one write.
	first := headerThenZeros[:min(int64(len(headerThenZeros)), max(w.segmentBytes, headerSize))]
	if _, err := f.WriteAt(first, 0); err != nil {
		return fmt.Errorf("wal: writing header of %q: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: fsync %q: %w", tmp, err)
	}
	if err := w.fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("wal: renaming %q into place: %w", tmp, err)
	}
	renamed = true
	if err := w.fs.SyncDir(w.dir); err != nil {
		return fmt.Errorf("wal: fsync %q after creating %q: %w", w.dir, path, err)
	}
	if err := writeHead(w.fs, w.dir, seq); err != nil {
		return err
	}
	w.active, w.activeSeq, w.activePath = f, seq, path
	w.activeSize, w.filled = headerSize, int64(len(first))
	return nil
}

// fill writes zeros from where the written bytes of the active segment
// end to zeroFillBytes past end (where the records end), or to
// SegmentBytes if that comes first, when less than half of that is
// written already. So the records of an Append overwrite bytes
// already written, and the fdatasync that makes them durable has no size
// or extent change to commit, except after the Append that called fill,
// once per zeroFillBytes. The zeros are not synced on their own: the next
// sync carries them, and until then a crash leaves zeros or nothing past
// the records, both of which Replay reads as the end of the log.
func (w *Writer) fill(end int64) error {
	if w.filled >= end+zeroFillBytes/2 {
		return nil
	}
	w.filled = max(w.filled, end) // the records are written up to end
	to := min(end+zeroFillBytes, w.segmentBytes)
	if to <= w.filled {
		return nil
	}
	if _, err := w.active.WriteAt(zeros[:to-w.filled], w.filled); err != nil {
		return fmt.Errorf("wal: writing zeros at offset %d of %q: %w", w.filled, w.activePath, err)
	}
	w.filled = to
	return nil
}

// headerThenZeros is the first write into a new segment: its header and
// the zeros after it. zeros is what fill writes (at most zeroFillBytes:
// fill writes from at least end to at most end+zeroFillBytes).
var (
	headerThenZeros = append(appendHeader(nil), make([]byte, zeroFillBytes)...)
	zeros           = headerThenZeros[headerSize:]
)

// usable returns the error every call on a closed or poisoned writer gets.
func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	if w.failed != nil {
		return fmt.Errorf("%w: %w", ErrPoisoned, w.failed)
	}
	return nil
}

// poison records a failure after which the writer refuses all calls, and
// returns the error for the call that failed.
func (w *Writer) poison(err error) error {
	w.failed = err
	return w.usable()
}

// Append writes payloads as consecutive records, numbered from NextSeq,
// in one write call, and returns the first record's sequence number. The
// records are not durable until Sync. If the active segment has grown past
// SegmentBytes, Append first rotates to a new one. With no payloads it
// writes nothing and returns NextSeq.
func (w *Writer) Append(payloads [][]byte) (first uint64, err error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	first = w.nextSeq.Load()
	if uint64(len(payloads)) > math.MaxUint64-first {
		return 0, fmt.Errorf("%w: %d records after seq %d overflow the sequence numbers", ErrInvalid, len(payloads), first)
	}
	size := 0
	for i, p := range payloads {
		if len(p) > MaxPayload {
			return 0, fmt.Errorf("%w: payload %d of the batch has %d bytes, more than the maximum %d", ErrInvalid, i, len(p), MaxPayload)
		}
		size += frameHeaderSize + len(p)
	}
	if len(payloads) == 0 {
		return first, nil
	}
	if w.activeSize > w.segmentBytes && first > w.activeSeq {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}

	buf := w.buf[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for i, p := range payloads {
		buf = appendFrame(buf, first+uint64(i), p)
	}
	if cap(buf) <= keepBuf {
		w.buf = buf
	}
	n, err := w.active.WriteAt(buf, w.activeSize)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(buf))
	}
	if err == nil {
		err = w.fill(w.activeSize + int64(len(buf)))
	}
	if err != nil {
		// Part of the batch may be on disk; only Replay can tell.
		return 0, w.poison(fmt.Errorf("wal: writing %d records at offset %d of %q: %w", len(payloads), w.activeSize, w.activePath, err))
	}
	w.activeSize += int64(len(buf))
	w.bytes.Add(int64(len(buf)))
	w.nextSeq.Store(first + uint64(len(payloads)))
	return first, nil
}

// Sync makes every appended record durable: fdatasync of the active
// segment (see vfs.Datasync).
func (w *Writer) Sync() error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := vfs.Datasync(w.active); err != nil {
		return w.poison(fmt.Errorf("wal: fsync %q: %w", w.activePath, err))
	}
	return nil
}

// NextSeq is the sequence number the next appended record gets.
func (w *Writer) NextSeq() uint64 { return w.nextSeq.Load() }

// Bytes is the size of all the segments the writer knows of: those found
// by NewWriter, less those RemoveThrough removed, plus those it wrote.
func (w *Writer) Bytes() int64 { return w.bytes.Load() }

// Rotate fsyncs and closes the active segment and starts a new one named
// for NextSeq. If the active segment holds no records it does nothing,
// since the new segment would have the same name.
func (w *Writer) Rotate() error {
	if err := w.usable(); err != nil {
		return err
	}
	if w.nextSeq.Load() == w.activeSeq {
		return nil
	}
	return w.rotate()
}

func (w *Writer) rotate() error {
	if err := w.finishSegment(); err != nil {
		return w.poison(err)
	}
	w.old = append(w.old, oldSegment{seq: w.activeSeq, path: w.activePath, size: w.activeSize})
	if err := w.startSegment(w.nextSeq.Load()); err != nil {
		return w.poison(err)
	}
	w.bytes.Add(headerSize)
	return nil
}

// finishSegment syncs and closes the active segment, then cuts off the
// zeros after its records (durably: Truncate fsyncs), so a finished
// segment takes the disk space of its records. A crash before the cut
// leaves the zeros, which Replay reads as the segment's end.
func (w *Writer) finishSegment() error {
	f := w.active
	w.active = nil
	if err := vfs.Datasync(f); err != nil {
		f.Close()
		return fmt.Errorf("wal: fsync %q: %w", w.activePath, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("wal: closing %q: %w", w.activePath, err)
	}
	if err := w.fs.Truncate(w.activePath, w.activeSize); err != nil {
		return fmt.Errorf("wal: cutting the unused end of %q at offset %d: %w", w.activePath, w.activeSize, err)
	}
	return nil
}

// RemoveThrough deletes every segment other than the active one whose
// records all have sequence numbers at most seq, oldest first, fsyncing the
// directory after each removal so that a crash never leaves a gap in the
// log.
func (w *Writer) RemoveThrough(seq uint64) error {
	if err := w.usable(); err != nil {
		return err
	}
	for len(w.old) > 0 {
		lastInSegment := w.activeSeq - 1
		if len(w.old) > 1 {
			lastInSegment = w.old[1].seq - 1
		}
		if lastInSegment > seq {
			break
		}
		seg := w.old[0]
		if err := w.fs.Remove(seg.path); err != nil {
			return fmt.Errorf("wal: removing segment: %w", err)
		}
		w.old = w.old[1:]
		w.bytes.Add(-seg.size)
		if err := w.fs.SyncDir(w.dir); err != nil {
			return w.poison(fmt.Errorf("wal: fsync %q after removing %q: %w", w.dir, seg.path, err))
		}
	}
	return nil
}

// Close fsyncs and closes the active segment. A poisoned writer closes its
// file and returns the poisoning error.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	err := w.usable()
	w.closed = true
	if w.active == nil {
		return err
	}
	if err != nil {
		w.active.Close()
		w.active = nil
		return err
	}
	if err := w.finishSegment(); err != nil {
		w.failed = err
		return fmt.Errorf("%w: %w", ErrPoisoned, w.failed)
	}
	return nil
}

// Abandon closes the active segment without fsyncing it, as a crash would
// leave it: tests use it to stop a writer whose unsynced records must stay
// in the page cache only. The writer is unusable afterwards.
func (w *Writer) Abandon() {
	if w.closed {
		return
	}
	w.closed = true
	if w.active != nil {
		w.active.Close()
		w.active = nil
	}
}
