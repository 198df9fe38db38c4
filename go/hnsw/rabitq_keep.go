package hnsw

import "fmt"

// An index created with Config.RaBitQBits keeps its RaBitQ codes current
// by itself, as an SQ8 index keeps its codes: every call that changes the
// graph under writeMu (Add, Compact, Renumber, and Load) ends with
// keepRaBitQ, so graph searches run on codes except while such a call is
// running, when they search the float vectors (rabitqFor).
//
//   - The quantizer (k-means centroids; the rotation comes from
//     Config.Seed) is fitted to the stored vectors by the first Add, and
//     fitted again to all of them whenever the index has doubled since, until
//     it was fitted to rabitqSettled nodes: a small first batch does not
//     leave poor centroids for good, and the refits cost at most about
//     twice the last one.
//   - Otherwise an Add codes only its new nodes, appended to the rows:
//     nodes keep their numbers and their vectors (an upsert is a new
//     node). A call that renumbers the graph (a large Add, Compact,
//     Renumber) codes every node again with the same quantizer.

// rabitqSettled is the node count from which the quantizer is not refitted
// as the index grows: rabitqClusters has reached its cap.
const rabitqSettled = 64 * 1000

// keepRaBitQ brings the codes of an index with Config.RaBitQBits up to
// date with its graph; renumbered says the call that changed the graph
// gave its nodes new numbers, and prefix, if not nil, codes the first of
// them in the new numbering (rabitqAside). Callers hold writeMu.
func (x *Index) keepRaBitQ(renumbered bool, prefix *rabitqCodes) error {
	if x.cfg.RaBitQBits == 0 {
		return nil
	}
	g := x.graph.Load()
	old := x.rabitq.Load()
	switch {
	case g.count == 0:
		x.rabitq.Store(nil)
	case old != nil && x.rabitqFor(g) == old:
	case old == nil || old.trained < rabitqSettled && g.count >= 2*old.trained:
		if err := x.buildRaBitQLocked(x.cfg.RaBitQBits); err != nil {
			x.rabitq.Store(nil)
			return fmt.Errorf("hnsw: rabitq codes of %d nodes: %w", g.count, err)
		}
	case renumbered || old.n > g.count:
		if prefix == nil || prefix.q != old.q || prefix.n > g.count {
			prefix = nil
		}
		x.rabitq.Store(x.codeRaBitQ(g, old.q, old.trained, prefix))
	default:
		x.rabitq.Store(x.codeRaBitQ(g, old.q, old.trained, old))
	}
	return nil
}

// rabitqAside codes g, a graph Compact builds aside, with the current
// quantizer and without the write lock, so that the locked step codes
// only the nodes carried over into it (nil without codes to keep).
func (x *Index) rabitqAside(g *graph) *rabitqCodes {
	old := x.rabitq.Load()
	if x.cfg.RaBitQBits == 0 || old == nil || g.count == 0 {
		return nil
	}
	return x.codeRaBitQ(g, old.q, old.trained, nil)
}
