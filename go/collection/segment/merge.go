package segment

import (
	"cmp"
	"fmt"
	"math"
	"runtime/debug"
	"slices"

	"github.com/strata-db/strata/go/hnsw"
)

// MergePolicy says when sealed segments are merged (the package doc,
// "Merging").
type MergePolicy struct {
	// Factor is how many segments of one size tier are merged into one
	// (tiers are powers of Factor of the live keys), and MaxSegments the
	// count past which the Factor smallest are merged whatever their
	// sizes.
	Factor, MaxSegments int
	// A segment whose tombstones are at least TombstoneRatio of its
	// nodes, and at least MinTombstones, is rewritten alone; a ratio
	// below 0 never.
	TombstoneRatio float64
	MinTombstones  int
	// Idle says no write came since the policy's previous look: the
	// sealed segments are then merged down to at most two (the package
	// doc, "Merging"), since every segment costs each query a search.
	Idle bool
}

// Plan returns the sealed segments the policy merges next (nil: none)
// and whether it is a rewrite for tombstones.
func (g *Graphs) Plan(p MergePolicy) (srcs []*Graph, rewrite bool) {
	sealed := g.state.Load().sealed
	if p.TombstoneRatio >= 0 {
		for _, s := range sealed {
			if s.index.Len() == 0 { // nothing live: the merge drops it
				return []*Graph{s}, true
			}
			dead, live := s.index.Tombstones(), s.index.Len()
			if dead >= p.MinTombstones && float64(dead) >= p.TombstoneRatio*float64(dead+live) {
				return []*Graph{s}, true
			}
		}
	}
	if p.Factor < 2 {
		return nil, false
	}
	// While writes come, merges wait (their bytes and cores go to the
	// ingest) unless the count passes MaxSegments, which bounds what a
	// query searches; idle, the tiers and then the merge down run.
	if !p.Idle && (p.MaxSegments <= 0 || len(sealed) <= p.MaxSegments) {
		return nil, false
	}
	tier := func(s *Graph) int {
		return int(math.Log(float64(s.index.Len()+1)) / math.Log(float64(p.Factor)))
	}
	tiers := map[int][]*Graph{}
	for _, s := range sealed {
		t := tier(s)
		tiers[t] = append(tiers[t], s)
	}
	// The lowest tier holding Factor segments (idle), or, past the
	// bound, the lowest holding two: at most Factor of it, the smallest.
	need := p.Factor
	if !p.Idle {
		need = 2
	}
	low := math.MaxInt
	for t, ss := range tiers {
		if len(ss) >= need {
			low = min(low, t)
		}
	}
	bySize := func(ss []*Graph) []*Graph {
		return slices.SortedStableFunc(slices.Values(ss), func(a, b *Graph) int {
			return cmp.Compare(a.index.Len(), b.index.Len())
		})
	}
	if low != math.MaxInt {
		ss := bySize(tiers[low])
		return ss[:min(p.Factor, len(ss))], false
	}
	if !p.Idle { // past the bound, every segment of its own tier
		ss := bySize(sealed)
		return ss[:min(p.Factor, len(ss))], false
	}
	return idleMerge(sealed), false
}

// idleMerge returns the segments an idle collection merges (nil: none):
// with three or more holding live keys, all but the largest, and all of
// them once the others together hold at least as many live keys as the
// largest (two segments then too), so that the largest is rebuilt only
// when that at least doubles it. What is left is one segment, or the
// largest and one smaller.
func idleMerge(sealed []*Graph) []*Graph {
	var live []*Graph
	largest, rest := 0, 0
	for _, s := range sealed {
		if n := s.index.Len(); n > 0 {
			live = append(live, s)
			rest += n
			largest = max(largest, n)
		}
	}
	rest -= largest
	switch {
	case len(live) >= 2 && rest >= largest:
		return live
	case len(live) >= 3:
		at := slices.IndexFunc(live, func(s *Graph) bool { return s.index.Len() == largest })
		return slices.Delete(live, at, at+1)
	}
	return nil
}

// mergeChunk is how many keys a merge copies out of its sources and
// inserts at a time: what it holds besides the sources and the new graph.
const mergeChunk = 8192

// Merge builds one graph of the live keys of srcs (sealed segments of g)
// and puts it in their place. The build holds no lock, so writers and
// readers go on: keys the builder removes from srcs meanwhile are
// removed from the new graph before the swap, under mu. The sources'
// vectors are streamed into the new graph mergeChunk keys at a time
// (never a copy of them all), and once it has replaced them (their
// memory returned) the new graph is renumbered breadth-first for
// locality, as one large Add would be. The new segment
// has no file until a checkpoint writes it (the collection runs one as
// soon as a merge lands); the old ones' files stay until no kept
// manifest names them.
func (g *Graphs) Merge(srcs []*Graph, threads int) error {
	if len(srcs) == 0 {
		return nil
	}
	g.mu.Lock()
	g.merging = srcs
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.merging = nil
		g.mu.Unlock()
	}()
	dim := g.cfg.Dim
	merged, err := g.empty(srcs[0].index)
	if err != nil {
		return err
	}
	var keys []uint64 // every key put into merged
	chunkKeys := make([]uint64, 0, mergeChunk)
	chunk := make([]float32, mergeChunk*dim)
	flush := func() error {
		if len(chunkKeys) == 0 {
			return nil
		}
		// As the sources store them (not normalised again): a merge does
		// not move a vector's bits.
		if err := merged.AddStored(chunk[:len(chunkKeys)*dim], chunkKeys, threads); err != nil {
			return fmt.Errorf("segment: merge: %w", err)
		}
		keys = append(keys, chunkKeys...)
		chunkKeys = chunkKeys[:0]
		return nil
	}
	for _, s := range srcs {
		ids, err := s.index.IDs()
		if err != nil {
			return err
		}
		for i, id := range ids {
			at := len(chunkKeys)
			// A key removed after IDs is skipped: it is gone from srcs,
			// and the swap would drop it anyway.
			if err := s.index.GetVectors(ids[i:i+1], chunk[at*dim:(at+1)*dim]); err != nil {
				continue
			}
			if chunkKeys = append(chunkKeys, id); len(chunkKeys) == mergeChunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	chunk = nil

	if err := g.swap(srcs, merged, keys); err != nil {
		return err
	}
	// The sources are garbage now (or unmapped once no reader holds
	// them): their memory goes back before the renumbering copies the new
	// graph, so the merge's peak is the sources and one new graph, not
	// two. Searches go on meanwhile (hnsw.Index.Renumber).
	// A failed renumbering (a closed index) changes no answer, only the
	// locality: the merge has landed all the same.
	debug.FreeOSMemory()
	_, _ = merged.Renumber(0)
	return nil
}

// swap puts merged in the place of srcs, first removing from it the keys
// the builder removed from srcs since they were read.
func (g *Graphs) swap(srcs []*Graph, merged *hnsw.Index, keys []uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state.Load()
	in := map[*Graph]bool{}
	for _, s := range srcs {
		if !slices.Contains(st.sealed, s) {
			return fmt.Errorf("segment: merge: a source segment is gone (two merges at once)")
		}
		in[s] = true
	}
	var gone []uint64
	for _, k := range keys {
		if !slices.ContainsFunc(srcs, func(s *Graph) bool { return s.index.Contains(k) }) {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		if _, err := merged.Remove(gone, false); err != nil {
			return fmt.Errorf("segment: merge: %w", err)
		}
	}
	next := make([]*Graph, 0, len(st.sealed))
	placed := false
	for _, s := range st.sealed {
		if !in[s] {
			next = append(next, s)
		} else if !placed {
			placed = true
			if merged.Len() > 0 {
				next = append(next, &Graph{index: merged})
			}
		}
	}
	g.state.Store(&graphState{active: st.active, sealed: next})
	for _, s := range srcs {
		s.retire() // a mapped source is unmapped once no reader holds it
	}
	return nil
}

// Loaded returns the segments of a field read from disk: sealed, oldest
// first, and an empty active graph with their quantizer.
func Loaded(cfg hnsw.Config, sealed []*Graph) (*Graphs, error) {
	g := &Graphs{cfg: cfg}
	like, err := hnsw.New(cfg)
	if err != nil {
		return nil, err
	}
	for _, s := range sealed {
		if s.index.Quantizer() != nil {
			like = s.index
		}
	}
	active, err := g.empty(like)
	if err != nil {
		return nil, err
	}
	g.state.Store(&graphState{active: active, sealed: sealed})
	return g, nil
}
