package idtable

import (
	"math/rand/v2"
	"testing"
)

// TestIDTableMatchesMap runs random sets and deletes of small and huge ids
// against a plain map, across dense growth and migration.
func TestIDTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tab := New()
	ref := map[uint64]uint32{}
	for step := 0; step < 200000; step++ {
		var id uint64
		switch rng.IntN(3) {
		case 0:
			id = uint64(rng.IntN(5000))
		case 1:
			id = uint64(rng.IntN(300000))
		default:
			id = rng.Uint64() >> 1
		}
		if rng.IntN(4) == 0 {
			_, want := ref[id]
			if got := tab.Del(id); got != want {
				t.Fatalf("step %d: Del(%d) = %v, want %v", step, id, got, want)
			}
			delete(ref, id)
		} else {
			node := uint32(rng.IntN(1 << 30))
			tab.Set(id, node)
			ref[id] = node
		}
		if tab.Len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, tab.Len(), len(ref))
		}
	}
	for id, node := range ref {
		if got, ok := tab.Get(id); !ok || got != node {
			t.Fatalf("Get(%d) = %d, %v; want %d", id, got, ok, node)
		}
	}
	count := 0
	tab.EachValue(func(uint32) { count++ })
	if count != len(ref) {
		t.Fatalf("EachValue visited %d, want %d", count, len(ref))
	}
}

// TestReserveFillsWithoutGrowing: Reserve before setting n ascending ids
// sizes the flat part once (no doubling copies: it ends exactly at the
// largest id), and the table then answers as one filled without it,
// including ids past the flat part's reach, which still go to the map.
func TestReserveFillsWithoutGrowing(t *testing.T) {
	const n = 100000
	plain, reserved := New(), New()
	reserved.Reserve(n-1, n)
	if len(reserved.Dense()) != n {
		t.Fatalf("reserved flat part of %d ids, want %d", len(reserved.Dense()), n)
	}
	for id := uint64(0); id < n; id++ {
		plain.Set(id, uint32(id*3))
		reserved.Set(id, uint32(id*3))
	}
	far := uint64(1) << 40
	plain.Set(far, 7)
	reserved.Set(far, 7)
	if len(reserved.Dense()) != n || reserved.SparseLen() != 1 || reserved.Len() != plain.Len() {
		t.Fatalf("flat %d, map %d, len %d (plain %d)", len(reserved.Dense()), reserved.SparseLen(), reserved.Len(), plain.Len())
	}
	for _, id := range []uint64{0, 1, n / 2, n - 1, n, far, far + 1} {
		v1, ok1 := plain.Get(id)
		v2, ok2 := reserved.Get(id)
		if ok1 != ok2 || (ok1 && v1 != v2) {
			t.Fatalf("id %d: reserved (%d, %v), plain (%d, %v)", id, v2, ok2, v1, ok1)
		}
	}
	sparse := New()
	sparse.Reserve(far, 10) // past any flat reach: nothing reserved
	if len(sparse.Dense()) != 0 {
		t.Fatalf("Reserve of a far id made a flat part of %d", len(sparse.Dense()))
	}
}
