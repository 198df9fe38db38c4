package collection

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// TestDistancesToAgreeWithAnExactQueryOfEachExample: for a dense and a
// multivector field, with a filter, DistancesTo answers exactly the
// points an exact query of each example answers (points without a value
// in the field left out), with the same distances; a recommendation
// computed from it cannot rank a point the query would not find, or by
// another distance.
func TestDistancesToAgreeWithAnExactQueryOfEachExample(t *testing.T) {
	const n = 120
	schema := []VectorField{
		{Name: "text", Dim: 6, Metric: metric.Cosine},
		{Name: "tokens", Dim: 4, Metric: metric.IP, Multivector: MaxSim},
	}
	c, err := Create(t.TempDir(), Options{Vectors: schema, Seed: 1}, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	normal := func(k int) []float32 {
		out := make([]float32, k)
		for i := range out {
			out[i] = float32(rng.NormFloat64())
		}
		return out
	}
	ids := make([]ID, n)
	docs := make([]meta.Document, n)
	text := FieldValues{Points: []int{}}
	tokens := FieldValues{Points: []int{}}
	for i := range n {
		ids[i] = IntID(uint64(i))
		if docs[i], err = meta.ParseDocument([]byte(`{"even": ` + map[bool]string{true: "true", false: "false"}[i%2 == 0] + `}`)); err != nil {
			t.Fatal(err)
		}
		if i%5 != 0 {
			text.Points, text.Vectors = append(text.Points, i), append(text.Vectors, normal(6)...)
		}
		if i%3 != 0 {
			cnt := 1 + i%3
			tokens.Points, tokens.Vectors = append(tokens.Points, i), append(tokens.Vectors, normal(cnt*4)...)
			tokens.Counts = append(tokens.Counts, cnt)
		}
	}
	if err := c.UpsertPoints(ids, map[string]FieldValues{"text": text, "tokens": tokens}, docs); err != nil {
		t.Fatal(err)
	}
	even, err := meta.ParseFilter([]byte(`{"even": true}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field    string
		examples []float32
		counts   []int
	}{
		{"text", normal(3 * 6), nil},
		{"tokens", normal(3 * 4), []int{1, 2}},
	} {
		got, dists, err := c.DistancesTo(tc.field, tc.examples, tc.counts, even, nil)
		if err != nil {
			t.Fatal(tc.field, err)
		}
		ne := len(tc.counts)
		if tc.counts == nil {
			ne = len(tc.examples) / 6
		}
		if len(dists) != len(got)*ne {
			t.Fatalf("%s: %d points and %d distances for %d examples", tc.field, len(got), len(dists), ne)
		}
		dim := map[string]int{"text": 6, "tokens": 4}[tc.field]
		row := 0
		for e := range ne {
			rows := 1
			if tc.counts != nil {
				rows = tc.counts[e]
			}
			query := tc.examples[row*dim : (row+rows)*dim]
			row += rows
			outIDs, outDists := make([]ID, n), make([]float32, n)
			if tc.counts != nil {
				_, err = c.QueryMulti(tc.field, query, n, n+1, even, nil, 1, outIDs, outDists)
			} else {
				_, err = c.QueryField(tc.field, query, n, n+1, even, nil, 1, outIDs, outDists)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[ID]float32{}
			for i, id := range outIDs {
				if !id.IsNone() {
					want[id] = outDists[i]
				}
			}
			if len(want) != len(got) {
				t.Fatalf("%s example %d: DistancesTo answers %d points, the exact query %d", tc.field, e, len(got), len(want))
			}
			for p, id := range got {
				w, ok := want[id]
				if !ok {
					t.Fatalf("%s example %d: point %v is not among the query's", tc.field, e, id)
				}
				if d := dists[p*ne+e]; math.Abs(float64(d-w)) > 1e-5 {
					t.Fatalf("%s example %d point %v: distance %v, the query's %v", tc.field, e, id, d, w)
				}
			}
		}
	}
	for name, call := range map[string]func() error{
		"ragged examples":         func() error { _, _, err := c.DistancesTo("text", normal(7), nil, nil, nil); return err },
		"counts on a dense field": func() error { _, _, err := c.DistancesTo("text", normal(6), []int{1}, nil, nil); return err },
		"counts not adding up":    func() error { _, _, err := c.DistancesTo("tokens", normal(8), []int{1}, nil, nil); return err },
		"a missing field":         func() error { _, _, err := c.DistancesTo("nope", normal(6), nil, nil, nil); return err },
		"NaN": func() error {
			_, _, err := c.DistancesTo("text", []float32{float32(math.NaN()), 0, 0, 0, 0, 0}, nil, nil, nil)
			return err
		},
	} {
		if err := call(); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("%s: got %v, want an ErrInvalid", name, err)
		}
	}
}
