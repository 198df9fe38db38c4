package collection

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

const testDim = 8

// model is what a collection must hold: the expected state.
type model map[uint64]entry

type entry struct {
	vec []float32
	doc string
}

func (m model) clone() model {
	out := make(model, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func testOptions() Options {
	return Options{Dim: testDim, Metric: metric.L2, M: 8, EfConstruction: 64, Seed: 1}
}

func mustCreate(t testing.TB, dir string, tuning Tuning) *Collection {
	t.Helper()
	c, err := Create(dir, testOptions(), tuning)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustOpen(t testing.TB, dir string, tuning Tuning) *Collection {
	t.Helper()
	c, err := Open(dir, tuning)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startLook asks c's checkpoint loop for its periodic look (a vacuum if
// tombstones crowd the index, then its checkpoint; else a renumbering) now,
// and returns a channel closed when the look is done, so tests wait on
// that event instead of on the once-a-second ticker and a deadline.
func (c *Collection) startLook() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		select {
		case c.lookNow <- done:
		case <-c.stop:
			close(done)
		}
	}()
	return done
}

// lookAndWait makes c's checkpoint loop take its periodic look now and
// waits for it.
func (c *Collection) lookAndWait() { <-c.startLook() }

// abandon stops c as a crash would: no checkpoint, no final fsync, the
// lock released. What is on disk is whatever the writes left there.
func (c *Collection) abandon() {
	c.closeMu.Lock()
	c.closed = true
	c.closeMu.Unlock()
	close(c.stop)
	c.wg.Wait()
	c.walMu.Lock()
	c.log.Abandon()
	c.walMu.Unlock()
	c.lock.Close()
}

func randomVectors(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n*testDim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

var sources = []string{"wiki", "news", "blog", "code"}

func randomDoc(rng *rand.Rand) []byte {
	if rng.IntN(10) == 0 {
		return nil // no metadata: {}
	}
	return fmt.Appendf(nil, `{"source":%q,"year":%d,"tags":["t%d","t%d"],"nested":{"n":%d}}`,
		sources[rng.IntN(len(sources))], 2015+rng.IntN(10), rng.IntN(5), rng.IntN(5), rng.IntN(3))
}

// docsOf parses raw documents (nil or empty: {}).
func docsOf(t testing.TB, raw [][]byte) []meta.Document {
	t.Helper()
	docs := make([]meta.Document, len(raw))
	for i, r := range raw {
		if len(r) == 0 {
			r = []byte("{}")
		}
		d, err := meta.ParseDocument(r)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = d
	}
	return docs
}

func canonical(t testing.TB, raw []byte) string {
	t.Helper()
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	d, err := meta.ParseDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(d.JSON())
}

// checkModel asserts c holds exactly m: ids, documents, vectors, and that
// every vector finds itself by exact search.
func checkModel(t testing.TB, c *Collection, m model) {
	t.Helper()
	if c.Len() != len(m) {
		t.Fatalf("collection holds %d entries, model %d", c.Len(), len(m))
	}
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if got, err := c.ScanIDs(nil, ID{}, false, len(m)+1); err != nil || !slices.Equal(got, IntIDs(ids)) {
		t.Fatalf("ids %v (%v), model %v", got, err, ids)
	}
	found, docs, vecs, err := c.Get(IntIDs(ids), true)
	if err != nil || len(found) != len(ids) {
		t.Fatalf("Get found %d of %d: %v", len(found), len(ids), err)
	}
	for i, id := range found {
		want := m[id.Int()]
		if string(docs[i]) != want.doc {
			t.Fatalf("id %v: document %s, model %s", id, docs[i], want.doc)
		}
		if !slices.Equal(vecs[i*testDim:(i+1)*testDim], want.vec) {
			t.Fatalf("id %v: vector %v, model %v", id, vecs[i*testDim:(i+1)*testDim], want.vec)
		}
	}
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a directory tree through the OS, for tests that damage a copy.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	if err := copyDirOS(src, dst); err != nil {
		t.Fatal(err)
	}
}

func walSegments(t testing.TB, dir string) []string {
	t.Helper()
	names, err := vfs.Default.ReadDir(filepath.Join(dir, walDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if filepath.Ext(n) == ".wal" {
			out = append(out, filepath.Join(dir, walDir, n))
		}
	}
	return out
}

// intsOf shows query results as the int64s they were before string ids
// (-1 for NoID), for tests of integer-id collections.
func intsOf(ids []ID) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		if id.IsNone() {
			out[i] = -1
		} else {
			out[i] = int64(id.Int())
		}
	}
	return out
}

// waitIndexed waits until the builder has moved every value acknowledged
// so far from the tails into the graphs: for tests of the graph itself.
func (c *Collection) waitIndexed() { c.waitBuilt() }
