package wal

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/vfs"
)

// ReplayOptions says how Replay treats a damaged log.
type ReplayOptions struct {
	// Repair cuts the log at the first damage that is not a torn tail
	// instead of failing with ErrCorrupt, dropping every record from there
	// on. Use it only when losing those records is acceptable.
	Repair bool
}

// ReplayInfo reports what Replay found and changed.
type ReplayInfo struct {
	// Records is how many records were passed to fn.
	Records int
	// LastSeq is the last valid sequence number in the log, 0 if the log
	// holds no records, whether or not it is after the one asked for.
	LastSeq uint64

	// TornFile, TornOffset and TornBytes locate the torn tail that was
	// cut off: TornBytes bytes from TornOffset of TornFile. TornFile is
	// empty if there was none. A torn segment header removes the file
	// (TornOffset 0).
	TornFile   string
	TornOffset int64
	TornBytes  int64

	// Dropped is how many records Repair dropped after the damage at
	// DroppedOffset of DroppedFile, counting the valid frames it could
	// find (best effort: records whose frames are damaged too are not
	// counted). Corruption is the error Replay would have returned
	// without Repair; DroppedFile is empty and Corruption nil if nothing
	// was repaired.
	Dropped       int
	DroppedFile   string
	DroppedOffset int64
	Corruption    error
}

// damage is where a log stops being valid.
type damage struct {
	seg    int   // index of the segment
	off    int64 // 0: the segment header is bad
	reason string
	torn   bool   // a torn tail, as opposed to corruption
	floor  uint64 // the last good seq, or the one before the segment's name
	// anchored says that the bytes at off are a valid frame in the wrong
	// place (a gap or a misordered seq); anchorSeq and anchorEnd are its
	// seq and end, where counting dropped records picks up.
	anchored  bool
	anchorSeq uint64
	anchorEnd int64
}

// Replay reads the log in dir from the start and calls fn for every record
// with a sequence number greater than after, in order; payload is valid
// only during the call. It verifies every record, including those at or
// before after. A nil fn only verifies (and cuts a torn tail). A missing
// directory is an empty log.
//
// A torn tail (see the package doc) is cut off durably and reported in the
// ReplayInfo; Replay then succeeds. Other damage fails with an error
// wrapping ErrCorrupt that names the file and offset, and changes nothing
// on disk, unless opts.Repair is set, in which case the log is cut there
// durably and the loss is reported. fn has then already seen the records
// before the damage; with Repair those are exactly the records that remain.
//
// If the log's first record is later than after+1, the records in between
// are gone (a segment was removed too early): Replay fails with ErrCorrupt,
// and Repair cannot help. An error from fn stops the replay and is
// returned wrapped; nothing is changed on disk then.
func Replay(fs vfs.FS, dir string, after uint64, opts ReplayOptions, fn func(seq uint64, payload []byte) error) (ReplayInfo, error) {
	segs, err := listSegments(fs, dir)
	if err != nil {
		return ReplayInfo{}, err
	}
	rp := &replayer{fs: fs, dir: dir, segs: segs, after: after, fn: fn}
	for i := range segs {
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
	return rp.info, nil
}

type replayer struct {
	fs    vfs.FS
	dir   string
	segs  []segmentFile
	after uint64
	fn    func(uint64, []byte) error
	info  ReplayInfo
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
		// A crash while a segment was being created leaves its header
		// short or zeroed, and nothing after it.
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
		if problem != "" {
			torn, err := rp.nothingValidAfter(r, last, off+1, off, i)
			if err != nil {
				return nil, err
			}
			return &damage{seg: i, off: off, reason: problem, torn: torn, floor: rp.floor(i)}, nil
		}
		misplaced := func(format string, args ...any) *damage {
			return &damage{seg: i, off: off, reason: fmt.Sprintf(format, args...), floor: rp.floor(i),
				anchored: true, anchorSeq: fr.seq, anchorEnd: fr.end}
		}
		if rp.info.LastSeq > 0 && fr.seq != rp.info.LastSeq+1 {
			return misplaced("record has seq %d, but the previous record has seq %d", fr.seq, rp.info.LastSeq), nil
		}
		if first && fr.seq != seg.seq {
			return misplaced("first record has seq %d, but the segment is named for seq %d", fr.seq, seg.seq), nil
		}
		if rp.info.LastSeq == 0 && fr.seq > rp.after+1 {
			return nil, corruptAt(seg.path, off, "the log starts at seq %d, so records %d to %d (after %d, as asked) are missing",
				fr.seq, rp.after+1, fr.seq-1, rp.after)
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
	rp.info.TornFile, rp.info.TornOffset, rp.info.TornBytes = seg.path, d.off, fi.Size()-d.off
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

// repair cuts the log at d: later segments are removed (newest first, so a
// crash part way leaves the damage in place to be found again), then the
// damaged segment is cut at the damage, or removed if that would leave no
// record in it.
func (rp *replayer) repair(d *damage, corruption error) error {
	dropped, err := rp.countDropped(d)
	if err != nil {
		return fmt.Errorf("wal: counting the records a repair drops: %w (repairing %w)", err, corruption)
	}
	rp.info.Dropped, rp.info.DroppedFile, rp.info.DroppedOffset = dropped, rp.segs[d.seg].path, d.off
	rp.info.Corruption = corruption

	remove := slices.Clone(rp.segs[d.seg+1:])
	slices.Reverse(remove)
	cut := d.off > headerSize
	if !cut {
		// The damage is in the header or the first frame: no record
		// would be left in the segment.
		remove = append(remove, rp.segs[d.seg])
	}
	for _, seg := range remove {
		if err := rp.fs.Remove(seg.path); err != nil {
			return fmt.Errorf("wal: repair: removing segment: %w (repairing %w)", err, corruption)
		}
	}
	if len(remove) > 0 {
		if err := rp.fs.SyncDir(rp.dir); err != nil {
			return fmt.Errorf("wal: repair: fsync %q: %w (repairing %w)", rp.dir, err, corruption)
		}
	}
	if cut {
		if err := rp.fs.Truncate(rp.segs[d.seg].path, d.off); err != nil {
			return fmt.Errorf("wal: repair: cutting %q at offset %d: %w (repairing %w)", rp.segs[d.seg].path, d.off, err, corruption)
		}
	}
	return nil
}

// countDropped counts the valid frames from the damage to the end of the
// log that could belong to it (see scanFrames).
func (rp *replayer) countDropped(d *damage) (int, error) {
	count, floor := 0, d.floor
	for i := d.seg; i < len(rp.segs); i++ {
		r, err := openSegment(rp.fs, rp.segs[i].path)
		if err != nil {
			return count, err
		}
		start := int64(0)
		switch {
		case i == d.seg && d.anchored:
			count, floor, start = count+1, d.anchorSeq, d.anchorEnd
		case i == d.seg:
			start = d.off
		case rp.segs[i].seq > 0:
			// Records in a later segment start at its name.
			floor = max(floor, rp.segs[i].seq-1)
		}
		n, f, err := r.scanFrames(start, start, floor, false)
		r.Close()
		count, floor = count+n, f
		if err != nil {
			return count, err
		}
	}
	return count, nil
}
