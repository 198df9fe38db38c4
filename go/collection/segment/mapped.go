package segment

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/strata-db/strata/go/hnsw"
)

// Segments leave a state when a merge replaces them or MapSealed puts a
// mapped copy in their place. A reader may still be searching one it
// loaded before; closing its index then (which unmaps its vectors) would
// fault the reader. So every read that touches vectors pins the sealed
// segments of the state it loaded, and a replaced segment is retired: its
// pin count is pushed far below zero, and whoever brings it to exactly
// retiredPins (the retire itself if no reader holds it, else the last
// reader to unpin) closes its index. A reader that pins a retired segment
// sees a negative count, lets go and loads the state again, which no
// longer holds it (the state is swapped before its segments are retired).
const retiredPins = math.MinInt64 / 2

// pinned loads the current state with its sealed segments pinned; the
// caller unpins it when its read is done.
func (g *Graphs) pinned() *graphState {
	for {
		st := g.state.Load()
		if st.pin() {
			return st
		}
	}
}

// pin pins every sealed segment, or none if one is retired.
func (st *graphState) pin() bool {
	for i, s := range st.sealed {
		if s.pins.Add(1) < 0 {
			for _, p := range st.sealed[:i+1] {
				p.unpin()
			}
			return false
		}
	}
	return true
}

func (st *graphState) unpin() {
	for _, s := range st.sealed {
		s.unpin()
	}
}

func (s *Graph) unpin() {
	if s.pins.Add(-1) == retiredPins {
		s.close()
	}
}

// retire marks a segment that no current state holds; the caller has
// stored the state without it.
func (s *Graph) retire() {
	if s.pins.Add(retiredPins) == retiredPins {
		s.close()
	}
}

// close releases a retired segment's index. Its only resource is a
// mapping (an index in memory is left to the collector), and munmap of
// a mapping we made fails only on a bad address: nothing to report.
// It then tells whoever waits for the segment's readers (released).
//
// It runs once, though the count can come back to retiredPins: a reader
// that loaded the state before the swap may pin a segment already
// retired and closed, see the negative count and unpin it, back to
// exactly retiredPins (that second close of released panicked a served
// query: "close of closed channel").
func (s *Graph) close() {
	if !s.closed.CompareAndSwap(false, true) {
		return
	}
	_ = s.index.Close()
	if s.released != nil {
		close(s.released)
	}
}

// waitReleased waits until no reader holds the retired segment s, made
// with released set before its retire (merge's swap), or for at most
// limit: until then its memory cannot be returned.
func (s *Graph) waitReleased(limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-s.released:
	case <-t.C:
	}
}

// Mapped is the number of sealed segments whose float vectors are
// memory-mapped from their files.
func (g *Graphs) Mapped() int {
	st := g.pinned()
	defer st.unpin()
	n := 0
	for _, s := range st.sealed {
		if s.index.Mapped() {
			n++
		}
	}
	return n
}

// MapSealed puts in the place of each sealed segment that has a file but
// holds its float vectors in memory the index load reads from that file
// with its vectors mapped (hnsw.LoadOptions.MmapVectors), so that the
// memory of the copy goes: for a field of mmap placement, after a
// checkpoint has made the files it wrote durable. Keys removed since the
// file was written are removed from the loaded index before it takes the
// segment's place; a segment a merge is reading is skipped (the merged
// one is mapped after the checkpoint that writes it). Loading holds no
// lock; readers go on with either copy, and the old one goes when the
// last reader of it is done. It returns how many segments it switched.
func (g *Graphs) MapSealed(load func(file string) (*hnsw.Index, error)) (int, error) {
	type job struct {
		seg  *Graph
		file string
	}
	var todo []job
	g.mu.Lock()
	for _, s := range g.state.Load().sealed {
		if s.file != "" && !s.index.Mapped() && !slices.Contains(g.merging, s) {
			todo = append(todo, job{s, s.file})
		}
	}
	g.mu.Unlock()
	switched := 0
	for _, j := range todo {
		x, err := load(j.file)
		if err != nil {
			return switched, fmt.Errorf("segment %s: mapping: %w", j.file, err)
		}
		sealKeys(x)
		now, err := g.swapMapped(j.seg, x)
		if now == nil {
			x.Close()
		}
		if err != nil {
			return switched, err
		}
		if now != nil {
			switched++
		}
	}
	return switched, nil
}

// MapSources returns srcs (sealed segments a merge is about to read) with
// each that has a file but holds its float vectors in memory replaced, as
// MapSealed does, by its file's index with the vectors mapped, once no
// reader holds the copy in memory: the merge then reads them from the
// page cache and drops its pages from its resident set as it goes
// (Merge), so that the sources' vectors and the new graph are not both
// in the process's memory (a field of ram placement gets its merged
// segment in memory as before). A source it cannot map is kept as it is.
func (g *Graphs) MapSources(srcs []*Graph, load func(file string) (*hnsw.Index, error)) []*Graph {
	// The load allocates the file's links and ids beside the copy in
	// memory: the garbage of the writes before goes back first (at 100k
	// the heap held 163 MiB for 110 live when the load began).
	debug.FreeOSMemory()
	out := slices.Clone(srcs)
	for i, s := range srcs {
		g.mu.Lock()
		// A segment Open loaded has its vectors in its file's mapping
		// already (hnsw.LoadOptions.DeferCRC, ram placement too): a
		// second load mapped the same file again, and the resident set
		// counted its pages twice (at 100k the merge's peak, 49 MiB of
		// file pages more, TestSegmentBenchOverwrite).
		file, skip := s.file, s.file == "" || s.index.VectorsInFile() || slices.Contains(g.merging, s)
		g.mu.Unlock()
		if skip {
			continue
		}
		x, err := load(file)
		if err != nil {
			continue
		}
		if !x.Mapped() { // no float vectors to map (codes only)
			x.Close()
			continue
		}
		sealKeys(x) // as MapSealed's copies: searches may meet it before the merge lands
		now, err := g.swapMapped(s, x)
		if now == nil || err != nil {
			x.Close()
			continue
		}
		s.waitReleased(releaseWait)
		debug.FreeOSMemory() // the copy in memory, before the next load
		out[i] = now
	}
	return out
}

// swapMapped replaces old by a segment of x, its file's index, if old is
// still sealed and no merge reads it, and returns the new segment (nil:
// not replaced).
func (g *Graphs) swapMapped(old *Graph, x *hnsw.Index) (*Graph, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state.Load()
	i := slices.Index(st.sealed, old)
	if i < 0 || slices.Contains(g.merging, old) {
		return nil, nil
	}
	if late := old.deleted[old.inFile:]; len(late) > 0 {
		if _, err := x.Remove(late, false); err != nil {
			return nil, fmt.Errorf("segment %s: mapping: tombstones: %w", old.file, err)
		}
	}
	if x.Len() != old.index.Len() {
		return nil, fmt.Errorf("segment %s: mapping: the file holds %d live keys, the segment %d", old.file, x.Len(), old.index.Len())
	}
	sealed := slices.Clone(st.sealed)
	now := &Graph{index: x, file: old.file, deleted: slices.Clip(old.deleted), inFile: old.inFile}
	sealed[i] = now
	g.state.Store(&graphState{active: st.active, sealed: sealed})
	old.released = make(chan struct{})
	old.retire()
	return now, nil
}

// Release retires every sealed segment, for a collection that is closing:
// their mappings go as soon as no reader holds them (at once if none
// does), where they used to stay until the process exited (and held the
// disk space of files removed meanwhile, a dropped collection's). The
// state is swapped first, as for a merge, so a reader that comes after
// finds no sealed segment instead of a retired one. The active graph (in
// memory) stays.
func (g *Graphs) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state.Load()
	g.state.Store(&graphState{active: st.active})
	for _, s := range st.sealed {
		s.retire()
	}
}
