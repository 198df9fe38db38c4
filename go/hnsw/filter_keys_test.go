package hnsw

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// TestSortedFilterCompilesAsLookups prevents the sorted allow list's
// intersection with an index's key table (filter_keys.go) from allowing
// other nodes than looking up each id does: ids in the dense table and in
// the sparse map, duplicates, ids the index lacks, after removals (the
// table's tombstones), upserts and new ids (a stale table), and a deny
// list on top; with sparse ids scattered (galloped through) and in one
// run (the table's window).
func TestSortedFilterCompilesAsLookups(t *testing.T) {
	racetest.AnswersOnly(t)
	t.Run("scattered", func(t *testing.T) { testSortedFilterCompilesAsLookups(t, false) })
	t.Run("run", func(t *testing.T) { testSortedFilterCompilesAsLookups(t, true) })
}

func testSortedFilterCompilesAsLookups(t *testing.T, run bool) {
	const dim, n = 8, 3000
	rng := rand.New(rand.NewPCG(4, 4))
	data := synth.Clustered(2*n, dim, 10, 0.3, 4)
	x := mustNew(t, Config{Dim: dim, Metric: metric.L2, Seed: 1})
	ids := make([]uint64, n)
	for i := range ids {
		if i%2 == 0 {
			ids[i] = uint64(i) // dense
		} else {
			ids[i] = 1<<40 + uint64(rng.IntN(1<<30)) // sparse
			if run {
				ids[i] = 1<<40 + uint64(i)
			}
		}
	}
	if err := x.Add(data[:n*dim], ids, nil, 1); err != nil {
		t.Fatal(err)
	}
	allowList := func() []uint64 {
		var out []uint64
		for _, id := range ids {
			if rng.IntN(4) == 0 {
				out = append(out, id, id) // duplicates
			}
		}
		for range 50 {
			out = append(out, uint64(rng.IntN(1<<20)), 1<<40+uint64(rng.IntN(1<<30))) // mostly absent
		}
		slices.Sort(out)
		return out
	}
	check := func(stage string, deny []uint64) {
		t.Helper()
		allow := allowList()
		_, want, _, wantSel, _ := x.compileFilter(&Filter{Allow: allow, Deny: deny})
		for range 2 { // the second builds the table if the first found the ids quiet
			_, got, _, gotSel, _ := x.compileFilter(&Filter{Allow: allow, Deny: deny, Sorted: true})
			if !slices.Equal(got, want) || gotSel != wantSel {
				t.Fatalf("%s: sorted compilation allows %d nodes, lookups %d (bitsets equal: %v)", stage, gotSel, wantSel, slices.Equal(got, want))
			}
		}
		if x.keys.Load() == nil {
			t.Fatalf("%s: no key table built for a quiet index", stage)
		}
		if stage == "built" && (x.keys.Load().window != nil) != run {
			t.Fatalf("%s: window %v for sparse ids in a run %v", stage, x.keys.Load().window != nil, run)
		}
	}
	check("built", nil)
	if _, err := x.Remove(ids[:300], false); err != nil {
		t.Fatal(err)
	}
	check("after removals", nil)
	if err := x.Add(data[n*dim:(n+200)*dim], ids[300:500], nil, 1); err != nil { // upserts
		t.Fatal(err)
	}
	check("after upserts", nil)
	fresh := make([]uint64, 200)
	for i := range fresh {
		fresh[i] = 1<<41 + uint64(i)
	}
	ids = append(ids, fresh...)
	if err := x.Add(data[(n+200)*dim:(n+400)*dim], fresh, nil, 1); err != nil {
		t.Fatal(err)
	}
	check("after new ids", ids[1000:1100])
}

// TestSealedIndexKeyTableIsCurrentWithoutWaiting prevents a sealed
// index (SealKeys: a segment that takes only removals) from looking up a
// sorted allow list id by id until the ids have stayed quiet between two
// filtered searches: its table is current from the seal on, stays so
// across removals (tombstones do not change keys), is rebuilt by a
// renumbering, and allows the nodes that looking up each id allows.
func TestSealedIndexKeyTableIsCurrentWithoutWaiting(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, n = 8, 3000
	rng := rand.New(rand.NewPCG(5, 5))
	data := synth.Clustered(n, dim, 10, 0.3, 5)
	x := mustNew(t, Config{Dim: dim, Metric: metric.L2, Seed: 1})
	x.build.reorderMinNodes = -1 // renumbered below, on purpose
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
		if i%3 == 0 {
			ids[i] = 1<<40 + uint64(i) // sparse
		}
	}
	if err := x.Add(data, ids, nil, 1); err != nil {
		t.Fatal(err)
	}
	if x.SortedKeysCurrent() {
		t.Fatal("a key table before any seal or filtered search")
	}
	x.SealKeys()
	if x.keys.Load().window == nil {
		t.Fatal("sparse ids in a run of thrice their count are not in a window")
	}
	check := func(stage string) {
		t.Helper()
		if !x.SortedKeysCurrent() {
			t.Fatalf("%s: the sealed index's key table is not current", stage)
		}
		var allow []uint64
		for _, id := range ids {
			if rng.IntN(5) == 0 {
				allow = append(allow, id)
			}
		}
		slices.Sort(allow)
		_, want, _, wantSel, _ := x.compileFilter(&Filter{Allow: allow})
		_, got, _, gotSel, _ := x.compileFilter(&Filter{Allow: allow, Sorted: true})
		if !slices.Equal(got, want) || gotSel != wantSel {
			t.Fatalf("%s: sorted compilation allows %d nodes, lookups %d", stage, gotSel, wantSel)
		}
	}
	check("sealed")
	if _, err := x.Remove(ids[:500], false); err != nil {
		t.Fatal(err)
	}
	check("after removals")
	x.build.reorderMinNodes = 1
	if ok, err := x.Renumber(0); err != nil || !ok {
		t.Fatalf("Renumber = %v, %v", ok, err)
	}
	check("after a renumbering")
}

// BenchmarkSortedFilterCompile measures compiling a sorted 10 % allow
// list into a sealed index's bitset for the layouts of its ids: dense
// (0..n-1, the dense table), a run past the dense table's reach (a later
// segment of a collection: the key table's window) and scattered (the
// galloping intersection).
func BenchmarkSortedFilterCompile(b *testing.B) {
	const dim, n = 4, 20000
	data := synth.Clustered(n, dim, 10, 0.3, 6)
	for _, layout := range []string{"dense", "run", "scattered"} {
		rng := rand.New(rand.NewPCG(6, 6))
		ids := make([]uint64, n)
		for i := range ids {
			switch layout {
			case "dense":
				ids[i] = uint64(i)
			case "run":
				ids[i] = 1<<30 + uint64(i)
			default:
				ids[i] = 1<<40 + uint64(i)<<20 + uint64(rng.IntN(1<<20))
			}
		}
		x := mustNew(b, Config{Dim: dim, Metric: metric.L2, Seed: 1, M: 8, EfConstruction: 32})
		if err := x.Add(data, ids, nil, 0); err != nil {
			b.Fatal(err)
		}
		x.SealKeys()
		var allow []uint64
		for _, id := range ids {
			if rng.IntN(10) == 0 {
				allow = append(allow, id)
			}
		}
		f := &Filter{Allow: allow, Sorted: true}
		b.Run(layout, func(b *testing.B) {
			// CPU time, steadier than wall time on a loaded machine.
			cpu := cpuNanos()
			for range b.N {
				x.compileFilter(f)
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N*len(allow)), "cpu-ns/allowed")
		})
	}
}

// cpuNanos is this process's user and system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
