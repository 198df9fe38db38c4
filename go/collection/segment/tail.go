package segment

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/metric"
)

// Tail is one vector field's mutable tail: the rows acknowledged but not
// yet in the field's graph, in apply order. A row is a key with a vector
// (a put) or without one (a tombstone). Rows are written once, by one
// appender at a time (the collection's applier), and read without copying
// by queries and by the builder; see the package doc for who may do what.
type Tail struct {
	dim    int
	metric metric.Metric

	// view is held shared by every reader for the whole of its read and
	// exclusively by Advance, so rows a reader can see are never dropped
	// under it, and built does not move during a read.
	view sync.RWMutex
	// mu guards the row arrays' headers, n's publication and last.
	mu sync.RWMutex

	// Row r (absolute, counted since the tail was made) is at r-base.
	base int64
	keys []uint64
	tomb []bool
	prev []int64 // the key's previous row in the tail, or -1
	next []int64 // the row that superseded it, or 0 (atomic)
	// vectors holds dim floats per row (zeros for a tombstone) in chunks
	// of chunkRows rows: chunks[c] holds the rows from
	// (firstChunk+c)·chunkRows on. Rows are never moved once written, so
	// an append copies each vector once (one growing slice recopied the
	// whole tail at every growth: most of an ingest's CPU), and Advance
	// drops whole chunks and keeps them for reuse (spare), so a steady
	// ingest allocates, zeroes and faults in no new memory.
	vectors   tailVectors
	chunkRows int64
	spare     [][]float32

	n     atomic.Int64 // rows published
	built atomic.Int64 // rows the graph reflects
	// fence is the row Next stops before while fenced (Fence); guarded
	// by mu, as n's publication is, so that no batch reaches a row
	// appended after the fence was set.
	fence  int64
	fenced bool
	last   map[uint64]entry
	// shadowing counts the keys of last that the graph held when their
	// first tail row came: the graph's version of them is stale, so a
	// search asks the graph for that many results more.
	shadowing int

	// cond is signalled (under mu) when rows are appended or built.
	cond    *sync.Cond
	stopped bool
	// scratch is Next's reused batch (the builder's only).
	scratch nextScratch
	moved   atomic.Int64 // rows built since the tail was made
}

type entry struct {
	last   int64
	shadow bool
}

// NewTail makes an empty tail of rows of dim floats; vectors are compared
// under m (normalised on Append for cosine, as the graph stores them).
func NewTail(dim int, m metric.Metric) *Tail {
	t := &Tail{dim: dim, metric: m, last: map[uint64]entry{}, chunkRows: chunkRowsFor(dim)}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// Holds reports whether the key has rows in the tail, and whether the
// last one is a put (live). Only the appender calls it.
func (t *Tail) Holds(key uint64) (held, live bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.last[key]
	if !ok {
		return false, false
	}
	return true, !t.tomb[e.last-t.base]
}

// Dim is the rows' length.
func (t *Tail) Dim() int { return t.dim }

// Append adds a put of each key (unique within the call) with its vector
// (len(keys)·Dim floats, copied; normalised for cosine). inGraph reports
// whether the graph holds a version of a key (nil: none does). Only one
// goroutine appends at a time.
func (t *Tail) Append(keys []uint64, vectors []float32, inGraph func(uint64) bool) {
	t.append(keys, vectors, inGraph)
}

// Remove adds a tombstone for each key: the key has no value from now on,
// in the tail and, once built, in the graph.
func (t *Tail) Remove(keys []uint64, inGraph func(uint64) bool) {
	t.append(keys, nil, inGraph)
}

func (t *Tail) append(keys []uint64, vectors []float32, inGraph func(uint64) bool) {
	if len(keys) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	dim := t.dim
	at := t.n.Load()
	for i, k := range keys {
		r := at + int64(i)
		t.keys = append(t.keys, k)
		t.tomb = append(t.tomb, vectors == nil)
		t.next = append(t.next, 0)
		dst := t.grow(r)
		if vectors == nil {
			clear(dst)
		} else {
			copy(dst, vectors[i*dim:(i+1)*dim])
			if t.metric.NeedsNormalize() {
				metric.Normalize(dst)
			}
		}
		e, ok := t.last[k]
		if ok {
			t.prev = append(t.prev, e.last)
			atomic.StoreInt64(&t.next[e.last-t.base], r)
		} else {
			t.prev = append(t.prev, -1)
			e.shadow = inGraph != nil && inGraph(k)
			if e.shadow {
				t.shadowing++
			}
		}
		e.last = r
		t.last[k] = e
	}
	t.n.Store(at + int64(len(keys)))
	t.cond.Broadcast()
}

// Len is the number of rows not yet built into the graph.
func (t *Tail) Len() int { return int(t.n.Load() - t.built.Load()) }

// Bytes is the memory of the rows not yet built.
func (t *Tail) Bytes() int64 { return int64(t.Len()) * int64(t.dim*4+32) }

// Built is the number of rows moved into the graph since the tail was made.
func (t *Tail) Built() int64 { return t.moved.Load() }

// Appended is the number of rows appended since the tail was made.
func (t *Tail) Appended() int64 { return t.n.Load() }

// Keys returns the state the tail gives each key it holds rows of: live
// (a vector) or not (a tombstone), with whether the graph held it when it
// entered the tail. The caller holds a View.
func (v *View) Keys(fn func(key uint64, live bool)) {
	t := v.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	for k, e := range t.last {
		r := e.last
		for r >= v.n {
			r = t.prev[r-t.base]
		}
		if r >= v.built {
			fn(k, !t.tomb[r-t.base])
		}
	}
}

// View is a reader's consistent picture of a tail: the rows [built, n) at
// the moment it was taken. Until Close, the builder cannot advance, so a
// graph searched during the view reflects at least every row below built,
// and at most the rows the view holds too.
type View struct {
	t        *Tail
	built, n int64
	base     int64
	keys     []uint64
	tomb     []bool
	next     []int64
	vectors  tailVectors
	extra    int
}

// Read takes a view; Close it when the read is done (the builder waits).
func (t *Tail) Read() View {
	t.view.RLock()
	t.mu.RLock()
	v := View{t: t, built: t.built.Load(), n: t.n.Load(), base: t.base, keys: t.keys, tomb: t.tomb,
		next: t.next, vectors: t.vectors, extra: t.shadowing}
	t.mu.RUnlock()
	return v
}

// Close ends the view.
func (v *View) Close() { v.t.view.RUnlock() }

// Len is the number of rows in the view.
func (v *View) Len() int { return int(v.n - v.built) }

// Extra is how many more results to ask of the graph: the keys whose
// graph version the tail hides.
func (v *View) Extra() int { return v.extra }

// Hides reports whether the tail holds a row of key within the view, in
// which case the graph's version of it must not be returned: the tail's
// is newer, or the same.
func (v *View) Hides(key uint64) bool {
	if v.n == v.built {
		return false
	}
	t := v.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.last[key]
	if !ok {
		return false
	}
	for r := e.last; r >= v.built; r = t.prev[r-t.base] {
		if r < v.n {
			return true
		}
	}
	return false
}

// live reports whether row r (in the view) is its key's value in the view.
func (v *View) live(r int64) bool {
	i := r - v.base
	if v.tomb[i] {
		return false
	}
	nx := atomic.LoadInt64(&v.next[i])
	return nx == 0 || nx >= v.n
}

// Lookup returns the key's vector in the view (a slice into the tail,
// valid until Close), and whether the tail decides the key at all: found
// false means the graph does; found true with nil means the key has no
// value (a tombstone).
func (v *View) Lookup(key uint64) (vector []float32, found bool) {
	if v.n == v.built {
		return nil, false
	}
	t := v.t
	t.mu.RLock()
	e, ok := t.last[key]
	r := int64(-1)
	if ok {
		for r = e.last; r >= v.n; r = t.prev[r-t.base] {
		}
	}
	t.mu.RUnlock()
	if r < v.built {
		return nil, false
	}
	i := r - v.base
	if v.tomb[i] {
		return nil, true
	}
	return v.vectors.row(r), true
}

// Rows calls fn with each live row of the view, in order: its key and
// vector (valid until Close).
func (v *View) Rows(fn func(key uint64, vector []float32)) {
	for r := v.built; r < v.n; r++ {
		if v.live(r) {
			fn(v.keys[r-v.base], v.vectors.row(r))
		}
	}
}

// Hit is one result of a scan.
type Hit struct {
	Key  uint64
	Dist float32
}

// Scan finds the k live rows of the view nearest to query (Dim floats,
// normalised already for cosine) among the keys allow lets through (nil:
// all), nearest first, into out (reused; returned).
//
// dist, when not nil, replaces the metric's distance of query to a row:
// a quantized graph's code distance, so that tail and graph rank alike.
func (v *View) Scan(query []float32, k int, allow func(uint64) bool, dist func([]float32) float32, out []Hit) []Hit {
	out = out[:0]
	worst := float32(math.Inf(1))
	m := v.t.metric
	for r := v.built; r < v.n; r++ {
		i := r - v.base
		if !v.live(r) || (allow != nil && !allow(v.keys[i])) {
			continue
		}
		var d float32
		if dist != nil {
			d = dist(v.vectors.row(r))
		} else {
			d = m.Distance(query, v.vectors.row(r))
		}
		if len(out) == k && d >= worst {
			continue
		}
		h := Hit{Key: v.keys[i], Dist: d}
		at, _ := slices.BinarySearchFunc(out, h, func(a, b Hit) int {
			if a.Dist < b.Dist || (a.Dist == b.Dist && a.Key < b.Key) {
				return -1
			}
			return 1
		})
		if len(out) < k {
			out = slices.Insert(out, at, h)
		} else {
			copy(out[at+1:], out[at:k-1])
			out[at] = h
		}
		if len(out) == k {
			worst = out[k-1].Dist
		}
	}
	return out
}

// Batch is rows of the tail on their way into the graph: the state the
// rows [From, To) leave each of their keys in.
type Batch struct {
	From, To int64
	Keys     []uint64  // keys put, with their vectors
	Vectors  []float32 // len(Keys)·Dim, normalised for cosine
	Removed  []uint64  // keys whose last row in the batch is a tombstone
}

// nextScratch is what Next fills and returns again at each call: the
// builder's batch arrays and the positions of its keys. Reused, a steady
// ingest's builder allocates nothing per batch (a fresh batch per call
// was the largest garbage of a 30 % overwrite after the queries':
// TestSegmentBenchOverwrite at 100k, 76 MB of 629 MB allocated).
type nextScratch struct {
	batch Batch
	pos   map[uint64]int // key -> its position in Keys, or -1-position in Removed
}

// Next returns the next rows to build, at most max of them. The rows are
// immutable: the builder reads them without locks. The batch's arrays are
// the tail's, valid until the next call of Next (only the builder calls
// it, one call at a time). An empty batch means nothing is waiting.
func (t *Tail) Next(max int) Batch {
	t.mu.RLock()
	defer t.mu.RUnlock()
	from, n := t.built.Load(), t.n.Load()
	if t.fenced {
		n = t.fence // built <= fence: it was n when set
	}
	to := min(n, from+int64(max))
	s := &t.scratch
	if s.pos == nil {
		s.pos = map[uint64]int{}
	}
	clear(s.pos)
	rows := int(to - from)
	batch := Batch{From: from, To: to, Keys: s.batch.Keys[:0], Removed: s.batch.Removed[:0],
		Vectors: slices.Grow(s.batch.Vectors[:0], rows*t.dim)}
	pos := s.pos
	for r := from; r < to; r++ {
		i := r - t.base
		k := t.keys[i]
		if t.tomb[i] {
			pos[k] = -1 - len(batch.Removed)
			batch.Removed = append(batch.Removed, k)
		} else {
			pos[k] = len(batch.Keys)
			batch.Keys = append(batch.Keys, k)
			batch.Vectors = append(batch.Vectors, t.vectors.row(r)...)
		}
	}
	if len(pos) < rows { // some key came twice: drop the superseded
		keys, vectors := batch.Keys[:0], batch.Vectors[:0]
		for j, k := range batch.Keys {
			if pos[k] == j {
				vectors = append(vectors, batch.Vectors[j*t.dim:(j+1)*t.dim]...)
				keys = append(keys, k)
			}
		}
		batch.Keys, batch.Vectors = keys, vectors
		removed := batch.Removed[:0]
		for j, k := range batch.Removed {
			if pos[k] == -1-j {
				removed = append(removed, k)
			}
		}
		batch.Removed = removed
	}
	s.batch = batch
	return batch
}

// Fence makes Next stop before the rows appended from now on, until
// Unfence: a checkpoint
// builds the rows its snapshot holds into the graph it seals while the
// later ones wait in the tail for the next active graph (the collection's
// checkpoint.go). Only the appender calls it, between two appends.
func (t *Tail) Fence() {
	t.mu.Lock()
	t.fence, t.fenced = t.n.Load(), true
	t.mu.Unlock()
}

// Unfence lifts the fence: Next reaches every row again.
func (t *Tail) Unfence() {
	t.mu.Lock()
	t.fenced = false
	t.cond.Broadcast()
	t.mu.Unlock()
}

// Advance records that the graph now reflects the rows below b.To (the
// caller added b.Keys and removed b.Removed): it waits for the views in
// progress, then drops the rows. Only the builder calls it.
func (t *Tail) Advance(b Batch) {
	t.view.Lock()
	t.mu.Lock()
	for r := b.From; r < b.To; r++ {
		k := t.keys[r-t.base]
		e, ok := t.last[k]
		switch {
		case !ok:
		case e.last == r:
			if e.shadow {
				t.shadowing--
			}
			delete(t.last, k)
		case atomic.LoadInt64(&t.next[r-t.base]) >= b.To:
			// r is k's last row in the batch and a newer one stays in
			// the tail: the graph now holds k exactly when r is a value,
			// and that version is stale, so the searches must ask the
			// graph for one result more for it (a key new to the graph
			// when its first row came was not counted: its queries came
			// back a result short).
			if shadow := !t.tomb[r-t.base]; shadow != e.shadow {
				e.shadow = shadow
				t.last[k] = e
				if shadow {
					t.shadowing++
				} else {
					t.shadowing--
				}
			}
		}
	}
	t.built.Store(b.To)
	t.moved.Add(b.To - b.From)
	// Drop the built rows once they are most of the arrays (each row is
	// copied about once). No view is open, and views are the only readers
	// of the arrays outside mu: the rows kept move down in place, and the
	// arrays' room is reused by the appends to come (a copy each time left
	// the old arrays to the collector).
	if drop := b.To - t.base; drop >= 1024 && drop*2 >= int64(len(t.keys)) {
		t.keys = t.keys[:copy(t.keys, t.keys[drop:])]
		t.tomb = t.tomb[:copy(t.tomb, t.tomb[drop:])]
		t.prev = t.prev[:copy(t.prev, t.prev[drop:])]
		t.next = t.next[:copy(t.next, t.next[drop:])]
		t.base = b.To
		for i, p := range t.prev {
			if p < t.base {
				t.prev[i] = -1
			}
		}
	}
	// No view is open (view is held exclusively), and what readers were
	// given of a row is valid only until their view's Close: the chunks
	// wholly below b.To can be reused.
	if drop := b.To/t.chunkRows - t.vectors.first; drop > 0 {
		t.spare = append(t.spare, t.vectors.chunks[:drop]...)
		kept := copy(t.vectors.chunks, t.vectors.chunks[drop:])
		clear(t.vectors.chunks[kept:])
		t.vectors.chunks = t.vectors.chunks[:kept]
		t.vectors.first += drop
		// Keep what the tail's bound needs again, not a past burst's.
		if keep := 2 + int(t.Len())/int(t.chunkRows); len(t.spare) > keep {
			clear(t.spare[keep:])
			t.spare = t.spare[:keep]
		}
	}
	t.cond.Broadcast()
	t.mu.Unlock()
	t.view.Unlock()
}

// WaitRows blocks until rows have been appended beyond seen, or Stop.
// It returns false once stopped.
func (t *Tail) WaitRows(seen int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.stopped && t.n.Load() <= seen {
		t.cond.Wait()
	}
	return !t.stopped
}

// WaitBelow blocks until fewer than rows rows and bytes bytes wait to be
// built (backpressure on the appender), or Stop.
func (t *Tail) WaitBelow(rows int, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.stopped && (t.Len() >= rows || t.Bytes() >= bytes) {
		t.cond.Wait()
	}
}

// WaitBuilt blocks until the graph reflects every row below n, or Stop.
func (t *Tail) WaitBuilt(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.stopped && t.built.Load() < n {
		t.cond.Wait()
	}
}

// Stop wakes every waiter for good: the builder is gone.
func (t *Tail) Stop() {
	t.mu.Lock()
	t.stopped = true
	t.cond.Broadcast()
	t.mu.Unlock()
}

// Restart undoes Stop (a builder runs again).
func (t *Tail) Restart() {
	t.mu.Lock()
	t.stopped = false
	t.mu.Unlock()
}
