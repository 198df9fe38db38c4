package hnsw

import (
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/vfs"

	"github.com/strata-db/strata/go/metric"
)

// qgFixture is an index of the qg layout over the first n rows of a real
// set, with the exact neighbours of its first nq queries.
type qgFixture struct {
	rabitqFixture
}

func newQGFixture(t *testing.T, set string, m metric.Metric, n, nq int) *qgFixture {
	t.Helper()
	data, err := loadSweepSet(set, n)
	if err != nil {
		t.Skipf("real data not available: %v", err)
	}
	f := &qgFixture{rabitqFixture{dim: data.Dim, k: 10}}
	f.data = data.Train
	f.queries = data.Queries[:nq*data.Dim]
	x, err := New(Config{Dim: f.dim, Metric: m, Seed: 3, RaBitQBits: 1, RaBitQLayout: LayoutQG})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, len(f.data)/f.dim)
	for i := range ids {
		ids[i] = uint64(i)
	}
	if err := x.Add(f.data, ids, nil, 1); err != nil {
		t.Fatal(err)
	}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	f.x = x
	f.truth = exactTruth(f.data, f.queries, f.dim, f.k, m)
	return f
}

// TestQGRecall is issue 22's same-algorithm check for the qg layout on
// real data. Its search loop is SymphonyQG's (searchQG): expanded entries
// and later copies of a node keep their slots of the buffer, which costs
// recall at a small ef but fewer hops at equal recall. So from ef 128 the
// quantized graph must reach the float HNSW graph's recall within
// recallSlack, and at every ef it must reach at twice the ef what the
// float graph reaches at ef. At ef 64 it misses the equal-ef check
// narrowly (0.9690 against float's 0.9845 on this graph: 0.0155 below),
// which is issue 22's stated trade-off of this loop. The graph is built
// on one thread so that it, and the recall, are the same on every run (a
// parallel build's recall at ef 64 fell either side of the slack).
func TestQGRecall(t *testing.T) {
	racetest.AnswersOnly(t)
	f := newQGFixture(t, "pypi-use512", metric.Cosine, 5000/raceHalve, 200)
	rq := f.x.rabitq.Load()
	if rq == nil || rq.qg == nil {
		t.Fatal("the index has no quantized graph")
	}
	for _, ef := range []int{16, 32, 64, 128} {
		_, recall, st := f.search(t, ef, nil)
		_, recall2, _ := f.search(t, 2*ef, nil)
		f.x.rabitq.Store(nil)
		_, floatRecall, fst := f.search(t, ef, nil)
		f.x.rabitq.Store(rq)
		t.Logf("ef %d: qg recall %.4f, %d distances (ef %d: %.4f); float %.4f, %d", ef, recall, st.DistanceComputations, 2*ef, recall2, floatRecall, fst.DistanceComputations)
		if ef >= 128 && recall < floatRecall-recallSlack {
			t.Errorf("ef %d: recall %.4f, want >= %.4f (float %.4f)", ef, recall, floatRecall-recallSlack, floatRecall)
		}
		if recall2 < floatRecall-recallSlack {
			t.Errorf("ef %d: recall %.4f, want >= %.4f (float at ef %d: %.4f)", 2*ef, recall2, floatRecall-recallSlack, ef, floatRecall)
		}
	}
}

// newQGSynth is a qg-layout index over clustered data (no real data
// needed) with its exact neighbours.
func newQGSynth(t *testing.T, m metric.Metric, n, dim int) *rabitqFixture {
	t.Helper()
	return newSynthFixture(t, Config{Dim: dim, Metric: m, Seed: 3, RaBitQBits: 1, RaBitQLayout: LayoutQG}, n)
}

// TestQGSurvivesSaveAndLoad: a saved qg index loads as one (section RBQG)
// and answers exactly as before, resident or mapped; a damaged RBQG fails
// with ErrFormat.
func TestQGSurvivesSaveAndLoad(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		f := newQGSynth(t, m, 2000, 64)
		want, recall, st := f.search(t, 64, nil)
		if f.x.rabitq.Load().qg == nil || recall < 0.8 {
			t.Fatalf("%s: no quantized graph, or recall %.3f", m, recall)
		}
		path := filepath.Join(t.TempDir(), "x.idx")
		if err := f.x.Save(vfs.Default, path); err != nil {
			t.Fatal(err)
		}
		for _, mmap := range []bool{false, true} {
			y, err := Load(vfs.Default, path, LoadOptions{MmapVectors: mmap})
			if err != nil {
				t.Fatal(err)
			}
			if y.cfg.RaBitQLayout != LayoutQG || y.rabitq.Load() == nil || y.rabitq.Load().qg == nil {
				t.Fatalf("%s mmap=%v: loaded without its quantized graph (layout %s)", m, mmap, y.cfg.RaBitQLayout)
			}
			y.testing.forcePlan, y.testing.forcedPlan = true, PlanGraph
			g := &rabitqFixture{x: y, dim: f.dim, k: f.k, queries: f.queries, truth: f.truth}
			got, _, gst := g.search(t, 64, nil)
			if !slices.Equal(got, want) || gst.DistanceComputations != st.DistanceComputations {
				t.Fatalf("%s mmap=%v: loaded index answers differently (%d vs %d distances)", m, mmap, gst.DistanceComputations, st.DistanceComputations)
			}
			y.Close()
		}
		sections, err := f.x.sections(true)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(sections, isTag(tagRaBitQGraph))
		if i < 0 {
			t.Fatal("no RBQG section written")
		}
		for name, damage := range map[string]func([]byte) []byte{
			"short":      func(b []byte) []byte { return b[:len(b)-4] },
			"entry":      func(b []byte) []byte { binary.LittleEndian.PutUint32(b, 2000); return b },
			"self link":  func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 0); return b },
			"past nodes": func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 5000); return b },
		} {
			s := slices.Clone(sections)
			s[i].Data = damage(slices.Clone(sections[i].Data))
			p := filepath.Join(t.TempDir(), "bad.idx")
			if err := indexfile.Write(vfs.Default, p, s); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(vfs.Default, p, LoadOptions{}); !errors.Is(err, ErrFormat) {
				t.Errorf("%s: damaged RBQG (%s) loaded: %v", m, name, err)
			}
		}
	}
}

// TestQGHonoursRemovalsAndFilters: removed and filtered-out nodes route
// the quantized graph's search but are never returned.
func TestQGHonoursRemovalsAndFilters(t *testing.T) {
	racetest.AnswersOnly(t)
	const n = 3000
	f := newQGSynth(t, metric.L2, n, 48)
	ids, _, _ := f.search(t, 64, nil)
	removed := slices.Clone(ids[:f.k])
	rm := make([]uint64, len(removed))
	for i, id := range removed {
		rm[i] = uint64(id)
	}
	if _, err := f.x.Remove(rm, false); err != nil {
		t.Fatal(err)
	}
	if f.x.rabitq.Load().qg == nil || f.x.codesOf(f.x.graph.Load()) == nil {
		t.Fatal("Remove dropped the quantized graph")
	}
	allow := make([]uint64, 0, n/2)
	for id := uint64(0); id < n; id += 2 {
		allow = append(allow, id)
	}
	for _, filter := range []*Filter{nil, {Allow: allow}} {
		got, _, _ := f.search(t, 64, filter)
		found := 0
		for _, id := range got {
			if slices.Contains(removed, id) {
				t.Fatalf("returned removed id %d", id)
			}
			if filter != nil && id >= 0 && id%2 == 1 {
				t.Fatalf("returned id %d, which the filter excludes", id)
			}
			if id >= 0 {
				found++
			}
		}
		if found < len(got)*9/10 {
			t.Errorf("filter %v: %d of %d answers found", filter != nil, found, len(got))
		}
	}
}

// TestQGConfigErrors: the qg layout refuses what it cannot search.
func TestQGConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Dim: 8, RaBitQBits: 4, RaBitQLayout: LayoutQG},
		{Dim: 8, RaBitQBits: 3, RaBitQCodesOnly: true, RaBitQLayout: LayoutQG},
		{Dim: 8, RaBitQLayout: LayoutQG},
		{Dim: 8, RaBitQBits: 1, RaBitQLayout: 7},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", cfg, err)
		}
	}
}

// TestQGRowHoldsWhatTheSearchReads pins the qg row of rabitq_qg.go's
// diagram at a low dimension, where the neighbours' factors are a third
// of it: at dim 100 (D 128) a row is 1,472 bytes; the vector is followed
// by ‖u‖² and zeros; and each neighbour's Add, Rescale and Sum are what
// EncodeResidual gives for the edge, so that a layout change which drops
// or shifts a factor the search reads fails here instead of as lost recall.
func TestQGRowHoldsWhatTheSearchReads(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, n = 100, 700
	for _, m := range []metric.Metric{metric.L2, metric.IP} {
		x, err := New(Config{Dim: dim, Metric: m, Seed: 5, RaBitQBits: 1, RaBitQLayout: LayoutQG})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Add(synth.Clustered(n, dim, 20, 0.4, 31), nil, nil, 1); err != nil {
			t.Fatal(err)
		}
		r, g := x.rabitq.Load().qg, x.graph.Load()
		if r == nil || r.n != n || 4*r.rowWords != 1472 {
			t.Fatalf("%v: rows %+v, want %d rows of 1,472 bytes", m, r, n)
		}
		D := r.padded
		rotated := make([]float32, n*D)
		for u := range n {
			r.q.Rotate(g.vector(uint32(u)), rotated[u*D:(u+1)*D])
		}
		e := r.q.NewEncoder()
		code := make([]uint64, D/64)
		for u := range uint32(n) {
			row, v := r.row(u), g.vector(u)
			var norm2 float32
			for i, a := range v {
				norm2 += a * a
				if row[i] != math.Float32bits(a) {
					t.Fatalf("%v: node %d: word %d is not its vector's", m, u, i)
				}
			}
			if row[dim] != math.Float32bits(norm2) {
				t.Fatalf("%v: node %d: word %d is %g, want ‖u‖² %g", m, u, dim, math.Float32frombits(row[dim]), norm2)
			}
			if slices.ContainsFunc(row[dim+1:r.vecWords], func(w uint32) bool { return w != 0 }) {
				t.Fatalf("%v: node %d: the vector's padding is not zero", m, u)
			}
			f := r.factors(row)
			for j, id := range r.ids(row) {
				if id == emptySlot {
					break
				}
				want := e.EncodeResidual(rotated[int(id)*D:(int(id)+1)*D], rotated[int(u)*D:(int(u)+1)*D], code)
				if f[qgAdd+j] != math.Float32bits(want.Add) || f[qgRescale+j] != math.Float32bits(want.Rescale) || f[qgSum+j] != math.Float32bits(want.Sum) {
					t.Fatalf("%v: node %d, neighbour %d: factors %v, want Add %g Rescale %g Sum %g", m, u, j,
						wordFloats(f[j:j+1]), want.Add, want.Rescale, want.Sum)
				}
			}
		}
	}
}
