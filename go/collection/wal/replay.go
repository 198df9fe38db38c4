package wal

import (
	"errors"
	"fmt"
	iofs "io/fs"

	"github.com/strata-db/strata/go/vfs"
)

// ReplayOptions says how Replay treats a damaged log.
type ReplayOptions struct {
	// Repair replays what it can of a log damaged other than by a torn
	// tail instead of failing with ErrCorrupt: it copies every segment
	// from the damage on to a .broken file, passes on every valid record
	// it can find after the damage (resynchronising on the next valid
	// frame), reports the sequence numbers it could not (Lost), and cuts
	// the log at the damage. The records salvaged after the damage are
	// then in no segment: the caller must checkpoint them before the next
	// crash, and start its Writer after them (ReplayInfo.LastSeq+1).
	Repair bool
	// RequireHead says the log was written by a Writer that keeps HEAD
	// (the caller recorded that, for instance in its checkpoint): a log
	// directory without HEAD, removed or emptied, is then ErrCorrupt
	// rather than an empty log.
	RequireHead bool
	// SkipCovered leaves unread the segments whose every record is at or
	// before after (those followed by a segment named for after+1 or
	// less): none of their records is passed on, so a reopen reads the
	// log from the snapshot, not from the oldest segment kept (the log
	// since the previous snapshot stays for a fallback on it). Their
	// frames are left unchecked: VerifyCovered checks them later, as
	// Replay would have.
	SkipCovered bool
}

// covered is how many leading segments of segs hold only records at or
// before after: each is followed by one named for after+1 or less.
func covered(segs []segmentFile, after uint64) int {
	k := 0
	for k+1 < len(segs) && segs[k+1].seq <= after+1 && segs[k+1].seq > segs[k].seq {
		k++
	}
	return k
}

// SeqRange is the sequence numbers From through Through; Through 0 means
// "From and every later record the damage held", a count no byte left
// tells.
type SeqRange struct {
	From, Through uint64
}

func (r SeqRange) String() string {
	switch r.Through {
	case 0:
		return fmt.Sprintf("%d and any later", r.From)
	case r.From:
		return fmt.Sprint(r.From)
	}
	return fmt.Sprintf("%d-%d", r.From, r.Through)
}

// ReplayInfo reports what Replay found and changed.
type ReplayInfo struct {
	// Records is how many records were passed to fn.
	Records int
	// LastSeq is the last valid sequence number in the log, 0 if the log
	// holds no records, whether or not it is after the one asked for.
	LastSeq uint64
	// Skipped is how many segments SkipCovered left unread.
	Skipped int

	// TornFile, TornOffset and TornBytes locate the torn tail that was
	// cut off: TornBytes bytes from TornOffset of TornFile; TornReason
	// says what was wrong there. TornFile is empty if there was none. A
	// torn segment header (only in a log without HEAD) removes the file
	// (TornOffset 0).
	TornFile   string
	TornOffset int64
	TornBytes  int64
	TornReason string

	// What Repair did; all zero if nothing was repaired. Corruption is
	// the error Replay would have returned without Repair, at
	// DroppedOffset of DroppedFile. Lost lists, in order, the sequence
	// numbers after the one asked for that the damage took: exactly,
	// between records it salvaged; open-ended (Through 0) where the log
	// ends in damage. Dropped counts the sequence numbers of the closed
	// ranges. Salvaged counts the records after the damage that were
	// passed on. Broken lists the copies of the damaged segments, made
	// (and fsynced) before anything was read past the damage.
	Dropped       int
	DroppedFile   string
	DroppedOffset int64
	Corruption    error
	Lost          []SeqRange
	Salvaged      int
	Broken        []string
}

// damage is where a log stops being valid.
type damage struct {
	seg    int   // index of the segment
	off    int64 // 0: the segment header is bad
	reason string
	torn   bool   // a torn tail, as opposed to corruption
	floor  uint64 // the last good seq, or the one before the segment's name
}

// Replay reads the log in dir from the start and calls fn for every record
// with a sequence number greater than after, in order; payload is valid
// only during the call. It verifies every record, including those at or
// before after. A nil fn only verifies (and cuts a torn tail). A missing
// directory is an empty log, unless opts.RequireHead.
//
// A torn tail (see the package doc) is cut off durably and reported in the
// ReplayInfo; Replay then succeeds. Other damage, and a log that lacks
// records it must hold (a first record later than after+1, a segment HEAD
// names gone, no HEAD where one is required), fails with an error wrapping
// ErrCorrupt that names the file and offset, and changes nothing on disk;
// fn has then already seen the records before the damage. With
// opts.Repair, Replay instead salvages what it can (see ReplayOptions):
// the sequence numbers fn sees then have gaps, exactly those in
// ReplayInfo.Lost. An error from fn stops the replay and is returned
// wrapped; nothing is changed on disk then.
func Replay(fs vfs.FS, dir string, after uint64, opts ReplayOptions, fn func(seq uint64, payload []byte) error) (ReplayInfo, error) {
	segs, err := listSegments(fs, dir)
	if err != nil {
		return ReplayInfo{}, err
	}
	head, headed, err := readHead(fs, dir)
	if err != nil {
		if !opts.Repair || !errors.Is(err, ErrCorrupt) {
			return ReplayInfo{}, err
		}
		// A damaged HEAD says only that there is one: the log's end is
		// then checked against nothing.
		head, headed = 0, true
	}
	rp := &replayer{fs: fs, dir: dir, segs: segs, after: after, fn: fn, opts: opts, head: head, headed: headed}
	from := 0
	if opts.SkipCovered {
		if from = covered(segs, after); from > 0 {
			rp.info.Skipped = from
			rp.info.LastSeq = segs[from].seq - 1 // as if read: the next record must be the segment's name
		}
	}
	for i := from; i < len(segs); i++ {
		d, err := rp.readSegment(i)
		if err != nil {
			return rp.info, err
		}
		if d == nil {
			continue
		}
		if d.torn {
			return rp.info, rp.cutTornTail(d)
		}
		corruption := corruptAt(segs[d.seg].path, d.off, "%s", d.reason)
		if !opts.Repair {
			return rp.info, corruption
		}
		return rp.info, rp.repair(d, corruption)
	}
	if missing := rp.missingEnd(); missing != nil {
		if !opts.Repair {
			return rp.info, missing
		}
		rp.info.Corruption = missing
		rp.info.DroppedFile = dir
		rp.lose(SeqRange{From: max(rp.info.LastSeq, after) + 1})
		if err := rp.pointHeadAtNewest(len(segs)); err != nil {
			return rp.info, fmt.Errorf("%w (repairing %w)", err, missing)
		}
	}
	return rp.info, nil
}

// VerifyCovered checks every frame of the segments Replay with
// SkipCovered left unread for after, as Replay checks them: a damaged
// frame, header or sequence fails with an error wrapping ErrCorrupt that
// names the file and offset (none of them is the last segment, so no
// damage there is a torn tail). pause is called before each segment and
// an error from it stops the check. A segment removed meanwhile (a
// Writer's RemoveThrough after a checkpoint) needs no check. It changes
// nothing on disk.
func VerifyCovered(fs vfs.FS, dir string, after uint64, pause func() error) error {
	segs, err := listSegments(fs, dir)
	if err != nil {
		return err
	}
	_, headed, err := readHead(fs, dir)
	if err != nil {
		return err
	}
	rp := &replayer{fs: fs, dir: dir, segs: segs, after: after, headed: headed}
	for i := range covered(segs, after) {
		if pause != nil {
			if err := pause(); err != nil {
				return err
			}
		}
		d, err := rp.readSegment(i)
		if errors.Is(err, iofs.ErrNotExist) {
			rp.info.LastSeq = 0 // the next one is checked against its name alone
			continue
		}
		if err != nil {
			return err
		}
		if d != nil {
			return corruptAt(segs[d.seg].path, d.off, "%s", d.reason)
		}
	}
	return nil
}

type replayer struct {
	fs     vfs.FS
	dir    string
	segs   []segmentFile
	after  uint64
	fn     func(uint64, []byte) error
	opts   ReplayOptions
	head   uint64 // the segment HEAD names; 0 if none, or HEAD is damaged
	headed bool   // the log has a HEAD (so every segment was created whole)
	info   ReplayInfo
}

// missingEnd returns the ErrCorrupt error for a log whose newest segment
// is gone, as far as HEAD (or the lack of it) tells, or nil.
func (rp *replayer) missingEnd() error {
	if !rp.headed {
		if !rp.opts.RequireHead {
			return nil
		}
		what := "no segment either: the log directory was removed or emptied"
		if len(rp.segs) > 0 {
			what = fmt.Sprintf("%d segments, the newest named for seq %d", len(rp.segs), rp.segs[len(rp.segs)-1].seq)
		}
		return fmt.Errorf("%w: in directory %q: no %s file, which this log keeps, and %s; records after seq %d may be lost",
			ErrCorrupt, rp.dir, HeadName, what, max(rp.info.LastSeq, rp.after))
	}
	if rp.head == 0 {
		return nil
	}
	for _, seg := range rp.segs {
		if seg.seq == rp.head {
			return nil
		}
	}
	return corruptAt(segmentPath(rp.dir, rp.head), 0,
		"segment missing: %s names it as the newest segment; records from seq %d on are lost", HeadName, max(rp.info.LastSeq, rp.after)+1)
}

// lose records that the sequence numbers r (clipped to those after the
// ones asked for) are lost.
func (rp *replayer) lose(r SeqRange) {
	r.From = max(r.From, rp.after+1)
	if r.Through != 0 && r.Through < r.From {
		return
	}
	rp.info.Lost = append(rp.info.Lost, r)
	if r.Through != 0 {
		rp.info.Dropped += int(r.Through - r.From + 1)
	}
}

// floor is the sequence number the next record of segment i must follow.
func (rp *replayer) floor(i int) uint64 {
	if rp.info.LastSeq > 0 {
		return rp.info.LastSeq
	}
	return rp.segs[i].seq - 1
}

// readSegment passes segment i's records to fn and returns the damage that
// ends the log in it, if any.
func (rp *replayer) readSegment(i int) (*damage, error) {
	seg := rp.segs[i]
	last := i == len(rp.segs)-1
	if seg.seq == 0 {
		return &damage{seg: i, reason: "segment named for seq 0; sequence numbers start at 1"}, nil
	}
	r, err := openSegment(rp.fs, seg.path)
	if err != nil {
		return nil, err
	}
	defer r.Close()

	problem, newer, err := r.header()
	if err != nil {
		return nil, err
	}
	if newer {
		return nil, fmt.Errorf("%w: in file %q: %s", ErrVersion, seg.path, problem)
	}
	if problem != "" {
		if rp.headed {
			// A log with HEAD creates every segment whole (temporary
			// name, rename): a short or zeroed header is damage.
			return &damage{seg: i, reason: problem + " (this log creates every segment with its header whole: the segment was emptied or damaged)",
				floor: rp.floor(i)}, nil
		}
		// In a log written before HEAD, a crash while a segment was being
		// created leaves its header short or zeroed, and nothing after it.
		torn, err := rp.nothingValidAfter(r, last, 0, 0, i)
		if err != nil {
			return nil, err
		}
		return &damage{seg: i, reason: problem, torn: torn, floor: rp.floor(i)}, nil
	}

	first := true
	for off := int64(headerSize); off < r.size; {
		fr, problem, err := r.frameAt(off)
		if err != nil {
			return nil, err
		}
		if problem != "" && r.preallocated {
			// A preallocated segment ends where its zeros begin: the
			// space the writer had not used yet, not damage.
			rest, err := r.nextNonZero(off)
			if err != nil {
				return nil, err
			}
			if rest == r.size {
				return nil, nil
			}
		}
		if problem != "" {
			torn, err := rp.nothingValidAfter(r, last, off+1, off, i)
			if err != nil {
				return nil, err
			}
			if torn && fr.end > 0 {
				// The whole frame is there but its CRC fails: a torn write
				// leaves a zeroed block in it; anything else is a
				// record damaged after it was written.
				zeroed, err := r.zeroedBlock(off, fr.end)
				if err != nil {
					return nil, err
				}
				if !zeroed {
					return &damage{seg: i, off: off, floor: rp.floor(i), reason: problem + fmt.Sprintf(
						" in the complete last record (header seq %d, %d bytes, not ending in a zero byte, none of its %d-byte blocks zeroed): damaged after it was written, not a torn write",
						fr.seq, fr.end-off, blockSize)}, nil
				}
				problem += " in a complete last frame with zeroed bytes (a torn write)"
			}
			return &damage{seg: i, off: off, reason: problem, torn: torn, floor: rp.floor(i)}, nil
		}
		misplaced := func(format string, args ...any) *damage {
			return &damage{seg: i, off: off, reason: fmt.Sprintf(format, args...), floor: rp.floor(i)}
		}
		if rp.info.LastSeq > 0 && fr.seq != rp.info.LastSeq+1 {
			return misplaced("record has seq %d, but the previous record has seq %d", fr.seq, rp.info.LastSeq), nil
		}
		if first && fr.seq != seg.seq {
			return misplaced("first record has seq %d, but the segment is named for seq %d", fr.seq, seg.seq), nil
		}
		if rp.info.LastSeq == 0 && fr.seq > rp.after+1 {
			missing := corruptAt(seg.path, off, "the log starts at seq %d, so records %d to %d (after %d, as asked) are missing",
				fr.seq, rp.after+1, fr.seq-1, rp.after)
			if !rp.opts.Repair {
				return nil, missing
			}
			rp.info.Corruption, rp.info.DroppedFile, rp.info.DroppedOffset = missing, seg.path, off
			rp.lose(SeqRange{From: rp.after + 1, Through: fr.seq - 1})
		}
		if fr.seq > rp.after && rp.fn != nil {
			if err := rp.fn(fr.seq, fr.payload); err != nil {
				return nil, fmt.Errorf("wal: replay stopped at seq %d: %w", fr.seq, err)
			}
			rp.info.Records++
		}
		rp.info.LastSeq = fr.seq
		first = false
		off = fr.end
	}
	return nil, nil
}

// nothingValidAfter reports whether damage at offset at of segment i is a
// torn tail: the segment is the last one and no valid frame that could
// continue the log starts at or after start.
func (rp *replayer) nothingValidAfter(r *segmentReader, last bool, start, at int64, i int) (bool, error) {
	if !last {
		return false, nil
	}
	found, _, err := r.scanFrames(start, at, rp.floor(i), true)
	return found == 0, err
}

// cutTornTail removes the torn bytes at the end of the last segment,
// durably, and reports them.
func (rp *replayer) cutTornTail(d *damage) error {
	seg := rp.segs[d.seg]
	fi, err := rp.fs.Stat(seg.path)
	if err != nil {
		return fmt.Errorf("wal: stat of torn segment: %w", err)
	}
	rp.info.TornFile, rp.info.TornOffset, rp.info.TornBytes, rp.info.TornReason = seg.path, d.off, fi.Size()-d.off, d.reason
	if d.off == 0 {
		if err := rp.fs.Remove(seg.path); err != nil {
			return fmt.Errorf("wal: removing segment with a torn header (%s): %w", d.reason, err)
		}
		if err := rp.fs.SyncDir(rp.dir); err != nil {
			return fmt.Errorf("wal: fsync %q after removing a torn segment: %w", rp.dir, err)
		}
		return nil
	}
	if err := rp.fs.Truncate(seg.path, d.off); err != nil {
		return fmt.Errorf("wal: cutting torn tail (%s) of %q at offset %d: %w", d.reason, seg.path, d.off, err)
	}
	return nil
}
