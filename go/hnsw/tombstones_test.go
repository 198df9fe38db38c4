package hnsw

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
)

// TestTombstonesDoesNotWaitForAnAddInProgress: Tombstones reads under
// mapMu and returns while an Add is linking its nodes (it took writeMu
// and so waited behind every insert: a collection's vacuum look and Info
// behind its builder); the vectors the batch replaces count once its ids
// are published.
func TestTombstonesDoesNotWaitForAnAddInProgress(t *testing.T) {
	const per = 100
	x, data, first := firstBatch(t, per)
	if _, err := x.Remove(first[:10], false); err != nil {
		t.Fatal(err)
	}
	second := secondBatch(per, 10) // overwrites ids 10..59, adds 100..149
	if n := readDuringAdd(t, x, data, second, x.Tombstones); n != 10 {
		t.Fatalf("Tombstones during the Add = %d, want the 10 removed before it", n)
	}
	if n := x.Tombstones(); n != 10+per/2 {
		t.Fatalf("Tombstones after the Add = %d, want 10 removed + %d replaced", n, per/2)
	}
}

// TestTombstonesWhileWritingCountsWholeBatches reads Tombstones against a
// writer adding batches that overwrite earlier ids (large ones renumber
// the graph), removing ids and compacting: every count is the model's
// after some whole operation, no earlier than the last one seen. Run
// with -race.
func TestTombstonesWhileWritingCountsWholeBatches(t *testing.T) {
	rounds, per := 10, 200
	if raceEnabled {
		rounds, per = 6, 100
	}
	data := synth.Clustered(rounds*per, testDim, 20, 0.2, 4)
	x := mustNew(t, Config{Dim: testDim, M: 8, EfConstruction: 32})
	x.build.reorderMinNodes = per // a batch of half the graph renumbers it
	type step struct {
		add, remove []uint64
		compact     bool
	}
	// counts[j] is the tombstone count after j steps.
	var steps []step
	counts := []int{0}
	live := []uint64{}
	dead := 0
	for r := range rounds {
		var ids []uint64
		if r >= 1 {
			ids = append(ids, live[:per/4]...) // overwrites: tombstones
		}
		dead += len(ids)
		for i := range per - len(ids) {
			ids = append(ids, uint64(r*per+i))
		}
		live = append(slices.DeleteFunc(live, func(id uint64) bool { return slices.Contains(ids, id) }), ids...)
		steps = append(steps, step{add: ids})
		counts = append(counts, dead)
		removed := slices.Clone(live[len(live)-per/10:])
		live = live[:len(live)-per/10]
		dead += len(removed)
		steps = append(steps, step{remove: removed})
		counts = append(counts, dead)
		if r%3 == 2 {
			dead = 0
			steps = append(steps, step{compact: true})
			counts = append(counts, dead)
		}
	}
	seen := 0 // steps done by the last count
	stop := checkWhile(t, func() error {
		n := x.Tombstones()
		j := slices.Index(counts[seen:], n)
		if j < 0 {
			return fmt.Errorf("Tombstones = %d, not the count after %d or more steps (%v)", n, seen, counts[seen:])
		}
		seen += j
		return nil
	})
	for si, st := range steps {
		var err error
		switch {
		case st.add != nil:
			vecs := make([]float32, 0, len(st.add)*testDim)
			for i := range st.add {
				r := (si*per + i) % (rounds * per)
				vecs = append(vecs, data[r*testDim:(r+1)*testDim]...)
			}
			err = x.Add(vecs, st.add, nil, 2)
		case st.remove != nil:
			_, err = x.Remove(st.remove, false)
		default:
			err = x.Compact(2)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if n := x.Tombstones(); n != counts[len(counts)-1] {
		t.Fatalf("Tombstones after the writes = %d, model %d", n, counts[len(counts)-1])
	}
}
