package indexfile

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

// mappedRSS is the file-backed and shared-memory (tmpfs) part of this
// process's resident set, in bytes.
func mappedRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var total int64
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "RssFile" && name != "RssShmem") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", sc.Text(), err)
		}
		total += kb << 10
		found++
	}
	if found != 2 {
		t.Skip("no RssFile/RssShmem in /proc/self/status")
	}
	return total
}

// Verifying a mapped section's CRC reads all of it; without MADV_DONTNEED
// a freshly loaded index would count its whole vector file as resident.
func TestMappedSectionNotResidentAfterRead(t *testing.T) {
	const size = 64 << 20
	vectors := make([]float32, size/4)
	for i := range vectors {
		vectors[i] = float32(i)
	}
	path, _ := writeFile(t, t.TempDir(), []Section{{Tag: tagParams, Data: []byte{1}}, {Tag: tagVectors, Data: BytesOf(vectors)}})
	vectors = nil

	before := mappedRSS(t)
	f, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	afterRead := mappedRSS(t)
	data, _ := f.Section(tagVectors)
	var sum byte
	for i := 0; i < len(data); i += 4096 {
		sum += data[i]
	}
	afterTouch := mappedRSS(t)
	t.Logf("mapped RSS: before %d MiB, after Read %d MiB, after touching every page %d MiB (sum %d)",
		before>>20, afterRead>>20, afterTouch>>20, sum)
	if afterRead-before > size/8 {
		t.Fatalf("Read left %d MiB of a %d MiB mapped section resident", (afterRead-before)>>20, size>>20)
	}
	if afterTouch-afterRead < size/2 {
		t.Fatalf("touching the mapping raised RSS by only %d MiB; the measurement is not seeing it", (afterTouch-afterRead)>>20)
	}
}

// Deferred verification reads every mapped page; afterwards the sections
// in KeepTags stay resident (a collection's links and codes) and the
// others are dropped again (the vectors of memory="mmap").
func TestVerifyKeepsOnlyKeepTagsResident(t *testing.T) {
	const size = 64 << 20
	vectors := make([]float32, size/4)
	links := make([]uint32, size/4)
	for i := range vectors {
		vectors[i], links[i] = float32(i), uint32(i)
	}
	path, _ := writeFile(t, t.TempDir(), []Section{{Tag: tagVectors, Data: BytesOf(vectors)}, {Tag: tagLevel0, Data: BytesOf(links)}})
	vectors, links = nil, nil

	before := mappedRSS(t)
	f, err := Read(vfs.Default, path, ReadOptions{MmapTags: []uint32{tagVectors, tagLevel0}, DeferCRC: true, KeepTags: []uint32{tagLevel0}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Verify(nil); err != nil {
		t.Fatal(err)
	}
	grew := mappedRSS(t) - before
	// The kept section is resident (less whatever the kernel reclaimed
	// meanwhile, hence the margin); the dropped one is not.
	if grew < size/2 || grew > size+size*3/4 {
		t.Fatalf("mapped RSS grew by %d MiB after Verify, want about %d (the kept section alone)", grew>>20, size>>20)
	}
}
