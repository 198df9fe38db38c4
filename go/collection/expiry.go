package collection

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/go/collection/snapshot"
)

// Expiring points (time to live).
//
// A point may carry an expiry time, Unix nanoseconds, set by the upsert
// that wrote it (ops 1 and 5 with the expiry flag; see the package doc) and
// cleared by an upsert without one: the newest version of a point replaces
// the old one whole, its expiry included. Writes that change part of a
// point (UpdateMetadata, UpdateVectors, DeleteVectors) keep it.
//
// Reads compare against one reading of the clock per call: a point whose
// expiry is at or before it is absent for every query, get, scan and
// count of that call, whatever the reaper has done yet. The reaper
// (reaper.go) deletes expired points in the background, through the log,
// so that recovery and replicas see the same deletes.
//
// Applying a record never reads the clock: replay rebuilds the same
// expiry table from the log, whatever time it is.

// expiryTable maps keys to their expiry times. The map is the truth; the
// heap orders the times for the reaper and for reads, and may hold stale
// entries (a key re-upserted with another time, or none), which are
// skipped and dropped as they come up.
type expiryTable struct {
	mu   sync.RWMutex
	at   map[uint64]int64
	heap expiryHeap
	// earliest is the heap's smallest time (math.MaxInt64 when empty): a
	// read with an earlier clock needs no lock at all.
	earliest atomic.Int64
}

type expiryEntry struct {
	at  int64
	key uint64
}

type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newExpiryTable() *expiryTable {
	t := &expiryTable{at: map[uint64]int64{}}
	t.earliest.Store(math.MaxInt64)
	return t
}

// importExpiries makes the table a snapshot stored.
func importExpiries(e snapshot.Expiries) *expiryTable {
	t := newExpiryTable()
	for i, k := range e.Keys {
		t.at[k] = e.At[i]
		t.heap = append(t.heap, expiryEntry{at: e.At[i], key: k})
	}
	heap.Init(&t.heap)
	t.noteEarliest()
	return t
}

// export returns the table sorted by key, for a snapshot; the caller holds
// applyMu, so nothing changes it meanwhile.
func (t *expiryTable) export() snapshot.Expiries {
	t.mu.RLock()
	defer t.mu.RUnlock()
	keys := make([]uint64, 0, len(t.at))
	for k := range t.at {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	at := make([]int64, len(keys))
	for i, k := range keys {
		at[i] = t.at[k]
	}
	return snapshot.Expiries{Keys: keys, At: at}
}

func (t *expiryTable) noteEarliest() {
	if len(t.heap) == 0 {
		t.earliest.Store(math.MaxInt64)
		return
	}
	t.earliest.Store(t.heap[0].at)
}

// put sets the expiry of keys (at nil, or a 0 in it: none). Only the
// applier writes the table.
func (t *expiryTable) put(keys []uint64, at []int64) {
	if at == nil {
		t.clear(keys)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, k := range keys {
		if at[i] == 0 {
			delete(t.at, k)
			continue
		}
		if old, ok := t.at[k]; ok && old == at[i] {
			continue
		}
		t.at[k] = at[i]
		heap.Push(&t.heap, expiryEntry{at: at[i], key: k})
	}
	t.compactLocked()
	t.noteEarliest()
}

// clear drops the expiry of keys (deleted, or upserted without one).
func (t *expiryTable) clear(keys []uint64) {
	if t.earliest.Load() == math.MaxInt64 {
		return // nothing expires: the common case costs no lock
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		delete(t.at, k)
	}
	t.compactLocked()
	t.noteEarliest()
}

// compactLocked rebuilds the heap once stale entries outnumber live ones,
// so that re-upserting the same points does not grow it without bound.
func (t *expiryTable) compactLocked() {
	if len(t.heap) <= 2*len(t.at)+64 {
		return
	}
	t.heap = t.heap[:0]
	for k, at := range t.at {
		t.heap = append(t.heap, expiryEntry{at: at, key: k})
	}
	heap.Init(&t.heap)
}

// get returns the expiry of key, 0 if it has none.
func (t *expiryTable) get(key uint64) int64 {
	if t.earliest.Load() == math.MaxInt64 {
		return 0
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.at[key]
}

func (t *expiryTable) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.at)
}

// expired returns the keys expired at now (expiry <= now), ascending,
// nil if none: a walk of the heap's entries at or before now, O(expired
// and stale entries), and no lock at all when the earliest is later.
func (t *expiryTable) expired(now int64) expiredSet {
	if t.earliest.Load() > now {
		return expiredSet{}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	var keys []uint64
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(t.heap) || t.heap[i].at > now {
			continue // the heap's order: no child is earlier
		}
		if e := t.heap[i]; t.at[e.key] == e.at {
			keys = append(keys, e.key)
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	slices.Sort(keys)
	return expiredSet{keys: slices.Compact(keys)}
}

// due returns up to limit keys expired at now with their expiry times,
// for the reaper, dropping the stale entries it meets from the heap.
func (t *expiryTable) due(now int64, limit int) ([]uint64, []int64) {
	if t.earliest.Load() > now {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.heap) > 0 && t.at[t.heap[0].key] != t.heap[0].at {
		heap.Pop(&t.heap) // stale
	}
	t.noteEarliest()
	var keys []uint64
	var ats []int64
	seen := map[uint64]bool{}
	stack := []int{0}
	for len(stack) > 0 && len(keys) < limit {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(t.heap) || t.heap[i].at > now {
			continue
		}
		if e := t.heap[i]; t.at[e.key] == e.at && !seen[e.key] {
			seen[e.key] = true
			keys, ats = append(keys, e.key), append(ats, e.at)
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	return keys, ats
}

// countExpired is how many distinct keys of keys are expired at now.
func (t *expiryTable) countExpired(keys []uint64, now int64) int {
	if t.earliest.Load() > now {
		return 0
	}
	t.mu.RLock()
	var expired []uint64
	for _, k := range keys {
		if at := t.at[k]; at != 0 && at <= now {
			expired = append(expired, k)
		}
	}
	t.mu.RUnlock()
	slices.Sort(expired)
	return len(slices.Compact(expired))
}

// testHooks are points in the write path where a test can run code, to
// read the collection at exactly that moment. The zero value is
// production behaviour; tests set them before writing.
type testHooks struct {
	// docsDeleted runs in the applier after a delete has removed the
	// documents and before the expiry table drops the keys.
	docsDeleted func()
	// checkpointLocked runs after a checkpoint has released applyMu (or,
	// for the log's rotation, walMu), with when it held it and how long
	// each step under it took (ckptbench_test.go).
	checkpointLocked func(from, to time.Time, steps []checkpointStep)
	// checkpointSealing runs once a checkpoint has fenced the tails and
	// released applyMu, before it builds the rows below the fences and
	// seals the graphs (checkpoint.go, freezeFields).
	checkpointSealing func()
}

// checkpointStep is one step a checkpoint ran under applyMu.
type checkpointStep struct {
	name string
	took time.Duration
}

// expiredSet is the keys a read treats as absent: those expired at the
// clock reading the read took.
type expiredSet struct{ keys []uint64 }

func (e expiredSet) empty() bool { return len(e.keys) == 0 }

func (e expiredSet) has(key uint64) bool {
	if len(e.keys) == 0 {
		return false
	}
	_, ok := slices.BinarySearch(e.keys, key)
	return ok
}

// without returns the keys of ascending not in e (ascending stays
// ascending; a non-nil input stays non-nil).
func (e expiredSet) without(keys []uint64) []uint64 {
	if len(e.keys) == 0 {
		return keys
	}
	out := make([]uint64, 0, len(keys))
	for _, k := range keys {
		if !e.has(k) {
			out = append(out, k)
		}
	}
	return out
}

// now reads the collection's clock (Tuning.Clock) as Unix nanoseconds.
func (c *Collection) now() int64 {
	if c.tuning.Clock != nil {
		return c.tuning.Clock().UnixNano()
	}
	return time.Now().UnixNano()
}

// expiredNow is the set of keys expired at one reading of the clock.
func (c *Collection) expiredNow() expiredSet { return c.expiry.expired(c.now()) }

// Expiry gives the points of an upsert a time to live. At most one of TTL
// and At is set; each holds one value per point or one for all of them.
// NaN in either means that point never expires (a door's None / null).
type Expiry struct {
	// TTL holds seconds after the write's reading of the collection's
	// clock (finite, >= 0).
	TTL []float64
	// At holds Unix times in seconds (finite, >= 0).
	At []float64
}

// maxExpirySeconds is the latest expiry a point may have: Unix nanoseconds
// are int64, which end in 2262.
const maxExpirySeconds = math.MaxInt64 / 1e9

// expiries checks e for a write of n points and returns the record's
// expiry times (Unix nanoseconds, 0: none), nil if no point expires.
func (c *Collection) expiries(n int, e Expiry) ([]int64, error) {
	values, name := e.TTL, "ttl"
	switch {
	case e.TTL != nil && e.At != nil:
		return nil, fmt.Errorf("%w: give ttl or expires_at, not both", ErrInvalid)
	case e.At != nil:
		values, name = e.At, "expires_at"
	case e.TTL == nil:
		return nil, nil
	}
	if len(values) != 1 && len(values) != n {
		return nil, fmt.Errorf("%w: %s holds %d values for %d points (give one, or one per point)", ErrInvalid, name, len(values), n)
	}
	var base float64
	if e.At == nil {
		base = float64(c.now()) / 1e9
	}
	out := make([]int64, n)
	some := false
	for i := range out {
		v := values[0]
		if len(values) == n {
			v = values[i]
		}
		if math.IsNaN(v) {
			continue
		}
		if math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%w: %s[%d] = %v: must be a finite number of seconds >= 0", ErrInvalid, name, i, v)
		}
		at := base + v
		if at > maxExpirySeconds {
			return nil, fmt.Errorf("%w: %s[%d] = %v: expires after the year 2262", ErrInvalid, name, i, v)
		}
		out[i] = max(int64(at*1e9), 1) // 0 means none: the epoch itself is 1 ns later
		some = true
	}
	if !some {
		return nil, nil
	}
	return out, nil
}

// ExpiresAt returns the expiry of each id as Unix nanoseconds, 0 for an
// id that has none, is absent, or has expired by the call's clock reading
// (then it is absent as for every read).
func (c *Collection) ExpiresAt(ids []ID) ([]int64, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	now := c.now()
	out := make([]int64, len(ids))
	for i, id := range ids {
		if k, ok := c.keyOf(id); ok {
			if at := c.expiry.get(k); at > now {
				out[i] = at
			}
		}
	}
	return out, nil
}
