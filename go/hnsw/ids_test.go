package hnsw

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/synth"
)

// TestIDsDoesNotWaitForAnAddInProgress: IDs reads the published id map
// and returns while an Add is linking its nodes (it took writeMu and so
// waited behind every insert, a collection's has_vector filter and
// DistancesTo behind its builder); it lists the ids before the batch,
// the ids the batch overwrites once each.
func TestIDsDoesNotWaitForAnAddInProgress(t *testing.T) {
	const per = 100
	data := synth.Clustered(2*per, testDim, 10, 0.2, 3)
	x := mustNew(t, Config{Dim: testDim, M: 8, EfConstruction: 32})
	first := make([]uint64, per)
	for i := range first {
		first[i] = uint64(i)
	}
	if err := x.Add(data[:per*testDim], first, nil, 1); err != nil {
		t.Fatal(err)
	}
	// The second batch overwrites ids 0..49 and adds 100..149.
	second := make([]uint64, per)
	for i := range second {
		second[i] = uint64(i)
		if i >= per/2 {
			second[i] = uint64(per + i - per/2)
		}
	}
	type listed struct {
		ids []uint64
		err error
	}
	got := make(chan listed, 1)
	x.build.addPlaced = func() {
		go func() {
			ids, err := x.IDs()
			got <- listed{ids, err}
		}()
		// A watchdog, not a speed bound: before IDs stopped taking
		// writeMu this waited for ever (the Add holds it).
		select {
		case l := <-got:
			got <- l
		case <-time.After(2 * time.Minute):
			got <- listed{err: fmt.Errorf("IDs waited for the Add in progress")}
		}
	}
	if err := x.Add(data[per*testDim:], second, nil, 1); err != nil {
		t.Fatal(err)
	}
	l := <-got
	if l.err != nil {
		t.Fatal(l.err)
	}
	if !slices.Equal(l.ids, first) {
		t.Fatalf("IDs during the Add listed %d ids %v..., want the first batch's %d in order", len(l.ids),
			l.ids[:min(5, len(l.ids))], per)
	}
	x.build.addPlaced = nil
	ids, err := x.IDs()
	if err != nil {
		t.Fatal(err)
	}
	// Insertion order: the ids the second batch did not touch, then its own.
	want := append(slices.Clone(first[per/2:]), second...)
	if !slices.Equal(ids, want) {
		t.Fatalf("IDs after the Add = %v..., want %v...", ids[:5], want[:5])
	}
}

// TestIDsWhileAddingListsWholeBatches runs IDs against a writer adding
// batches (overwrites of earlier ids, and large batches that renumber
// the graph): every list is the ids of the batches published so far,
// each once, in insertion order as a model keeps it. Run with -race.
func TestIDsWhileAddingListsWholeBatches(t *testing.T) {
	batches, per := 12, 200
	if raceEnabled {
		batches, per = 8, 100
	}
	data := synth.Clustered(batches*per, testDim, 20, 0.2, 4)
	x := mustNew(t, Config{Dim: testDim, M: 8, EfConstruction: 32})
	x.build.reorderMinNodes = per // a batch of half the graph renumbers it
	// orders[j] is the insertion order after j batches.
	orders := [][]uint64{{}}
	batchIDs := make([][]uint64, batches)
	for b := range batches {
		prev := orders[b]
		// New ids b*per.., and (from the third batch on) an overwrite of
		// the oldest quarter of the live ids.
		var ids []uint64
		if b >= 2 {
			ids = append(ids, prev[:per/4]...)
		}
		for i := range per - len(ids) {
			ids = append(ids, uint64(b*per+i))
		}
		batchIDs[b] = ids
		next := slices.DeleteFunc(slices.Clone(prev), func(id uint64) bool { return slices.Contains(ids, id) })
		orders = append(orders, append(next, ids...))
	}
	stop := make(chan struct{})
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		seen := 0 // batches whole in the last list
		for {
			select {
			case <-stop:
				return
			default:
			}
			ids, err := x.IDs()
			if err != nil {
				errs <- err
				return
			}
			j := slices.IndexFunc(orders[seen:], func(o []uint64) bool { return slices.Equal(o, ids) })
			if j < 0 {
				errs <- fmt.Errorf("IDs listed %d ids (%v...), not the insertion order after %d or more batches",
					len(ids), ids[:min(5, len(ids))], seen)
				return
			}
			seen += j
		}
	})
	for b, ids := range batchIDs {
		vecs := make([]float32, 0, len(ids)*testDim)
		for i := range ids {
			r := (b*per + i) % (batches * per)
			vecs = append(vecs, data[r*testDim:(r+1)*testDim]...)
		}
		if err := x.Add(vecs, ids, nil, 2); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if ids, _ := x.IDs(); !slices.Equal(ids, orders[batches]) {
		t.Fatalf("IDs after the writes differ from the model's insertion order")
	}
}
