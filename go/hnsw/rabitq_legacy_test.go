package hnsw

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/quant/rabitq"
	"github.com/strata-db/strata/go/vfs"
)

// legacyRaBitQDim is the dimension of the files in testdata/legacy-rabitq:
// written with codes padded to the next power of two (256), where new
// files pad to 192 (rabitq.PaddedDim) and rotate with the FHT-Kac walk.
// They were written by the engine of commit 140ef0d (before PaddedDim),
// each legacyRaBitQConfigs index given synth.Clustered(200, 150, 10, 0.4,
// 31) in one Add on one thread, saved as <name>.idx with legacySearch's
// answers as <name>.json (the writer: TestWriteLegacyRaBitQFiles in commit
// 7ee68f2, run on a copy of 140ef0d).
const legacyRaBitQDim = 150

// legacyRaBitQConfigs are the modes of the files in testdata/legacy-rabitq,
// one file each: the 1-bit default (neighbour blocks, expanded search),
// extended codes, the quantized graph and codes-only.
var legacyRaBitQConfigs = map[string]Config{
	"bits1":     {Dim: legacyRaBitQDim, Metric: metric.L2, M: 8, Seed: 3, RaBitQBits: 1},
	"bits4":     {Dim: legacyRaBitQDim, Metric: metric.Cosine, M: 8, Seed: 3, RaBitQBits: 4},
	"qg":        {Dim: legacyRaBitQDim, Metric: metric.L2, M: 8, Seed: 3, RaBitQBits: 1, RaBitQLayout: LayoutQG},
	"codesonly": {Dim: legacyRaBitQDim, Metric: metric.IP, M: 8, Seed: 3, RaBitQBits: 3, RaBitQCodesOnly: true},
}

// legacyAnswers are the ids and distances of legacyQueries' graph
// searches (k 10, ef 48), as the index that wrote the file answered them.
type legacyAnswers struct {
	IDs   []int64
	Dists []float32
}

func legacyQueries() []float32 { return synth.Clustered(20, legacyRaBitQDim, 10, 0.4, 32) }

func legacySearch(t *testing.T, x *Index) legacyAnswers {
	t.Helper()
	q := legacyQueries()
	n := len(q) / legacyRaBitQDim
	a := legacyAnswers{IDs: make([]int64, n*10), Dists: make([]float32, n*10)}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	if err := x.Search(q, 10, 48, 1, a.IDs, a.Dists); err != nil {
		t.Fatal(err)
	}
	return a
}

// closeDists reports whether two answers' distances agree to float
// rounding (1e-6 of max(|d|, 1)): the golden answers were written by the
// assembly kernels, and the pure-Go ones (-tags noasm) sum in another
// order, 1-2 ulps apart (at most 2.2e-7 relative on these files).
func closeDists(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6*max(math.Abs(float64(want[i])), 1) {
			return false
		}
	}
	return true
}

// TestLegacyRaBitQFilesSearchAsWritten prevents files written before
// rabitq.PaddedDim from loading with the new rotation (their codes would
// be read against another P and every estimate would be noise): each
// loads with its codes at the padded dimension it recorded (RBQP), 256,
// resident or mapped, and answers as the index that wrote it (the same ids,
// distances to rounding);
// a new index of the same data codes at 192.
func TestLegacyRaBitQFilesSearchAsWritten(t *testing.T) {
	for name, cfg := range legacyRaBitQConfigs {
		dir := filepath.Join("testdata", "legacy-rabitq")
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var want legacyAnswers
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		for _, mmap := range []bool{false, true} {
			x, err := Load(vfs.Default, filepath.Join(dir, name+".idx"), LoadOptions{MmapVectors: mmap && !cfg.RaBitQCodesOnly})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rq := x.rabitq.Load()
			if rq == nil || rq.padded != rabitq.LegacyPaddedDim(legacyRaBitQDim) || (cfg.RaBitQLayout == LayoutQG) != (rq.qg != nil) ||
				rq.qg != nil && rq.qg.padded != rq.padded {
				t.Fatalf("%s: loaded codes %+v, want them padded to %d", name, rq, rabitq.LegacyPaddedDim(legacyRaBitQDim))
			}
			got := legacySearch(t, x)
			if !slices.Equal(got.IDs, want.IDs) || !closeDists(got.Dists, want.Dists) {
				t.Errorf("%s mmap=%v: answers %v, written %v", name, mmap, got.IDs[:10], want.IDs[:10])
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
		}
		x, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Add(synth.Clustered(200, legacyRaBitQDim, 10, 0.4, 31), nil, nil, 1); err != nil {
			t.Fatal(err)
		}
		if rq := x.rabitq.Load(); rq == nil || rq.padded != rabitq.PaddedDim(legacyRaBitQDim) || rq.qg != nil && rq.qg.padded != rq.padded {
			t.Errorf("%s: a new index codes at %+v, want %d", name, rq, rabitq.PaddedDim(legacyRaBitQDim))
		}
	}
}
