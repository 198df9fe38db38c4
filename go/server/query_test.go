package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
)

// TestQueryAnswerEncodesAsEncodingJSONWould: appendResults, the
// hand-written encoder of every vector query's answer, must say what
// encoding/json says for the same results: every include combination,
// single and batch, padding, ids deleted since the search (metadata null),
// non-finite distances (null: JSON has no NaN or infinity), and documents
// of every JSON type, escapes and non-ASCII text included.
func TestQueryAnswerEncodesAsEncodingJSONWould(t *testing.T) {
	s, err := New(Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n, dim = 200, 3
	c, err := s.CreateCollection("enc", collection.Options{Dim: dim, Metric: metric.L2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	ids := make([]uint64, n)
	vecs := make([]float32, n*dim)
	var docs strings.Builder
	docs.WriteByte('[')
	for i := range ids {
		ids[i] = uint64(i)
		for j := range dim {
			vecs[i*dim+j] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
		}
		if i > 0 {
			docs.WriteByte(',')
		}
		fmt.Fprintf(&docs, `{"i":%d,"s":%q,"f":%g,"b":%t,"n":null,"l":[1,"x",true],"o":{"é":"\u00e9\n\"\\","z":{"y":[]}}}`,
			i, fmt.Sprintf("p<%d>&\u2028", i), rng.NormFloat64()*1e30, i%2 == 0)
	}
	docs.WriteByte(']')
	parsed, err := meta.ParseDocuments([]byte(docs.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Upsert(collection.IntIDs(ids), vecs, parsed); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(collection.IntIDs([]uint64{7, 8, 9})); err != nil {
		t.Fatal(err)
	}
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-7, 123456789}
	for round := range 300 {
		nq, k := 1+rng.IntN(3), 1+rng.IntN(5)
		batch := nq > 1 || rng.IntN(2) == 0
		in := include{metadata: rng.IntN(2) == 0, distances: rng.IntN(2) == 0, vectors: rng.IntN(2) == 0}
		resIDs := make([]int64, nq*k)
		dists := make([]float32, nq*k)
		for q := range nq {
			hits := rng.IntN(k + 1) // the rest is padding
			for j := range k {
				i := q*k + j
				if j >= hits {
					resIDs[i] = -1
					continue
				}
				resIDs[i] = int64(rng.IntN(n)) // 7, 8 and 9 are deleted
				if rng.IntN(4) == 0 {
					dists[i] = specials[rng.IntN(len(specials))]
				} else {
					dists[i] = float32(rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(12)-6)))
				}
			}
		}
		stats := hnsw.SearchStats{DistanceComputations: rng.Int64N(1 << 40), Plan: hnsw.Plan(rng.IntN(2)),
			Allowed: rng.IntN(n), EfSearch: rng.IntN(1000)}
		got, err := appendResults(nil, nil, c, toIDs(resIDs), dists, nq, k, in, batch, stats)
		if err != nil {
			t.Fatal(err)
		}
		want := referenceResults(t, c, resIDs, dists, nq, k, in, batch, stats)
		var gotValue, wantValue any
		if err := json.Unmarshal(got, &gotValue); err != nil {
			t.Fatalf("round %d: the answer is not JSON (%v): %s", round, err, got)
		}
		if err := json.Unmarshal(want, &wantValue); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotValue, wantValue) {
			t.Fatalf("round %d (nq=%d k=%d batch=%v include=%+v):\nhand-written %s\nencoding/json %s", round, nq, k, batch, in, got, want)
		}
	}
}

// referenceResults encodes the answer with encoding/json from the
// collection's own reads.
func referenceResults(t *testing.T, c *collection.Collection, ids []int64, dists []float32, nq, k int,
	in include, batch bool, stats hnsw.SearchStats) []byte {
	t.Helper()
	lists := make([][]map[string]any, nq)
	for q := range nq {
		lists[q] = []map[string]any{}
		for j := range k {
			i := q*k + j
			if ids[i] < 0 {
				break
			}
			hit := map[string]any{"id": ids[i]}
			if in.distances {
				d := float64(dists[i])
				if math.IsNaN(d) || math.IsInf(d, 0) {
					hit["distance"] = nil
				} else {
					hit["distance"] = dists[i]
				}
			}
			found, docs, vec, err := c.Get([]collection.ID{collection.IntID(uint64(ids[i]))}, true)
			if err != nil {
				t.Fatal(err)
			}
			if in.metadata {
				hit["metadata"] = nil
				if len(found) == 1 {
					hit["metadata"] = json.RawMessage(docs[0])
				}
			}
			if in.vectors {
				hit["vector"] = nil
				if len(found) == 1 {
					hit["vector"] = vec
				}
			}
			lists[q] = append(lists[q], hit)
		}
	}
	var results any = lists[0]
	if batch {
		results = lists
	}
	out, err := json.Marshal(map[string]any{"results": results, "stats": map[string]any{
		"plan": stats.Plan.String(), "distance_computations": stats.DistanceComputations,
		"allowed": stats.Allowed, "ef": stats.EfSearch}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// toIDs turns int64 results (-1 for none) into ids.
func toIDs(keys []int64) []collection.ID {
	out := make([]collection.ID, len(keys))
	for i, k := range keys {
		out[i] = collection.NoID
		if k >= 0 {
			out[i] = collection.IntID(uint64(k))
		}
	}
	return out
}
