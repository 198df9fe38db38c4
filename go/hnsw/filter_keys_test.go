package hnsw

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// TestSortedFilterCompilesAsLookups prevents the sorted allow list's
// intersection with an index's key table (filter_keys.go) from allowing
// other nodes than looking up each id does: ids in the dense table and in
// the sparse map, duplicates, ids the index lacks, after removals (the
// table's tombstones), upserts and new ids (a stale table), and a deny
// list on top.
func TestSortedFilterCompilesAsLookups(t *testing.T) {
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
