package hnsw

import (
	"unsafe"

	"github.com/strata-db/strata/go/quant/rabitq"
)

// Memory is what each part of an index takes, in bytes, for its Nodes
// allocated nodes (live ones and tombstones); a part's bytes per vector is
// its bytes divided by Nodes. Arrays are counted up to the nodes they
// hold, not their spare capacity.
type Memory struct {
	Nodes int
	// Graph is the links and per-node bookkeeping: level-0 and upper link
	// lists, levels, ids, flags, the spanning tree and the insertion order.
	Graph int
	// Floats is the float32 vectors (0 for an SQ8 index without rerank);
	// they are in the file, not in memory, when the index was loaded with
	// LoadOptions.MmapVectors (Mapped).
	Floats int
	// SQ8 is the SQ8 codes and their inner-product terms.
	SQ8 int
	// RaBitQCodes is the current RaBitQ codes: 1-bit codes, and extended
	// codes with more bits; RaBitQFactors their per-node factors;
	// RaBitQBlocks the level-0 neighbour records the traversal reads
	// (rabitq_blocks.go: each node's neighbours' codes and factors again),
	// or the quantized graph's rows (rabitq_qg.go: each node's vector, its
	// neighbours' ids, codes and factors).
	RaBitQCodes, RaBitQFactors, RaBitQBlocks int
}

// Memory reports the bytes each part of the index takes.
func (x *Index) Memory() Memory {
	g := x.graph.Load()
	n := g.count
	m := Memory{Nodes: n, Graph: 4*(n*g.stride0+g.upperUsed) + n*(4+1+8+4)}
	if g.parent != nil { // a codes-only graph keeps no tree
		m.Graph += 4 * n
	}
	if g.rank != nil {
		m.Graph += 4 * n
	}
	if g.floats {
		m.Floats = 4 * n * g.dim
	}
	if g.sq != nil {
		m.SQ8 = n*g.dim + 4*n
	}
	if rq := x.codesOf(g); rq != nil {
		m.RaBitQCodes = 8*rq.n*rq.words + len(rq.ex) + 8*len(rq.planes)
		m.RaBitQFactors = 8*rq.n*rowFactorWords + len(rq.fx)*int(unsafe.Sizeof(rabitq.Factors{})) + 4*len(rq.exTerms)
		if rq.blocks != nil {
			m.RaBitQBlocks = 4 * len(rq.blocks.words)
		}
		if rq.qg != nil {
			m.RaBitQBlocks = rq.qg.bytes()
		}
	}
	return m
}
