package wal

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"slices"
)

// brokenSuffix ends the name of the copy Repair keeps of a damaged
// segment: 0000000000000005.wal.broken (then .broken.1, .broken.2, ... if
// an earlier repair left one). The log never reads these files.
const brokenSuffix = ".broken"

// repair salvages the log from the damage d on. Every segment from d's on
// is first copied to a .broken file (fsynced, and the directory after
// them), so that the evidence survives whatever the caller does next; then
// every valid frame after the damage whose seq is greater than the last
// one passed on goes to fn, and the gaps between them are the lost
// sequence numbers. Last the log is cut at the damage (see cut): the
// records salvaged after it are then only in memory and in the .broken
// copies, so the caller must write them to a checkpoint before it relies
// on the log (a crash first loses them from the log: the next repair
// reports them lost).
func (rp *replayer) repair(d *damage, corruption error) error {
	rp.info.Corruption, rp.info.DroppedFile, rp.info.DroppedOffset = corruption, rp.segs[d.seg].path, d.off
	for _, seg := range rp.segs[d.seg:] {
		copyPath, err := rp.keepBroken(seg.path)
		if err != nil {
			return fmt.Errorf("wal: repair: keeping a copy of %q: %w (repairing %w)", seg.path, err, corruption)
		}
		rp.info.Broken = append(rp.info.Broken, copyPath)
	}
	if err := rp.fs.SyncDir(rp.dir); err != nil {
		return fmt.Errorf("wal: repair: fsync %q: %w (repairing %w)", rp.dir, err, corruption)
	}

	last := d.floor // the last seq passed on, or the one before the damage
	for i := d.seg; i < len(rp.segs); i++ {
		seg := rp.segs[i]
		r, err := openSegment(rp.fs, seg.path)
		if err != nil {
			return fmt.Errorf("wal: repair: %w (repairing %w)", err, corruption)
		}
		start := int64(0) // a damaged header is skipped by the scan
		if i == d.seg {
			start = d.off
		}
		end, err := r.salvageFrames(start, start, last, func(fr frame) error {
			if fr.seq > last+1 {
				rp.lose(SeqRange{From: last + 1, Through: fr.seq - 1})
			}
			last = fr.seq
			rp.info.LastSeq = fr.seq
			if fr.seq <= rp.after || rp.fn == nil {
				return nil
			}
			if err := rp.fn(fr.seq, fr.payload); err != nil {
				return fmt.Errorf("wal: replay stopped at seq %d: %w", fr.seq, err)
			}
			rp.info.Records++
			rp.info.Salvaged++
			return nil
		})
		if err == nil && i == len(rp.segs)-1 {
			err = rp.loseTail(r, max(end, headerSize), last)
		}
		r.Close()
		if err != nil {
			return fmt.Errorf("wal: repair: %w (repairing %w)", err, corruption)
		}
	}
	if missing := rp.missingEnd(); missing != nil {
		rp.lose(SeqRange{From: last + 1})
	}
	if err := rp.cut(d); err != nil {
		return fmt.Errorf("%w (repairing %w)", err, corruption)
	}
	return nil
}

// cut ends the log at d, durably, so that it replays cleanly: later
// segments are removed (newest first, so a crash part way leaves the
// damage in place to be found again), then the damaged segment is cut at
// the damage, or removed if no record would be left in it; HEAD then names
// the newest segment left (or goes, if none is left).
func (rp *replayer) cut(d *damage) error {
	remove := slices.Clone(rp.segs[d.seg+1:])
	slices.Reverse(remove)
	keep := d.off > headerSize
	if !keep {
		remove = append(remove, rp.segs[d.seg])
	}
	for _, seg := range remove {
		if err := rp.fs.Remove(seg.path); err != nil {
			return fmt.Errorf("wal: repair: removing segment: %w", err)
		}
	}
	if len(remove) > 0 {
		if err := rp.fs.SyncDir(rp.dir); err != nil {
			return fmt.Errorf("wal: repair: fsync %q: %w", rp.dir, err)
		}
	}
	if keep {
		if err := rp.fs.Truncate(rp.segs[d.seg].path, d.off); err != nil {
			return fmt.Errorf("wal: repair: cutting %q at offset %d: %w", rp.segs[d.seg].path, d.off, err)
		}
	}
	return rp.pointHeadAtNewest(d.seg + btoi(keep))
}

// pointHeadAtNewest makes HEAD name the newest of the first n segments,
// after a repair removed the later ones; with none left it removes HEAD,
// and the next Writer writes it again.
func (rp *replayer) pointHeadAtNewest(n int) error {
	if !rp.headed {
		return nil
	}
	if n > 0 {
		return writeHead(rp.fs, rp.dir, rp.segs[n-1].seq)
	}
	err := rp.fs.Remove(filepath.Join(rp.dir, HeadName))
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("wal: repair: removing %s: %w", HeadName, err)
	}
	if err := rp.fs.SyncDir(rp.dir); err != nil {
		return fmt.Errorf("wal: repair: fsync %q: %w", rp.dir, err)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loseTail reports what the bytes after the last valid frame of the last
// segment (from end on) lost: nothing if there are none or they are a torn
// write; the one seq of a single complete damaged frame that would have
// come next; otherwise every seq from last+1 on, a count no byte tells.
func (rp *replayer) loseTail(r *segmentReader, end int64, last uint64) error {
	if end >= r.size {
		return nil
	}
	fr, problem, err := r.frameAt(end)
	if err != nil {
		return err
	}
	if problem == "" {
		return nil // cannot happen: the scan would have taken it
	}
	if fr.end == 0 {
		// Short or zeroed: what a crash during an unsynced write leaves.
		return nil
	}
	zeroed, err := r.zeroedBlock(end, fr.end)
	if err != nil || zeroed {
		return err
	}
	if fr.end == r.size && fr.seq == last+1 {
		rp.lose(SeqRange{From: fr.seq, Through: fr.seq})
		return nil
	}
	rp.lose(SeqRange{From: last + 1})
	return nil
}

// keepBroken copies the segment at path to the first free name of
// path.broken, path.broken.1, ... and fsyncs the copy.
func (rp *replayer) keepBroken(path string) (string, error) {
	target := path + brokenSuffix
	for n := 1; ; n++ {
		_, err := rp.fs.Stat(target)
		if errors.Is(err, iofs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		target = fmt.Sprintf("%s%s.%d", path, brokenSuffix, n)
	}
	src, err := rp.fs.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := rp.fs.Create(target)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, io.NewSectionReader(src, 0, 1<<62))
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying to %q: %w", target, err)
	}
	return target, nil
}
