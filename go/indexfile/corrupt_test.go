package indexfile

import (
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// boundaries lists every offset at which a truncation must be caught: each
// byte of the header and table, each section's start and end and the
// padding around them, and a sample inside each payload.
func boundaries(rng *rand.Rand, b []byte) []int {
	count := int(le.Uint32(b[offCount:]))
	var offs []int
	for off := range int(tableEnd(uint32(count))) {
		offs = append(offs, off)
	}
	for i := range count {
		e := decodeEntry(b[headerSize+i*entrySize:])
		start, end := int(e.offset), int(e.offset+e.length)
		offs = append(offs, start-1, start, start+1, end-1, end, end+1)
		for range 5 {
			if e.length > 0 {
				offs = append(offs, start+rng.IntN(int(e.length)))
			}
		}
	}
	var valid []int
	for _, off := range offs {
		if off >= 0 && off < len(b) {
			valid = append(valid, off)
		}
	}
	return valid
}

func TestReadRejectsTruncationAtEveryBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sections := append(hnswLikeSections(rng, 50, 9), randomSections(rng, 3, 200)...)
	sections = append(sections, Section{Tag: FourCC("LAST")}) // empty last section
	dir := t.TempDir()
	_, b := writeFile(t, dir, sections)
	for _, off := range boundaries(rng, b) {
		for _, opts := range []ReadOptions{{}, {MmapTags: allTags(sections)}} {
			f, err := readBytes(t, dir, b[:off], opts)
			if f != nil {
				f.Close()
			}
			checkCorrupt(t, err, "truncated at "+strconv.Itoa(off))
			if off >= int(tableEnd(uint32(len(sections)))) && !strings.Contains(err.Error(), "section \"") {
				t.Fatalf("truncated at %d, past the table: error names no section: %v", off, err)
			}
		}
	}
}

func TestReadRejectsTrailingBytes(t *testing.T) {
	dir := t.TempDir()
	_, b := writeFile(t, dir, hnswLikeSections(rand.New(rand.NewPCG(1, 1)), 5, 3))
	_, err := readBytes(t, dir, append(b, 0), ReadOptions{})
	checkCorrupt(t, err, "one trailing byte")
}

// Every byte matters: header and table have CRCs, payloads have CRCs,
// padding must be zero and the length must match the table.
func TestReadRejectsEveryFlippedBitOfASmallFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	sections := []Section{
		{Tag: tagParams, Data: []byte{1, 2, 3}},
		{Tag: tagVectors, Data: BytesOf([]float32{1, 2, 3, 4, 5})},
		{Tag: tagLabels},
	}
	dir := t.TempDir()
	_, b := writeFile(t, dir, sections)
	for off := range b {
		for bit := range 8 {
			damaged := append([]byte(nil), b...)
			damaged[off] ^= 1 << bit
			opts := ReadOptions{}
			if rng.IntN(2) == 0 {
				opts.MmapTags = allTags(sections)
			}
			_, err := readBytes(t, dir, damaged, opts)
			checkCorrupt(t, err, "bit "+strconv.Itoa(bit)+" of byte "+strconv.Itoa(off)+" flipped")
		}
	}
}

func TestReadRejectsFlippedBitsOfABigFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	sections := hnswLikeSections(rng, 5000, 32) // about 1 MiB
	dir := t.TempDir()
	_, b := writeFile(t, dir, sections)
	for range 300 {
		off, bit := rng.IntN(len(b)), rng.IntN(8)
		b[off] ^= 1 << bit
		_, err := readBytes(t, dir, b, ReadOptions{MmapTags: []uint32{tagVectors}})
		checkCorrupt(t, err, "bit "+strconv.Itoa(bit)+" of byte "+strconv.Itoa(off)+" flipped")
		b[off] ^= 1 << bit
	}
}

// resealTable lets a test forge a table with valid CRCs, to reach the checks
// behind them.
func resealTable(b []byte, edit func(entries []entry)) []byte {
	count := le.Uint32(b[offCount:])
	entries := make([]entry, count)
	for i := range entries {
		entries[i] = decodeEntry(b[headerSize+i*entrySize:])
	}
	edit(entries)
	for i, e := range entries {
		e.encode(b[headerSize+i*entrySize:])
	}
	resealHeader(b, func([]byte) {})
	return b
}

func resealHeader(b []byte, edit func(hdr []byte)) {
	edit(b[:headerSize])
	if end := tableEnd(le.Uint32(b[offCount:])); end <= uint64(len(b)) {
		le.PutUint32(b[offTableCRC:], crc32.Checksum(b[headerSize:end], castagnoli))
	}
	le.PutUint32(b[offHeaderCRC:], crc32.Checksum(b[:offHeaderCRC], castagnoli))
}

func TestReadRejectsForgedLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	dir := t.TempDir()
	_, good := writeFile(t, dir, hnswLikeSections(rng, 40, 8))
	cases := map[string]func(entries []entry){
		"overlapping sections": func(e []entry) { e[2].offset = e[1].offset },
		"misaligned offset":    func(e []entry) { e[1].offset++ },
		"gap between sections": func(e []entry) { e[1].offset += Alignment },
		"duplicate tag":        func(e []entry) { e[2].tag = e[1].tag },
		"length overflows":     func(e []entry) { e[3].length = math.MaxUint64 - e[3].offset + 1 },
		"length past the end":  func(e []entry) { e[3].length++ },
		"huge length":          func(e []entry) { e[1].length = 1 << 62 },
		"nonzero entry flags":  func(e []entry) { e[0].flags = 1 },
		"nonzero reserved":     func(e []entry) { e[0].reserved = 1 },
	}
	for name, edit := range cases {
		b := resealTable(append([]byte(nil), good...), edit)
		_, err := readBytes(t, dir, b, ReadOptions{})
		checkCorrupt(t, err, name)
		if !strings.Contains(err.Error(), "section \"") {
			t.Fatalf("%s: error names no section: %v", name, err)
		}
	}
}

func TestReadDoesNotAllocateForCorruptCounts(t *testing.T) {
	dir := t.TempDir()
	_, good := writeFile(t, dir, hnswLikeSections(rand.New(rand.NewPCG(1, 1)), 4, 4))
	b := append([]byte(nil), good...)
	resealHeader(b, func(h []byte) { le.PutUint32(h[offCount:], math.MaxUint32) })
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readBytes(t, dir, b, ReadOptions{})
	runtime.ReadMemStats(&after)
	checkCorrupt(t, err, "count 2^32-1")
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("reading a file claiming 2^32-1 sections allocated %d bytes", grew)
	}
}

func TestReadRejectsForgedHeaders(t *testing.T) {
	dir := t.TempDir()
	_, good := writeFile(t, dir, hnswLikeSections(rand.New(rand.NewPCG(1, 1)), 4, 4))
	cases := map[string]func(h []byte){
		"nonzero flags":      func(h []byte) { le.PutUint32(h[offFlags:], 4) },
		"header length 36":   func(h []byte) { le.PutUint32(h[offHeaderLen:], 36) },
		"header length huge": func(h []byte) { le.PutUint32(h[offHeaderLen:], 1<<31) },
	}
	for name, edit := range cases {
		b := append([]byte(nil), good...)
		resealHeader(b, edit)
		_, err := readBytes(t, dir, b, ReadOptions{})
		checkCorrupt(t, err, name)
	}
	for _, b := range [][]byte{nil, []byte("STRATAI"), []byte("NOTANINDEXFILE AT ALL, REALLY NOT")} {
		_, err := readBytes(t, dir, b, ReadOptions{})
		checkCorrupt(t, err, "not an index file: "+string(b))
	}
}

// A newer file must say "upgrade", not "corrupt"; a damaged version field
// must say "corrupt", not "upgrade".
func TestReadTellsNewerVersionFromDamagedVersion(t *testing.T) {
	dir := t.TempDir()
	_, good := writeFile(t, dir, hnswLikeSections(rand.New(rand.NewPCG(1, 1)), 4, 4))
	newer := append([]byte(nil), good...)
	resealHeader(newer, func(h []byte) { le.PutUint32(h[offVersion:], Version+1) })
	_, err := readBytes(t, dir, newer, ReadOptions{})
	if !errors.Is(err, ErrVersion) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("newer version: got %v, want ErrVersion only", err)
	}
	damaged := append([]byte(nil), good...)
	le.PutUint32(damaged[offVersion:], Version+1)
	_, err = readBytes(t, dir, damaged, ReadOptions{})
	checkCorrupt(t, err, "damaged version")
}

// TestReadInPiecesInParallel runs the corruption, round-trip and I/O
// error tests with every file read and checksummed in pieces of 24 bytes
// by four goroutines (not the big file's flips: at 24 bytes a piece they
// take minutes) (verify's path for files of parallelFrom bytes and
// more): the same files load, and the same damage is found.
func TestReadInPiecesInParallel(t *testing.T) {
	from, piece, procs := parallelFrom, readPiece, runtime.GOMAXPROCS(4)
	parallelFrom, readPiece = 0, 24
	defer func() { parallelFrom, readPiece = from, piece; runtime.GOMAXPROCS(procs) }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"truncation", TestReadRejectsTruncationAtEveryBoundary},
		{"flipped bits", TestReadRejectsEveryFlippedBitOfASmallFile},
		{"forged layouts", TestReadRejectsForgedLayouts},
		{"round trip", TestRoundTripIsByteExact},
		{"empty sections", TestEmptyFileAndEmptySectionsRoundTrip},
		{"mapped", TestMappedAndHeapSectionsAreIdenticalAndAligned},
		{"io errors", TestReadReportsIOErrorsAsIOErrorsNotCorruption},
	} {
		t.Run(tc.name, tc.fn)
	}
}
