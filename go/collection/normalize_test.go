package collection

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
)

// TestCosineVectorReadsBackBitIdenticalAtEverySegmentState: a cosine
// vector is normalised once, when it enters the tail; the graph build,
// the seal, a merge, a reopen and an export-restore keep those bits. (The
// graph's Add normalised the tail's unit vectors again, so a read moved by
// 1-2 ulp once the builder had run: a Qdrant snapshot round trip read
// another vector than before it, depending on the builder's timing.)
func TestCosineVectorReadsBackBitIdenticalAtEverySegmentState(t *testing.T) {
	for _, q := range []hnsw.Quantization{hnsw.QuantNone, hnsw.QuantSQ8} {
		t.Run(q.String(), func(t *testing.T) {
			const dim, n = 96, 300
			dir := filepath.Join(t.TempDir(), "c")
			opts := Options{Dim: dim, Metric: metric.Cosine, M: 8, EfConstruction: 32, Seed: 1, Quantization: q}
			tuning := Tuning{CheckpointBytes: -1}
			c, err := Create(dir, opts, tuning)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			rng := rand.New(rand.NewPCG(7, 8))
			ids := make([]ID, 2*n)
			for i := range ids {
				ids[i] = IntID(uint64(i))
			}
			vecs := make([]float32, 2*n*dim)
			for i := range vecs {
				vecs[i] = float32(rng.NormFloat64() * 3)
			}
			read := func(c *Collection) []float32 {
				t.Helper()
				found, got, _, err := c.GetVectors(ids, "")
				if err != nil {
					t.Fatal(err)
				}
				if len(found) != len(ids) {
					t.Fatalf("read %d of %d points", len(found), len(ids))
				}
				return got
			}
			var want []float32
			same := func(c *Collection, when string) {
				t.Helper()
				got := read(c)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: point %d coordinate %d reads %x, %x from the tail (%g ulp)", when,
							i/dim, i%dim, math.Float32bits(got[i]), math.Float32bits(want[i]),
							float64(int64(math.Float32bits(got[i]))-int64(math.Float32bits(want[i]))))
					}
				}
			}

			// Two batches read from the tail, the builder held.
			release := c.holdBuilder()
			if err := c.Upsert(ids[:n], vecs[:n*dim], nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Upsert(ids[n:], vecs[n*dim:], nil); err != nil {
				t.Fatal(err)
			}
			if rows := c.Info().TailRows; rows != 2*n {
				t.Fatalf("the tail holds %d rows with the builder held, want %d", rows, 2*n)
			}
			want = read(c)
			release()
			c.waitIndexed()
			same(c, "built into the active graph")
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			same(c, "sealed")
			// A second segment of half of them (overwritten with the same
			// values), then an idle merge of both.
			if err := c.Upsert(ids[n:], vecs[n*dim:], nil); err != nil {
				t.Fatal(err)
			}
			c.waitIndexed()
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			same(c, "two segments")
			c.lookAndWait()
			c.lookAndWait()
			if s := c.Info().Segments; s != 1 {
				t.Fatalf("%d segments after two idle looks, want 1 (merged)", s)
			}
			same(c, "merged")
			// The merge is written by a checkpoint with a record to write.
			if err := c.Upsert(ids[:1], vecs[:dim], nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = mustOpen(t, dir, tuning)
			same(c, "reopened")
			var archive bytes.Buffer
			if _, err := c.Export(&archive); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(t.TempDir(), "restored")
			if _, err := Restore(&archive, to, tuning); err != nil {
				t.Fatal(err)
			}
			r := mustOpen(t, to, tuning)
			defer func() { _ = r.Close() }()
			same(r, "restored")
		})
	}
}
