package hnsw

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// rewriteLinks saves x, applies edit to its level-0 links (count·(1+2M)
// words: a count, then the slots), and writes the file again with good
// CRCs, so that only the structure checks can find the damage.
func rewriteLinks(t *testing.T, x *Index, edit func(level0 []uint32, stride int)) string {
	t.Helper()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.idx"), filepath.Join(dir, "bad.idx")
	if err := x.Save(vfs.Default, src); err != nil {
		t.Fatal(err)
	}
	f, err := indexfile.Read(vfs.Default, src, indexfile.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sections []indexfile.Section
	for _, tag := range f.Tags() {
		b, _ := f.Section(tag)
		b = append([]byte(nil), b...)
		if tag == tagLevel0 {
			words := make([]uint32, len(b)/4)
			for i := range words {
				words[i] = binary.LittleEndian.Uint32(b[4*i:])
			}
			edit(words, 1+2*x.cfg.M)
			for i, w := range words {
				binary.LittleEndian.PutUint32(b[4*i:], w)
			}
		}
		sections = append(sections, indexfile.Section{Tag: tag, Data: b})
	}
	if err := indexfile.Write(vfs.Default, dst, sections); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestDeferredLoadRefusesLinksOutOfBounds: a level-0 link to a node past
// the end, or a count above the list's capacity, in a file whose CRCs
// pass fails Load in every mode, DeferCRC included, so no search can
// follow it (searches index vectors and codes without bounds checks).
func TestDeferredLoadRefusesLinksOutOfBounds(t *testing.T) {
	x, _ := builtIndex(t, persistConfigs["codes"])
	n := uint32(x.graph.Load().count)
	for name, edit := range map[string]func([]uint32, int){
		"link past the last node": func(l0 []uint32, stride int) { l0[5*stride+int(l0[5*stride])] = n },
		"link far out":            func(l0 []uint32, stride int) { l0[(int(n)-1)*stride+1] = 1 << 31 },
		"count over capacity":     func(l0 []uint32, stride int) { l0[7*stride] = uint32(stride) },
	} {
		bad := rewriteLinks(t, x, edit)
		for _, lo := range loadModes {
			y, err := Load(vfs.Default, bad, lo)
			if err == nil {
				y.Close()
				t.Fatalf("%s, %+v: loaded", name, lo)
			}
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "node") {
				t.Fatalf("%s, %+v: %v does not wrap ErrFormat or name the node", name, lo, err)
			}
		}
	}
}

// TestDeferredLoadLeavesLinkSetsToVerify: a duplicate or a self link (in
// bounds) fails Load without DeferCRC; with it, Load succeeds, searches
// answer, Verify fails with ErrCorrupt, and an Add before Verify runs the
// check itself and fails instead of inserting into the damaged graph.
func TestDeferredLoadLeavesLinkSetsToVerify(t *testing.T) {
	x, data := builtIndex(t, persistConfigs["float"])
	dim := x.cfg.Dim
	for name, edit := range map[string]func([]uint32, int){
		"duplicate link": func(l0 []uint32, stride int) {
			row := l0[9*stride:]
			row[2] = row[1]
		},
		"self link": func(l0 []uint32, stride int) { l0[11*stride+1] = 11 },
	} {
		bad := rewriteLinks(t, x, edit)
		if y, err := Load(vfs.Default, bad, LoadOptions{}); err == nil {
			y.Close()
			t.Fatalf("%s: loaded without DeferCRC", name)
		}
		for _, add := range []bool{false, true} {
			y, err := Load(vfs.Default, bad, LoadOptions{DeferCRC: true})
			if err != nil {
				t.Fatalf("%s: DeferCRC load: %v", name, err)
			}
			if y.Unverified() == 0 {
				t.Fatalf("%s: nothing left to verify", name)
			}
			ids, dists := make([]int64, 5), make([]float32, 5)
			if err := y.Search(data[:dim], 5, 32, 1, ids, dists); err != nil {
				t.Fatalf("%s: search: %v", name, err)
			}
			if add {
				err = y.Add(data[:dim], []uint64{1 << 30}, nil, 1)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: Add before Verify: %v, want ErrCorrupt", name, err)
				}
				if y.Len() != x.Len() {
					t.Fatalf("%s: Add changed the index (%d, want %d)", name, y.Len(), x.Len())
				}
			}
			err = y.Verify(nil)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "node") {
				t.Fatalf("%s: Verify: %v, want ErrCorrupt naming the node", name, err)
			}
			if y.Unverified() != 0 {
				t.Fatalf("%s: %d bytes unverified after Verify", name, y.Unverified())
			}
			y.Close()
		}
	}
}

// TestDeferredCheckPausesAndResumes: Verify stopped by its pause leaves
// the deferred check pending, and a later Verify finishes it; Close
// during a paused check makes Verify return errClosed, not a false
// verdict.
func TestDeferredCheckPausesAndResumes(t *testing.T) {
	x, _ := builtIndex(t, persistConfigs["float"])
	dir := t.TempDir()
	p := filepath.Join(dir, "a.idx")
	if err := x.Save(vfs.Default, p); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.Default, p, LoadOptions{DeferCRC: true})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := y.Verify(func() error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("Verify with a stopping pause: %v", err)
	}
	if !y.deferred.pending.Load() {
		t.Fatal("a stopped Verify left no check pending")
	}
	if err := y.Verify(nil); err != nil {
		t.Fatal(err)
	}
	if y.Unverified() != 0 {
		t.Fatalf("%d bytes unverified", y.Unverified())
	}
	y.Close()

	z, err := Load(vfs.Default, p, LoadOptions{DeferCRC: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := z.Verify(func() error {
		if z.file != nil && z.deferred.pending.Load() && z.file.Pending() == 0 {
			// The structure pass, between two pieces: closeMu is not
			// held, so Close does not wait for the check.
			if err := z.Close(); err != nil {
				t.Error(err)
			}
		}
		return nil
	}); !errors.Is(err, errClosed) {
		t.Fatalf("Verify across Close: %v, want errClosed", err)
	}
}

// TestMaxLinkMatchesLoop holds maxLink to the plain loop over every
// length up to a level-0 list's and beyond.
func TestMaxLinkMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for n := range 70 {
		for range 50 {
			links := make([]uint32, n)
			for i := range links {
				links[i] = rng.Uint32() >> rng.IntN(32)
			}
			var want uint32
			for _, l := range links {
				want = max(want, l)
			}
			if got := maxLink(links); got != want {
				t.Fatalf("n %d: maxLink %d, want %d", n, got, want)
			}
		}
	}
}

// BenchmarkLoadDeferred measures Load with DeferCRC of a 100k-node graph
// (what a collection's Open does per segment).
func BenchmarkLoadDeferred(b *testing.B) {
	const n, dim = 100000, 8
	x, err := New(Config{Dim: dim, Metric: metric.L2, M: 16, EfConstruction: 16, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = rng.Float32()
	}
	if err := x.Add(data, nil, nil, 0); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "x.idx")
	if err := x.Save(vfs.Default, p); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		y, err := Load(vfs.Default, p, LoadOptions{DeferCRC: true, Keys: true})
		if err != nil {
			b.Fatal(err)
		}
		y.Close()
	}
}
