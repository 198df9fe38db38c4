package indexfile

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// A lazy read checks what it copies, maps the rest unchecked, and Verify
// finds a flipped byte in a mapped section, naming the file and section.
func TestDeferredCRCFoundByVerify(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sections := hnswLikeSections(rng, 3000, 96) // vectors of more than one verify piece
	path, b := writeFile(t, t.TempDir(), sections)
	opts := ReadOptions{MmapTags: []uint32{tagVectors}, DeferCRC: true}

	f, err := Read(vfs.Default, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Pending(), uint64(len(sections[1].Data)); got != want {
		t.Fatalf("Pending = %d, want %d (the vectors)", got, want)
	}
	pauses := 0
	if err := f.Verify(func() error { pauses++; return nil }); err != nil {
		t.Fatalf("Verify of an intact file: %v", err)
	}
	if f.Pending() != 0 || pauses < 2 {
		t.Fatalf("after Verify: %d bytes pending, %d pauses; want 0 and one a piece", f.Pending(), pauses)
	}
	checkSections(t, f, sections)
	f.Close()

	// Flip a byte in the middle of the vectors on disk.
	at := int(alignUp(tableEnd(4))) + len(sections[0].Data)
	at = int(alignUp(uint64(at))) + len(sections[1].Data)/2
	b[at] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors}}); err == nil {
		t.Fatal("an eager read accepted the flipped byte")
	}
	for _, resident := range []bool{false, true} {
		opts.Resident = resident
		f, err := Read(vfs.Default, path, opts)
		if err != nil {
			t.Fatalf("lazy read refused a damaged mapped section at Read: %v", err)
		}
		err = f.Verify(nil)
		checkCorrupt(t, err, "Verify")
		if !strings.Contains(err.Error(), `"VECS"`) || !strings.Contains(err.Error(), path) {
			t.Fatalf("Verify's error does not name the section and file: %v", err)
		}
		if f.Pending() == 0 {
			t.Fatal("a damaged section left the pending list")
		}
		f.Close()
	}

	// A damaged copied section is still found by Read itself.
	b[at] ^= 0x40
	b[len(b)-1] ^= 0x01 // in the labels, the last section, not mapped
	f, err = readBytes(t, t.TempDir(), b, opts)
	checkCorrupt(t, err, "lazy read of a damaged copied section")
	if f != nil {
		t.Fatal("a refused read returned a file")
	}
}

// Verify after Close (or a Close between its pieces) reports ErrClosed
// and touches no unmapped memory.
func TestVerifyAfterClose(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	path, _ := writeFile(t, t.TempDir(), hnswLikeSections(rng, 3000, 96))
	f, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors}, DeferCRC: true})
	if err != nil {
		t.Fatal(err)
	}
	first := true
	err = f.Verify(func() error {
		if !first {
			f.Close() // Close from inside a pause: the next piece must not read
		}
		first = false
		return nil
	})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Verify across Close: %v, want ErrClosed", err)
	}
	if err := f.Verify(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Verify after Close: %v, want ErrClosed", err)
	}
}

// Verify may run while other goroutines read the sections and Close
// comes at any moment (go test -race).
func TestVerifyRacesClose(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	path, _ := writeFile(t, t.TempDir(), hnswLikeSections(rng, 3000, 96))
	for range 5 {
		f, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors}, DeferCRC: true})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- f.Verify(nil) }()
		f.Close()
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("Verify racing Close: %v", err)
		}
	}
}

// A file that cannot be mapped (memfs has no descriptors) is read whole
// under DeferCRC, so its CRCs are checked by Read itself: nothing is left
// pending, and a flipped byte in a section asked to be mapped fails Read.
func TestDeferredCRCOnAFileWithoutDescriptorChecksAtRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sections := hnswLikeSections(rng, 500, 32)
	_, b := writeFile(t, t.TempDir(), sections)
	opts := ReadOptions{MmapTags: []uint32{tagVectors}, DeferCRC: true}
	put := func(fs *memfs.FS, data []byte) {
		f, err := fs.Create("/x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	fs := memfs.New()
	put(fs, b)
	f, err := Read(fs, "/x", opts)
	if err != nil {
		t.Fatalf("lazy read of an intact memfs file: %v", err)
	}
	if f.Pending() != 0 {
		t.Fatalf("Pending = %d, want 0: an unmapped section is checked at Read", f.Pending())
	}
	checkSections(t, f, sections)
	f.Close()

	at := int(alignUp(tableEnd(4))) + len(sections[0].Data)
	at = int(alignUp(uint64(at))) + len(sections[1].Data)/2
	damaged := append([]byte(nil), b...)
	damaged[at] ^= 0x40
	fs = memfs.New()
	put(fs, damaged)
	_, err = Read(fs, "/x", opts)
	checkCorrupt(t, err, "Read")
}
