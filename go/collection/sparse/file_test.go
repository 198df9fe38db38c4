package sparse

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// TestSnapshotRoundTripIsByteExact prevents a snapshot that loses or
// reorders points, forgets the modifier, or writes differently after a
// load: write, read, write again gives the same bytes, and the loaded
// index answers like the original.
func TestSnapshotRoundTripIsByteExact(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(8, 8)), vocab: 300, maxNNZ: 20, negative: true}
	x, ref := randomIndex(t, g, 2000, ModifierIDF)
	var del []uint64
	for k := range ref.points {
		if len(del) < 300 {
			del = append(del, k)
		}
	}
	x.Delete(del)
	ref.delete(del)
	if x.ndead == 0 {
		t.Fatal("no dead slots: the test no longer checks that they are left out")
	}
	fs := memfs.New()
	if err := x.Freeze().Write(fs, "a.sparse"); err != nil {
		t.Fatal(err)
	}
	y, err := Read(fs, "a.sparse")
	if err != nil {
		t.Fatal(err)
	}
	if err := y.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	if y.Modifier() != ModifierIDF || y.Len() != len(ref.points) {
		t.Fatalf("loaded modifier %v, %d points; want idf, %d", y.Modifier(), y.Len(), len(ref.points))
	}
	if err := y.Freeze().Write(fs, "b.sparse"); err != nil {
		t.Fatal(err)
	}
	a, _ := vfs.ReadFile(fs, "a.sparse")
	b, _ := vfs.ReadFile(fs, "b.sparse")
	if !bytes.Equal(a, b) {
		t.Fatalf("rewritten snapshot differs: %d bytes vs %d", len(a), len(b))
	}
	for i := range 30 {
		q := g.vector(1 + i%8)
		checkAllPlans(t, y, ref, q, 10, nil, "loaded")
	}
	for key, want := range ref.points {
		got, ok := y.Get(key)
		if !ok || !slices.Equal(got.Indices, want.Indices) || !slices.Equal(got.Values, want.Values) {
			t.Fatalf("key %d: loaded %v, want %v", key, got, want)
		}
	}
}

// TestFreezeIsUnchangedByLaterWrites prevents a checkpoint from writing
// writes applied after its Freeze (or losing points to a compaction that
// runs between Freeze and Write).
func TestFreezeIsUnchangedByLaterWrites(t *testing.T) {
	g := gen{rng: rand.New(rand.NewPCG(9, 9)), vocab: 100, maxNNZ: 10}
	x, _ := randomIndex(t, g, 3000, ModifierNone)
	fs := memfs.New()
	if err := x.Freeze().Write(fs, "want"); err != nil {
		t.Fatal(err)
	}
	frozen := x.Freeze()
	var keys []uint64
	for k := range x.slots {
		keys = append(keys, k)
	}
	// Replace some (appending to the shared arrays), then delete nearly
	// everything (a compaction).
	vs := make([]Vector, 100)
	for i := range vs {
		vs[i] = g.point()
	}
	if err := x.Upsert(keys[:100], vs); err != nil {
		t.Fatal(err)
	}
	x.Delete(keys[100:])
	if x.ndead != 0 {
		t.Fatal("no compaction ran: the test no longer covers it")
	}
	if err := frozen.Write(fs, "got"); err != nil {
		t.Fatal(err)
	}
	want, _ := vfs.ReadFile(fs, "want")
	got, _ := vfs.ReadFile(fs, "got")
	if !bytes.Equal(got, want) {
		t.Fatal("the frozen index changed after later writes")
	}
}

// sectionsOf returns a small valid snapshot's sections, for damaging.
func sectionsOf(t testing.TB) []indexfile.Section {
	x, _ := New(ModifierIDF)
	a, _ := Normalize([]uint32{1, 5, 9}, []float32{0.5, -1, 2})
	b, _ := Normalize([]uint32{5}, []float32{3})
	c, _ := Normalize(nil, nil)
	if err := x.Upsert([]uint64{7, 8, 9}, []Vector{a, b, c}); err != nil {
		t.Fatal(err)
	}
	sections, err := x.Freeze().Sections()
	if err != nil {
		t.Fatal(err)
	}
	for i := range sections {
		sections[i].Data = slices.Clone(sections[i].Data)
	}
	return sections
}

// TestReadRefusesSectionsThatDescribeNoIndex prevents a snapshot whose
// container is intact but whose contents are wrong (counts that disagree,
// rows out of order, a key twice, a NaN) from loading or panicking.
func TestReadRefusesSectionsThatDescribeNoIndex(t *testing.T) {
	le := func(b []byte, off int, v uint64, size int) {
		for i := range size {
			b[off+i] = byte(v >> (8 * i))
		}
	}
	for name, damage := range map[string]func(s []indexfile.Section){
		"count too large":      func(s []indexfile.Section) { le(s[0].Data, 8, 4, 8) },
		"nonzeros too large":   func(s []indexfile.Section) { le(s[0].Data, 16, 1<<40, 8) },
		"version":              func(s []indexfile.Section) { le(s[0].Data, 0, 2, 4) },
		"modifier":             func(s []indexfile.Section) { le(s[0].Data, 4, 9, 4) },
		"key twice":            func(s []indexfile.Section) { copy(s[1].Data[8:16], s[1].Data[0:8]) },
		"starts decrease":      func(s []indexfile.Section) { le(s[2].Data, 8, 4, 8) },
		"indices out of order": func(s []indexfile.Section) { le(s[3].Data, 0, 6, 4) },
		"NaN value": func(s []indexfile.Section) {
			le(s[4].Data, 4, uint64(math.Float32bits(float32(math.NaN()))), 4)
		},
		"section missing": func(s []indexfile.Section) { s[3].Tag = indexfile.FourCC("XXXX") },
		"section short":   func(s []indexfile.Section) { s[4].Data = s[4].Data[:4] },
	} {
		s := sectionsOf(t)
		damage(s)
		fs := memfs.New()
		if err := indexfile.Write(fs, "x", s); err != nil {
			t.Fatal(err)
		}
		_, err := Read(fs, "x")
		if !errors.Is(err, ErrCorrupt) || errkind.Of(err) != errkind.Corrupt {
			t.Errorf("%s: Read gave %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzReadSections damages one section of a valid snapshot and rewrites
// the container with correct checksums, so the damage reaches this
// package's validation rather than the container's CRCs. Read must fail
// or return an index that passes CheckIntegrity and searches without
// panicking; either way, without allocating more than the input implies.
func FuzzReadSections(f *testing.F) {
	f.Add(uint8(0), uint16(8), uint8(9), uint16(0))
	f.Add(uint8(2), uint16(8), uint8(0), uint16(0))
	f.Add(uint8(3), uint16(1), uint8(255), uint16(3))
	f.Add(uint8(1), uint16(0), uint8(1), uint16(0))
	f.Fuzz(func(t *testing.T, section uint8, off uint16, val uint8, cut uint16) {
		s := sectionsOf(t)
		d := &s[int(section)%len(s)]
		if len(d.Data) > 0 {
			d.Data[int(off)%len(d.Data)] ^= val
			d.Data = d.Data[:len(d.Data)-int(cut)%(len(d.Data)+1)]
		}
		fs := memfs.New()
		if err := indexfile.Write(fs, "x", s); err != nil {
			t.Fatal(err)
		}
		readFuzzed(t, fs)
	})
}

// readFuzzed reads the file "x" of fs, which must either fail as corrupt
// or give an index that passes CheckIntegrity and searches.
func readFuzzed(t *testing.T, fs vfs.FS) {
	x, err := Read(fs, "x")
	if err != nil {
		if errkind.Of(err) != errkind.Corrupt {
			t.Fatalf("error of kind %v: %v", errkind.Of(err), err)
		}
		return
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	q, _ := Normalize([]uint32{1, 3, 5, 9}, []float32{1, 1, 1, -1})
	if _, _, err := x.Search(q, 3, nil); err != nil {
		t.Fatal(err)
	}
}

// FuzzRead feeds arbitrary bytes to Read as a file: the container or this
// package must refuse them as corrupt, never panic.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	x, _ := New(ModifierNone)
	a, _ := Normalize([]uint32{3, 4}, []float32{1, 2})
	if err := x.Upsert([]uint64{1}, []Vector{a}); err != nil {
		f.Fatal(err)
	}
	p := filepath.Join(dir, "seed")
	if err := x.Freeze().Write(vfs.Default, p); err != nil {
		f.Fatal(err)
	}
	seed, _ := vfs.ReadFile(vfs.Default, p)
	f.Add(seed)
	f.Add([]byte("STRATAIX"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := memfs.New()
		w, err := fs.Create("x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		w.Close()
		readFuzzed(t, fs)
	})
}
