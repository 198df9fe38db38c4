package collection

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/strata-db/strata/go/collection/segment"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/vfs"
	"golang.org/x/sys/unix"
)

// placedPair is one collection of each memory placement, fed alike.
type placedPair struct {
	t        *testing.T
	ram, mm  *Collection
	dirs     [2]string
	tuning   Tuning
	queries  []float32
	nQueries int
}

func newPlacedPair(t *testing.T, quant hnsw.Quantization) *placedPair {
	t.Helper()
	p := &placedPair{t: t, dirs: [2]string{t.TempDir(), t.TempDir()},
		// One thread and no merges of the loop's own (the test merges):
		// the two graphs are built alike, so their answers must be equal
		// to the bit.
		tuning: Tuning{CheckpointBytes: -1, Threads: 1, VacuumRatio: -1}}
	opts := testOptions()
	opts.Quantization = quant // an SQ8 field keeps its floats and re-scores with them
	var err error
	if p.ram, err = Create(p.dirs[0], opts, p.tuning); err != nil {
		t.Fatal(err)
	}
	opts.Memory = MemoryMmap
	if p.mm, err = Create(p.dirs[1], opts, p.tuning); err != nil {
		t.Fatal(err)
	}
	p.nQueries = 30
	p.queries = randomVectors(rand.New(rand.NewPCG(5, 5)), p.nQueries)
	return p
}

func (p *placedPair) both(fn func(c *Collection) error) {
	p.t.Helper()
	for _, c := range []*Collection{p.ram, p.mm} {
		if err := fn(c); err != nil {
			p.t.Fatal(err)
		}
	}
}

// same checks that both answer every query with the same ids and
// distances, and hold the same vectors.
func (p *placedPair) same(stage string, ids []uint64) {
	p.t.Helper()
	const k = 10
	var got [2][]ID
	var dists [2][]float32
	for i, c := range []*Collection{p.ram, p.mm} {
		got[i], dists[i] = make([]ID, k*p.nQueries), make([]float32, k*p.nQueries)
		if _, err := c.Query(p.queries, k, 50, nil, 1, got[i], dists[i]); err != nil {
			p.t.Fatal(err)
		}
	}
	if !slices.Equal(got[0], got[1]) || !slices.Equal(dists[0], dists[1]) {
		p.t.Fatalf("%s: mmap answers %v %v, ram %v %v", stage, got[1][:k], dists[1][:k], got[0][:k], dists[0][:k])
	}
	_, v0, _, err0 := p.ram.GetVectors(IntIDs(ids), "")
	_, v1, _, err1 := p.mm.GetVectors(IntIDs(ids), "")
	if err0 != nil || err1 != nil || !slices.Equal(v0, v1) {
		p.t.Fatalf("%s: GetVectors differ (%v, %v)", stage, err0, err1)
	}
}

// mapped checks that every sealed segment of the mmap collection with a
// file is mapped and none of the ram collection's is.
func (p *placedPair) mapped(stage string) {
	p.t.Helper()
	g := p.mm.fields.Load().def.index
	filed := len(g.Sealed()) // a checkpoint writes every sealed segment's file
	if n := g.Mapped(); n != filed || n == 0 {
		p.t.Fatalf("%s: %d of %d filed segments mapped", stage, n, filed)
	}
	if n := p.ram.fields.Load().def.index.Mapped(); n != 0 {
		p.t.Fatalf("%s: %d segments of the ram collection mapped", stage, n)
	}
}

func (p *placedPair) reopen() {
	p.t.Helper()
	p.both(func(c *Collection) error { return c.Close() })
	var err error
	if p.ram, err = Open(p.dirs[0], p.tuning); err != nil {
		p.t.Fatal(err)
	}
	if p.mm, err = Open(p.dirs[1], p.tuning); err != nil {
		p.t.Fatal(err)
	}
}

// TestMmapPlacementAnswersAsRAM: a collection whose segments' vectors are
// mapped from their files answers every query with the same ids and
// distances as one that holds them in memory, through seals (the fresh
// segment switched to its file), deletions of points in mapped segments,
// overwrites, merges of mapped segments and reopen; the placement is kept
// in the manifest.
func TestMmapPlacementAnswersAsRAM(t *testing.T) {
	racetest.AnswersOnly(t)
	forPlacedQuantizations(t, testMmapPlacementAnswersAsRAM)
}

// forPlacedQuantizations runs a placement test on float fields and on SQ8
// fields (whose float vectors, kept for rescoring, are what is mapped).
func forPlacedQuantizations(t *testing.T, test func(*testing.T, hnsw.Quantization)) {
	for _, q := range []hnsw.Quantization{hnsw.QuantNone, hnsw.QuantSQ8} {
		t.Run(q.String(), func(t *testing.T) { test(t, q) })
	}
}

func testMmapPlacementAnswersAsRAM(t *testing.T, quant hnsw.Quantization) {
	p := newPlacedPair(t, quant)
	defer func() { p.both(func(c *Collection) error { return c.Close() }) }()
	rng := rand.New(rand.NewPCG(24, 5))
	all := idRange(600)
	vecs := randomVectors(rng, len(all))
	for part := range 6 {
		lo, hi := part*100, (part+1)*100
		p.both(func(c *Collection) error { return c.Upsert(IntIDs(all[lo:hi]), vecs[lo*testDim:hi*testDim], nil) })
		p.both(func(c *Collection) error { c.waitBuilt(); return nil })
		p.same("in the active graph", all[:hi])
		p.both(func(c *Collection) error { return c.Checkpoint() })
		p.mapped("after a checkpoint")
		p.same("sealed and mapped", all[:hi])
	}
	// Deletions and overwrites of points in mapped segments.
	gone := IntIDs([]uint64{3, 150, 151, 420, 599})
	p.both(func(c *Collection) error { _, err := c.Delete(gone); return err })
	over := []uint64{10, 250, 510}
	overVecs := randomVectors(rng, len(over))
	p.both(func(c *Collection) error { return c.Upsert(IntIDs(over), overVecs, nil) })
	p.both(func(c *Collection) error { c.waitBuilt(); return nil })
	live := slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return slices.Contains(gone, IntID(id)) })
	p.same("after deletes and overwrites", live)
	for _, c := range []*Collection{p.ram, p.mm} {
		found, _, _, err := c.GetVectors(gone, "")
		if err != nil || len(found) != 0 {
			t.Fatalf("deleted points found: %v, %v", found, err)
		}
	}
	p.both(func(c *Collection) error { return c.Checkpoint() })
	p.mapped("after deletes")
	p.same("deletes written", live)

	// Merges read the mapped segments; the merged one is mapped once a
	// checkpoint wrote it.
	p.both(func(c *Collection) error {
		g := c.fields.Load().def.index
		if err := g.Merge(g.Sealed()[1:], 1); err != nil {
			return err
		}
		if n := len(g.Sealed()); n != 2 {
			t.Fatalf("%d segments after merging all but the first", n)
		}
		return nil
	})
	p.same("merged", live)
	// A checkpoint writes the merged segment once the log holds a record
	// no snapshot has.
	p.both(func(c *Collection) error { return c.Upsert(IntIDs(over[:1]), overVecs[:testDim], nil) })
	p.both(func(c *Collection) error { return c.Checkpoint() })
	p.mapped("merged and written")
	p.same("merged and written", live)

	p.reopen()
	if got := p.mm.Options().Memory; got != MemoryMmap {
		t.Fatalf("reopened with memory %v", got)
	}
	if got := p.ram.Options().Memory; got != MemoryRAM {
		t.Fatalf("ram collection reopened with memory %v", got)
	}
	p.mapped("reopened")
	p.same("reopened", live)
	m, err := snapshot.ReadManifest(vfs.Default, snapshotPath(p.dirs[1], p.mm.lastCheckpoint.Load()))
	if err != nil || m.Vectors[0].Memory != "mmap" || m.Vectors[0].Rescore != (quant == hnsw.QuantSQ8) {
		t.Fatalf("manifest memory %+v, %v", m.Vectors, err)
	}
}

// TestMmapQueriesAfterThePageCacheDropsTheVectors: the mapped vectors are
// clean page cache; once the kernel has dropped them (here on request,
// posix_fadvise DONTNEED, as under memory pressure), a query reads them
// again from the file and answers as before.
func TestMmapQueriesAfterThePageCacheDropsTheVectors(t *testing.T) {
	forPlacedQuantizations(t, testMmapQueriesAfterThePageCacheDropsTheVectors)
}

func testMmapQueriesAfterThePageCacheDropsTheVectors(t *testing.T, quant hnsw.Quantization) {
	p := newPlacedPair(t, quant)
	defer func() { p.both(func(c *Collection) error { return c.Close() }) }()
	rng := rand.New(rand.NewPCG(7, 7))
	all := idRange(2000)
	vecs := randomVectors(rng, len(all))
	p.both(func(c *Collection) error { return c.Upsert(IntIDs(all), vecs, nil) })
	p.both(func(c *Collection) error { return c.Checkpoint() })
	p.reopen()
	files, err := filepath.Glob(filepath.Join(p.dirs[1], snapshot.SegmentsDir, "*.hnsw"))
	if err != nil || len(files) == 0 {
		t.Fatalf("segment files %v, %v", files, err)
	}
	// Open mapped the vectors and dropped them from the process's resident
	// set (package indexfile, after checking their CRC); no query has
	// touched them since, so the page cache alone holds them: drop them.
	resident, total := 0, 0
	for _, f := range files {
		r, n := evict(t, f)
		resident, total = resident+r, total+n
	}
	if resident*2 > total {
		t.Skipf("the file system kept %d of %d pages in memory after DONTNEED (tmpfs?)", resident, total)
	}
	t.Logf("%d of %d pages of the segment files resident before the queries", resident, total)
	p.same("after the page cache dropped the vectors", all)
}

// evict drops path's pages from the page cache and returns how many of
// its pages are still resident, and of how many.
func evict(t *testing.T, path string) (resident, pages int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	m, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)),
		uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for _, b := range vec {
		if b&1 != 0 {
			resident++
		}
	}
	return resident, len(vec)
}

// TestMmapQueriesDuringMergesAndSwitches: readers search while merges
// retire mapped segments and checkpoints swap mapped copies in; a retired
// segment is unmapped only once no reader holds it, so no query fails or
// faults (run it with -race too).
func TestMmapQueriesDuringMergesAndSwitches(t *testing.T) {
	forPlacedQuantizations(t, testMmapQueriesDuringMergesAndSwitches)
}

func testMmapQueriesDuringMergesAndSwitches(t *testing.T, quant hnsw.Quantization) {
	opts := testOptions()
	opts.Memory, opts.Quantization = MemoryMmap, quant
	c, err := Create(t.TempDir(), opts, Tuning{CheckpointBytes: -1, Threads: 1, VacuumRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	next := uint64(0)
	write := func(n int) {
		t.Helper()
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = next
			next++
		}
		if err := c.Upsert(IntIDs(ids), randomVectors(rng, n), nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	// 50 rows a segment give every round two segments to merge and a
	// switch to a mapping; with 200, each merge's build beside the two
	// readers took seconds (313 s of CI under -race for both
	// quantizations, 36 s without).
	const rows = 50
	for range 4 {
		write(rows)
	}
	stop := make(chan struct{})
	errs := make(chan error, 2)
	queries := randomVectors(rand.New(rand.NewPCG(1, 2)), 4)
	known := next // the ids written so far (next changes under the readers)
	for r := range 2 {
		go func() {
			out, dists := make([]ID, 5*4), make([]float32, 5*4)
			for n := 0; ; n++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if _, err := c.Query(queries, 5, 40, nil, 1, out, dists); err != nil {
					errs <- err
					return
				}
				if _, _, _, err := c.GetVectors([]ID{IntID(uint64(n+r) % known)}, ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	g := c.fields.Load().def.index
	var retired []*segment.Graph
	for round := range 6 {
		if sealed := g.Sealed(); len(sealed) >= 2 {
			if err := g.Merge(sealed, 1); err != nil { // mapped sources retired
				t.Fatal(err)
			}
			retired = append(retired, sealed...)
		}
		write(rows / 2) // the merged segment written, then swapped for its mapping
		if n := g.Mapped(); n != len(g.Sealed()) {
			t.Fatalf("round %d: %d of %d segments mapped", round, n, len(g.Sealed()))
		}
	}
	close(stop)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a query during merges and switches: %v", err)
		}
	}
	// No reader holds them now: every retired segment is unmapped.
	for i, s := range retired {
		if s.Index().Mapped() {
			t.Fatalf("retired segment %d of %d is still mapped", i, len(retired))
		}
	}
	if len(retired) == 0 {
		t.Fatal("no merge retired a segment")
	}
}
