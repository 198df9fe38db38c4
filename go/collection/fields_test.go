package collection

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// twoFields is the schema of the tests below: two dense fields of
// different dimensions and metrics.
func twoFields() []VectorField {
	return []VectorField{
		{Name: "text", Dim: 48, Metric: metric.Cosine},
		{Name: "image", Dim: 24, Metric: metric.L2},
	}
}

// exactTopK is the brute-force top k of query among the rows of data
// whose ids are in ids (data[i] belongs to ids[i]).
func exactTopK(m metric.Metric, query []float32, data [][]float32, ids []uint64, k int) []uint64 {
	q := slices.Clone(query)
	if m.NeedsNormalize() {
		metric.Normalize(q)
	}
	type hit struct {
		id uint64
		d  float32
	}
	hits := make([]hit, len(ids))
	for i, v := range data {
		w := slices.Clone(v)
		if m.NeedsNormalize() {
			metric.Normalize(w)
		}
		hits[i] = hit{ids[i], m.Distance(q, w)}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].d < hits[b].d })
	out := make([]uint64, 0, k)
	for i := 0; i < k && i < len(hits); i++ {
		out = append(out, hits[i].id)
	}
	return out
}

func recallOf(got []ID, truth []uint64) float64 {
	hit := 0
	for _, id := range got {
		if !id.IsNone() && !id.IsString() && slices.Contains(truth, id.Int()) {
			hit++
		}
	}
	return float64(hit) / float64(len(truth))
}

// TestNamedFieldsRecallAtDefaultEf prevents a field from searching another
// field's index, or a point lacking a field from being found through it:
// two fields of different dims and metrics, a third of the points without
// "image", recall@10 >= 0.95 per field at the default ef, before and after
// a reopen that loads the fields from a snapshot and replays more writes.
func TestNamedFieldsRecallAtDefaultEf(t *testing.T) {
	racetest.AnswersOnly(t)
	const n, k, nq = 3000, 10, 50
	dir := t.TempDir()
	c, err := Create(dir, Options{Vectors: twoFields(), Seed: 1}, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	text := synth.Clustered(n, 48, 40, 0.3, 1)
	image := synth.Clustered(n, 24, 40, 0.3, 2)
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	withImage := []int{}
	var imageRows []float32
	for i := range n {
		if i%3 != 0 {
			withImage = append(withImage, i)
			imageRows = append(imageRows, image[i*24:(i+1)*24]...)
		}
	}
	write := func(c *Collection, lo, hi int) {
		var points []int
		var rows []float32
		for _, p := range withImage {
			if p >= lo && p < hi {
				points = append(points, p-lo)
				rows = append(rows, image[p*24:(p+1)*24]...)
			}
		}
		err := c.UpsertPoints(IntIDs(ids[lo:hi]), map[string]FieldValues{
			"text":  {Vectors: text[lo*48 : hi*48]},
			"image": {Points: points, Vectors: rows},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	for lo := 0; lo < n/2; lo += 500 {
		write(c, lo, lo+500)
	}
	if err := c.Close(); err != nil { // checkpoints: the first half goes to a snapshot
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	for lo := n / 2; lo < n; lo += 500 {
		write(c, lo, lo+500)
	}
	if err := c.CloseForDrop(); err != nil { // no checkpoint: the second half is replayed
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	defer c.Close()
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}

	check := func(field string, m metric.Metric, dim int, data []float32, have []uint64, seed uint64) {
		t.Helper()
		rows := make([][]float32, len(have))
		for i, id := range have {
			rows[i] = data[int(id)*dim : int(id+1)*dim]
		}
		queries := synth.Clustered(nq, dim, 40, 0.3, seed)
		outIDs, outDists := make([]ID, k), make([]float32, k)
		total := 0.0
		for q := range nq {
			query := queries[q*dim : (q+1)*dim]
			if _, err := c.QueryField(field, query, k, 0, nil, nil, 1, outIDs, outDists); err != nil {
				t.Fatal(err)
			}
			total += recallOf(outIDs, exactTopK(m, query, rows, have, k))
		}
		if recall := total / nq; recall < 0.95 {
			t.Errorf("field %q: recall@%d %.3f at the default ef, want >= 0.95", field, k, recall)
		} else {
			t.Logf("field %q: recall@%d %.3f", field, k, recall)
		}
	}
	haveImage := make([]uint64, len(withImage))
	for i, p := range withImage {
		haveImage[i] = uint64(p)
	}
	check("text", metric.Cosine, 48, text, ids, 7)
	check("image", metric.L2, 24, image, haveImage, 8)
	_ = imageRows

	// has_vector sees the same points.
	if got, err := c.Count(meta.HasVector("image")); err != nil || got != len(withImage) {
		t.Errorf("has_vector image counts %d (%v), want %d", got, err, len(withImage))
	}
	if got, err := c.Count(meta.Not(meta.HasVector("image"))); err != nil || got != n-len(withImage) {
		t.Errorf("not has_vector image counts %d (%v), want %d", got, err, n-len(withImage))
	}
}

// multiPoint is one point of a multivector test: its vectors, row-major.
type multiPoint struct {
	id   uint64
	rows []float32
}

// exactMaxSim is the brute-force MAX_SIM distance of every point, nearest
// first.
func exactMaxSim(m metric.Metric, query []float32, dim int, points []multiPoint, k int) []uint64 {
	nq := len(query) / dim
	q := slices.Clone(query)
	type hit struct {
		id uint64
		d  float64
	}
	hits := make([]hit, len(points))
	for pi, p := range points {
		nv := len(p.rows) / dim
		var sum float64
		for i := range nq {
			qi := slices.Clone(q[i*dim : (i+1)*dim])
			if m.NeedsNormalize() {
				metric.Normalize(qi)
			}
			best := math.Inf(1)
			for j := range nv {
				v := slices.Clone(p.rows[j*dim : (j+1)*dim])
				if m.NeedsNormalize() {
					metric.Normalize(v)
				}
				best = min(best, float64(m.Distance(qi, v)))
			}
			sum += best
		}
		hits[pi] = hit{p.id, sum}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].d < hits[b].d })
	out := make([]uint64, 0, k)
	for i := 0; i < k && i < len(hits); i++ {
		out = append(out, hits[i].id)
	}
	return out
}

// TestMultivectorRecallAgainstExactMaxSim prevents MAX_SIM from being
// approximated by the single nearest vector, or candidates from being
// lost in the node-to-point mapping: points of 2-12 vectors, queries of
// 4, recall@10 against the exact MAX_SIM over every point >= 0.95, for
// the cosine and the l2 metric, before and after a reopen.
func TestMultivectorRecallAgainstExactMaxSim(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.Cosine, metric.L2} {
		t.Run(m.String(), func(t *testing.T) {
			const n, dim, k, nq = 800, 32, 10, 30
			dir := t.TempDir()
			c, points := multiSet(t, dir, m, n, dim, 3)
			queries := synth.Clustered(nq*4, dim, 60, 0.3, 9)
			measure := func(c *Collection) {
				t.Helper()
				outIDs, outDists := make([]ID, k), make([]float32, k)
				total := 0.0
				for q := range nq {
					query := queries[q*4*dim : (q+1)*4*dim]
					if _, err := c.QueryMulti("tokens", query, k, 0, nil, nil, 1, outIDs, outDists); err != nil {
						t.Fatal(err)
					}
					if !slices.IsSorted(outDists) {
						t.Fatalf("distances not ascending: %v", outDists)
					}
					total += recallOf(outIDs, exactMaxSim(m, query, dim, points, k))
				}
				if recall := total / nq; recall < 0.95 {
					t.Errorf("MAX_SIM recall@%d %.3f, want >= 0.95", k, recall)
				} else {
					t.Logf("MAX_SIM recall@%d %.3f", k, recall)
				}
			}
			measure(c)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
			defer c.Close()
			if err := c.CheckIntegrity(); err != nil {
				t.Fatal(err)
			}
			measure(c)
		})
	}
}

// TestMaxSimDistanceMatchesDefinition prevents the kernel loop from
// drifting from Σ_i min_j d(q_i, v_j), d squared for l2 (the example
// qdrant-client's local mode scores √2).
func TestMaxSimDistanceMatchesDefinition(t *testing.T) {
	q := []float32{1, 0, 0, 1}               // two query vectors of dim 2
	v := []float32{3, 4, 1, 0, 0, 2, 10, 10} // four point vectors
	// l2: q0=(1,0): nearest (1,0) at 0; q1=(0,1): nearest (0,2) at 1.
	if got := maxSimDistance(metric.L2, q, 2, v, 4, 2); math.Abs(float64(got)-1) > 1e-6 {
		t.Errorf("l2 MAX_SIM distance %v, want 1", got)
	}
	// Local mode's example: [[0,1],[3,3]] against [[0,0],[3,4]]: 1 + 1.
	if got := maxSimDistance(metric.L2, []float32{0, 1, 3, 3}, 2, []float32{0, 0, 3, 4}, 2, 2); got != 2 {
		t.Errorf("l2 MAX_SIM distance %v, want 2 (score √2)", got)
	}
	// ip: 1 - max dot: q0 best dot 10 (10,10); q1 best 10: 2 - 20.
	if got := maxSimDistance(metric.IP, q, 2, v, 4, 2); math.Abs(float64(got)+18) > 1e-5 {
		t.Errorf("ip MAX_SIM distance %v, want -18", got)
	}
}

// fieldModel is what a multi-field collection must hold: per point, per
// field, the rows (nil: no value).
type fieldModel map[uint64]map[string][]float32

func (m fieldModel) check(t *testing.T, c *Collection, fields []string, dims map[string]int) {
	t.Helper()
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if c.Len() != len(m) {
		t.Fatalf("collection holds %d points, model %d", c.Len(), len(m))
	}
	for _, field := range fields {
		found, vectors, counts, err := c.GetVectors(IntIDs(ids), field)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, id := range ids {
			if m[id][field] != nil {
				want++
			}
		}
		if len(found) != want {
			t.Fatalf("field %q: %d points have it, model says %d", field, len(found), want)
		}
		at := 0
		for i, id := range found {
			rows := 1
			if counts != nil {
				rows = counts[i]
			}
			got := vectors[at : at+rows*dims[field]]
			at += rows * dims[field]
			if !slices.Equal(got, m[id.Int()][field]) {
				t.Fatalf("field %q of point %v: %v, model %v", field, id, got, m[id.Int()][field])
			}
		}
	}
}

// TestPartialUpdatesSurviveReopen prevents a partial write (one field of a
// point updated or deleted, a field added or removed) from being lost or
// misapplied by replay or by a snapshot: a random run of such writes
// against a model, checked live, after a replay and after a checkpoint.
func TestPartialUpdatesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	schema := []VectorField{
		{Name: "", Dim: 4, Metric: metric.L2},
		{Name: "colbert", Dim: 3, Metric: metric.IP, Multivector: MaxSim},
	}
	c, err := Create(dir, Options{Vectors: schema, Seed: 1}, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int{"": 4, "colbert": 3, "extra": 2}
	fields := []string{"", "colbert"}
	m := fieldModel{}
	rng := rand.New(rand.NewPCG(5, 5))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.IntN(100))
		}
		return v
	}
	for step := range 300 {
		switch op := rng.IntN(10); {
		case step == 150:
			if err := c.AddVectorField(VectorField{Name: "extra", Dim: 2, Metric: metric.L2}); err != nil {
				t.Fatal(err)
			}
			fields = append(fields, "extra")
		case step == 250:
			if err := c.RemoveVectorField("colbert"); err != nil {
				t.Fatal(err)
			}
			fields = slices.DeleteFunc(fields, func(f string) bool { return f == "colbert" })
			for _, p := range m {
				delete(p, "colbert")
			}
		case op < 4: // whole points, some fields each
			ids := []uint64{uint64(rng.IntN(40)), uint64(40 + rng.IntN(40))}
			values := map[string]FieldValues{}
			for _, f := range fields {
				var fv FieldValues
				fv.Points = []int{}
				for p := range ids {
					if rng.IntN(3) == 0 {
						continue
					}
					rows := 1
					if f == "colbert" {
						rows = 1 + rng.IntN(3)
						fv.Counts = append(fv.Counts, rows)
					}
					fv.Points = append(fv.Points, p)
					fv.Vectors = append(fv.Vectors, vec(rows*dims[f])...)
				}
				values[f] = fv
			}
			if err := c.UpsertPoints(IntIDs(ids), values, nil); err != nil {
				t.Fatal(err)
			}
			for p, id := range ids {
				m[id] = map[string][]float32{}
				for f, fv := range values {
					at := 0
					for i, q := range fv.Points {
						rows := 1
						if fv.Counts != nil {
							rows = fv.Counts[i]
						}
						if q == p {
							m[id][f] = fv.Vectors[at : at+rows*dims[f]]
						}
						at += rows * dims[f]
					}
				}
			}
		case op < 7 && len(m) > 0: // one field of one point
			id := anyKey(m, rng)
			f := fields[rng.IntN(len(fields))]
			fv := FieldValues{}
			rows := 1
			if f == "colbert" {
				rows = 1 + rng.IntN(3)
				fv.Counts = []int{rows}
			}
			fv.Vectors = vec(rows * dims[f])
			if _, err := c.UpdateVectors([]ID{IntID(id)}, map[string]FieldValues{f: fv}); err != nil {
				t.Fatal(err)
			}
			m[id][f] = fv.Vectors
		case op < 9 && len(m) > 0:
			id := anyKey(m, rng)
			f := fields[rng.IntN(len(fields))]
			if _, err := c.DeleteVectors([]ID{IntID(id)}, []string{f}); err != nil {
				t.Fatal(err)
			}
			delete(m[id], f)
		case len(m) > 0:
			id := anyKey(m, rng)
			if _, err := c.Delete([]ID{IntID(id)}); err != nil {
				t.Fatal(err)
			}
			delete(m, id)
		}
		if step == 100 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.check(t, c, fields, dims)
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	m.check(t, c, fields, dims)
	if got := c.VectorFields(); len(got) != 2 || got[0].Name != "" || got[1].Name != "extra" {
		t.Fatalf("schema after replay %+v", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	defer c.Close()
	m.check(t, c, fields, dims)
}

func anyKey(m fieldModel, rng *rand.Rand) uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

// TestFieldInputErrors prevents bad field input from being logged or
// from crashing: each fails with the error kind doors map to a 4xx, and
// changes nothing.
func TestFieldInputErrors(t *testing.T) {
	schema := []VectorField{{Name: "a", Dim: 2, Metric: metric.L2}, {Name: "m", Dim: 2, Metric: metric.IP, Multivector: MaxSim}}
	c, err := Create(t.TempDir(), Options{Vectors: schema}, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.UpsertPoints(IntIDs([]uint64{1}), map[string]FieldValues{"a": {Vectors: []float32{1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	invalid := map[string]error{}
	invalid["unknown field"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"b": {Vectors: []float32{1, 2}}}, nil)
	invalid["short vector"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"a": {Vectors: []float32{1}}}, nil)
	invalid["NaN"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"a": {Vectors: []float32{1, float32(math.NaN())}}}, nil)
	invalid["points out of range"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"a": {Points: []int{1}, Vectors: []float32{1, 2}}}, nil)
	invalid["points not ascending"] = c.UpsertPoints(IntIDs([]uint64{2, 3}), map[string]FieldValues{"a": {Points: []int{1, 0}, Vectors: []float32{1, 2, 3, 4}}}, nil)
	invalid["multivector without counts"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"m": {Vectors: []float32{1, 2}}}, nil)
	invalid["multivector count 0"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"m": {Vectors: []float32{}, Counts: []int{0}}}, nil)
	invalid["counts on a dense field"] = c.UpsertPoints(IntIDs([]uint64{2}), map[string]FieldValues{"a": {Vectors: []float32{1, 2}, Counts: []int{1}}}, nil)
	invalid["old Upsert without field \"\""] = c.Upsert([]ID{IntID(2)}, []float32{1, 2}, nil)
	_, invalid["query of a missing field"] = c.QueryField("zz", []float32{1, 2}, 1, 0, nil, nil, 1, make([]ID, 1), make([]float32, 1))
	_, invalid["dense query of a multivector field"] = c.QueryField("m", []float32{1, 2}, 1, 0, nil, nil, 1, make([]ID, 1), make([]float32, 1))
	_, invalid["multivector query of 3 floats"] = c.QueryMulti("m", []float32{1, 2, 3}, 1, 0, nil, nil, 1, make([]ID, 1), make([]float32, 1))
	_, invalid["has_vector of a missing field"] = c.Count(meta.HasVector("zz"))
	_, invalid["delete of a missing field"] = c.DeleteVectors([]ID{IntID(1)}, []string{"zz"})
	invalid["field name not UTF-8"] = c.AddVectorField(VectorField{Name: "\xff", Dim: 2, Metric: metric.L2})
	invalid["field of dim 0"] = c.AddVectorField(VectorField{Name: "z", Dim: 0, Metric: metric.L2})
	for what, err := range invalid {
		if !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", what, err)
		}
	}
	if _, err := c.UpdateVectors([]ID{IntID(9)}, map[string]FieldValues{"a": {Vectors: []float32{1, 2}}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("update of a missing point: %v, want ErrNotFound", err)
	}
	if err := c.AddVectorField(VectorField{Name: "a", Dim: 2, Metric: metric.L2}); !errors.Is(err, ErrExists) {
		t.Errorf("adding an existing field: %v, want ErrExists", err)
	}
	if err := c.RemoveVectorField("zz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing a missing field: %v, want ErrNotFound", err)
	}
	if _, err := Create(t.TempDir(), Options{Vectors: []VectorField{{Name: "a", Dim: 2}, {Name: "a", Dim: 3}}}, Tuning{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a schema naming a field twice: %v, want ErrInvalid", err)
	}
	if _, err := Create(t.TempDir(), Options{Dim: 2, Vectors: []VectorField{{Name: "a", Dim: 2}}}, Tuning{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Dim and Vectors both: %v, want ErrInvalid", err)
	}
	if c.Len() != 1 || c.Info().Seq != 1 {
		t.Errorf("refused writes changed the collection: %d points, seq %d", c.Len(), c.Info().Seq)
	}
}

// TestSingleFieldCollectionKeepsTodaysFormats prevents the schema from
// changing what a collection of the one field "" writes: its upserts are
// op 1 records laid out as before fields existed, through Upsert and
// through UpsertPoints alike, and its snapshots keep format 2 manifests.
func TestSingleFieldCollectionKeepsTodaysFormats(t *testing.T) {
	ids := []uint64{3, 5}
	vectors := []float32{1, 2, 3, 4}
	want := []byte{opUpsert, 2, 0, 0, 0, 2, 0, 0, 0}
	want = le.AppendUint64(want, 3)
	want = le.AppendUint64(want, 5)
	for _, v := range vectors {
		want = le.AppendUint32(want, math.Float32bits(v))
	}
	for range ids {
		want = append(want, 2, 0, 0, 0, '{', '}')
	}
	rec := record{op: opUpsert, ids: IntIDs(ids), dim: 2, vectors: vectors, docs: [][]byte{[]byte("{}"), []byte("{}")}}
	if got := rec.encode(); !slices.Equal(got, want) {
		t.Fatalf("op 1 record\n got %x\nwant %x", got, want)
	}

	dir := t.TempDir()
	c, err := Create(dir, Options{Dim: 2, Metric: metric.L2}, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UpsertPoints(IntIDs(ids), map[string]FieldValues{"": {Vectors: vectors}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	seq, err := snapshot.ReadCurrent(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := snapshot.ReadManifest(vfs.Default, snapshotPath(dir, seq))
	if err != nil {
		t.Fatal(err)
	}
	// Segments changed the format of every schema (format 4, then 5 with
	// state runs); the field "" is listed as any other, and the
	// collection still reports the options it was created with.
	if m.Format != 5 || len(m.Vectors) != 1 || m.Vectors[0].Name != "" || m.Vectors[0].Dim != 2 {
		t.Errorf("manifest of a single-field collection: format %d, vectors %v, dim %d; want format 5 listing the field \"\"", m.Format, m.Vectors, m.Dim)
	}
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	if o := c.Options(); o.Vectors != nil || o.Dim != 2 {
		t.Errorf("Options of a single-field collection: %+v", o)
	}
}

// TestFieldsKeepStringIDs prevents the field records from losing string
// ids: a whole-point upsert, an update and a delete of one field of
// points with string ids, live, after replay (tagged ops 5-7) and after a
// checkpoint.
func TestFieldsKeepStringIDs(t *testing.T) {
	dir := t.TempDir()
	schema := []VectorField{{Name: "a", Dim: 2, Metric: metric.L2}, {Name: "m", Dim: 2, Metric: metric.IP, Multivector: MaxSim}}
	c, err := Create(dir, Options{Vectors: schema}, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	ids := []ID{StringID("doc-1"), IntID(7), StringID("doc-2")}
	err = c.UpsertPoints(ids, map[string]FieldValues{
		"a": {Vectors: []float32{1, 1, 2, 2, 3, 3}},
		"m": {Points: []int{0, 2}, Vectors: []float32{1, 0, 0, 1, 5, 5}, Counts: []int{2, 1}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateVectors([]ID{StringID("doc-2")}, map[string]FieldValues{"a": {Vectors: []float32{9, 9}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteVectors([]ID{StringID("doc-1")}, []string{"m"}); err != nil {
		t.Fatal(err)
	}
	check := func(c *Collection) {
		t.Helper()
		found, vectors, _, err := c.GetVectors(ids, "a")
		if err != nil || fmt.Sprint(found, vectors) != `["doc-1" 7 "doc-2"] [1 1 2 2 9 9]` {
			t.Fatalf("field a: %v %v (%v)", found, vectors, err)
		}
		found, vectors, counts, err := c.GetVectors(ids, "m")
		if err != nil || fmt.Sprint(found, vectors, counts) != `["doc-2"] [5 5] [1]` {
			t.Fatalf("field m: %v %v %v (%v)", found, vectors, counts, err)
		}
		out, dists := make([]ID, 1), make([]float32, 1)
		if _, err := c.QueryMulti("m", []float32{5, 5}, 1, 0, nil, nil, 1, out, dists); err != nil || out[0] != StringID("doc-2") {
			t.Fatalf("MAX_SIM query: %v (%v)", out, err)
		}
		if _, err := c.QueryField("a", []float32{9, 9}, 1, 0, meta.HasVector("m"), nil, 1, out, dists); err != nil || out[0] != StringID("doc-2") {
			t.Fatalf("query with has_vector: %v (%v)", out, err)
		}
	}
	check(c)
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
	check(c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	check(c)
}

// TestSchemaChangesBesideQueriesAndWrites prevents a query or a write
// from tripping over a field added or removed beside it: writers, dense
// and MAX_SIM queries and a field being added and removed run at once
// (run under -race), and the collection stays consistent.
func TestSchemaChangesBesideQueriesAndWrites(t *testing.T) {
	schema := []VectorField{{Name: "a", Dim: 4, Metric: metric.L2}, {Name: "m", Dim: 4, Metric: metric.IP, Multivector: MaxSim}}
	c, err := Create(t.TempDir(), Options{Vectors: schema, Seed: 1}, Tuning{CheckpointBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 200 {
				id := IntID(uint64(w*1000 + i%50))
				v := []float32{rng.Float32(), rng.Float32(), rng.Float32(), rng.Float32()}
				err := c.UpsertPoints([]ID{id}, map[string]FieldValues{
					"a": {Vectors: v}, "m": {Vectors: append(slices.Clone(v), v...), Counts: []int{2}}}, nil)
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			name := "x"
			if err := c.AddVectorField(VectorField{Name: name, Dim: 2 + i%3, Metric: metric.Cosine}); err != nil {
				errs <- err
				return
			}
			if err := c.RemoveVectorField(name); err != nil {
				errs <- err
				return
			}
		}
	}()
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		ids, dists := make([]ID, 5), make([]float32, 5)
		for {
			select {
			case <-done:
				return
			default:
			}
			q := []float32{0.1, 0.2, 0.3, 0.4}
			if _, err := c.QueryField("a", q, 5, 0, meta.HasVector("m"), nil, 1, ids, dists); err != nil {
				errs <- err
				return
			}
			if _, err := c.QueryMulti("m", append(slices.Clone(q), q...), 5, 0, nil, nil, 1, ids, dists); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	if got := len(c.VectorFields()); got != 2 {
		t.Fatalf("%d fields after adding and removing one 20 times, want 2", got)
	}
}

// TestMaxSimAllocatesNothingPerCandidate prevents the MAX_SIM re-scoring
// from allocating per candidate point: a query that re-scores ten times
// as many candidates allocates no more than a small one (the scratch is
// pooled and grown once).
func TestMaxSimAllocatesNothingPerCandidate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: allocations are not the code's")
	}
	const n, dim = 2000, 8 // 6,000 vectors: past exactMaxSimRows, so the graph gives the candidates
	c, err := Create(t.TempDir(), Options{Vectors: []VectorField{{Name: "m", Dim: dim, Metric: metric.IP, Multivector: MaxSim}}, Seed: 1},
		Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := make([]uint64, n)
	counts := make([]int, n)
	for i := range ids {
		ids[i], counts[i] = uint64(i), 3
	}
	rows := synth.Clustered(3*n, dim, 10, 0.3, 4)
	if err := c.UpsertPoints(IntIDs(ids), map[string]FieldValues{"m": {Vectors: rows, Counts: counts}}, nil); err != nil {
		t.Fatal(err)
	}
	c.waitIndexed() // a test of the graph's candidates, not the tail's scan
	query := rows[:2*dim]
	allocs := func(k, ef int) (float64, int64) {
		outIDs, outDists := make([]ID, k), make([]float32, k)
		var scored int64
		a := testing.AllocsPerRun(20, func() {
			stats, err := c.QueryMulti("m", query, k, ef, nil, nil, 1, outIDs, outDists)
			if err != nil {
				t.Fatal(err)
			}
			scored = stats.DistanceComputations
		})
		return a, scored
	}
	small, smallWork := allocs(2, 8)
	large, largeWork := allocs(50, 200)
	if largeWork < 5*smallWork {
		t.Fatalf("the large query did %d distance computations, the small %d: not a test of per-candidate cost", largeWork, smallWork)
	}
	if large > small {
		t.Errorf("a query re-scoring more candidates allocates %.0f times, a small one %.0f: something allocates per candidate", large, small)
	}
	t.Logf("allocations per query: %.0f (%d distances) and %.0f (%d distances)", small, smallWork, large, largeWork)
}
