package segment

import "fmt"

// Verify checks the CRCs that Open deferred in every sealed segment of
// the current state (hnsw.Index.Verify, with pause between pieces of 1
// MiB), holding a pin on them so that a merge's swap cannot unmap one
// meanwhile. The first damaged segment stops it; the error names the
// segment file, and through it the section. A segment with nothing
// deferred costs nothing.
func (g *Graphs) Verify(pause func() error) error {
	st := g.pinned()
	defer st.unpin()
	for _, s := range st.sealed {
		if err := s.index.Verify(pause); err != nil {
			g.mu.Lock()
			file := s.file
			g.mu.Unlock()
			return fmt.Errorf("segment %s: %w", file, err)
		}
	}
	return nil
}

// Unverified is how many bytes of the sealed segments Verify has left.
func (g *Graphs) Unverified() uint64 {
	st := g.pinned()
	defer st.unpin()
	var n uint64
	for _, s := range st.sealed {
		n += s.index.Unverified()
	}
	return n
}
