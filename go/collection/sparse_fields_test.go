package collection

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// sparseModel is what a collection's sparse fields must hold: per field,
// per point key, the normalised vector.
type sparseModel map[string]map[uint64]sparse.Vector

// randomSparse is a vector of 0-6 coordinates over indices 0-29 in
// random order, values small integers (exact sums in float32).
func randomSparse(rng *rand.Rand) (indices []uint32, values []float32) {
	n := rng.IntN(7)
	for _, i := range rng.Perm(30)[:n] {
		indices = append(indices, uint32(i))
		values = append(values, float32(1+rng.IntN(9)))
	}
	return indices, values
}

// bruteSparse is the exact top k of q among the model's points of field,
// restricted to allow (nil: all), by package sparse's definition.
func bruteSparse(points map[uint64]sparse.Vector, q sparse.Vector, k int, allow func(uint64) bool) []Scored {
	var out []Scored
	for key, v := range points {
		score, matched := sparse.Dot(q, v)
		if matched && (allow == nil || allow(key)) {
			out = append(out, Scored{ID: IntID(key), Score: float64(score)})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID.Int() < out[b].ID.Int()
	})
	return out[:min(k, len(out))]
}

func (m sparseModel) check(t *testing.T, c *Collection, when string) {
	t.Helper()
	for field, points := range m {
		ids := make([]ID, 0, 80)
		for k := range uint64(80) {
			ids = append(ids, IntID(k))
		}
		found, vectors, err := c.GetSparseVectors(ids, field)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(found) != len(points) {
			t.Fatalf("%s: field %q: %d points have it, model says %d", when, field, len(found), len(points))
		}
		for i, id := range found {
			want := points[id.Int()]
			if !slices.Equal(vectors[i].Indices, want.Indices) || !slices.Equal(vectors[i].Values, want.Values) {
				t.Fatalf("%s: field %q of point %v: %v, model %v", when, field, id, vectors[i], want)
			}
		}
		if n, err := c.Count(meta.HasVector(field)); err != nil || n != len(points) {
			t.Fatalf("%s: has_vector %q counts %d (%v), model %d", when, field, n, err, len(points))
		}
		// The modifier is none in these fields: scores are plain dots.
		for q := range 5 {
			rng := rand.New(rand.NewPCG(uint64(q), 9))
			qi, qv := randomSparse(rng)
			qi, qv = append(qi, uint32(q)), append(qv, 1)
			qn, err := sparse.Normalize(qi, qv)
			if err != nil {
				continue // the appended index was drawn already
			}
			got, err := c.QuerySparse(field, qi, qv, 10, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if want := bruteSparse(points, qn, 10, nil); !slices.Equal(got, want) {
				t.Fatalf("%s: field %q query %v: %v, brute force %v", when, field, qn, got, want)
			}
		}
	}
}

// TestSparseFieldWritesSurviveReopen prevents a sparse write (whole
// points, one field updated or deleted, a point deleted, a sparse field
// added or removed, a dense-only upsert that drops the sparse values)
// from being lost or misapplied by replay or by a snapshot: a random run
// against a model, checked live, after a replay and after a checkpoint,
// with queries equal to brute force.
func TestSparseFieldWritesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	c, err := Create(dir, Options{Dim: 2, Metric: metric.L2, Sparse: []SparseField{{Name: "kw"}}, Seed: 1},
		Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := sparseModel{"kw": {}}
	fields := []string{"kw"}
	live := map[uint64]bool{}
	rng := rand.New(rand.NewPCG(7, 7))
	anyLive := func() uint64 {
		keys := make([]uint64, 0, len(live))
		for k := range live {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys[rng.IntN(len(keys))]
	}
	for step := range 400 {
		switch op := rng.IntN(12); {
		case step == 120:
			if err := c.AddSparseField(SparseField{Name: "extra"}); err != nil {
				t.Fatal(err)
			}
			fields = append(fields, "extra")
			m["extra"] = map[uint64]sparse.Vector{}
		case step == 300:
			if err := c.RemoveVectorField("kw"); err != nil {
				t.Fatal(err)
			}
			fields = slices.DeleteFunc(fields, func(f string) bool { return f == "kw" })
			delete(m, "kw")
		case op < 5: // whole points: the dense field and some sparse fields
			ids := []uint64{uint64(rng.IntN(40)), uint64(40 + rng.IntN(40))}
			values := map[string]FieldValues{"": {Vectors: randomVectors(rng, 2)[:4]}}
			for _, f := range fields {
				fv := FieldValues{Points: []int{}, Counts: []int{}, Indices: []uint32{}, Vectors: []float32{}}
				for p, id := range ids {
					if rng.IntN(3) == 0 {
						delete(m[f], id)
						continue
					}
					idx, val := randomSparse(rng)
					fv.Points, fv.Counts = append(fv.Points, p), append(fv.Counts, len(idx))
					fv.Indices, fv.Vectors = append(fv.Indices, idx...), append(fv.Vectors, val...)
					v, err := sparse.Normalize(idx, val)
					if err != nil {
						t.Fatal(err)
					}
					m[f][id] = v
				}
				values[f] = fv
			}
			if err := c.UpsertPoints(IntIDs(ids), values, nil); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				live[id] = true
			}
		case op < 6: // the dense field alone (op 1): the point loses its sparse values
			id := uint64(rng.IntN(80))
			if err := c.Upsert([]ID{IntID(id)}, randomVectors(rng, 1)[:2], nil); err != nil {
				t.Fatal(err)
			}
			live[id] = true
			for _, f := range fields {
				delete(m[f], id)
			}
		case op < 8 && len(live) > 0: // one sparse field of one point
			id := anyLive()
			f := fields[rng.IntN(len(fields))]
			idx, val := randomSparse(rng)
			fv := FieldValues{Counts: []int{len(idx)}, Indices: idx, Vectors: val}
			if fv.Indices == nil {
				fv.Indices, fv.Vectors = []uint32{}, []float32{}
			}
			if _, err := c.UpdateVectors([]ID{IntID(id)}, map[string]FieldValues{f: fv}); err != nil {
				t.Fatal(err)
			}
			m[f][id], _ = sparse.Normalize(idx, val)
		case op < 10 && len(live) > 0:
			id := anyLive()
			f := fields[rng.IntN(len(fields))]
			if _, err := c.DeleteVectors([]ID{IntID(id)}, []string{f}); err != nil {
				t.Fatal(err)
			}
			delete(m[f], id)
		case len(live) > 0:
			id := anyLive()
			if _, err := c.Delete([]ID{IntID(id)}); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
			for _, f := range fields {
				delete(m[f], id)
			}
		}
		if step == 200 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.check(t, c, "live")
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseForDrop(); err != nil { // no final checkpoint: replay from step 200's
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	m.check(t, c, "after replay")
	if got := c.SparseFields(); len(got) != 1 || got[0].Name != "extra" {
		t.Fatalf("sparse schema after replay %+v", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	defer c.Close()
	m.check(t, c, "after a snapshot")
	if o := c.Options(); len(o.Sparse) != 1 || o.Dim != 2 {
		t.Fatalf("options after a snapshot %+v", o)
	}
}

// TestSparseQueryTakesTheCollectionsFilters prevents QuerySparse from
// ignoring a metadata filter, has_vector, among, or string ids: each
// restriction against brute force over the allowed points, and an IDF
// field scoring as the sparse package defines.
func TestSparseQueryTakesTheCollectionsFilters(t *testing.T) {
	c, err := Create(t.TempDir(), Options{Sparse: []SparseField{{Name: "kw"}, {Name: "bm25", Modifier: sparse.ModifierIDF}}},
		Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 300
	ids := make([]ID, n)
	docs := make([][]byte, n)
	kw := FieldValues{}
	points := map[uint64]sparse.Vector{}
	// order is the rank of point i's key: string ids' keys come after
	// every integer's, in the order they were written.
	order := func(i uint64) uint64 {
		if i%10 == 0 {
			return 1<<63 + i
		}
		return i
	}
	for i := range n {
		ids[i] = IntID(uint64(i))
		if i%10 == 0 {
			ids[i] = StringID(fmt.Sprintf("doc-%d", i))
		}
		docs[i] = fmt.Appendf(nil, `{"even": %v}`, i%2 == 0)
		idx, val := randomSparse(rng)
		kw.Counts = append(kw.Counts, len(idx))
		kw.Indices, kw.Vectors = append(kw.Indices, idx...), append(kw.Vectors, val...)
		points[order(uint64(i))], _ = sparse.Normalize(idx, val)
	}
	if err := c.UpsertPoints(ids, map[string]FieldValues{"kw": kw, "bm25": kw}, docsOf(t, docs)); err != nil {
		t.Fatal(err)
	}
	keyOf := func(id ID) uint64 {
		if id.IsString() {
			var i uint64
			fmt.Sscanf(id.Str(), "doc-%d", &i)
			return order(i)
		}
		return id.Int()
	}
	even, err := meta.ParseFilter([]byte(`{"even": true}`))
	if err != nil {
		t.Fatal(err)
	}
	among := []ID{IntID(1), IntID(2), StringID("doc-10"), IntID(3), IntID(4), StringID("doc-20"), IntID(7)}
	inAmong := func(k uint64) bool {
		return slices.ContainsFunc(among, func(id ID) bool { return keyOf(id) == k })
	}
	q := sparse.Vector{Indices: []uint32{1, 4, 9}, Values: []float32{1, 2, 3}}
	for _, tc := range []struct {
		name   string
		filter *meta.Filter
		among  []ID
		allow  func(uint64) bool
	}{
		{"none", nil, nil, nil},
		{"even", even, nil, func(k uint64) bool { return (k&^(1<<63))%2 == 0 }},
		{"among", nil, among, inAmong},
		{"even and among", even, among, func(k uint64) bool { return (k&^(1<<63))%2 == 0 && inAmong(k) }},
		{"has_vector", meta.HasVector("kw"), nil, nil},
	} {
		got, err := c.QuerySparse("kw", q.Indices, q.Values, 20, tc.filter, tc.among)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteSparse(points, q, 20, tc.allow)
		if len(got) != len(want) {
			t.Fatalf("%s: %d hits, brute force %d", tc.name, len(got), len(want))
		}
		for i := range got {
			if keyOf(got[i].ID) != want[i].ID.Int() || got[i].Score != want[i].Score {
				t.Fatalf("%s: hit %d is %v %v, brute force %v", tc.name, i, got[i].ID, got[i].Score, want[i])
			}
		}
	}
	// IDF: rare indices weigh more; the scores are the package's.
	got, err := c.QuerySparse("bm25", q.Indices, q.Values, 5, nil, nil)
	if err != nil || len(got) == 0 {
		t.Fatalf("idf query: %v %v", got, err)
	}
	plain, _ := c.QuerySparse("kw", q.Indices, q.Values, 5, nil, nil)
	if slices.Equal(got, plain) {
		t.Fatalf("the idf modifier changed nothing: %v", got)
	}
}

// TestSparseInputErrors prevents bad sparse input from being logged or
// from crashing: each fails with the error kind doors map to a 4xx and
// changes nothing.
func TestSparseInputErrors(t *testing.T) {
	c, err := Create(t.TempDir(), Options{Vectors: []VectorField{{Name: "d", Dim: 2, Metric: metric.L2}},
		Sparse: []SparseField{{Name: "kw"}}}, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	one := []ID{IntID(1)}
	for name, err := range map[string]error{
		"duplicate index":    c.UpsertPoints(one, map[string]FieldValues{"kw": {Counts: []int{2}, Indices: []uint32{3, 3}, Vectors: []float32{1, 2}}}, nil),
		"nan value":          c.UpsertPoints(one, map[string]FieldValues{"kw": {Counts: []int{1}, Indices: []uint32{3}, Vectors: []float32{nan32}}}, nil),
		"counts short":       c.UpsertPoints(one, map[string]FieldValues{"kw": {Counts: []int{}, Indices: []uint32{3}, Vectors: []float32{1}}}, nil),
		"counts wrong":       c.UpsertPoints(one, map[string]FieldValues{"kw": {Counts: []int{2}, Indices: []uint32{3}, Vectors: []float32{1}}}, nil),
		"values short":       c.UpsertPoints(one, map[string]FieldValues{"kw": {Counts: []int{2}, Indices: []uint32{3, 4}, Vectors: []float32{1}}}, nil),
		"too many":           c.UpsertPoints(one, map[string]FieldValues{"kw": {Counts: []int{1 << 20}}}, nil),
		"indices on dense":   c.UpsertPoints(one, map[string]FieldValues{"d": {Vectors: []float32{1, 2}, Indices: []uint32{}}}, nil),
		"sparse named twice": c.AddSparseField(SparseField{Name: "kw"}),
		"sparse as dense":    c.AddSparseField(SparseField{Name: "d"}),
		"dense as sparse":    c.AddVectorField(VectorField{Name: "kw", Dim: 2, Metric: metric.L2}),
		"unnamed sparse":     c.AddSparseField(SparseField{Name: ""}),
		"bad modifier":       c.AddSparseField(SparseField{Name: "x", Modifier: 7}),
		"query dense field":  errOf(c.QuerySparse("d", []uint32{1}, []float32{1}, 3, nil, nil)),
		"query no field":     errOf(c.QuerySparse("nope", []uint32{1}, []float32{1}, 3, nil, nil)),
		"query bad vector":   errOf(c.QuerySparse("kw", []uint32{1, 1}, []float32{1, 2}, 3, nil, nil)),
		"query k 0":          errOf(c.QuerySparse("kw", []uint32{1}, []float32{1}, 0, nil, nil)),
		"has_vector unknown": errOf(c.QuerySparse("kw", []uint32{1}, []float32{1}, 3, meta.HasVector("nope"), nil)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, batch.ErrInvalid) && !errors.Is(err, ErrExists) {
			t.Errorf("%s: %v is neither invalid input nor exists", name, err)
		}
	}
	for name, opts := range map[string]Options{
		"both kinds": {Vectors: []VectorField{{Name: "a", Dim: 2, Metric: metric.L2}}, Sparse: []SparseField{{Name: "a"}}},
		"twice":      {Sparse: []SparseField{{Name: "a"}, {Name: "a"}}},
		"unnamed":    {Sparse: []SparseField{{Name: ""}}},
	} {
		if _, err := Create(t.TempDir(), opts, Tuning{}); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("create with %s: %v", name, err)
		}
	}
	if c.Len() != 0 || c.Info().Seq != 0 {
		t.Fatalf("bad input changed the collection: %d points, seq %d", c.Len(), c.Info().Seq)
	}
}

func errOf[T any](_ T, err error) error { return err }

// TestSparseMetamorphicSettingsGiveTheSameAnswers replays one random list
// of sparse writes (whole points with and without the field, updates,
// deletions), filtered sparse and fused queries, checkpoints and reopens
// under settings that differ in checkpoint volume, vacuums and build
// threads: sparse search is exact, so every answer must equal brute force
// over the model, in every setting, ids and scores alike. A checkpoint,
// replay or compaction that lost, kept or misplaced a sparse value
// changes some answer here.
func TestSparseMetamorphicSettingsGiveTheSameAnswers(t *testing.T) {
	racetest.AnswersOnly(t)
	type op struct {
		kind   int // 0 upsert, 1 update, 2 delete, 3 query, 4 checkpoint, 5 reopen
		ids    []uint64
		fv     FieldValues
		docs   [][]byte
		q      sparse.Vector
		filter string
	}
	rng := rand.New(rand.NewPCG(25, 25))
	var ops []op
	for len(ops) < 300 {
		switch r := rng.IntN(100); {
		case r < 40:
			o := op{kind: 0, fv: FieldValues{Points: []int{}, Counts: []int{}, Indices: []uint32{}, Vectors: []float32{}}}
			seen := map[uint64]bool{}
			for range 1 + rng.IntN(30) {
				id := uint64(rng.IntN(200))
				if seen[id] {
					continue
				}
				seen[id] = true
				if rng.IntN(5) != 0 {
					idx, val := randomSparse(rng)
					o.fv.Points = append(o.fv.Points, len(o.ids))
					o.fv.Counts = append(o.fv.Counts, len(idx))
					o.fv.Indices, o.fv.Vectors = append(o.fv.Indices, idx...), append(o.fv.Vectors, val...)
				}
				o.ids = append(o.ids, id)
				o.docs = append(o.docs, fmt.Appendf(nil, `{"g": %d}`, rng.IntN(4)))
			}
			ops = append(ops, o)
		case r < 50:
			idx, val := randomSparse(rng)
			ops = append(ops, op{kind: 1, ids: []uint64{uint64(rng.IntN(200))},
				fv: FieldValues{Counts: []int{len(idx)}, Indices: append([]uint32{}, idx...), Vectors: append([]float32{}, val...)}})
		case r < 60:
			o := op{kind: 2}
			for range 1 + rng.IntN(10) {
				o.ids = append(o.ids, uint64(rng.IntN(200)))
			}
			ops = append(ops, o)
		case r < 95:
			idx, val := randomSparse(rng)
			q, _ := sparse.Normalize(append(idx, 30), append(val, 1))
			o := op{kind: 3, q: q}
			if rng.IntN(2) == 0 {
				o.filter = fmt.Sprintf(`{"g": %d}`, rng.IntN(4))
			}
			ops = append(ops, o)
		case r < 98:
			ops = append(ops, op{kind: 4})
		default:
			ops = append(ops, op{kind: 5})
		}
	}
	settings := []struct {
		name   string
		tuning Tuning
	}{
		{"base", Tuning{CheckpointBytes: -1, VacuumRatio: -1, Threads: 1}},
		{"checkpoint-every-group", Tuning{CheckpointBytes: 1, Threads: 2}},
		{"eager-vacuum", Tuning{CheckpointBytes: 4 << 10, VacuumRatio: 0.05, Threads: 2}},
	}
	for _, s := range settings {
		dir := t.TempDir()
		opts := Options{Dim: 2, Metric: metric.L2, Sparse: []SparseField{{Name: "kw"}}}
		c, err := Create(dir, opts, s.tuning)
		if err != nil {
			t.Fatal(err)
		}
		points := map[uint64]sparse.Vector{}
		groups := map[uint64]int{}
		queries := 0
		for i, o := range ops {
			switch o.kind {
			case 0:
				vecs := make([]float32, 2*len(o.ids))
				if err := c.UpsertPoints(IntIDs(o.ids), map[string]FieldValues{"": {Vectors: vecs}, "kw": o.fv}, docsOf(t, o.docs)); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
				from, at := 0, 0
				for p, id := range o.ids {
					delete(points, id)
					var g int
					fmt.Sscanf(string(o.docs[p]), `{"g": %d}`, &g)
					groups[id] = g
					if at < len(o.fv.Points) && o.fv.Points[at] == p {
						cnt := o.fv.Counts[at]
						points[id], _ = sparse.Normalize(o.fv.Indices[from:from+cnt], o.fv.Vectors[from:from+cnt])
						from += cnt
						at++
					}
				}
			case 1:
				if _, ok := groups[o.ids[0]]; !ok {
					continue // UpdateVectors of a missing point fails by design
				}
				if _, err := c.UpdateVectors(IntIDs(o.ids), map[string]FieldValues{"kw": o.fv}); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
				points[o.ids[0]], _ = sparse.Normalize(o.fv.Indices, o.fv.Vectors)
			case 2:
				if _, err := c.Delete(IntIDs(o.ids)); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
				for _, id := range o.ids {
					delete(points, id)
					delete(groups, id)
				}
			case 3:
				queries++
				var allow func(uint64) bool
				var f *meta.Filter
				if o.filter != "" {
					f = metaFilter(t, o.filter)
					var g int
					fmt.Sscanf(o.filter, `{"g": %d}`, &g)
					allow = func(k uint64) bool { return groups[k] == g }
				}
				got, err := c.QuerySparse("kw", o.q.Indices, o.q.Values, 7, f, nil)
				if err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
				if want := bruteSparse(points, o.q, 7, allow); !slices.Equal(got, want) {
					t.Fatalf("%s op %d: %v, brute force %v", s.name, i, got, want)
				}
				// A fusion of the one list keeps its order.
				fused, err := c.QueryFused([]SubQuery{{Field: "kw", Indices: o.q.Indices, Values: o.q.Values, Limit: 7}},
					Fusion{Method: RRF}, 7, f, nil, 1)
				if err != nil || len(fused) != len(got) {
					t.Fatalf("%s op %d: fused %v %v, alone %v", s.name, i, fused, err, got)
				}
				for j := range fused {
					if fused[j].ID != got[j].ID {
						t.Fatalf("%s op %d: fused order %v, alone %v", s.name, i, fused, got)
					}
				}
			case 4:
				if err := c.Checkpoint(); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
			case 5:
				if err := c.Close(); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
				if c, err = Open(dir, s.tuning); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
				if err := c.CheckIntegrity(); err != nil {
					t.Fatalf("%s op %d: %v", s.name, i, err)
				}
			}
		}
		if err := c.CheckIntegrity(); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.Count(meta.HasVector("kw")); n != len(points) {
			t.Fatalf("%s: %d points have the field, model %d", s.name, n, len(points))
		}
		c.Close()
		if queries < 50 {
			t.Fatalf("only %d queries", queries)
		}
	}
}

// TestLegacyCollectionGainsASparseField prevents an old collection (the
// one dense field "", format 2 snapshots, op 1 records) from failing to
// take a sparse field, or from losing it: it opens as it always did, gets
// a sparse field, its next snapshot lists it (format 4 since segments), and both the
// replayed and the snapshotted state hold the dense and the sparse values.
func TestLegacyCollectionGainsASparseField(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(1, 2))
	if err := c.Upsert(IntIDs([]uint64{1, 2, 3}), randomVectors(rng, 3), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := snapshot.ReadManifest(c.fs, snapshotPath(dir, c.lastCheckpoint.Load()))
	if err != nil || m.Format != 5 || len(m.Sparse) != 0 {
		t.Fatalf("the old collection's snapshot: format %d, %v", m.Format, err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	if err := c.AddSparseField(SparseField{Name: "kw", Modifier: sparse.ModifierIDF}); err != nil {
		t.Fatal(err)
	}
	kw := FieldValues{Points: []int{1}, Counts: []int{2}, Indices: []uint32{9, 4}, Vectors: []float32{1, 2}}
	if _, err := c.UpdateVectors([]ID{IntID(1), IntID(2)}, map[string]FieldValues{"kw": kw}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		found, vectors, err := c.GetSparseVectors(IntIDs([]uint64{1, 2, 3}), "kw")
		if err != nil || len(found) != 1 || found[0] != IntID(2) || !slices.Equal(vectors[0].Indices, []uint32{4, 9}) {
			t.Fatalf("%s: %v %v %v", when, found, vectors, err)
		}
		if found, _, _, err := c.Get(IntIDs([]uint64{1, 2, 3}), true); err != nil || len(found) != 3 {
			t.Fatalf("%s: dense points %v %v", when, found, err)
		}
		if o := c.Options(); o.Dim != testDim || len(o.Sparse) != 1 || o.Sparse[0].Modifier != sparse.ModifierIDF {
			t.Fatalf("%s: options %+v", when, o)
		}
	}
	check("live")
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	check("after replay")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = snapshot.ReadManifest(c.fs, snapshotPath(dir, c.lastCheckpoint.Load()))
	if err != nil || m.Format != 5 || len(m.Sparse) != 1 || m.Sparse[0].Name != "kw" {
		t.Fatalf("the snapshot after: format %d, sparse %+v, %v", m.Format, m.Sparse, err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	defer c.Close()
	check("after a snapshot")
}
