package collection

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// fakeClock is a Tuning.Clock tests move by hand.
type fakeClock struct{ nanos atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.nanos.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.nanos.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.nanos.Add(int64(d)) }
func (c *fakeClock) seconds() float64        { return float64(c.nanos.Load()) / 1e9 }

func expiryTuning(clock *fakeClock) Tuning {
	return Tuning{Clock: clock.now, ReapInterval: -1}
}

// expiringOptions has every kind of read an expired point must vanish
// from: a dense field "", a sparse field and a text index.
func expiringOptions() Options {
	return Options{Vectors: []VectorField{{Name: "", Dim: 2, Metric: metric.L2}},
		Sparse: []SparseField{{Name: "kw"}}, TextFields: []string{"body"}}
}

// expiringCollection creates a collection of expiringOptions in dir
// whose clock the test moves (and no background reaper), closed when the
// test ends.
func expiringCollection(t *testing.T, dir string) (*Collection, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	c, err := Create(dir, expiringOptions(), expiryTuning(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, clock
}

// upsertExpiring writes points 0..n-1 (upsertExpiringEach), the odd ones
// with a ttl of ttl seconds.
func upsertExpiring(t *testing.T, c *Collection, n int, ttl float64) {
	t.Helper()
	upsertExpiringEach(t, c, n, func(i int) float64 {
		if i%2 == 1 {
			return ttl
		}
		return math.NaN()
	})
}

// upsertExpiringEach writes points 0..n-1 at (i, 0) with the word
// "cache" and sparse coordinate 1 (of value 1 + i%7), point i with a ttl
// of ttlOf(i) seconds (NaN: none).
func upsertExpiringEach(t *testing.T, c *Collection, n int, ttlOf func(i int) float64) {
	t.Helper()
	ids := make([]ID, n)
	vecs := make([]float32, 2*n)
	ttls := make([]float64, n)
	docs := make([]meta.Document, n)
	counts, indices, values := make([]int, n), make([]uint32, n), make([]float32, n)
	for i := range n {
		ids[i], vecs[2*i], ttls[i] = IntID(uint64(i)), float32(i), ttlOf(i)
		docs[i] = mustDoc(t, fmt.Appendf(nil, `{"body": "cache entry %d", "i": %d}`, i, i))
		counts[i], indices[i], values[i] = 1, 1, 1+float32(i%7)
	}
	err := c.UpsertPointsExpiring(ids, map[string]FieldValues{
		"":   {Vectors: vecs},
		"kw": {Counts: counts, Indices: indices, Vectors: values},
	}, docs, Expiry{TTL: ttls})
	if err != nil {
		t.Fatal(err)
	}
}

// visible runs every kind of read and returns, for each, the integer ids
// it returned, sorted.
func visible(t *testing.T, c *Collection, n int) map[string][]uint64 {
	t.Helper()
	out := map[string][]uint64{}
	add := func(name string, ids ...ID) {
		for _, id := range ids {
			if !id.IsNone() {
				out[name] = append(out[name], id.num)
			}
		}
	}
	all := make([]ID, n)
	for i := range all {
		all[i] = IntID(uint64(i))
	}
	ids, dists := make([]ID, n), make([]float32, n)
	if _, err := c.Query([]float32{0, 0}, n, n, nil, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	add("query", ids...)
	f, err := meta.ParseFilter([]byte(`{"i": {"$gte": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query([]float32{0, 0}, n, n, f, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	add("query filtered", ids...)
	if _, err := c.QueryAmong([]float32{0, 0}, n, n, nil, all, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	add("query among", ids...)
	if _, err := c.QueryMMR("", []float32{0, 0}, n, 0, MMR{Lambda: 0.5, FetchK: n}, nil, nil, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	add("mmr", ids...)
	sparseHits, err := c.QuerySparse("kw", []uint32{1}, []float32{1}, n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range sparseHits {
		add("sparse", h.ID)
	}
	textHits, err := c.QueryText(nil, TextQuery{Text: "cache"}, n, 0, nil, 1, text.Fusion{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range textHits {
		add("text", h.ID)
	}
	hybrid, err := c.QueryText([]float32{0, 0}, TextQuery{Text: "cache"}, n, 0, nil, 1, text.Fusion{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hybrid {
		add("hybrid", h.ID)
	}
	fused, err := c.QueryFused([]SubQuery{{Vector: []float32{0, 0}, Limit: n}, {Field: "kw", Indices: []uint32{1}, Values: []float32{1}, Limit: n},
		{Text: "cache", Limit: n}}, Fusion{Method: RRF}, n, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range fused {
		add("fused", h.ID)
	}
	byExample, _, err := c.DistancesTo("", []float32{0, 0}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	add("distances", byExample...)
	found, _, _, err := c.Get(all, true)
	if err != nil {
		t.Fatal(err)
	}
	add("get", found...)
	docs, err := c.Documents(all)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		if d != nil {
			add("documents", all[i])
		}
	}
	found, _, _, err = c.GetVectors(all, "")
	if err != nil {
		t.Fatal(err)
	}
	add("vectors", found...)
	found, _, err = c.GetSparseVectors(all, "kw")
	if err != nil {
		t.Fatal(err)
	}
	add("sparse vectors", found...)
	scanned, err := c.ScanIDs(nil, ID{}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	add("scan", scanned...)
	for after, has := (ID{}), false; ; has = true {
		page, err := c.ScanIDs(nil, after, has, 3)
		if err != nil {
			t.Fatal(err)
		}
		add("scan pages", page...)
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1]
	}
	scanned, err = c.ScanIDs(meta.HasVector("kw"), ID{}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	add("has_vector", scanned...)
	for name, ids := range out {
		slices.Sort(ids)
		out[name] = ids
	}
	count, err := c.Count(nil)
	if err != nil {
		t.Fatal(err)
	}
	counted, err := c.Count(f)
	if err != nil {
		t.Fatal(err)
	}
	out["count"] = []uint64{uint64(count), uint64(counted), uint64(c.Len())}
	return out
}

func checkVisible(t *testing.T, c *Collection, n int, want []uint64) {
	t.Helper()
	for name, got := range visible(t, c, n) {
		if name == "count" {
			for _, v := range got {
				if int(v) != len(want) {
					t.Errorf("count (nil filter, a filter, Len) = %v, want %d", got, len(want))
					break
				}
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s returned %v, want %v", name, got, want)
		}
	}
}

func evens(n int) []uint64 {
	var out []uint64
	for i := 0; i < n; i += 2 {
		out = append(out, uint64(i))
	}
	return out
}

func upTo(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i)
	}
	return out
}

// TestExpiredPointIsHiddenFromEveryRead prevents an expired point from
// leaking through any read before the reaper has deleted it, and the
// reaper from deleting anything else.
func TestExpiredPointIsHiddenFromEveryRead(t *testing.T) {
	c, clock := expiringCollection(t, t.TempDir())
	const n = 12
	upsertExpiring(t, c, n, 10)
	checkVisible(t, c, n, upTo(n))
	clock.advance(10*time.Second - 1)
	checkVisible(t, c, n, upTo(n))
	clock.advance(1) // the moment of expiry
	checkVisible(t, c, n, evens(n))
	c.waitBuilt() // the same from the graph as from the tail
	checkVisible(t, c, n, evens(n))
	ids, dists := make([]ID, n), make([]float32, n)
	if stats, err := c.Query([]float32{0, 0}, n, n, nil, 1, ids, dists); err != nil || stats.Allowed != n/2 {
		t.Fatalf("an unfiltered query's stats.Allowed = %d (%v), want the %d points not expired", stats.Allowed, err, n/2)
	}
	if got := c.meta.Len(); got != n {
		t.Fatalf("%d points in memory before the reaper ran, want %d", got, n)
	}
	if err := c.Reap(); err != nil {
		t.Fatal(err)
	}
	if got := c.meta.Len(); got != n/2 {
		t.Fatalf("%d points in memory after the reaper ran, want %d", got, n/2)
	}
	checkVisible(t, c, n, evens(n))
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

// TestUpsertWithoutTTLClearsExpiry prevents a new version of a point from
// inheriting the old version's expiry, and a partial update from losing it.
func TestUpsertWithoutTTLClearsExpiry(t *testing.T) {
	clock := newFakeClock()
	c := mustCreate(t, t.TempDir(), expiryTuning(clock))
	defer c.Close()
	vec := make([]float32, testDim)
	ids := []ID{IntID(1), IntID(2)}
	if err := c.UpsertExpiring(ids, append(vec, vec...), nil, Expiry{TTL: []float64{5}}); err != nil {
		t.Fatal(err)
	}
	at, _ := c.ExpiresAt(ids)
	want := clock.nanos.Load() + 5e9
	if at[0] != want || at[1] != want {
		t.Fatalf("ExpiresAt = %v, want %d twice", at, want)
	}
	if err := c.Upsert(ids[:1], vec, nil); err != nil { // a new version of 1
		t.Fatal(err)
	}
	if _, err := c.UpdateMetadata(ids[1:], []meta.Document{mustDoc(t, []byte(`{"a": 1}`))}); err != nil { // 2 keeps its expiry
		t.Fatal(err)
	}
	at, _ = c.ExpiresAt(ids)
	if at[0] != 0 || at[1] != want {
		t.Fatalf("ExpiresAt after the rewrite = %v, want [0 %d]", at, want)
	}
	clock.advance(5 * time.Second)
	if n, _ := c.Count(nil); n != 1 {
		t.Fatalf("Count = %d after 2 expired, want 1", n)
	}
	if _, err := c.UpdateMetadata(ids[1:], []meta.Document{{}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateMetadata of an expired point: %v, want ErrNotFound", err)
	}
}

// TestReaperSparesAPointUpsertedAgain prevents the reaper's delete, logged
// after it saw a point expired, from deleting the new version an upsert
// wrote in between.
func TestReaperSparesAPointUpsertedAgain(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	c := mustCreate(t, dir, expiryTuning(clock))
	vec := make([]float32, testDim)
	if err := c.UpsertExpiring([]ID{IntID(1), IntID(2)}, append(vec, vec...), nil, Expiry{TTL: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Second)
	keys, ats := c.expiry.due(c.now(), 10)
	if len(keys) != 2 {
		t.Fatalf("due: %v", keys)
	}
	if err := c.Upsert([]ID{IntID(1)}, vec, nil); err != nil { // between the look and the delete
		t.Fatal(err)
	}
	n, err := c.submit(record{op: opExpire, ids: []ID{IntID(keys[0]), IntID(keys[1])}, expires: ats}, nil)
	if err != nil || n != 1 {
		t.Fatalf("the reaper's delete removed %d (%v), want 1", n, err)
	}
	found, _, _, _ := c.Get([]ID{IntID(1), IntID(2)}, false)
	if len(found) != 1 || found[0] != IntID(1) {
		t.Fatalf("Get found %v, want [1]", found)
	}
	c.abandon() // the same again in replay
	c = mustOpen(t, dir, expiryTuning(clock))
	defer c.Close()
	found, _, _, _ = c.Get([]ID{IntID(1), IntID(2)}, false)
	if len(found) != 1 || found[0] != IntID(1) || c.meta.Len() != 1 {
		t.Fatalf("after replay Get found %v (%d in memory), want [1]", found, c.meta.Len())
	}
}

// TestExpiryInputErrors prevents a bad ttl or expires_at from writing
// anything.
func TestExpiryInputErrors(t *testing.T) {
	clock := newFakeClock()
	c := mustCreate(t, t.TempDir(), expiryTuning(clock))
	defer c.Close()
	vec := make([]float32, 2*testDim)
	ids := []ID{IntID(1), IntID(2)}
	for _, e := range []Expiry{
		{TTL: []float64{-1}}, {TTL: []float64{math.Inf(1)}}, {At: []float64{math.Inf(-1)}},
		{TTL: []float64{1, 2, 3}}, {TTL: []float64{1}, At: []float64{1}}, {TTL: []float64{1e12}}, {At: []float64{1, -0.5}},
	} {
		if err := c.UpsertExpiring(ids, vec, nil, e); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", e, err)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("invalid writes wrote %d points", c.Len())
	}
	// expires_at in the past: written, and expired from the start.
	if err := c.UpsertExpiring(ids, vec, nil, Expiry{At: []float64{clock.seconds() - 1, math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(nil); n != 1 {
		t.Fatalf("Count = %d, want 1 (one point written expired)", n)
	}
}

// TestExpiryOutlivesCheckpointAndCrash prevents a reopen from forgetting
// expiry times, whether they are in the snapshot or only in the log.
func TestExpiryOutlivesCheckpointAndCrash(t *testing.T) {
	dir := t.TempDir()
	c, clock := expiringCollection(t, dir)
	const n = 8
	upsertExpiring(t, c, n, 10) // odd ones at +10 s, in the snapshot
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	vec := []float32{100, 0}
	if err := c.UpsertExpiring([]ID{IntID(100)}, vec, nil, Expiry{TTL: []float64{20}}); err != nil { // in the log only
		t.Fatal(err)
	}
	c.abandon()
	c, err := Open(dir, expiryTuning(clock))
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(10 * time.Second)
	if got, _ := c.Count(nil); got != n/2+1 {
		t.Fatalf("Count = %d after the first expiry, want %d", got, n/2+1)
	}
	if err := c.Close(); err != nil { // checkpoints both
		t.Fatal(err)
	}
	c, err = Open(dir, expiryTuning(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, _ := c.Count(nil); got != n/2+1 {
		t.Fatalf("Count = %d after a reopen, want %d", got, n/2+1)
	}
	clock.advance(10 * time.Second)
	if got, _ := c.Count(nil); got != n/2 {
		t.Fatalf("Count = %d after the second expiry, want %d", got, n/2)
	}
	if err := c.Reap(); err != nil {
		t.Fatal(err)
	}
	if c.meta.Len() != n/2 || c.expiry.len() != 0 {
		t.Fatalf("after the reaper: %d points, %d expiring; want %d, 0", c.meta.Len(), c.expiry.len(), n/2)
	}
}

// TestReaperRunsInTheBackground prevents expired points from staying on
// disk forever: with the periodic reaper on, they go without a call.
func TestReaperRunsInTheBackground(t *testing.T) {
	clock := newFakeClock()
	c := mustCreate(t, t.TempDir(), Tuning{Clock: clock.now, ReapInterval: time.Millisecond})
	defer c.Close()
	vec := make([]float32, testDim)
	if err := c.UpsertExpiring([]ID{IntID(1)}, vec, nil, Expiry{TTL: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Second)
	deadline := time.Now().Add(time.Minute)
	for c.meta.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reaper did not delete the expired point within a minute")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestExpiryModel checks 100k points with random ttls (fewer under the
// race detector) against a model at random clock times, across reaps,
// rewrites and a crash and reopen: no read returns an expired point, and
// every unexpired one is found.
func TestExpiryModel(t *testing.T) {
	racetest.AnswersOnly(t)
	n := 100_000
	if raceEnabled || testing.Short() {
		n = 5_000
	}
	rng := rand.New(rand.NewPCG(23, 1327))
	clock := newFakeClock()
	start := clock.nanos.Load()
	dir := filepath.Join(t.TempDir(), "c")
	tuning := expiryTuning(clock)
	tuning.ReapBatch = n / 10
	c, err := Create(dir, Options{Dim: 2, Metric: metric.L2, M: 8, EfConstruction: 32}, tuning)
	if err != nil {
		t.Fatal(err)
	}
	expires := make([]int64, n) // the model: 0 never
	vecs := make([]float32, 2*n)
	write := func(from, to int) {
		ids := make([]ID, to-from)
		ttls := make([]float64, to-from)
		for i := range ids {
			p := from + i
			ids[i] = IntID(uint64(p))
			vecs[2*p], vecs[2*p+1] = float32(p), float32(rng.IntN(1000))
			ttls[i] = math.NaN()
			if rng.IntN(4) != 0 {
				ttls[i] = float64(rng.IntN(1000)) // up to 1000 s
			}
			expires[p] = 0
			if !math.IsNaN(ttls[i]) {
				expires[p] = max(clock.nanos.Load()+int64(ttls[i]*1e9), 1)
			}
		}
		if err := c.UpsertExpiring(ids, vecs[2*from:2*to], nil, Expiry{TTL: ttls}); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < n; from += 1000 {
		write(from, min(from+1000, n))
	}
	check := func(when string) {
		t.Helper()
		now := clock.nanos.Load()
		live := func(p int) bool { return expires[p] == 0 || expires[p] > now }
		var want []uint64
		for p := range n {
			if live(p) {
				want = append(want, uint64(p))
			}
		}
		scanned, err := c.ScanIDs(nil, ID{}, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := intsOf(scanned); len(got) != len(want) || !slices.Equal(uint64sOf(got), want) {
			t.Fatalf("%s: scan returned %d ids, the model holds %d", when, len(got), len(want))
		}
		if count, _ := c.Count(nil); count != len(want) {
			t.Fatalf("%s: Count = %d, the model holds %d", when, count, len(want))
		}
		all := make([]ID, n)
		for p := range all {
			all[p] = IntID(uint64(p))
		}
		found, _, _, err := c.Get(all, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != len(want) {
			t.Fatalf("%s: Get found %d, the model holds %d", when, len(found), len(want))
		}
		// Queries: each point is the nearest to its own vector; among a
		// sample of ids (searched exactly) the live ones come back, and
		// never an expired one.
		among := make([]ID, 64)
		for i := range among {
			among[i] = IntID(uint64(rng.IntN(n)))
		}
		ids, dists := make([]ID, 64), make([]float32, 64)
		for q := range 8 {
			p := int(among[q].num)
			if _, err := c.QueryAmong(vecs[2*p:2*p+2], 64, 0, nil, among, 1, ids, dists); err != nil {
				t.Fatal(err)
			}
			if live(p) && ids[0] != IntID(uint64(p)) {
				t.Fatalf("%s: a query for live point %d among a sample returned %v first", when, p, ids[0])
			}
			returned := map[uint64]bool{}
			for _, id := range ids {
				if !id.IsNone() {
					if !live(int(id.num)) {
						t.Fatalf("%s: a query returned expired point %d", when, id.num)
					}
					returned[id.num] = true
				}
			}
			for _, id := range among {
				if live(int(id.num)) && !returned[id.num] {
					t.Fatalf("%s: a query among a sample missed live point %d", when, id.num)
				}
			}
		}
		top, topD := make([]ID, 100), make([]float32, 100)
		if _, err := c.Query([]float32{float32(rng.IntN(n)), 500}, 100, 0, nil, 1, top, topD); err != nil {
			t.Fatal(err)
		}
		for _, id := range top {
			if !id.IsNone() && !live(int(id.num)) {
				t.Fatalf("%s: an unfiltered query returned expired point %d", when, id.num)
			}
		}
	}
	check("at the start")
	for step := range 12 {
		clock.advance(time.Duration(rng.IntN(120)) * time.Second)
		check(fmt.Sprintf("step %d at +%ds", step, (clock.nanos.Load()-start)/1e9))
		switch step % 4 {
		case 1:
			if err := c.Reap(); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step %d after a reap", step))
		case 2:
			from := rng.IntN(n - 500)
			write(from, from+500) // new versions, new ttls
			check(fmt.Sprintf("step %d after a rewrite", step))
		case 3:
			if step == 7 {
				if err := c.Checkpoint(); err != nil {
					t.Fatal(err)
				}
			}
			c.abandon()
			if c, err = Open(dir, tuning); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step %d after a crash and reopen", step))
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func uint64sOf(ids []int64) []uint64 {
	out := make([]uint64, len(ids))
	for i, v := range ids {
		out[i] = uint64(v)
	}
	return out
}
