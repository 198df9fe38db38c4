package collection

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

func scored(pairs ...any) []Scored {
	out := make([]Scored, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Scored{ID: IntID(uint64(pairs[i].(int))), Score: pairs[i+1].(float64)})
	}
	return out
}

func sameScored(t *testing.T, what string, got, want []Scored, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > tol {
			t.Fatalf("%s: position %d is %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

// TestFuseMatchesAHandComputation prevents a wrong constant, rank origin,
// normalisation or tie order in fusion: two small lists fused by hand.
func TestFuseMatchesAHandComputation(t *testing.T) {
	dense := scored(1, 0.9, 2, 0.8, 3, 0.1)
	sparse := scored(3, 12.0, 4, 6.0)
	// rrf, k = 2: 1 → 1/2; 2 → 1/3; 3 → 1/4 + 1/2 = 3/4; 4 → 1/3 (ties 2,
	// which came first).
	got, err := Fuse([][]Scored{dense, sparse}, Fusion{Method: RRF}, 10)
	if err != nil {
		t.Fatal(err)
	}
	sameScored(t, "rrf", got, scored(3, 0.75, 1, 0.5, 2, 1.0/3, 4, 1.0/3), 1e-15)
	// k = 60 as elsewhere.
	got, _ = Fuse([][]Scored{dense, sparse}, Fusion{Method: RRF, RRFK: 60}, 2)
	sameScored(t, "rrf k=60", got, scored(3, 1.0/62+1.0/60, 1, 1.0/60), 1e-15)
	// dbsf: dense μ = 0.6, σ = √((0.09+0.04+0.25)/2) = √0.19; sparse
	// μ = 9, σ = √((9+9)/1) = √18.
	sd1, sd2 := math.Sqrt(0.19), math.Sqrt(18)
	n1 := func(s float64) float64 { return (s - (0.6 - 3*sd1)) / (6 * sd1) }
	n2 := func(s float64) float64 { return (s - (9 - 3*sd2)) / (6 * sd2) }
	got, _ = Fuse([][]Scored{dense, sparse}, Fusion{Method: DBSF}, 10)
	want := []Scored{{IntID(3), n1(0.1) + n2(12)}, {IntID(1), n1(0.9)}, {IntID(2), n1(0.8)}, {IntID(4), n2(6)}}
	slices.SortStableFunc(want, func(a, b Scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	sameScored(t, "dbsf", got, want, 1e-12)
	// One point, equal scores: 0.5 each; an empty list adds nothing.
	got, _ = Fuse([][]Scored{scored(7, 3.0), {}, scored(8, 1.0, 9, 1.0)}, Fusion{Method: DBSF}, 10)
	sameScored(t, "dbsf degenerate", got, scored(7, 0.5, 8, 0.5, 9, 0.5), 0)
	for _, bad := range []Fusion{{}, {Method: 3}, {Method: RRF, RRFK: -1}} {
		if _, err := Fuse([][]Scored{dense}, bad, 10); err == nil {
			t.Errorf("fusion %+v: no error", bad)
		}
	}
}

// TestWeightedRRFMatchesAHandComputation prevents rrf weights from
// being ignored or applied to the wrong list: qdrant-client's local
// mode scores rank r of a list of weight w as 1/((r+1)/w + k - 1), and 0
// for w <= 0; one weight per list.
func TestWeightedRRFMatchesAHandComputation(t *testing.T) {
	dense := scored(1, 0.9, 2, 0.8)
	sparse := scored(2, 12.0, 3, 6.0)
	// k = 2, weights 2 and 0.5: 1 → 1/(1/2+1) = 2/3; 2 → 1/(2/2+1) + 1/(1/0.5+1) = 1/2 + 1/3;
	// 3 → 1/(2/0.5+1) = 1/5.
	got, err := Fuse([][]Scored{dense, sparse}, Fusion{Method: RRF, Weights: []float64{2, 0.5}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	sameScored(t, "weighted rrf", got, scored(2, 0.5+1.0/3, 1, 2.0/3, 3, 0.2), 1e-15)
	// Weight 1 everywhere is plain rrf; weight 0 adds nothing but keeps the point.
	plain, _ := Fuse([][]Scored{dense, sparse}, Fusion{Method: RRF, RRFK: 5}, 10)
	ones, _ := Fuse([][]Scored{dense, sparse}, Fusion{Method: RRF, RRFK: 5, Weights: []float64{1, 1}}, 10)
	sameScored(t, "weights of 1", ones, plain, 1e-15)
	got, _ = Fuse([][]Scored{dense, sparse}, Fusion{Method: RRF, Weights: []float64{0, 1}}, 10)
	sameScored(t, "weight 0", got, scored(2, 0.5, 3, 1.0/3, 1, 0.0), 1e-15)
	for _, bad := range []Fusion{{Method: RRF, Weights: []float64{1}}, {Method: DBSF, Weights: []float64{1, 1}},
		{Method: RRF, Weights: []float64{math.Inf(1), 1}}} {
		if _, err := Fuse([][]Scored{dense, sparse}, bad, 10); err == nil {
			t.Errorf("fusion %+v: no error", bad)
		}
	}
}

// TestFuseEqualsQdrantClientLocalMode prevents the fusion from drifting
// from Qdrant's reference: 40 random cases of 1-4 lists (empty ones, one
// point, equal scores among them) fused by qdrant-client 1.20's local
// mode (testdata/fusion/gen_qdrant_fusion.py), the same ids in the same
// order and scores within 1e-12.
func TestFuseEqualsQdrantClientLocalMode(t *testing.T) {
	raw, err := os.ReadFile("testdata/fusion/qdrant_fusion.json")
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		ID    int     `json:"id"`
		Score float64 `json:"score"`
	}
	var golden struct {
		Cases []struct {
			Lists [][]point `json:"lists"`
			Limit int       `json:"limit"`
			RRF   []point   `json:"rrf"`
			DBSF  []point   `json:"dbsf"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	conv := func(ps []point) []Scored {
		out := make([]Scored, len(ps))
		for i, p := range ps {
			out[i] = Scored{ID: IntID(uint64(p.ID)), Score: p.Score}
		}
		return out
	}
	if len(golden.Cases) != 40 {
		t.Fatalf("%d cases", len(golden.Cases))
	}
	for i, c := range golden.Cases {
		lists := make([][]Scored, len(c.Lists))
		for j, l := range c.Lists {
			lists[j] = conv(l)
		}
		got, err := Fuse(lists, Fusion{Method: RRF}, c.Limit)
		if err != nil {
			t.Fatal(err)
		}
		sameScored(t, "rrf case "+string(rune('A'+i)), got, conv(c.RRF), 1e-12)
		got, _ = Fuse(lists, Fusion{Method: DBSF}, c.Limit)
		sameScored(t, "dbsf case "+string(rune('A'+i)), got, conv(c.DBSF), 1e-12)
	}
}

// TestQueryFusedAppliesTheFilterToEverySubQuery prevents a hybrid query
// from fusing a side that ignored the filter, or from scoring a side
// other than Search does: dense, sparse and text sides under one filter,
// equal to Fuse over each side's own filtered Search.
func TestQueryFusedAppliesTheFilterToEverySubQuery(t *testing.T) {
	c, err := Create(t.TempDir(), Options{Vectors: []VectorField{{Name: "d", Dim: 2, Metric: metric.L2}},
		Sparse: []SparseField{{Name: "kw"}}, TextFields: []string{"body"}}, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	words := []string{"red apple", "green apple", "red car", "blue car", "apple pie", "red red wine"}
	ids := make([]ID, 60)
	docs := make([][]byte, 60)
	d := FieldValues{}
	kw := FieldValues{}
	for i := range ids {
		ids[i] = IntID(uint64(i))
		b, _ := json.Marshal(map[string]any{"body": words[i%len(words)], "odd": i%2 == 1})
		docs[i] = b
		d.Vectors = append(d.Vectors, float32(i%7), float32(i%5))
		kw.Counts = append(kw.Counts, 2)
		kw.Indices = append(kw.Indices, uint32(i%4), uint32(4+i%3))
		kw.Vectors = append(kw.Vectors, float32(1+i%5), float32(1+i%2))
	}
	if err := c.UpsertPoints(ids, map[string]FieldValues{"d": d, "kw": kw}, docsOf(t, docs)); err != nil {
		t.Fatal(err)
	}
	// The dense side has tied distances, which the graph and the tail's
	// scan may rank in different orders: compare once the builder is done,
	// so that both calls below read the same state.
	c.waitIndexed()
	odd, err := meta.ParseFilter([]byte(`{"odd": true}`))
	if err != nil {
		t.Fatal(err)
	}
	subs := []SubQuery{
		{Field: "d", Vector: []float32{3, 2}, Limit: 15},
		{Field: "kw", Indices: []uint32{1, 5}, Values: []float32{1, 2}, Limit: 10},
		{Text: "red apple", Limit: 8},
	}
	for _, fusion := range []Fusion{{Method: RRF}, {Method: DBSF}} {
		got, err := c.QueryFused(subs, fusion, 10, odd, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		lists := make([][]Scored, len(subs))
		for i, q := range subs {
			if lists[i], err = c.Search(q, odd, nil, 1); err != nil {
				t.Fatal(err)
			}
			if len(lists[i]) == 0 {
				t.Fatalf("sub-query %d found nothing", i)
			}
			for _, s := range lists[i] {
				if s.ID.Int()%2 != 1 {
					t.Fatalf("sub-query %d returned %v, which the filter excludes", i, s.ID)
				}
			}
		}
		want, _ := Fuse(lists, fusion, 10)
		sameScored(t, fusion.Method.String(), got, want, 0)
	}
	// The l2 side's scores are −√distance, best first: points 17 and 52
	// are at (3, 2) itself, then 10, 24, ... at distance 1.
	list, _ := c.Search(subs[0], nil, nil, 1)
	if list[0].Score != 0 || list[1].Score != 0 || list[2].Score != -1 {
		t.Fatalf("the l2 side scored %v, want 0, 0, -1, ...", list[:3])
	}
	// A sub-query's own filter narrows that side alone.
	even, _ := meta.ParseFilter([]byte(`{"odd": false}`))
	own := []SubQuery{{Field: "kw", Indices: []uint32{4}, Values: []float32{1}, Limit: 5, Filter: even}}
	got, err := c.QueryFused(own, Fusion{Method: RRF}, 5, nil, nil, 1)
	if err != nil || len(got) == 0 {
		t.Fatalf("%v %v", got, err)
	}
	for _, s := range got {
		if s.ID.Int()%2 != 0 {
			t.Fatalf("own filter: %v", got)
		}
	}
	for name, bad := range map[string][]SubQuery{
		"none":          {},
		"sparse vector": {{Field: "kw", Vector: []float32{1, 2}, Limit: 3}},
		"dense indices": {{Field: "d", Indices: []uint32{1}, Values: []float32{1}, Limit: 3}},
		"no field":      {{Field: "x", Vector: []float32{1, 2}, Limit: 3}},
		"limit 0":       {{Field: "d", Vector: []float32{1, 2}}},
		"dense dim":     {{Field: "d", Vector: []float32{1}, Limit: 3}},
	} {
		if _, err := c.QueryFused(bad, Fusion{Method: RRF}, 5, nil, nil, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
