package collection

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection/text"
)

// TestReadsHideExpiredPointsWithoutListingEveryPoint: sparse, text and
// hybrid reads hide a point waiting for the reaper as the dense search
// does (asking the index for one result more and dropping it), not by
// building the list of every other point: they allocated that list (and
// the index its bitset) on every read, O(points) for one expired point.
func TestReadsHideExpiredPointsWithoutListingEveryPoint(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: allocations are not the code's")
	}
	c, clock := expiringCollection(t, t.TempDir())
	const n = 5000
	upsertExpiringEach(t, c, n, func(i int) float64 {
		if i == 3 {
			return 10 // one point expires
		}
		return math.NaN()
	})
	c.waitIndexed()
	reads := map[string]func() []ID{
		"sparse": func() []ID {
			hits, err := c.QuerySparse("kw", []uint32{1}, []float32{1}, 10, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]ID, len(hits))
			for i, h := range hits {
				out[i] = h.ID
			}
			return out
		},
		"text": func() []ID {
			hits, err := c.QueryText(nil, TextQuery{Text: "cache"}, 10, 0, nil, 1, text.Fusion{})
			if err != nil {
				t.Fatal(err)
			}
			return hitIDs(hits)
		},
		"hybrid": func() []ID {
			hits, err := c.QueryText([]float32{3, 0}, TextQuery{Text: "cache"}, 10, 0, nil, 1, text.Fusion{})
			if err != nil {
				t.Fatal(err)
			}
			return hitIDs(hits)
		},
	}
	// Bytes allocated per read (TotalAlloc counts every allocation,
	// whenever the GC runs).
	perRead := func(read func() []ID) (uint64, []ID) {
		const rounds = 20
		var got []ID
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range rounds {
			got = read()
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / rounds, got
	}
	live := map[string]uint64{}
	for name, read := range reads {
		read() // what the first read builds once
		live[name], _ = perRead(read)
	}
	clock.advance(10 * time.Second)
	for name, read := range reads {
		bytes, got := perRead(read)
		if len(got) != 10 {
			t.Fatalf("%s: %d hits, want 10", name, len(got))
		}
		for _, id := range got {
			if id == IntID(3) {
				t.Fatalf("%s returned the expired point", name)
			}
		}
		// A list of every point is 8 bytes a point.
		if bytes > live[name]+2*n {
			t.Errorf("%s allocates %d bytes a read with one point expired, %d with none: O(points)", name, bytes, live[name])
		}
		t.Logf("%s: %d bytes a read, %d before the expiry", name, bytes, live[name])
	}
}

// TestManyExpiredPointsAreHiddenFromEveryRead: past maxHiddenExtra
// expired points, indexes that take an allow list get the list of the
// points not expired (and the dense search a deny list): every kind of
// read still hides all of them.
func TestManyExpiredPointsAreHiddenFromEveryRead(t *testing.T) {
	c, clock := expiringCollection(t, t.TempDir())
	const n = 2*maxHiddenExtra + 100 // the odd ones expire: more than maxHiddenExtra
	upsertExpiring(t, c, n, 10)
	checkVisible(t, c, n, upTo(n))
	clock.advance(10 * time.Second)
	checkVisible(t, c, n, evens(n))
	c.waitBuilt()
	checkVisible(t, c, n, evens(n))
}

// hitIDs is the ids of text or hybrid hits, in their order.
func hitIDs(hits []Hit) []ID {
	out := make([]ID, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}
