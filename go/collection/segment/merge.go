package segment

import (
	"cmp"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/gcpercent"
)

// MergePolicy says when sealed segments are merged (the package doc,
// "Merging").
type MergePolicy struct {
	// Factor is how many segments of one size tier are merged into one
	// (tiers are powers of Factor of the live keys), and MaxSegments the
	// count past which the smallest are merged whatever their sizes.
	Factor, MaxSegments int
	// A segment whose tombstones are at least TombstoneRatio of its
	// nodes, and at least MinTombstones, is rewritten alone; a ratio
	// below 0 never.
	TombstoneRatio float64
	MinTombstones  int
	// MaxMergedKeys bounds the live keys of a merge of several segments
	// (0: no bound): a merge holds its new graph beside the collection
	// until it lands, so the bound is what a merge adds to the memory. A
	// segment's rewrite for its tombstones is never larger than the
	// segment, and is not bounded.
	MaxMergedKeys int
	// Idle says no write came since the policy's previous look: segments
	// of similar sizes are then merged (the package doc, "Merging"),
	// since every segment costs each query a search.
	Idle bool
}

// similarSizes is how much larger than the others of a merge together
// its largest segment may be (idle merges): every merge then makes each
// of its keys' segment at least 1.5 times larger, so a key is rewritten
// at most log1.5(N / the smallest seal) times, and a burst of small seals
// is merged among its own kind, never into a large segment that would be
// rebuilt for it.
const similarSizes = 2

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
	// query searches; idle, the tiers and then the similar sizes run.
	if !p.Idle && (p.MaxSegments <= 0 || len(sealed) <= p.MaxSegments) {
		return nil, false
	}
	// Segments at or above half the bound merge with nothing (two of them
	// would pass it): they are the tiered policy's full segments.
	var open []*Graph
	for _, s := range sealed {
		if p.MaxMergedKeys <= 0 || 2*s.index.Len() < p.MaxMergedKeys {
			open = append(open, s)
		}
	}
	tier := func(s *Graph) int {
		return int(math.Log(float64(s.index.Len()+1)) / math.Log(float64(p.Factor)))
	}
	tiers := map[int][]*Graph{}
	for _, s := range open {
		t := tier(s)
		tiers[t] = append(tiers[t], s)
	}
	// The lowest tier holding Factor segments (idle), or, past the
	// bound, the lowest holding two: at most Factor of it, the smallest,
	// within MaxMergedKeys.
	need := p.Factor
	if !p.Idle {
		need = 2
	}
	var lows []int
	for t, ss := range tiers {
		if len(ss) >= need {
			lows = append(lows, t)
		}
	}
	slices.Sort(lows)
	for _, t := range lows {
		if ss := p.bounded(bySize(tiers[t]), p.Factor); len(ss) >= 2 {
			return ss, false
		}
	}
	if !p.Idle { // past the bound, the smallest of every tier
		if ss := p.bounded(bySize(open), p.Factor); len(ss) >= 2 {
			return ss, false
		}
		return nil, false
	}
	return p.similar(bySize(open)), false
}

// bySize sorts segments by live keys, smallest first (stable: oldest
// first among equals).
func bySize(ss []*Graph) []*Graph {
	return slices.SortedStableFunc(slices.Values(ss), func(a, b *Graph) int {
		return cmp.Compare(a.index.Len(), b.index.Len())
	})
}

// bounded returns the longest prefix of ss (smallest first) of at most
// most segments whose live keys stay within MaxMergedKeys.
func (p MergePolicy) bounded(ss []*Graph, most int) []*Graph {
	keys := 0
	for i, s := range ss {
		keys += s.index.Len()
		if i == most || (p.MaxMergedKeys > 0 && keys > p.MaxMergedKeys) {
			return ss[:i]
		}
	}
	return ss
}

// similar returns the idle merge of segments of similar sizes (nil:
// none): in ss, smallest first, the first run of two or more segments
// holding live keys in which each holds at most similarSizes times the
// keys of the smaller ones of the run together, within MaxMergedKeys
// (the run from the smallest, else from the next, and so on). A large segment is so rebuilt only when the merge at least
// grows it by half, never for a small burst: after 3 bursts of 5 keys
// beside segments of 300 and 70, the bursts become one of 15 and the 70
// and 300 stay as they are (the policy before rebuilt the 70 with each
// burst).
func (p MergePolicy) similar(ss []*Graph) []*Graph {
	ss = slices.DeleteFunc(slices.Clone(ss), func(s *Graph) bool { return s.index.Len() == 0 })
	for from := range ss {
		run, keys := ss[from:from], 0
		for _, s := range ss[from:] {
			n := s.index.Len()
			if (len(run) > 0 && n > similarSizes*keys) || (p.MaxMergedKeys > 0 && keys+n > p.MaxMergedKeys) {
				break
			}
			run, keys = run[:len(run)+1], keys+n
		}
		if len(run) >= 2 {
			return run
		}
	}
	return nil
}

// mergeGCPercent is GOGC while a merge builds (package gcpercent): the
// heap then carries garbage of at most a tenth of its live memory, which
// the merge's new graph has just raised. The merge's own chunks are
// returned besides (debug.FreeOSMemory after each).
const mergeGCPercent = 10

// mergeChunk is how many keys a merge copies out of its sources and
// inserts at a time: what it holds besides the sources and the new graph.
const mergeChunk = 8192

// releaseWait bounds how long a merge waits for the searches holding its
// sources before it returns their memory (they take milliseconds).
const releaseWait = 10 * time.Second

// mergeRun is how many keys' vectors a merge copies under one read lock
// of a source's id map: a removal from the source (the builder's) waits
// for at most that copy (1,024 x 128 floats: 512 KiB).
const mergeRun = 1024

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
	defer gcpercent.Lower(mergeGCPercent)()
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
	live := 0
	for _, s := range srcs {
		live += s.index.Len()
	}
	// The new graph's arrays are allocated once, at their final size:
	// grown by half at each fill, every growth copied them all and left
	// the copy before to the collector (TestSegmentBenchOverwrite at 100k:
	// the merge's peak was 3.8x the steady RSS).
	if err := merged.Reserve(live); err != nil {
		return fmt.Errorf("segment: merge: %w", err)
	}
	// The memory the writes meanwhile leave to the collector goes back
	// before the merge and after each chunk: with GOGC's default the heap
	// may hold as much garbage as live memory before a collection, and
	// the merge's new graph raises the live memory, so that without this
	// the collector let the garbage grow with it.
	debug.FreeOSMemory()
	keys := make([]uint64, 0, live) // every key put into merged
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
		debug.FreeOSMemory()
		// The pages of mapped sources read so far (by this copy and the
		// searches) leave the resident set (MapSources).
		for _, s := range srcs {
			s.index.DropResident()
		}
		return nil
	}
	for _, s := range srcs {
		// One source (a rewrite for its tombstones, the common merge
		// under overwrites) is copied in its breadth-first order: the new
		// graph's memory then follows the neighbourhoods as a renumbered
		// graph's does, and it is not renumbered after, a copy of the
		// whole new graph that was the merge's peak
		// (TestSegmentBenchOverwrite at 100k: 230 MiB of heap against 154
		// while it built). Several are copied in insertion order and the
		// result renumbered.
		list := s.index.IDs
		if len(srcs) == 1 {
			list = s.index.IDsBreadthFirst
		}
		ids, err := list()
		if err != nil {
			return err
		}
		// By runs of up to mergeRun keys, one GetVectors each (one lock
		// and one lookup pass per run, not per key); a run with a key
		// removed after IDs is copied again key by key, skipping it: it
		// is gone from srcs, and the swap would drop it anyway.
		for len(ids) > 0 {
			at := len(chunkKeys)
			run := ids[:min(len(ids), mergeChunk-at, mergeRun)]
			ids = ids[len(run):]
			if err := s.index.GetVectors(run, chunk[at*dim:(at+len(run))*dim]); err == nil {
				chunkKeys = append(chunkKeys, run...)
			} else {
				for i, id := range run {
					at := len(chunkKeys)
					if s.index.GetVectors(run[i:i+1], chunk[at*dim:(at+1)*dim]) == nil {
						chunkKeys = append(chunkKeys, id)
					}
				}
			}
			if len(chunkKeys) == mergeChunk {
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

	sealKeys(merged) // the renumbering below keeps it current
	if err := g.swap(srcs, merged, keys); err != nil {
		return err
	}
	// The sources are garbage once the searches that began before the
	// swap are done with them (or unmapped then): their memory goes back
	// then, before a renumbering copies the new graph, so the merge's
	// peak is the sources and one new graph, not two. Returned at once,
	// the sources stayed: a search in flight held them, and nothing
	// collected them until the heap reached GOGC's goal (at 100k the RSS
	// stayed 1.5x the steady one after the merge). Searches go on
	// meanwhile (hnsw.Index.Renumber). A failed renumbering (a closed
	// index) changes no answer, only the locality: the merge has landed
	// all the same.
	for _, s := range srcs {
		s.waitReleased(releaseWait)
	}
	debug.FreeOSMemory()
	if len(srcs) > 1 {
		_, _ = merged.Renumber(0)
	}
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
	// The sources are in no state now: nothing keeps them from the
	// collector but the readers still holding them (Merge returns them to
	// the system before it renumbers the new graph).
	g.merging = nil
	for _, s := range srcs {
		s.released = make(chan struct{})
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
