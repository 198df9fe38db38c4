package indexfile

import (
	"fmt"
	"hash/crc32"

	"github.com/strata-db/strata/go/vfs"
)

// verifyBuffer is how much of a section Verify reads at a time.
const verifyBuffer = 1 << 20

// Verify checks the file at path as Read does (header, table, padding and
// every section's CRC) but reads it through one buffer, so that it holds
// none of the file in memory: a checkpoint verifies each segment file it
// wrote, and reading them whole held a second copy of every new segment
// until the collector took it (TestSegmentBenchOverwrite, 100k x 128: 90
// MiB more heap at each checkpoint after a merge, the phase's peak).
func Verify(fs vfs.FS, path string) error {
	fd, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("indexfile: %w", err)
	}
	defer fd.Close()
	if err := verify(fd); err != nil {
		return fmt.Errorf("%w (file %q)", err, path)
	}
	return nil
}

func verify(fd vfs.File) error {
	fi, err := fd.Stat()
	if err != nil {
		return fmt.Errorf("indexfile: %w", err)
	}
	r := reader{f: fd, size: uint64(fi.Size())}
	entries, err := r.readTable()
	if err != nil {
		return err
	}
	buf := make([]byte, verifyBuffer)
	end := tableEnd(uint32(len(entries)))
	for _, e := range entries {
		if err := r.checkPadding(e.tag, end, e.offset); err != nil {
			return err
		}
		crc := uint32(0)
		for off := uint64(0); off < e.length; {
			part := buf[:min(uint64(len(buf)), e.length-off)]
			if err := r.readAt(part, e.offset+off, func(format string, args ...any) error {
				return corruptSection(e.tag, e.offset, format, args...)
			}); err != nil {
				return err
			}
			crc = crc32.Update(crc, castagnoli, part)
			off += uint64(len(part))
		}
		if crc != e.crc {
			return corruptSection(e.tag, e.offset, "crc mismatch: stored %#08x, computed %#08x", e.crc, crc)
		}
		end = e.offset + e.length
	}
	return nil
}
