package hnsw

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// requireCurrentCodes fails unless x's RaBitQ codes describe its graph as
// it is now, node for node as a fresh coding with the same quantizer would.
func requireCurrentCodes(t *testing.T, x *Index, when string) *rabitqCodes {
	t.Helper()
	g := x.graph.Load()
	rq := x.rabitqFor(g)
	if rq == nil {
		t.Fatalf("%s: no current rabitq codes for %d nodes", when, g.count)
	}
	if rq.n != g.count {
		t.Fatalf("%s: codes cover %d of %d nodes", when, rq.n, g.count)
	}
	fresh := x.codeRaBitQ(g, rq.q, rq.trained, nil)
	if !slices.Equal(rq.rows, fresh.rows) || !slices.Equal(rq.ex, fresh.ex) || !slices.Equal(rq.fx, fresh.fx) {
		t.Fatalf("%s: kept codes differ from a fresh coding of the graph", when)
	}
	return rq
}

func TestRaBitQBitsCodesEveryAddedNode(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim = 48
	data := synth.Clustered(3000, dim, 20, 0.4, 5)
	x := mustNew(t, Config{Dim: dim, Metric: metric.Cosine, Seed: 1, RaBitQBits: 4})
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	// A first batch of 10 fits the quantizer; the index doubling refits it;
	// later batches are appended; an upsert is a new node.
	for _, b := range [][2]int{{0, 10}, {10, 15}, {15, 40}, {40, 2000}, {2000, 2100}, {0, 5}} {
		ids := make([]uint64, b[1]-b[0])
		for i := range ids {
			ids[i] = uint64(b[0] + i)
		}
		if err := x.Add(data[b[0]*dim:b[1]*dim], ids, nil, 0); err != nil {
			t.Fatal(err)
		}
		requireCurrentCodes(t, x, "after an add")
	}
	if got := x.rabitq.Load().trained; got < 1000 {
		t.Errorf("quantizer fitted to %d nodes; the index doubled past 2,000, so want a refit", got)
	}
	out, dists := make([]int64, 10), make([]float32, 10)
	st, err := x.SearchFiltered(data[2050*dim:2051*dim], 10, 64, 1, nil, out, dists)
	if err != nil {
		t.Fatal(err)
	}
	if st.Refinements == 0 || out[0] != 2050 {
		t.Errorf("search of a stored vector: %d refinements, nearest %d; want it answered on codes, nearest 2050", st.Refinements, out[0])
	}
}

func TestRaBitQBitsCodesSurviveCompactAndRenumber(t *testing.T) {
	const dim, n = 32, 1500
	data := synth.Clustered(n, dim, 20, 0.4, 6)
	x := mustNew(t, Config{Dim: dim, Metric: metric.L2, Seed: 2, M: 8, EfConstruction: 40, RaBitQBits: 1})
	// A first batch of 600 renumbers its graph (an Add of at least 500
	// that is half the graph), the rest come in batches too small to, so
	// Renumber has work to do.
	reorderAt(x, 500)
	for _, b := range [][2]int{{0, 600}, {600, 900}, {900, 1200}, {1200, n}} {
		if err := x.Add(data[b[0]*dim:b[1]*dim], nil, nil, 0); err != nil {
			t.Fatal(err)
		}
		requireCurrentCodes(t, x, "after an add")
	}
	if ok, err := x.Renumber(0); err != nil || !ok {
		t.Fatalf("Renumber: %v, %v", ok, err)
	}
	requireCurrentCodes(t, x, "after Renumber")
	ids := make([]uint64, 0, n/3)
	for id := uint64(0); id < uint64(n); id += 3 {
		ids = append(ids, id)
	}
	if _, err := x.Remove(ids, false); err != nil {
		t.Fatal(err)
	}
	requireCurrentCodes(t, x, "after Remove")
	if err := x.Compact(0); err != nil {
		t.Fatal(err)
	}
	rq := requireCurrentCodes(t, x, "after Compact")
	if rq.n != n-len(ids) {
		t.Errorf("codes of %d nodes after compacting %d - %d", rq.n, n, len(ids))
	}
}

func TestRaBitQBitsSurviveSaveAndLoad(t *testing.T) {
	f := newRaBitQFixtureBits(t, 400, 32, 3)
	path := filepath.Join(t.TempDir(), "x.idx")
	if err := f.x.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.Default, path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if y.Config().RaBitQBits != 3 {
		t.Fatalf("loaded RaBitQBits %d, want 3", y.Config().RaBitQBits)
	}
	requireCurrentCodes(t, y, "after Load")
	// A loaded index goes on coding what is added to it.
	if err := y.Add(synth.Clustered(50, 32, 5, 0.4, 9), nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	requireCurrentCodes(t, y, "after an add to the loaded index")
}

func TestRaBitQBitsRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Dim: 8, RaBitQBits: 9},
		{Dim: 8, RaBitQBits: -1},
		{Dim: 8, RaBitQBits: 2, Quantization: QuantSQ8},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New(%+v): %v, want ErrInvalidArgument", cfg, err)
		}
	}
}

func TestMemoryCountsEachPart(t *testing.T) {
	f := newRaBitQFixtureBits(t, 300, 64, 8)
	m := f.x.Memory()
	if m.Nodes != 300 || m.Floats != 300*64*4 {
		t.Errorf("nodes %d, floats %d bytes; want 300 and %d", m.Nodes, m.Floats, 300*64*4)
	}
	// D = 64: one 8-byte 1-bit code, a 64-byte extended code; 24 bytes of
	// 1-bit factors in the row and 24 of extended ones.
	if m.RaBitQCodes != 300*(8+64) || m.RaBitQFactors != 300*(24+24) {
		t.Errorf("rabitq codes %d, factors %d bytes; want %d and %d", m.RaBitQCodes, m.RaBitQFactors, 300*72, 300*48)
	}
	if m.RaBitQBlocks != 0 {
		t.Errorf("neighbour blocks %d bytes in an index that keeps its codes itself (they are BuildRaBitQBlocks's)", m.RaBitQBlocks)
	}
	if m.Graph < 300*(4*(1+2*16)) {
		t.Errorf("graph %d bytes, less than the level-0 links alone", m.Graph)
	}
	if err := f.x.Add(f.data[:64], []uint64{9999}, nil, 0); err != nil {
		t.Fatal(err)
	}
	f.x.DropRaBitQ()
	if m := f.x.Memory(); m.RaBitQCodes != 0 || m.RaBitQFactors != 0 {
		t.Errorf("after DropRaBitQ: codes %d, factors %d bytes", m.RaBitQCodes, m.RaBitQFactors)
	}
}

// newRaBitQFixtureBits is an index with RaBitQBits bits over n clustered
// rows, added in one batch.
func newRaBitQFixtureBits(t *testing.T, n, dim, bits int) *rabitqFixture {
	t.Helper()
	f := &rabitqFixture{dim: dim, k: 10, data: synth.Clustered(n, dim, 10, 0.4, 4)}
	f.x = mustNew(t, Config{Dim: dim, Metric: metric.IP, Seed: 7, RaBitQBits: bits})
	if err := f.x.Add(f.data, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	return f
}
