package collection

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
)

// TestQueryAmongReturnsOnlyListedIDs guards the id restriction of
// QueryAmong: alone, combined with a filter (intersection, not union), with
// ids that do not exist, and empty (nothing allowed).
func TestQueryAmongReturnsOnlyListedIDs(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	vecs := randomVectors(rng, 60)
	ids := make([]uint64, 60)
	docs := make([][]byte, 60)
	for i := range ids {
		ids[i] = uint64(i)
		docs[i] = []byte(`{"even":` + map[bool]string{true: "true", false: "false"}[i%2 == 0] + `}`)
	}
	if err := c.Upsert(IntIDs(ids), vecs, docsOf(t, docs)); err != nil {
		t.Fatal(err)
	}
	even, err := meta.ParseFilter([]byte(`{"even":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		f     *meta.Filter
		among []uint64
		want  []int64
	}{
		{"ids alone", nil, []uint64{41, 7, 9999, 12}, []int64{7, 12, 41}},
		{"ids and filter", even, []uint64{41, 7, 12, 30}, []int64{12, 30}},
		{"empty list", nil, []uint64{}, nil},
		{"disjoint", even, []uint64{1, 3}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, dists := make([]ID, 10), make([]float32, 10)
			if _, err := c.QueryAmong(vecs[:testDim], 10, 0, tc.f, IntIDs(tc.among), 1, out, dists); err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, id := range intsOf(out) {
				if id >= 0 {
					got = append(got, id)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
