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
	x, data, first := firstBatch(t, per)
	second := secondBatch(per, 0) // overwrites ids 0..49, adds 100..149
	type listed struct {
		ids []uint64
		err error
	}
	l := readDuringAdd(t, x, data, second, func() listed {
		ids, err := x.IDs()
		return listed{ids, err}
	})
	if l.err != nil {
		t.Fatal(l.err)
	}
	if !slices.Equal(l.ids, first) {
		t.Fatalf("IDs during the Add listed %d ids %v..., want the first batch's %d in order", len(l.ids),
			l.ids[:min(5, len(l.ids))], per)
	}
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

// firstBatch returns an index holding ids 0..per-1, their ids, and the
// vectors of a second batch of per.
func firstBatch(t *testing.T, per int) (*Index, []float32, []uint64) {
	t.Helper()
	data := synth.Clustered(2*per, testDim, 10, 0.2, 3)
	x := mustNew(t, Config{Dim: testDim, M: 8, EfConstruction: 32})
	first := make([]uint64, per)
	for i := range first {
		first[i] = uint64(i)
	}
	if err := x.Add(data[:per*testDim], first, nil, 1); err != nil {
		t.Fatal(err)
	}
	return x, data[per*testDim:], first
}

// secondBatch is the ids of a batch of per after firstBatch: it
// overwrites per/2 of them from overwrite on and adds per/2 new ids.
func secondBatch(per, overwrite int) []uint64 {
	ids := make([]uint64, per)
	for i := range ids {
		ids[i] = uint64(overwrite + i)
		if i >= per/2 {
			ids[i] = uint64(per + i - per/2)
		}
	}
	return ids
}

// readDuringAdd adds vectors as ids to x and, while the Add is in
// progress (its nodes placed, not linked, writeMu held), runs read in
// another goroutine and returns what it read. It fails the test if read
// waited for the Add: a watchdog of two minutes, not a speed bound.
func readDuringAdd[T any](t *testing.T, x *Index, vectors []float32, ids []uint64, read func() T) T {
	t.Helper()
	got := make(chan T, 1)
	waited := false
	x.build.addPlaced = func() {
		go func() { got <- read() }()
		select {
		case v := <-got:
			got <- v
		case <-time.After(2 * time.Minute):
			waited = true
		}
	}
	defer func() { x.build.addPlaced = nil }()
	if err := x.Add(vectors, ids, nil, 1); err != nil {
		t.Fatal(err)
	}
	if waited {
		t.Fatal("the read waited for the Add in progress")
	}
	return <-got
}

// checkWhile runs check over and over in another goroutine until the
// returned stop is called; stop fails the test with check's first error.
func checkWhile(t *testing.T, check func() error) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := check(); err != nil {
				errs <- err
				return
			}
		}
	})
	return func() {
		t.Helper()
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
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
	seen := 0 // batches whole in the last list
	stop := checkWhile(t, func() error {
		ids, err := x.IDs()
		if err != nil {
			return err
		}
		j := slices.IndexFunc(orders[seen:], func(o []uint64) bool { return slices.Equal(o, ids) })
		if j < 0 {
			return fmt.Errorf("IDs listed %d ids (%v...), not the insertion order after %d or more batches",
				len(ids), ids[:min(5, len(ids))], seen)
		}
		seen += j
		return nil
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
	stop()
	if ids, _ := x.IDs(); !slices.Equal(ids, orders[batches]) {
		t.Fatalf("IDs after the writes differ from the model's insertion order")
	}
}
