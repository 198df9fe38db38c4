package segment

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/hnsw"
)

// Saving is what a checkpoint writes of one sealed segment: its frozen
// graph if no file holds it yet (File is then the name it is to have),
// and the keys deleted since its file was written.
type Saving struct {
	File    string
	Frozen  *hnsw.Frozen // nil: the segment's file exists already
	Deleted []uint64     // ascending
	Live    int
}

// Seal turns the active graph, if it holds any node, into a sealed
// segment and starts an empty active graph with the same quantizer; it
// then returns what a checkpoint must write of every sealed segment,
// naming the new files with name. The caller holds the field's build
// lock, so that nothing is inserted meanwhile.
func (g *Graphs) Seal(name func() string) ([]Saving, error) {
	sealKeys(g.state.Load().active)
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state.Load()
	if st.active.Len() > 0 || st.active.Tombstones() > 0 {
		fresh, err := g.empty(st.active)
		if err != nil {
			return nil, err
		}
		sealed := st.sealed
		if st.active.Len() > 0 { // an active graph of tombstones alone is dropped
			sealed = append(slices.Clip(sealed), &Graph{index: st.active})
		}
		st = &graphState{active: fresh, sealed: sealed}
		g.state.Store(st)
	}
	out := make([]Saving, 0, len(st.sealed))
	for _, s := range st.sealed {
		var sv Saving
		if s.file == "" {
			frozen, err := s.index.Freeze()
			if err != nil {
				return nil, err
			}
			s.file, s.inFile = name(), len(s.deleted)
			sv.Frozen = frozen
		}
		sv.File, sv.Live = s.file, s.index.Len()
		sv.Deleted = slices.Sorted(slices.Values(s.deleted[s.inFile:]))
		out = append(out, sv)
	}
	return out, nil
}

// sealKeys builds the sorted key table of an index that is becoming a
// sealed segment (hnsw.Index.SealKeys), before it is one: a filtered
// search of a sealed segment intersects its allow list with the table
// from the first query on. It runs before mu is taken (the build lock
// keeps inserts out; removals meanwhile are tombstones the table
// handles), so that writers do not wait for the sort.
func sealKeys(x *hnsw.Index) {
	if x.Len() > 0 {
		x.SealKeys()
	}
}

// empty returns a new empty graph of the field's parameters sharing
// like's quantizer.
func (g *Graphs) empty(like *hnsw.Index) (*hnsw.Index, error) {
	x, err := hnsw.New(g.cfg)
	if err != nil {
		return nil, err
	}
	if q := like.Quantizer(); q != nil && g.cfg.Quantization == hnsw.QuantSQ8 {
		if err := x.SetQuantizer(q); err != nil {
			return nil, fmt.Errorf("segment: %w", err)
		}
	}
	return x, nil
}
