package indexfile

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

var (
	tagParams  = FourCC("PARM")
	tagVectors = FourCC("VECS")
	tagLevel0  = FourCC("LVL0")
	tagLabels  = FourCC("LABL")
)

// randomSections makes n sections with distinct tags and lengths up to
// maxLen, including some of length 0 and some not a multiple of 64.
func randomSections(rng *rand.Rand, n, maxLen int) []Section {
	sections := make([]Section, n)
	for i := range sections {
		data := make([]byte, rng.IntN(maxLen+1))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		sections[i] = Section{Tag: FourCC(fmt.Sprintf("S%03d", i)), Data: data}
	}
	return sections
}

// hnswLikeSections resembles what the index saves: parameters, vectors,
// adjacency lists and labels.
func hnswLikeSections(rng *rand.Rand, rows, dim int) []Section {
	vectors := make([]float32, rows*dim)
	for i := range vectors {
		vectors[i] = rng.Float32()
	}
	level0 := make([]uint32, rows*16)
	for i := range level0 {
		level0[i] = rng.Uint32N(uint32(rows))
	}
	labels := make([]uint64, rows)
	for i := range labels {
		labels[i] = rng.Uint64()
	}
	params, err := EncodeFixed(struct{ Dim, Rows uint32 }{uint32(dim), uint32(rows)})
	if err != nil {
		panic(err)
	}
	return []Section{
		{Tag: tagParams, Data: params},
		{Tag: tagVectors, Data: BytesOf(vectors)},
		{Tag: tagLevel0, Data: BytesOf(level0)},
		{Tag: tagLabels, Data: BytesOf(labels)},
	}
}

func writeFile(t testing.TB, dir string, sections []Section) (string, []byte) {
	t.Helper()
	path := filepath.Join(dir, "index.strata")
	if err := Write(vfs.Default, path, sections); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// readBytes writes b to a file and reads it back with opts.
func readBytes(t testing.TB, dir string, b []byte, opts ReadOptions) (*File, error) {
	t.Helper()
	path := filepath.Join(dir, "damaged.strata")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return Read(vfs.Default, path, opts)
}

func checkSections(t testing.TB, f *File, want []Section) {
	t.Helper()
	tags := f.Tags()
	if len(tags) != len(want) {
		t.Fatalf("file has %d sections, want %d", len(tags), len(want))
	}
	for i, s := range want {
		if tags[i] != s.Tag {
			t.Fatalf("section %d is %q, want %q", i, TagName(tags[i]), TagName(s.Tag))
		}
		got, ok := f.Section(s.Tag)
		if !ok || !bytes.Equal(got, s.Data) {
			t.Fatalf("section %q: %d bytes (found %v), want %d bytes equal", TagName(s.Tag), len(got), ok, len(s.Data))
		}
	}
}

// checkCorrupt demands an ErrCorrupt that says where: a section, the header
// or the table, and an offset.
func checkCorrupt(t testing.TB, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: read succeeded", what)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: got %v, want ErrCorrupt", what, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "at offset") ||
		!(strings.Contains(msg, "section \"") || strings.Contains(msg, "header at") ||
			strings.Contains(msg, "section table at") || strings.Contains(msg, "end of file at")) {
		t.Fatalf("%s: error does not say where: %v", what, err)
	}
}

// allTags lists the tags of sections, for ReadOptions.MmapTags.
func allTags(sections []Section) []uint32 {
	tags := make([]uint32, len(sections))
	for i, s := range sections {
		tags[i] = s.Tag
	}
	return tags
}
