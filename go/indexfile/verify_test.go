package indexfile

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

// TestVerifyRejectsWhatReadRejects: Verify accepts a sound file and
// rejects, as corrupt and saying where, every truncation Read rejects and
// a flipped byte in each section (sections larger than its buffer
// included), so that a checkpoint verifying with it checks what reading
// the file would.
func TestVerifyRejectsWhatReadRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	sections := append(hnswLikeSections(rng, 50, 9), randomSections(rng, 3, 200)...)
	big := make([]byte, 2*verifyBuffer+77)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	sections = append(sections, Section{Tag: FourCC("BIGS"), Data: big}, Section{Tag: FourCC("LAST")})
	dir := t.TempDir()
	path, b := writeFile(t, dir, sections)
	if err := Verify(vfs.Default, path); err != nil {
		t.Fatalf("a sound file: %v", err)
	}
	damaged := filepath.Join(dir, "damaged.strata")
	check := func(what string, bad []byte) {
		t.Helper()
		if err := os.WriteFile(damaged, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		checkCorrupt(t, Verify(vfs.Default, damaged), what)
	}
	for _, off := range boundaries(rng, b) {
		check("truncated at "+strconv.Itoa(off), b[:off])
	}
	count := int(le.Uint32(b[offCount:]))
	for i := range count {
		e := decodeEntry(b[headerSize+i*entrySize:])
		if e.length == 0 {
			continue
		}
		bad := append([]byte(nil), b...)
		at := int(e.offset) + rng.IntN(int(e.length))
		bad[at] ^= 0x40
		check("byte "+strconv.Itoa(at)+" flipped", bad)
	}
}
