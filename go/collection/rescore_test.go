package collection

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
)

// l2 is the squared L2 distance the engine reports for metric.L2, in
// float64.
func l2(a, b []float32) float64 { return synth.Distance("l2", a, b) }

// checkFloatDistances fails unless every answer of c to queries is at the
// float distance of the vector it upserted (vecs, by id), as a float
// field would report it.
func checkFloatDistances(t *testing.T, stage string, c *Collection, queries, vecs []float32, k int) {
	t.Helper()
	nq := len(queries) / testDim
	ids, dists := make([]ID, nq*k), make([]float32, nq*k)
	if _, err := c.Query(queries, k, 40, nil, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		q := queries[(i/k)*testDim : (i/k+1)*testDim]
		n := id.Int()
		want := l2(q, vecs[n*testDim:(n+1)*testDim])
		if math.Abs(float64(dists[i])-want) > 1e-4*max(1, want) {
			t.Fatalf("%s: id %d at distance %g, its float distance is %g", stage, n, dists[i], want)
		}
	}
}

// TestSQ8FieldRescoresWithItsFloats: an SQ8 field (rescore on, the
// default) answers with the float distances of the vectors upserted,
// from the tail, the active graph, sealed segments in either placement
// and after reopen; GetVectors returns the floats, not their codes; a
// codes-only field answers code distances, which differ.
func TestSQ8FieldRescoresWithItsFloats(t *testing.T) {
	racetest.AnswersOnly(t)
	rng := rand.New(rand.NewPCG(31, 3))
	const n, k = 1500, 10
	vecs := randomVectors(rng, n)
	queries := randomVectors(rng, 20)
	for _, mem := range []Memory{MemoryRAM, MemoryMmap} {
		t.Run(mem.String(), func(t *testing.T) {
			dir := t.TempDir()
			opts := testOptions()
			opts.Quantization, opts.Memory = hnsw.QuantSQ8, mem
			tuning := Tuning{CheckpointBytes: -1, Threads: 1, VacuumRatio: -1}
			c, err := Create(dir, opts, tuning)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { c.Close() }()
			if err := c.Upsert(IntIDs(idRange(1000)), vecs[:1000*testDim], nil); err != nil {
				t.Fatal(err)
			}
			c.waitBuilt()
			checkFloatDistances(t, "active graph", c, queries, vecs, k)
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			checkFloatDistances(t, "sealed", c, queries, vecs, k)
			release := c.holdBuilder()
			if err := c.Upsert(IntIDs(idRange(n)[1000:]), vecs[1000*testDim:], nil); err != nil {
				t.Fatal(err)
			}
			checkFloatDistances(t, "sealed + tail", c, queries, vecs, k)
			release()
			c.waitBuilt()
			_, got, _, err := c.GetVectors(IntIDs([]uint64{7, 1200}), "")
			if err != nil || !slices.Equal(got[:testDim], vecs[7*testDim:8*testDim]) ||
				!slices.Equal(got[testDim:], vecs[1200*testDim:1201*testDim]) {
				t.Fatalf("GetVectors of a rescoring SQ8 field: not the floats upserted (%v)", err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if c, err = Open(dir, tuning); err != nil {
				t.Fatal(err)
			}
			if o := c.Options(); o.CodesOnly || o.Memory != mem {
				t.Fatalf("reopened with codes only %v, memory %v", o.CodesOnly, o.Memory)
			}
			checkFloatDistances(t, "reopened", c, queries, vecs, k)
			if mem == MemoryMmap && c.fields.Load().def.index.Mapped() == 0 {
				t.Fatal("no segment of an mmap SQ8 field is mapped")
			}
			desc := c.Describe()["vectors"].([]map[string]any)[0]
			if desc["rescore"] != true || desc["quantization"] != "sq8" {
				t.Fatalf("Describe: %v", desc)
			}
		})
	}
	t.Run("codes-only", func(t *testing.T) {
		opts := testOptions()
		opts.Quantization, opts.CodesOnly = hnsw.QuantSQ8, true
		dir := t.TempDir()
		c, err := Create(dir, opts, Tuning{CheckpointBytes: -1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Upsert(IntIDs(idRange(1000)), vecs[:1000*testDim], nil); err != nil {
			t.Fatal(err)
		}
		c.waitBuilt()
		ids, dists := make([]ID, k), make([]float32, k)
		if _, err := c.Query(queries[:testDim], k, 40, nil, 1, ids, dists); err != nil {
			t.Fatal(err)
		}
		n0 := ids[0].Int()
		if float64(dists[0]) == l2(queries[:testDim], vecs[n0*testDim:(n0+1)*testDim]) {
			t.Fatal("a codes-only field answered a float distance")
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if c, err = Open(dir, Tuning{CheckpointBytes: -1}); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if !c.Options().CodesOnly || c.Describe()["vectors"].([]map[string]any)[0]["rescore"] != false {
			t.Fatal("a codes-only field reopened rescoring")
		}
	})
}

// TestSQ8RescoreRecallAtLeastCodesOnly: re-scoring with the floats finds
// at least the true neighbours that ranking by codes alone finds (same
// data, same graph parameters, same ef).
func TestSQ8RescoreRecallAtLeastCodesOnly(t *testing.T) {
	racetest.AnswersOnly(t)
	rng := rand.New(rand.NewPCG(8, 8))
	const n, nq, k = 3000, 50, 10
	vecs := randomVectors(rng, n)
	queries := randomVectors(rng, nq)
	truth := synth.KNN("l2", vecs, queries, testDim, k)
	recall := func(codesOnly bool) float64 {
		opts := testOptions()
		opts.Quantization, opts.CodesOnly = hnsw.QuantSQ8, codesOnly
		c, err := Create(t.TempDir(), opts, Tuning{CheckpointBytes: -1, Threads: 1, VacuumRatio: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Upsert(IntIDs(idRange(n)), vecs, nil); err != nil {
			t.Fatal(err)
		}
		c.waitBuilt()
		ids, dists := make([]ID, nq*k), make([]float32, nq*k)
		if _, err := c.Query(queries, k, 32, nil, 1, ids, dists); err != nil {
			t.Fatal(err)
		}
		hits := 0
		for q := range nq {
			for _, id := range ids[q*k : (q+1)*k] {
				v := id.Int()
				if slices.Contains(truth[q], int(v)) {
					hits++
				}
			}
		}
		return float64(hits) / float64(nq*k)
	}
	codes, rescored := recall(true), recall(false)
	t.Logf("recall@%d at ef 32: codes only %.3f, rescored %.3f", k, codes, rescored)
	if rescored < codes {
		t.Fatalf("rescored recall %.3f below codes-only %.3f", rescored, codes)
	}
}

// TestRescoreSpec: the doors' "rescore" key, and the manifests and log
// records of before it (an SQ8 field without the key is codes-only).
func TestRescoreSpec(t *testing.T) {
	for _, tc := range []struct {
		json      string
		codesOnly bool
		invalid   bool
	}{
		{`{"dim": 4, "quantization": "sq8"}`, false, false},
		{`{"dim": 4, "quantization": "sq8", "rescore": true}`, false, false},
		{`{"dim": 4, "quantization": "sq8", "rescore": false}`, true, false},
		{`{"dim": 4, "rescore": false}`, false, true},
		{`{"dim": 4, "quantization": "none", "rescore": true}`, false, true},
		{`{"dim": 4, "quantization": "sq8", "rescore": "no"}`, false, true},
	} {
		f, err := ParseVectorField("v", []byte(tc.json))
		if tc.invalid {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: err %v, want ErrInvalid", tc.json, err)
			}
			continue
		}
		if err != nil || f.CodesOnly != tc.codesOnly {
			t.Errorf("%s: codes only %v, %v", tc.json, f.CodesOnly, err)
		}
		back, err := decodeSpec(encodeSpec(f))
		if err != nil || back != f {
			t.Errorf("%s: round trip %+v, %v", tc.json, back, err)
		}
	}
	old, err := decodeSpec([]byte(`{"name": "v", "dim": 4, "metric": "l2", "M": 16, "ef_construction": 200, "quantization": "sq8"}`))
	if err != nil || !old.CodesOnly {
		t.Fatalf("an SQ8 spec of before rescoring: codes only %v, %v", old.CodesOnly, err)
	}
	if _, err := decodeSpec([]byte(`{"name": "v", "dim": 4, "metric": "l2", "M": 16, "ef_construction": 200, "quantization": "none", "rescore": true}`)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("rescore on a float field in a record: %v", err)
	}
	if _, err := (VectorField{Name: "v", Dim: 4, Metric: 0, CodesOnly: true}).withDefaults(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("codes only on a float field: %v", err)
	}
}
