package collection

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/text"
)

var textWords = []string{"vector", "database", "go", "python", "fast", "search", "index", "graph", "text", "engine"}

func textDoc(rng *rand.Rand) meta.Document {
	n := rng.IntN(6)
	s := ""
	for range n {
		s += textWords[rng.IntN(len(textWords))] + " "
	}
	raw := fmt.Sprintf(`{"summary": %q, "group": %d}`, s, rng.IntN(3))
	if rng.IntN(8) == 0 {
		raw = fmt.Sprintf(`{"group": %d}`, rng.IntN(3)) // no text
	}
	d, err := meta.ParseDocument([]byte(raw))
	if err != nil {
		panic(err)
	}
	return d
}

func textQuery(t *testing.T, c *Collection, q string) []Hit {
	t.Helper()
	hits, err := c.QueryText(nil, TextQuery{Text: q}, 20, 0, nil, 0, text.Fusion{})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// reference scores the model's documents with a fresh index: what the
// collection's index must answer, however it got its state.
func reference(t *testing.T, docs map[uint64]meta.Document, q string) []Hit {
	t.Helper()
	a, _ := text.ParseAnalyzer(text.AnalyzerEnglish)
	x := text.NewIndex(a)
	for id, d := range docs {
		s, _ := d.Text("summary")
		x.Put(id, s)
	}
	hits, err := x.Search(q, 20, text.Params{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{ID: IntID(h.ID), Score: h.Score, BM25: h.Score, Distance: nan32, Sources: text.FromText}
	}
	return out
}

func sameHits(a, b []Hit) bool {
	return slices.EqualFunc(a, b, func(x, y Hit) bool {
		return x.ID == y.ID && x.Score == y.Score && x.Sources == y.Sources
	})
}

func TestTextIndexSurvivesCrashReplayAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.TextFields = []string{"summary"}
	c, err := Create(dir, opts, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	docs := map[uint64]meta.Document{}
	write := func(c *Collection, steps int) {
		for range steps {
			id := uint64(rng.IntN(200))
			switch rng.IntN(5) {
			case 0:
				if _, err := c.Delete(IntIDs([]uint64{id})); err != nil {
					t.Fatal(err)
				}
				delete(docs, id)
			case 1:
				if _, ok := docs[id]; ok {
					d := textDoc(rng)
					if _, err := c.UpdateMetadata(IntIDs([]uint64{id}), []meta.Document{d}); err != nil {
						t.Fatal(err)
					}
					docs[id] = d
				}
			default:
				d := textDoc(rng)
				if err := c.Upsert(IntIDs([]uint64{id}), randomVectors(rng, 1), []meta.Document{d}); err != nil {
					t.Fatal(err)
				}
				docs[id] = d
			}
		}
	}
	check := func(c *Collection, when string) {
		t.Helper()
		for _, q := range []string{"vector database", "go", "fast search engine", "graphs indexing", "the"} {
			if got, want := textQuery(t, c, q), reference(t, docs, q); !sameHits(got, want) {
				t.Fatalf("%s: %q: got %+v, want %+v", when, q, got, want)
			}
		}
	}
	write(c, 400)
	check(c, "live")
	c.abandon() // crash: the text index must come back from the log alone
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	check(c, "after replay")
	write(c, 300)
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	write(c, 100)
	c.abandon() // snapshot + a log tail
	c = mustOpen(t, dir, Tuning{})
	check(c, "after snapshot and replay")
	if f := c.TextFields(); len(f) != 1 || f[0].Field != "summary" || f[0].Analyzer != "english" {
		t.Fatalf("TextFields %+v", f)
	}
	c.Close()
}

func TestCreateTextIndexIsDurableWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1})
	d1, _ := meta.ParseDocument([]byte(`{"title": "Fast vector search"}`))
	d2, _ := meta.ParseDocument([]byte(`{"title": null}`))
	if err := c.Upsert(IntIDs([]uint64{1, 2}), randomVectors(rand.New(rand.NewPCG(1, 1)), 2), []meta.Document{d1, d2}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTextIndex("title", "simple"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTextIndex("title", ""); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("second CreateTextIndex: %v", err)
	}
	c.abandon()
	c = mustOpen(t, dir, Tuning{})
	if hits := textQuery(t, c, "SEARCH"); len(hits) != 1 || hits[0].ID != IntID(1) {
		t.Fatalf("after replay: %+v", hits)
	}
	c.Close() // checkpoints: the manifest now lists the field
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	if f := c.TextFields(); len(f) != 1 || f[0].Analyzer != "simple" || f[0].Docs != 1 {
		t.Fatalf("after checkpoint: %+v", f)
	}
}

func TestNonStringTextValueIsRejectedBeforeLogging(t *testing.T) {
	opts := testOptions()
	opts.TextFields = []string{"a.b"}
	c, err := Create(t.TempDir(), opts, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	bad, _ := meta.ParseDocument([]byte(`{"a": {"b": 5}}`))
	if err := c.Upsert(IntIDs([]uint64{1}), randomVectors(rng, 1), []meta.Document{bad}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("Upsert of a number in a text field: %v", err)
	}
	good, _ := meta.ParseDocument([]byte(`{"a": {"b": "ok"}}`))
	if err := c.Upsert(IntIDs([]uint64{1}), randomVectors(rng, 1), []meta.Document{good}); err != nil {
		t.Fatal(err)
	}
	list, _ := meta.ParseDocument([]byte(`{"a": {"b": ["x"]}}`))
	if _, err := c.UpdateMetadata(IntIDs([]uint64{1}), []meta.Document{list}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("UpdateMetadata with a list in a text field: %v", err)
	}
	if c.Info().Seq != 1 {
		t.Fatalf("rejected writes were logged: seq %d", c.Info().Seq)
	}
	other, _ := meta.ParseDocument([]byte(`{"c": 5}`))
	c.Upsert(IntIDs([]uint64{2}), randomVectors(rng, 1), []meta.Document{other})
	if err := c.CreateTextIndex("c", ""); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("CreateTextIndex over a number: %v", err)
	}
}

func TestTextQueryErrorsNameTheProblem(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	if _, err := c.QueryText(nil, TextQuery{Text: "x"}, 5, 0, nil, 0, text.Fusion{}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("no text index: %v", err)
	}
	c.CreateTextIndex("a", "")
	c.CreateTextIndex("b", "")
	for name, q := range map[string]TextQuery{"two fields, none named": {Text: "x"}, "unknown field": {Text: "x", Field: "z"}} {
		if _, err := c.QueryText(nil, q, 5, 0, nil, 0, text.Fusion{}); !errors.Is(err, batch.ErrInvalid) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := c.QueryText(nil, TextQuery{Text: "x", Field: "a"}, 5, 0, nil, 0, text.Fusion{Weighted: true, Alpha: 2}); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("alpha 2: %v", err)
	}
	if err := c.CreateTextIndex("$x", ""); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("bad path: %v", err)
	}
}

func TestHybridFiltersBothSidesAndFallsBackToVectors(t *testing.T) {
	opts := testOptions()
	opts.TextFields = []string{"summary"}
	c, err := Create(t.TempDir(), opts, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	ids := make([]uint64, 300)
	docs := make([]meta.Document, 300)
	for i := range ids {
		ids[i], docs[i] = uint64(i), textDoc(rng)
	}
	vecs := randomVectors(rng, 300)
	if err := c.Upsert(IntIDs(ids), vecs, docs); err != nil {
		t.Fatal(err)
	}
	f, _ := meta.ParseFilter([]byte(`{"group": 1}`))
	q := vecs[:testDim]
	hits, err := c.QueryText(q, TextQuery{Text: "vector engine"}, 10, 0, f, 0, text.Fusion{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if raw, _ := c.meta.Get(h.ID.Int()); !f.Match(mustDoc(t, raw)) {
			t.Fatalf("hit %v breaks the filter", h.ID)
		}
	}
	if len(hits) != 10 {
		t.Fatalf("%d hits", len(hits))
	}
	// No indexed term: the vector side's ranking, alone.
	hits, err = c.QueryText(q, TextQuery{Text: "the of and"}, 5, 0, nil, 0, text.Fusion{Weighted: true, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]ID, 5)
	c.Query(q, 5, max(HybridDepth, 64), nil, 0, want, make([]float32, 5))
	for i, h := range hits {
		if h.Sources != text.FromVector || h.ID != want[i] {
			t.Fatalf("fallback hit %d: %+v, vector ranking %v", i, h, want)
		}
	}
}

func mustDoc(t *testing.T, raw []byte) meta.Document {
	t.Helper()
	if raw == nil {
		raw = []byte("{}")
	}
	d, err := meta.ParseDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
