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
