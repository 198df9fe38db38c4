package indexfile

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/vfs"
)

// ReadOptions says how Read loads sections.
type ReadOptions struct {
	// MmapTags lists the sections to memory-map read-only instead of
	// reading into memory. Tags the file does not hold are ignored.
	MmapTags []uint32
	// DeferCRC leaves the CRCs of the mapped sections unchecked: Read
	// checks the header, the table, the padding and every section it
	// copies, and File.Verify checks the mapped ones later (lazy.go).
	DeferCRC bool
	// Resident keeps the mapped sections' pages once their CRC has been
	// checked through the mapping (memory="ram"): no MADV_DONTNEED, no
	// MADV_RANDOM. Without it they are dropped from the resident set and
	// fault back in one page at a time (memory="mmap").
	Resident bool
	// KeepTags are mapped sections kept resident as with Resident while
	// the others are not (memory="mmap": the links stay, the vectors go).
	KeepTags []uint32
}

// File is an index file that has been read and verified. It holds no file
// descriptor; it holds mappings until Close.
type File struct {
	tags     []uint32 // in file order
	data     map[uint32][]byte
	mappings [][]byte
	mapped   []uint32 // the tag of each mapping
	// What Verify has left (lazy.go): the sections whose CRCs Read
	// deferred, and the lock that keeps Close from unmapping one while
	// Verify reads it.
	lazy lazyState
}

// Section returns the payload of the section tagged tag. A mapped section's
// slice is read-only and valid until Close.
func (f *File) Section(tag uint32) ([]byte, bool) {
	b, ok := f.data[tag]
	return b, ok
}

// Tags lists the file's sections in file order.
func (f *File) Tags() []uint32 { return slices.Clone(f.tags) }

// Close unmaps the mapped sections, after which their slices must not be
// used. It is safe to call more than once.
func (f *File) Close() error {
	f.lazy.mu.Lock()
	defer f.lazy.mu.Unlock()
	f.lazy.closed = true
	var err error
	for _, m := range f.mappings {
		err = errors.Join(err, unmap(m))
	}
	f.mappings, f.mapped, f.data, f.tags = nil, nil, nil, nil
	return err
}

// Read opens path, verifies the whole file (see the package doc) and
// returns its sections. Errors other than ErrCorrupt and ErrVersion come
// from the filesystem and say nothing about the file's contents.
func Read(fs vfs.FS, path string, opts ReadOptions) (*File, error) {
	fd, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("indexfile: %w", err)
	}
	// Mappings outlive the descriptor, so it is closed in every case.
	defer fd.Close()
	f, err := read(fd, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (file %q)", err, path)
	}
	f.lazy.path = path
	return f, nil
}

func read(fd vfs.File, opts ReadOptions) (_ *File, err error) {
	fi, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("indexfile: %w", err)
	}
	r := reader{f: fd, size: uint64(fi.Size())}
	entries, err := r.readTable()
	if err != nil {
		return nil, err
	}
	file := &File{tags: make([]uint32, 0, len(entries)), data: make(map[uint32][]byte, len(entries))}
	defer func() {
		if err != nil {
			file.Close()
		}
	}()
	// The sections are laid out (padding checked, memory allocated or
	// mapped) in file order, then read and checksummed in pieces, in
	// parallel for a large file (verify). Errors are reported for the
	// first damaged byte in file order, as a one-pass reader would.
	end := tableEnd(uint32(len(entries)))
	bufs := make([][]byte, 0, len(entries))
	isFilled := make([]bool, 0, len(entries))
	isMapped := make([]bool, 0, len(entries))
	var layoutErr error
	for _, e := range entries {
		if layoutErr = r.checkPadding(e.tag, end, e.offset); layoutErr != nil {
			break
		}
		// A section to map is mapped (or, without mmap, read) here:
		// verify only checksums it.
		var data []byte
		filled := slices.Contains(opts.MmapTags, e.tag)
		mapped := false
		if filled {
			if data, mapped, layoutErr = r.mapSection(e, file); layoutErr != nil {
				break
			}
		} else {
			data = allocSection(e.length)
		}
		bufs, isFilled = append(bufs, data), append(isFilled, filled)
		isMapped = append(isMapped, mapped)
		end = e.offset + e.length
	}
	// Deferred sections (mapped, DeferCRC) are left to File.Verify. A
	// section that could not be mapped (a file without a descriptor, as
	// memfs's) was read whole, so it is checked now, as without DeferCRC.
	now, nowBufs, nowFilled := entries[:0:0], bufs[:0:0], isFilled[:0:0]
	for i := range bufs {
		if opts.DeferCRC && isMapped[i] {
			keep := opts.Resident || slices.Contains(opts.KeepTags, entries[i].tag)
			file.lazy.pending = append(file.lazy.pending, pendingSection{entry: entries[i], data: bufs[i], keep: keep})
			continue
		}
		now, nowBufs, nowFilled = append(now, entries[i]), append(nowBufs, bufs[i]), append(nowFilled, isFilled[i])
	}
	if err := r.verify(now, nowBufs, nowFilled); err != nil {
		return nil, err
	}
	if layoutErr != nil {
		return nil, layoutErr
	}
	for i, e := range entries {
		file.tags = append(file.tags, e.tag)
		file.data[e.tag] = bufs[i]
	}
	// The pages were touched only to verify them; let them fault back in
	// from the page cache when the caller uses them, one at a time: a
	// graph search reads a few scattered rows per query, and the kernel's
	// readahead around each fault would otherwise fill a memory-limited
	// page cache with neighbours nobody asked for and evict the rows that
	// were (bench_collection_memory.py --pressure read 189 GB in six
	// minutes under a 190 MiB cgroup at 100k x 512 before this).
	// With Resident (ram placement) the pages stay: they are what the
	// caller asked to keep in memory. A deferred section's pages are
	// dropped after Verify has read them (lazy.go).
	for i, m := range file.mappings {
		if !opts.Resident && !slices.Contains(opts.KeepTags, file.mapped[i]) {
			if !opts.DeferCRC {
				dontNeed(m)
			}
			randomAccess(m)
		}
	}
	return file, nil
}

type reader struct {
	f    vfs.File
	size uint64
}

// readAt reads len(b) bytes at off, reporting a short file as corrupt and
// other failures as what they are.
func (r *reader) readAt(b []byte, off uint64, corrupt func(format string, args ...any) error) error {
	if off > r.size || uint64(len(b)) > r.size-off {
		return corrupt("needs %d bytes, file ends at %d", len(b), r.size)
	}
	if _, err := r.f.ReadAt(b, int64(off)); err != nil {
		if errors.Is(err, io.EOF) {
			return corrupt("file shrank while being read: %v", err)
		}
		return fmt.Errorf("indexfile: reading %d bytes at offset %d: %w", len(b), off, err)
	}
	return nil
}

// readTable reads and checks the header and the section table, and checks
// the entries' layout against each other and against the file's size.
func (r *reader) readTable() ([]entry, error) {
	inHeader := func(format string, args ...any) error {
		return corruptHeader("header", 0, format, args...)
	}
	// Magic, version and header length sit at the same offsets in every
	// version, and every version's header ends with its CRC, so the header
	// is verified before its version is believed: a damaged version field
	// is corruption, not a newer file.
	var prefix [offHeaderLen + 4]byte
	if r.size < uint64(len(prefix)) {
		return nil, inHeader("file is %d bytes, too short for an index file", r.size)
	}
	if err := r.readAt(prefix[:], 0, inHeader); err != nil {
		return nil, err
	}
	if string(prefix[offMagic:offMagic+len(magic)]) != magic {
		return nil, inHeader("bad magic %q, not an index file", prefix[offMagic:offMagic+len(magic)])
	}
	headerLen := le.Uint32(prefix[offHeaderLen:])
	if headerLen < headerSize || headerLen > maxHeaderSize || headerLen%4 != 0 {
		return nil, inHeader("implausible header length %d", headerLen)
	}
	if uint64(headerLen) > r.size {
		return nil, inHeader("file is %d bytes, header needs %d", r.size, headerLen)
	}
	hdr := make([]byte, headerLen)
	if err := r.readAt(hdr, 0, inHeader); err != nil {
		return nil, err
	}
	if want, got := le.Uint32(hdr[headerLen-4:]), crc32.Checksum(hdr[:headerLen-4], castagnoli); want != got {
		return nil, inHeader("crc mismatch: stored %#08x, computed %#08x", want, got)
	}
	if v := le.Uint32(hdr[offVersion:]); v != Version {
		return nil, fmt.Errorf("%w: file has version %d, this build reads version %d", ErrVersion, v, Version)
	}
	if headerLen != headerSize {
		return nil, inHeader("header length %d, version %d has %d", headerLen, Version, headerSize)
	}
	h := header{
		flags:    le.Uint32(hdr[offFlags:]),
		count:    le.Uint32(hdr[offCount:]),
		tableCRC: le.Uint32(hdr[offTableCRC:]),
	}
	if h.flags != 0 {
		return nil, inHeader("unknown flags %#x", h.flags)
	}

	inTable := func(format string, args ...any) error {
		return corruptHeader("section table", headerSize, format, args...)
	}
	tEnd := tableEnd(h.count)
	if tEnd > r.size {
		return nil, inTable("%d entries need %d bytes, file ends at %d", h.count, tEnd-headerSize, r.size)
	}
	table := make([]byte, tEnd-headerSize)
	if err := r.readAt(table, headerSize, inTable); err != nil {
		return nil, err
	}
	if got := crc32.Checksum(table, castagnoli); got != h.tableCRC {
		return nil, inTable("crc mismatch: stored %#08x, computed %#08x", h.tableCRC, got)
	}

	entries := make([]entry, h.count)
	seen := make(map[uint32]bool, h.count)
	end := tEnd
	for i := range entries {
		e := decodeEntry(table[i*entrySize:])
		if e.flags != 0 || e.reserved != 0 {
			return nil, corruptSection(e.tag, e.offset, "unknown flags %#x or nonzero reserved field %#x", e.flags, e.reserved)
		}
		if seen[e.tag] {
			return nil, corruptSection(e.tag, e.offset, "tag appears twice")
		}
		seen[e.tag] = true
		if want := alignUp(end); e.offset != want {
			return nil, corruptSection(e.tag, e.offset, "offset should be %d (sections are in order, 64-byte aligned, without gaps)", want)
		}
		if e.offset > r.size || e.length > r.size-e.offset {
			return nil, corruptSection(e.tag, e.offset, "%d bytes run past the end of the file at %d (truncated?)", e.length, r.size)
		}
		if e.length > math.MaxInt {
			return nil, corruptSection(e.tag, e.offset, "length %d does not fit in memory", e.length)
		}
		entries[i] = e
		end = e.offset + e.length
	}
	if r.size != end {
		return nil, corruptHeader("end of file", end, "%d bytes after the last section", r.size-end)
	}
	return entries, nil
}

// checkPadding checks that the bytes between the end of one section and the
// start of the next are zero, so that no byte of the file goes unchecked.
func (r *reader) checkPadding(tag uint32, from, to uint64) error {
	var pad [Alignment]byte
	b := pad[:to-from]
	if err := r.readAt(b, from, func(format string, args ...any) error {
		return corruptSection(tag, from, "padding: "+format, args...)
	}); err != nil {
		return err
	}
	if !bytes.Equal(b, make([]byte, len(b))) {
		return corruptSection(tag, from, "nonzero padding before the section")
	}
	return nil
}

// allocSection returns memory for a section aligned to 8 bytes, enough
// for any element type ViewAs accepts.
func allocSection(length uint64) []byte {
	words := make([]uint64, (length+7)/8)
	return BytesOf(words)[:length]
}

// readSection reads a section into new memory (allocSection).
func (r *reader) readSection(e entry) ([]byte, error) {
	data := allocSection(e.length)
	err := r.readAt(data, e.offset, func(format string, args ...any) error {
		return corruptSection(e.tag, e.offset, format, args...)
	})
	return data, err
}

// Pieces of verify: a file of parallelFrom bytes of sections or more is
// read and checksummed by GOMAXPROCS goroutines in pieces of readPiece
// bytes (the CRCs of a section's pieces are combined, crcCombine). At
// 1M x 128 (a 673 MB segment file, three quarters of it one section) this
// is what lets a reopen use both cores on one segment. Variables so that
// tests can take the parallel path with small files.
var (
	parallelFrom uint64 = 32 << 20
	readPiece    uint64 = 8 << 20
)

// verify reads the sections not filled yet (mapped) into bufs and checks
// every section's CRC, returning the error of the first damaged section
// in file order.
func (r *reader) verify(entries []entry, bufs [][]byte, filled []bool) error {
	type piece struct {
		sec      int
		from, to uint64 // within the section
		crc      uint32
		err      error
	}
	var total uint64
	for _, e := range entries {
		total += e.length
	}
	step := uint64(math.MaxUint64)
	workers := 1
	if total >= parallelFrom {
		step, workers = readPiece, runtime.GOMAXPROCS(0)
	}
	var pieces []piece
	for i, e := range entries {
		for from := uint64(0); from < e.length || from == 0; from += step {
			pieces = append(pieces, piece{sec: i, from: from, to: min(e.length, from+min(step, e.length-from))})
			if e.length-from <= step {
				break
			}
		}
	}
	do := func(p *piece) {
		e, b := entries[p.sec], bufs[p.sec][p.from:p.to]
		if !filled[p.sec] {
			p.err = r.readAt(b, e.offset+p.from, func(format string, args ...any) error {
				return corruptSection(e.tag, e.offset, format, args...)
			})
		}
		p.crc = crc32.Checksum(b, castagnoli)
	}
	if workers = min(workers, len(pieces)); workers <= 1 {
		for i := range pieces {
			do(&pieces[i])
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1) - 1; i < int64(len(pieces)); i = next.Add(1) - 1 {
					do(&pieces[i])
				}
			}()
		}
		wg.Wait()
	}
	for i := 0; i < len(pieces); {
		e := entries[pieces[i].sec]
		var crc uint32
		for j := i; i < len(pieces) && pieces[i].sec == pieces[j].sec; i++ {
			if err := pieces[i].err; err != nil {
				return err
			}
			crc = crcCombine(crc, pieces[i].crc, pieces[i].to-pieces[i].from)
		}
		if crc != e.crc {
			return corruptSection(e.tag, e.offset, "crc mismatch: stored %#08x, computed %#08x", e.crc, crc)
		}
	}
	return nil
}

// mapSection maps section e, or reads it whole where mmap is not supported
// or the file has no descriptor (memfs's Fd is ^uintptr(0)); mapped says
// which.
func (r *reader) mapSection(e entry, file *File) (data []byte, mapped bool, err error) {
	if e.length == 0 {
		return []byte{}, false, nil
	}
	fd := r.f.Fd()
	if fd == ^uintptr(0) {
		data, err = r.readSection(e)
		return data, false, err
	}
	m, data, err := mapRange(fd, e.offset, e.length)
	if errors.Is(err, errNoMmap) {
		data, err = r.readSection(e)
		return data, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("indexfile: mapping section %q at offset %d: %w", TagName(e.tag), e.offset, err)
	}
	file.mappings, file.mapped = append(file.mappings, m), append(file.mapped, e.tag)
	return data, true, nil
}
