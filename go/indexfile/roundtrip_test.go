package indexfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/strata-db/strata/go/vfs"
)

func TestRoundTripIsByteExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		sections := randomSections(rng, rng.IntN(8), 300)
		if trial%10 == 0 {
			sections = append(sections, hnswLikeSections(rng, 100, 7)...)
		}
		dir := t.TempDir()
		path, first := writeFile(t, dir, sections)
		for _, opts := range []ReadOptions{{}, {MmapTags: allTags(sections)}} {
			f, err := Read(vfs.Default, path, opts)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			checkSections(t, f, sections)
			again := make([]Section, 0, len(sections))
			for _, tag := range f.Tags() {
				data, _ := f.Section(tag)
				again = append(again, Section{Tag: tag, Data: data})
			}
			path2 := filepath.Join(dir, "again.strata")
			if err := Write(vfs.Default, path2, again); err != nil {
				t.Fatal(err)
			}
			second, err := os.ReadFile(path2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, second) {
				t.Fatalf("trial %d: write → read → write changed the file (%d vs %d bytes)", trial, len(first), len(second))
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestEmptyFileAndEmptySectionsRoundTrip(t *testing.T) {
	for _, sections := range [][]Section{
		nil,
		{{Tag: tagVectors}},
		{{Tag: tagParams, Data: []byte{1}}, {Tag: tagVectors}, {Tag: tagLabels}},
	} {
		path, b := writeFile(t, t.TempDir(), sections)
		f, err := Read(vfs.Default, path, ReadOptions{MmapTags: allTags(sections)})
		if err != nil {
			t.Fatalf("%d sections (%d bytes): %v", len(sections), len(b), err)
		}
		checkSections(t, f, sections)
		for _, s := range sections {
			if data, _ := f.Section(s.Tag); data == nil {
				t.Fatalf("empty section %q read as nil", TagName(s.Tag))
			}
		}
		f.Close()
	}
}

func TestMappedAndHeapSectionsAreIdenticalAndAligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sections := append(randomSections(rng, 5, 10000), hnswLikeSections(rng, 3000, 33)...)
	path, _ := writeFile(t, t.TempDir(), sections)
	heap, err := Read(vfs.Default, path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer heap.Close()
	mapped, err := Read(vfs.Default, path, ReadOptions{MmapTags: allTags(sections)})
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	if len(mapped.mappings) == 0 {
		t.Fatal("no section was mapped")
	}
	for _, s := range sections {
		h, _ := heap.Section(s.Tag)
		m, _ := mapped.Section(s.Tag)
		if !bytes.Equal(h, m) || !bytes.Equal(h, s.Data) {
			t.Fatalf("section %q differs between heap and mapped reads", TagName(s.Tag))
		}
		if len(m) > 0 && uintptr(unsafe.Pointer(&m[0]))%Alignment != 0 {
			t.Fatalf("mapped section %q at %p is not %d-byte aligned", TagName(s.Tag), &m[0], Alignment)
		}
		if len(h) > 0 && uintptr(unsafe.Pointer(&h[0]))%8 != 0 {
			t.Fatalf("heap section %q at %p is not 8-byte aligned", TagName(s.Tag), &h[0])
		}
	}
	vectors, _ := mapped.Section(tagVectors)
	if _, err := ViewAs[float32](vectors); err != nil {
		t.Fatal(err)
	}
	labels, _ := heap.Section(tagLabels)
	if _, err := ViewAs[uint64](labels); err != nil {
		t.Fatal(err)
	}
}

// tmpfs has no page cache separate from the file, which once broke mmap
// paths that assumed a block device; the mapping must work there too.
func TestMmapWorksOnTmpfs(t *testing.T) {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "indexfile-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(5, 6))
	sections := hnswLikeSections(rng, 2000, 17)
	path, _ := writeFile(t, dir, sections)
	f, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.mappings) != 1 {
		t.Fatalf("%d mappings, want 1 (vectors only)", len(f.mappings))
	}
	checkSections(t, f, sections)
}

func TestSectionsGoneAfterClose(t *testing.T) {
	sections := hnswLikeSections(rand.New(rand.NewPCG(7, 8)), 10, 4)
	path, _ := writeFile(t, t.TempDir(), sections)
	f, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Section(tagVectors); ok {
		t.Fatal("Section still returns a mapped section after Close")
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestWriteRejectsDuplicateTags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	err := Write(vfs.Default, path, []Section{{Tag: tagVectors}, {Tag: tagVectors}})
	if err == nil || !isInvalid(err) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a file was written: %v", err)
	}
}
