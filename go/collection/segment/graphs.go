package segment

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/sq8"
)

// Graph is one sealed graph segment of a field: an HNSW index that takes
// no more inserts, only removals (its tombstones).
type Graph struct {
	index *hnsw.Index
	// Guarded by Graphs.mu.
	file    string       // its file (Graphs' doc), "" until a checkpoint writes it
	deleted []uint64     // keys removed since it was sealed (or loaded), in order
	inFile  int          // how many of deleted its file holds as tombstones
	pins    atomic.Int64 // readers holding it, and whether it is retired (mapped.go)
	closed  atomic.Bool  // close has run (mapped.go: it can be reached twice)
	// released, if not nil, is closed once the segment is retired and no
	// reader holds it (set before retire; merge.go waits on it).
	released chan struct{}
}

// Index returns the segment's graph (read only: Graphs makes every change).
func (s *Graph) Index() *hnsw.Index { return s.index }

// graphState is the segments of a field at one moment, replaced whole.
type graphState struct {
	active *hnsw.Index
	sealed []*Graph // oldest first
}

// Graphs is a vector field's graph segments: the active graph the
// builder inserts into and the sealed ones, each key live in at most one
// of them. Reads load the state with one atomic load and never wait;
// changes (Add, Remove, Seal, Merge's swap, Train) are serialised by mu.
type Graphs struct {
	cfg   hnsw.Config
	mu    sync.Mutex
	state atomic.Pointer[graphState]
	// merging is the sources of the merge in flight (guarded by mu), which
	// MapSealed leaves alone.
	merging []*Graph
	// changes counts Add and Remove twice each, on entry and on exit (odd
	// while one is under way): the live keys did not change between two
	// equal even readings (Changes).
	changes atomic.Uint64
}

// Changes returns the count of key changes begun and finished (Add and
// Remove count 2 each; an odd value: one is under way). A reader that
// reads the same even value before and after looking at the segments
// knows that no key came or went meanwhile.
func (g *Graphs) Changes() uint64 { return g.changes.Load() }

// changing brackets one change of the live keys; the caller holds mu.
func (g *Graphs) changing() func() {
	g.changes.Add(1)
	return func() { g.changes.Add(1) }
}

// NewGraphs returns the segments of a field: active (which takes the
// inserts) and sealed, oldest first.
func NewGraphs(cfg hnsw.Config, active *hnsw.Index, sealed []*Graph) *Graphs {
	g := &Graphs{cfg: cfg}
	g.state.Store(&graphState{active: active, sealed: sealed})
	return g
}

// LoadedGraph makes a sealed segment of an index read from file, with the
// keys deleted since it was written (the manifest's tombstones) removed
// and its sorted key table built (sealKeys).
func LoadedGraph(index *hnsw.Index, file string, deleted []uint64) (*Graph, error) {
	if len(deleted) > 0 {
		if _, err := index.Remove(deleted, false); err != nil {
			return nil, fmt.Errorf("segment %s: tombstones: %w", file, err)
		}
	}
	sealKeys(index)
	return &Graph{index: index, file: file, deleted: deleted}, nil
}

// each calls fn on the state's indexes, the active one first, then the
// sealed ones newest first, until fn returns false.
func (st *graphState) each(fn func(*hnsw.Index) bool) {
	if !fn(st.active) {
		return
	}
	for _, s := range slices.Backward(st.sealed) {
		if !fn(s.index) {
			return
		}
	}
}

// owner returns the index holding key live, or nil.
func (st *graphState) owner(key uint64) *hnsw.Index {
	var out *hnsw.Index
	st.each(func(x *hnsw.Index) bool {
		if x.Contains(key) {
			out = x
			return false
		}
		return true
	})
	return out
}

// Config returns the parameters every segment's index has.
func (g *Graphs) Config() hnsw.Config { return g.cfg }

// Active returns the graph the builder inserts into.
func (g *Graphs) Active() *hnsw.Index { return g.state.Load().active }

// Sealed returns the sealed segments, oldest first.
func (g *Graphs) Sealed() []*Graph { return g.state.Load().sealed }

// Segments is the number of segments holding nodes (live or tombstones).
func (g *Graphs) Segments() int {
	n := 0
	g.state.Load().each(func(x *hnsw.Index) bool {
		if x.Len() > 0 || x.Tombstones() > 0 {
			n++
		}
		return true
	})
	return n
}

// Contains reports whether key is live in a segment.
func (g *Graphs) Contains(key uint64) bool { return g.state.Load().owner(key) != nil }

// Len is the number of live keys.
func (g *Graphs) Len() int {
	n := 0
	g.state.Load().each(func(x *hnsw.Index) bool { n += x.Len(); return true })
	return n
}

// Tombstones is the number of removed or replaced nodes the segments hold.
func (g *Graphs) Tombstones() int {
	n := 0
	g.state.Load().each(func(x *hnsw.Index) bool { n += x.Tombstones(); return true })
	return n
}

// Trained reports whether the field's quantizer is fixed (always for a
// float field).
func (g *Graphs) Trained() bool { return g.state.Load().active.Trained() }

// Quantizer is the SQ8 quantizer every segment shares, or nil.
func (g *Graphs) Quantizer() *sq8.Quantizer { return g.state.Load().active.Quantizer() }

// Train fixes the quantizer from a sample (hnsw.Index.Train).
func (g *Graphs) Train(sample []float32) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state.Load().active.Train(sample)
}

// Add inserts keys (unique) into the active graph, first removing them
// from the sealed segments that hold them, so that each key stays in one
// segment. Readers hide the keys meanwhile (a tail view holds their rows).
// The vectors are the tail's (normalised for cosine): they are stored as
// they are, so a key reads the same bits before and after its build.
func (g *Graphs) Add(vectors []float32, keys []uint64, threads int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.changing()()
	st := g.state.Load()
	if err := removeSealed(st, keys); err != nil {
		return err
	}
	return st.active.AddStored(vectors, keys, threads)
}

// removeSealed removes keys from the sealed segments holding them and
// notes them as those segments' tombstones. The caller holds mu.
func removeSealed(st *graphState, keys []uint64) error {
	for _, s := range st.sealed {
		var held []uint64
		for _, k := range keys {
			if s.index.Contains(k) {
				held = append(held, k)
			}
		}
		if len(held) == 0 {
			continue
		}
		if _, err := s.index.Remove(held, false); err != nil {
			return err
		}
		s.deleted = append(s.deleted, held...)
	}
	return nil
}

// Remove removes keys from whichever segment holds them (keys held by
// none are skipped) and returns how many it removed.
func (g *Graphs) Remove(keys []uint64) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.changing()()
	st := g.state.Load()
	before := 0
	for _, s := range st.sealed {
		before += len(s.deleted)
	}
	if err := removeSealed(st, keys); err != nil {
		return 0, err
	}
	n, err := st.active.Remove(keys, true)
	for _, s := range st.sealed {
		n += len(s.deleted)
	}
	return n - before, err
}

// IDs returns the live keys of every segment.
func (g *Graphs) IDs() ([]uint64, error) {
	var out []uint64
	var err error
	st := g.pinned()
	defer st.unpin()
	st.each(func(x *hnsw.Index) bool {
		var ids []uint64
		ids, err = x.IDs()
		out = append(out, ids...)
		return err == nil
	})
	return out, err
}

// GetVectors copies the stored vectors of keys into out (len(keys)·Dim);
// a key no segment holds fails with hnsw.ErrNotFound.
func (g *Graphs) GetVectors(keys []uint64, out []float32) error {
	st := g.pinned()
	defer st.unpin()
	if len(st.sealed) == 0 {
		return st.active.GetVectors(keys, out)
	}
	dim := g.cfg.Dim
	if len(out) != len(keys)*dim {
		return fmt.Errorf("%w: output holds %d floats, want %d", hnsw.ErrInvalidArgument, len(out), len(keys)*dim)
	}
	for i, k := range keys {
		x := st.owner(k)
		if x == nil {
			return fmt.Errorf("%w: ids[%d] = %d", hnsw.ErrNotFound, i, k)
		}
		if err := x.GetVectors(keys[i:i+1], out[i*dim:(i+1)*dim]); err != nil {
			return err
		}
	}
	return nil
}

// CheckIntegrity checks every segment's graph.
func (g *Graphs) CheckIntegrity() error {
	var err error
	st := g.pinned()
	defer st.unpin()
	st.each(func(x *hnsw.Index) bool { err = x.CheckIntegrity(); return err == nil })
	return err
}

// Close closes every segment's index.
func (g *Graphs) Close() error {
	var errs []error
	g.state.Load().each(func(x *hnsw.Index) bool { errs = append(errs, x.Close()); return true })
	return errors.Join(errs...)
}

// SealActive turns the active graph into a sealed segment that no file
// holds yet (a merge may then rewrite it; the next checkpoint writes
// what it becomes) and starts an empty one. The caller holds the field's
// build lock.
func (g *Graphs) SealActive() error {
	sealKeys(g.state.Load().active)
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state.Load()
	fresh, err := g.empty(st.active)
	if err != nil {
		return err
	}
	g.state.Store(&graphState{active: fresh, sealed: append(slices.Clip(st.sealed), &Graph{index: st.active})})
	return nil
}

// Renumber renumbers the active graph (hnsw.Index.Renumber).
func (g *Graphs) Renumber(growth float64) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state.Load().active.Renumber(growth)
}

type mergeScratch struct {
	keys  [][]int64
	dists [][]float32
	at    []int
}

var mergePool = sync.Pool{New: func() any { return new(mergeScratch) }}

// SearchFiltered searches every segment holding live keys with the same
// arguments as hnsw.Index.SearchFiltered (each segment plans its own
// filter) and merges their k nearest, nearest first (ties by key, as
// each segment orders its own: hnsw orderTies). The stats are the segments' merged (hnsw.SearchStats.Merge).
func (g *Graphs) SearchFiltered(queries []float32, k, ef, threads int, filter *hnsw.Filter,
	outKeys []int64, outDists []float32) (hnsw.SearchStats, error) {
	st := g.pinned()
	defer st.unpin()
	if filter != nil && filter.Allow != nil && !filter.Sorted && slices.IsSorted(filter.Allow) {
		// Checked once here, so that each segment intersects the list
		// with its own sorted keys instead of looking up all of it.
		sorted := *filter
		sorted.Sorted = true
		filter = &sorted
	}
	var only *hnsw.Index
	n := 0
	st.each(func(x *hnsw.Index) bool {
		if x.Len() > 0 {
			only = x
			n++
		}
		return true
	})
	switch n {
	case 0:
		return st.active.SearchFiltered(queries, k, ef, threads, filter, outKeys, outDists)
	case 1:
		return only.SearchFiltered(queries, k, ef, threads, filter, outKeys, outDists)
	}
	nq := len(queries) / g.cfg.Dim
	s := mergePool.Get().(*mergeScratch)
	defer mergePool.Put(s)
	s.keys, s.dists = s.keys[:0], s.dists[:0]
	stats := hnsw.SearchStats{Plan: hnsw.PlanEmpty}
	var err error
	st.each(func(x *hnsw.Index) bool {
		if x.Len() == 0 {
			return true
		}
		i := len(s.keys)
		if i == cap(s.keys) {
			s.keys, s.dists = append(s.keys, nil), append(s.dists, nil)
		} else {
			s.keys, s.dists = s.keys[:i+1], s.dists[:i+1]
		}
		s.keys[i] = slices.Grow(s.keys[i][:0], nq*k)[:nq*k]
		s.dists[i] = slices.Grow(s.dists[i][:0], nq*k)[:nq*k]
		var one hnsw.SearchStats
		one, err = x.SearchFiltered(queries, k, ef, threads, filter, s.keys[i], s.dists[i])
		if err != nil {
			return false
		}
		stats.Merge(one)
		return true
	})
	if err != nil {
		return stats, err
	}
	segs := len(s.keys)
	s.at = slices.Grow(s.at[:0], segs)[:segs]
	for q := range nq {
		clear(s.at)
		for w := range k {
			best, bestD, bestKey := -1, float32(math.Inf(1)), int64(0)
			for i := range segs {
				j := s.at[i]
				if j == k {
					continue
				}
				key, d := s.keys[i][q*k+j], s.dists[i][q*k+j]
				if key != -1 && (best < 0 || cmp.Less(d, bestD) || (d == bestD && key < bestKey)) {
					best, bestD, bestKey = i, d, key
				}
			}
			if best < 0 {
				outKeys[q*k+w], outDists[q*k+w] = -1, float32(math.Inf(1))
				continue
			}
			outKeys[q*k+w], outDists[q*k+w] = s.keys[best][q*k+s.at[best]], bestD
			s.at[best]++
		}
	}
	return stats, nil
}
