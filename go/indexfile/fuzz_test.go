package indexfile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false, "rewrite testdata/fuzz/FuzzRead from fuzzSeeds")

// fuzzSeeds are small valid files and damaged variants of them.
func fuzzSeeds() map[string][]byte {
	rng := rand.New(rand.NewPCG(19, 20))
	valid := map[string][]Section{
		"empty":          nil,
		"one-section":    {{Tag: tagParams, Data: []byte("params")}},
		"hnsw-like":      hnswLikeSections(rng, 6, 3),
		"empty-sections": {{Tag: tagParams}, {Tag: tagVectors, Data: BytesOf([]float32{1, 2})}, {Tag: tagLabels}},
	}
	seeds := make(map[string][]byte)
	for name, sections := range valid {
		var m memFile
		if err := writeContents(&m, sections); err != nil {
			panic(err)
		}
		seeds["valid-"+name] = m.b
	}
	good := seeds["valid-hnsw-like"]
	clone := func() []byte { return append([]byte(nil), good...) }
	seeds["truncated-in-table"] = good[:50]
	seeds["truncated-in-payload"] = good[:len(good)-5]
	flipped := clone()
	flipped[len(flipped)-3] ^= 0x10
	seeds["payload-bit-flip"] = flipped
	seeds["overlap"] = resealTable(clone(), func(e []entry) { e[2].offset = e[1].offset })
	seeds["huge-length"] = resealTable(clone(), func(e []entry) { e[1].length = 1 << 62 })
	newer := clone()
	resealHeader(newer, func(h []byte) { le.PutUint32(h[offVersion:], Version+1) })
	seeds["newer-version"] = newer
	huge := clone()
	resealHeader(huge, func(h []byte) { le.PutUint32(h[offCount:], 1<<31) })
	seeds["huge-count"] = huge
	return seeds
}

func TestUpdateFuzzSeeds(t *testing.T) {
	if !*updateFuzzSeeds {
		t.Skip("run with -update-fuzz-seeds to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range fuzzSeeds() {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzRead checks that Read never panics and that whatever it accepts is
// exactly what Write would produce from the sections it returned: a file
// Read accepts has no byte that Read did not check. Mapped and heap reads
// must agree.
func FuzzRead(f *testing.F) {
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	// tmpfs, where there is one, makes each execution several times faster.
	dir, err := os.MkdirTemp("/dev/shm", "indexfile-fuzz-")
	if err != nil {
		dir = f.TempDir()
	} else {
		f.Cleanup(func() { os.RemoveAll(dir) })
	}
	path := filepath.Join(dir, "fuzz.strata")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		heap, herr := Read(vfs.Default, path, ReadOptions{})
		// A lazy read (every section mapped, CRCs deferred) accepts
		// exactly what Read accepts once Verify has run, and fails
		// with the same kinds of error.
		lazyErr := checkLazyRead(path, herr)
		if lazyErr != nil {
			t.Fatal(lazyErr)
		}
		if herr != nil {
			if !errors.Is(herr, ErrCorrupt) && !errors.Is(herr, ErrVersion) {
				t.Fatalf("error is neither ErrCorrupt nor ErrVersion: %v", herr)
			}
			return
		}
		defer heap.Close()
		mapped, merr := Read(vfs.Default, path, ReadOptions{MmapTags: heap.Tags()})
		if merr != nil {
			t.Fatalf("heap read accepted the file, mapped read did not: %v", merr)
		}
		defer mapped.Close()
		var sections []Section
		for _, tag := range heap.Tags() {
			h, _ := heap.Section(tag)
			m, _ := mapped.Section(tag)
			if !bytes.Equal(h, m) {
				t.Fatalf("section %q differs between heap and mapped reads", TagName(tag))
			}
			sections = append(sections, Section{Tag: tag, Data: h})
		}
		var out memFile
		if err := writeContents(&out, sections); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.b, b) {
			t.Fatalf("accepted a %d-byte file that re-encodes to %d different bytes", len(b), len(out.b))
		}
	})
}

// checkLazyRead reads path with every section mapped and its CRC
// deferred, runs Verify, and says how that differs from the heap read's
// error herr (nil: they agree).
func checkLazyRead(path string, herr error) error {
	tags, err := tableTags(path)
	if err != nil {
		tags = nil // the table itself is damaged: Read refuses it before mapping anything
	}
	lazy, err := Read(vfs.Default, path, ReadOptions{MmapTags: tags, DeferCRC: true})
	if err == nil {
		err = lazy.Verify(nil)
		lazy.Close()
	}
	switch {
	case herr == nil && err != nil:
		return fmt.Errorf("heap read accepted the file, lazy read + Verify did not: %v", err)
	case herr != nil && err == nil:
		return fmt.Errorf("heap read refused the file (%v), lazy read + Verify accepted it", herr)
	case err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion):
		return fmt.Errorf("lazy error is neither ErrCorrupt nor ErrVersion: %v", err)
	}
	return nil
}

// tableTags lists the tags of path's section table, checked as Read
// checks it, without reading the sections.
func tableTags(path string) ([]uint32, error) {
	fd, err := vfs.Default.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	r := reader{f: fd, size: uint64(fi.Size())}
	entries, err := r.readTable()
	if err != nil {
		return nil, err
	}
	tags := make([]uint32, len(entries))
	for i, e := range entries {
		tags[i] = e.tag
	}
	return tags, nil
}

// memFile is an in-memory vfs.File for encoding without touching the disk.
type memFile struct{ b []byte }

func (m *memFile) Write(p []byte) (int, error) { m.b = append(m.b, p...); return len(p), nil }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) { panic("unused") }
func (m *memFile) Close() error                            { return nil }
func (m *memFile) Sync() error                             { return nil }
func (m *memFile) Stat() (os.FileInfo, error)              { panic("unused") }
func (m *memFile) Fd() uintptr                             { panic("unused") }
