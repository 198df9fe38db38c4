package hnsw

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/metric"
)

// seededPair is two indexes over different keys of one data set (keys
// below n/2 in a, the rest in b), with tombstones in b.
func seededPair(t *testing.T, m metric.Metric, dim, n int, rng *rand.Rand) (a, b *Index, data []float32) {
	t.Helper()
	data = make([]float32, n*dim)
	for i := range data {
		data[i] = rng.Float32()
	}
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)
	}
	a = mustNew(t, Config{Dim: dim, Metric: m, M: 8, Seed: 3, Keys: true})
	b = mustNew(t, Config{Dim: dim, Metric: m, M: 8, Seed: 4, Keys: true})
	if err := a.Add(data[:n/2*dim], keys[:n/2], nil, 2); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(data[n/2*dim:], keys[n/2:], nil, 2); err != nil {
		t.Fatal(err)
	}
	var gone []uint64
	for key := uint64(n / 2); key < uint64(n); key += 5 {
		gone = append(gone, key)
	}
	if _, err := b.Remove(gone, false); err != nil {
		t.Fatal(err)
	}
	return a, b, data
}

// TestSearchSeededWithNothingKnownIsSearchFiltered: rows of +Inf bound
// nothing, so a seeded search answers exactly as SearchFiltered, with
// the same work, and leaves in each row its candidates' distances.
func TestSearchSeededWithNothingKnownIsSearchFiltered(t *testing.T) {
	const dim, n, k = 8, 2000, 10
	rng := rand.New(rand.NewPCG(7, 8))
	_, b, _ := seededPair(t, metric.L2, dim, n, rng)
	for _, ef := range []int{10, 40, 200, 600} {
		q := make([]float32, 3*dim)
		for i := range q {
			q[i] = rng.Float32()
		}
		ids, dists := make([]int64, 3*k), make([]float32, 3*k)
		st, err := b.SearchFiltered(q, k, ef, 1, nil, ids, dists)
		if err != nil {
			t.Fatal(err)
		}
		seen := slices.Repeat([]float32{float32(math.Inf(1))}, 3*ef)
		sids, sdists := make([]int64, 3*k), make([]float32, 3*k)
		sst, err := b.SearchSeeded(q, k, ef, 1, nil, seen, sids, sdists)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, sids) || !slices.Equal(dists, sdists) || st != sst {
			t.Fatalf("ef %d: seeded %v %v %+v, filtered %v %v %+v", ef, sids, sdists, sst, ids, dists, st)
		}
		for qi := range 3 {
			row := seen[qi*ef : (qi+1)*ef]
			if !slices.IsSorted(row) || !slices.Equal(row[:k], dists[qi*k:(qi+1)*k]) {
				t.Fatalf("ef %d query %d: row %v, results %v", ef, qi, row[:k], dists[qi*k:(qi+1)*k])
			}
		}
	}
}

// TestSeededListMatchesHeaps: seeded with what another index found, the
// list search and the heaps expand the same nodes (same answers, same
// distance counts, same rows after), return only their own live keys
// at their exact distances, and compute fewer distances than unseeded.
func TestSeededListMatchesHeaps(t *testing.T) {
	const dim, n, k = 12, 4000, 10
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		a, b, data := seededPair(t, m, dim, n, rng)
		var seededWork, aloneWork int64
		for _, ef := range []int{10, 40, 200} {
			for qi := 0; qi < 30; qi++ {
				q := make([]float32, dim)
				for i := range q {
					q[i] = rng.Float32()
				}
				found := slices.Repeat([]float32{float32(math.Inf(1))}, ef)
				ids, dists := make([]int64, k), make([]float32, k)
				if _, err := a.SearchSeeded(q, k, ef, 1, nil, found, ids, dists); err != nil {
					t.Fatal(err)
				}
				var got [2][]int64
				var rows [2][]float32
				var work [2]int64
				for side := range 2 {
					b.testing.heapsOnly = side == 0
					rows[side] = slices.Clone(found)
					got[side] = make([]int64, k)
					bd := make([]float32, k)
					st, err := b.SearchSeeded(q, k, ef, 1, nil, rows[side], got[side], bd)
					if err != nil {
						t.Fatal(err)
					}
					work[side] = st.DistanceComputations
					for i, key := range got[side] {
						if key < 0 {
							continue
						}
						if key < n/2 || (key-n/2)%5 == 0 {
							t.Fatalf("%v ef %d: b returned key %d, not one of its live keys", m, ef, key)
						}
						qn, row := slices.Clone(q), slices.Clone(data[key*dim:(key+1)*dim])
						if m.NeedsNormalize() {
							metric.Normalize(qn)
							metric.Normalize(row)
						}
						if want := m.Distance(qn, row); math.Abs(float64(bd[i]-want)) > 1e-5 {
							t.Fatalf("%v ef %d: key %d at %v, its distance is %v", m, ef, key, bd[i], want)
						}
					}
					if !slices.IsSorted(rows[side]) {
						t.Fatalf("%v ef %d: row not ascending: %v", m, ef, rows[side])
					}
				}
				b.testing.heapsOnly = false
				if !slices.Equal(got[0], got[1]) || work[0] != work[1] || !slices.Equal(rows[0], rows[1]) {
					t.Fatalf("%v ef=%d query %d: heaps %v (%d distances), list %v (%d)", m, ef, qi, got[0], work[0], got[1], work[1])
				}
				st, err := b.SearchFiltered(q, k, ef, 1, nil, make([]int64, k), make([]float32, k))
				if err != nil {
					t.Fatal(err)
				}
				seededWork += work[1]
				aloneWork += st.DistanceComputations
			}
		}
		if seededWork >= aloneWork {
			t.Fatalf("%v: seeded searches computed %d distances, unseeded %d", m, seededWork, aloneWork)
		}
	}
}

// TestSearchSeededRejectsRowsThatDoNotFit: seen must hold a positive
// multiple of the queries (none for no queries).
func TestSearchSeededRejectsRowsThatDoNotFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	_, b, _ := seededPair(t, metric.L2, 4, 100, rng)
	q := make([]float32, 2*4)
	for _, seen := range [][]float32{nil, make([]float32, 3)} {
		if _, err := b.SearchSeeded(q, 1, 10, 1, nil, seen, make([]int64, 2), make([]float32, 2)); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("seen of %d: %v, want ErrInvalidArgument", len(seen), err)
		}
	}
	if _, err := b.SearchSeeded(nil, 1, 10, 1, nil, nil, nil, nil); err != nil {
		t.Fatalf("no queries: %v", err)
	}
}
