package hnsw

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

const (
	testDim     = 32
	testQueries = 200
	testK       = 10
)

// raceEnabled shrinks test data under the race detector, which slows the
// build loop by an order of magnitude (race_test.go: raceShrink).
const raceEnabled = racetest.Enabled

// testN is the data size of the recall tests.
var testN = map[bool]int{false: 4000, true: 1500}[raceEnabled]

func mustNew(t testing.TB, cfg Config) *Index {
	t.Helper()
	x, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// truthIDs converts KNN positions to ids (position i has id base+i).
func truthIDs(pos [][]int, base uint64) [][]uint64 {
	out := make([][]uint64, len(pos))
	for i, row := range pos {
		for _, p := range row {
			out[i] = append(out[i], base+uint64(p))
		}
	}
	return out
}

func search(t testing.TB, x *Index, queries []float32, k, ef, threads int) ([]int64, []float32) {
	t.Helper()
	nq := len(queries) / x.Dim()
	ids := make([]int64, nq*k)
	dists := make([]float32, nq*k)
	if err := x.Search(queries, k, ef, threads, ids, dists); err != nil {
		t.Fatal(err)
	}
	return ids, dists
}

func TestRecallOnClusteredData(t *testing.T) {
	racetest.AnswersOnly(t)
	data := synth.Clustered(testN, testDim, 100, 0.15, 1)
	queries := synth.Clustered(testQueries, testDim, 100, 0.15, 2)
	for _, m := range []metric.Metric{metric.L2, metric.IP, metric.Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			x := mustNew(t, Config{Dim: testDim, Metric: m, Seed: 7})
			if err := x.Add(data, nil, nil, 0); err != nil {
				t.Fatal(err)
			}
			if err := x.CheckIntegrity(); err != nil {
				t.Fatal(err)
			}
			truth := truthIDs(synth.KNN(m.String(), data, queries, testDim, testK), 0)
			ids, dists := search(t, x, queries, testK, 64, 0)
			if r := synth.Recall(ids, truth, testK); r < 0.95 {
				t.Errorf("recall@%d = %.4f, want >= 0.95", testK, r)
			}
			// Distances match a float64 reference for the ids returned.
			for i, id := range ids {
				q := queries[(i/testK)*testDim : (i/testK+1)*testDim]
				v := data[int(id)*testDim : (int(id)+1)*testDim]
				want := synth.Distance(m.String(), q, v)
				if math.Abs(float64(dists[i])-want) > 1e-4*(1+math.Abs(want)) {
					t.Fatalf("distance to id %d = %v, reference %v", id, dists[i], want)
				}
				if i%testK > 0 && dists[i] < dists[i-1] {
					t.Fatalf("row %d not sorted by distance", i/testK)
				}
			}
		})
	}
}

func TestRecallIndependentOfThreadCount(t *testing.T) {
	data := synth.Clustered(testN, testDim, 100, 0.15, 3)
	queries := synth.Clustered(testQueries, testDim, 100, 0.15, 4)
	truth := truthIDs(synth.KNN("l2", data, queries, testDim, testK), 0)
	var recalls []float64
	for _, threads := range []int{1, 4} {
		x := mustNew(t, Config{Dim: testDim, Seed: 9})
		if err := x.Add(data, nil, nil, threads); err != nil {
			t.Fatal(err)
		}
		if err := x.CheckIntegrity(); err != nil {
			t.Fatalf("threads=%d: %v", threads, err)
		}
		ids, _ := search(t, x, queries, testK, 32, 1)
		recalls = append(recalls, synth.Recall(ids, truth, testK))
	}
	if math.Abs(recalls[0]-recalls[1]) > 0.02 {
		t.Errorf("recall with 1 thread %.4f vs 4 threads %.4f differ by more than 0.02", recalls[0], recalls[1])
	}
}

func TestSearchPadsWhenFewerThanK(t *testing.T) {
	x := mustNew(t, Config{Dim: 4})
	q := []float32{0, 0, 0, 0}
	ids, dists := search(t, x, q, 3, 0, 1)
	for i := range ids {
		if ids[i] != -1 || !math.IsInf(float64(dists[i]), 1) {
			t.Fatalf("empty index: got id %d dist %v, want -1/+Inf", ids[i], dists[i])
		}
	}
	if err := x.Add([]float32{1, 0, 0, 0, 0, 1, 0, 0}, []uint64{10, 20}, nil, 1); err != nil {
		t.Fatal(err)
	}
	ids, dists = search(t, x, q, 5, 0, 1)
	if ids[0] != 10 && ids[0] != 20 || ids[2] != -1 || !math.IsInf(float64(dists[4]), 1) {
		t.Fatalf("got ids %v dists %v, want two hits then -1 padding", ids, dists)
	}
}

func TestAddRejectsBadInputWithoutChange(t *testing.T) {
	x := mustNew(t, Config{Dim: 2})
	if err := x.Add([]float32{1, 2}, []uint64{5}, nil, 1); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() error{
		"partial row":   func() error { return x.Add([]float32{1, 2, 3}, nil, nil, 1) },
		"nan":           func() error { return x.Add([]float32{1, float32(math.NaN())}, nil, nil, 1) },
		"inf":           func() error { return x.Add([]float32{float32(math.Inf(-1)), 1}, nil, nil, 1) },
		"ids length":    func() error { return x.Add([]float32{1, 2, 3, 4}, []uint64{1}, nil, 1) },
		"duplicate ids": func() error { return x.Add([]float32{1, 2, 3, 4}, []uint64{8, 8}, nil, 1) },
		"id too large":  func() error { return x.Add([]float32{1, 2}, []uint64{1 << 63}, nil, 1) },
		"k zero": func() error {
			return x.Search([]float32{1, 2}, 0, 0, 1, nil, nil)
		},
		"nan query": func() error {
			return x.Search([]float32{float32(math.NaN()), 2}, 1, 0, 1, make([]int64, 1), make([]float32, 1))
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalidArgument", name, err)
		}
	}
	if x.Len() != 1 || !x.Contains(5) {
		t.Fatalf("index changed by rejected calls: len %d", x.Len())
	}
}

func TestUpsertReplacesVector(t *testing.T) {
	x := mustNew(t, Config{Dim: 2})
	if err := x.Add([]float32{0, 0, 10, 10}, []uint64{1, 2}, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]float32{20, 20}, []uint64{1}, nil, 1); err != nil {
		t.Fatal(err)
	}
	ids, dists := search(t, x, []float32{0, 0}, 3, 0, 1)
	if x.Len() != 2 || ids[0] != 2 || ids[1] != 1 || dists[1] != 800 || ids[2] != -1 {
		t.Fatalf("after upsert: len %d ids %v dists %v", x.Len(), ids, dists)
	}
}

func TestAutoIDsContinueAfterLargestID(t *testing.T) {
	x := mustNew(t, Config{Dim: 1})
	out := make([]uint64, 2)
	if err := x.Add([]float32{1, 2}, []uint64{100, 3}, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]float32{3, 4}, nil, out, 1); err != nil {
		t.Fatal(err)
	}
	if out[0] != 101 || out[1] != 102 {
		t.Fatalf("auto ids %v, want [101 102]", out)
	}
}

// TestSearchDuringAddSeesOnlyCompleteInserts runs searches while batches are
// added and checks that every returned id belongs to a finished batch or the
// one in flight, with the distance of its real vector (no torn vectors).
func TestSearchDuringAddSeesOnlyCompleteInserts(t *testing.T) {
	batches, per := 8, 300
	if raceEnabled {
		batches, per = 4, 150
	}
	data := synth.Clustered(batches*per, testDim, 50, 0.2, 5)
	x := mustNew(t, Config{Dim: testDim, M: 8, EfConstruction: 64})
	var added atomic.Int64 // ids below this are complete
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for w := 0; w < 2; w++ {
		wg.Go(func() {
			ids := make([]int64, testK)
			dists := make([]float32, testK)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := data[(i%(batches*per))*testDim : (i%(batches*per)+1)*testDim]
				if err := x.Search(q, testK, 32, 1, ids, dists); err != nil {
					errs <- err
					return
				}
				// Whatever was returned was complete by now, so its batch
				// had at least started: at most the one in flight is ahead.
				limit := added.Load() + int64(per)
				for j, id := range ids {
					if id == -1 {
						continue
					}
					if id >= limit {
						errs <- errors.New("search returned an id whose batch had not started")
						return
					}
					want := synth.Distance("l2", q, data[id*testDim:(id+1)*testDim])
					if math.Abs(float64(dists[j])-want) > 1e-3*(1+want) {
						errs <- errors.New("search saw a partially written vector")
						return
					}
				}
			}
		})
	}
	for b := 0; b < batches; b++ {
		ids := make([]uint64, per)
		for i := range ids {
			ids[i] = uint64(b*per + i)
		}
		if err := x.Add(data[b*per*testDim:(b+1)*per*testDim], ids, nil, 2); err != nil {
			t.Fatal(err)
		}
		added.Store(int64((b + 1) * per))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []Config{{Dim: 0}, {Dim: 4, M: 1}, {Dim: 4, Metric: 9}, {Dim: 4, EfConstruction: -1}} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New(%+v): got %v, want ErrInvalidArgument", cfg, err)
		}
	}
}

// TestWorkerPanicReachesCaller guards the C ABI's promise that no panic
// kills the process: a panic on a worker goroutine must resurface on the
// goroutine that called parallel, where the ABI recovers it.
func TestWorkerPanicReachesCaller(t *testing.T) {
	x := mustNew(t, Config{Dim: 2})
	defer func() {
		if recover() == nil {
			t.Fatal("worker panic was not re-raised on the caller")
		}
	}()
	x.parallel(100, 4, func(s *searcher, i int) {
		if i == 57 {
			panic("boom")
		}
	})
}
