package collection

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/errkind"
)

// idModel is what a collection with both kinds of ids must hold.
type idModel map[ID]entry

func (m idModel) sorted() []ID {
	ids := make([]ID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, CompareIDs)
	return ids
}

// randomID draws from 25 integers and 25 strings (UUID-like, UTF-8, one
// byte, and the longest allowed), so that writes overwrite and delete
// each other's ids often.
func randomID(rng *rand.Rand) ID {
	i := rng.IntN(50)
	switch {
	case i < 25:
		return IntID(uint64(i * 7))
	case i == 25:
		return StringID("z")
	case i == 26:
		return StringID(strings.Repeat("é", 256)) // 512 bytes
	case i < 35:
		return StringID(fmt.Sprintf("doc-%d", i))
	}
	return StringID(fmt.Sprintf("123e4567-e89b-12d3-a456-4266141740%02d", i))
}

// checkIDModel asserts c holds exactly m: scan order and paging across both
// kinds, documents and vectors by id, each vector finding its own id, and
// the id filters resolving strings.
func checkIDModel(t *testing.T, c *Collection, m idModel) {
	t.Helper()
	want := m.sorted()
	all, err := c.ScanIDs(nil, ID{}, false, 0)
	if err != nil || !slices.Equal(all, want) {
		t.Fatalf("ScanIDs = %v (%v), model %v", all, err, want)
	}
	// Pages of 4, each after the last id of the one before.
	var paged []ID
	after, hasAfter := ID{}, false
	for {
		page, err := c.ScanIDs(nil, after, hasAfter, 4)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page...)
		if len(page) < 4 {
			break
		}
		after, hasAfter = page[len(page)-1], true
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("paged scan %v, model %v", paged, want)
	}
	found, docs, vecs, err := c.Get(want, true)
	if err != nil || !slices.Equal(found, want) {
		t.Fatalf("Get found %v (%v), model %v", found, err, want)
	}
	out, dists := make([]ID, 1), make([]float32, 1)
	for i, id := range found {
		e := m[id]
		if string(docs[i]) != e.doc || !slices.Equal(vecs[i*testDim:(i+1)*testDim], e.vec) {
			t.Fatalf("id %v: %s %v, model %s %v", id, docs[i], vecs[i*testDim:(i+1)*testDim], e.doc, e.vec)
		}
		// The id filter of the one id: exact, and it must find itself.
		f := meta.IDs(nil, []string{id.Str()})
		if !id.IsString() {
			f = meta.IDs([]uint64{id.Int()}, nil)
		}
		if _, err := c.Query(e.vec, 1, 0, f, 1, out, dists); err != nil || out[0] != id {
			t.Fatalf("query of id %v's vector among [%v] found %v (%v)", id, id, out[0], err)
		}
	}
	if err := c.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

// TestStringAndIntegerIDsFollowTheModel prevents string ids from drifting
// from what was written, through overwrites, deletes and re-upserts (which
// hand out new keys), metadata updates, checkpoints, clean reopens and
// crashes (replay hands out the same keys in log order).
func TestStringAndIntegerIDsFollowTheModel(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1})
	defer func() { c.Close() }()
	rng := rand.New(rand.NewPCG(25, 1))
	m := idModel{}
	for round := range 40 {
		switch op := rng.IntN(10); {
		case op < 5:
			n := 1 + rng.IntN(6)
			seen := map[ID]bool{}
			var ids []ID
			for len(ids) < n {
				if id := randomID(rng); !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			vecs := randomVectors(rng, n)
			raw := make([][]byte, n)
			for i := range raw {
				raw[i] = fmt.Appendf(nil, `{"round":%d}`, round)
			}
			if err := c.Upsert(ids, vecs, docsOf(t, raw)); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				m[id] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: canonical(t, raw[i])}
			}
		case op < 7:
			ids := []ID{randomID(rng), randomID(rng), StringID("never-written")}
			n, err := c.Delete(ids)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, id := range slices.Compact(ids) {
				if _, ok := m[id]; ok {
					want++
					delete(m, id)
				}
			}
			if n != want {
				t.Fatalf("Delete(%v) = %d, want %d", ids, n, want)
			}
		case op == 7:
			id := randomID(rng)
			doc := fmt.Appendf(nil, `{"updated":%d}`, round)
			_, err := c.UpdateMetadata([]ID{id}, docsOf(t, [][]byte{doc}))
			if e, ok := m[id]; ok {
				if err != nil {
					t.Fatal(err)
				}
				e.doc = canonical(t, doc)
				m[id] = e
			} else if !errors.Is(err, ErrNotFound) {
				t.Fatalf("UpdateMetadata of absent %v: %v", id, err)
			}
		case op == 8:
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		default:
			if rng.IntN(2) == 0 {
				c.abandon()
			} else if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = mustOpen(t, dir, Tuning{CheckpointBytes: -1})
		}
		checkIDModel(t, c, m)
	}
}

// TestScanOrderIsIntegersThenStringsInByteOrder pins the scan order and a
// page that starts after an id no longer present, and a filter, across
// the boundary between the kinds.
func TestScanOrderIsIntegersThenStringsInByteOrder(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	ids := []ID{StringID("b"), IntID(10), StringID("a"), IntID(2), StringID("ab"), StringID("B")}
	raw := [][]byte{[]byte(`{"k":1}`), []byte(`{"k":1}`), nil, []byte(`{"k":1}`), []byte(`{"k":1}`), nil}
	if err := c.Upsert(ids, randomVectors(rand.New(rand.NewPCG(1, 2)), len(ids)), docsOf(t, raw)); err != nil {
		t.Fatal(err)
	}
	scan := func(f *meta.Filter, after ID, hasAfter bool, limit int) []ID {
		t.Helper()
		got, err := c.ScanIDs(f, after, hasAfter, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []ID{IntID(2), IntID(10), StringID("B"), StringID("a"), StringID("ab"), StringID("b")}
	if got := scan(nil, ID{}, false, 0); !slices.Equal(got, want) {
		t.Fatalf("scan %v, want %v", got, want)
	}
	if got := scan(nil, IntID(10), true, 2); !slices.Equal(got, want[2:4]) {
		t.Fatalf("after 10: %v, want %v", got, want[2:4])
	}
	if got := scan(nil, StringID("aa"), true, 0); !slices.Equal(got, want[4:]) {
		t.Fatalf("after the absent \"aa\": %v, want %v", got, want[4:])
	}
	k1, _ := meta.ParseFilter([]byte(`{"k":1}`))
	wantK := []ID{IntID(2), IntID(10), StringID("ab"), StringID("b")}
	if got := scan(k1, ID{}, false, 0); !slices.Equal(got, wantK) {
		t.Fatalf("filtered %v, want %v", got, wantK)
	}
	if got := scan(k1, IntID(3), true, 2); !slices.Equal(got, wantK[1:3]) {
		t.Fatalf("filtered after 3: %v, want %v", got, wantK[1:3])
	}
	byID := meta.Or(meta.IDs([]uint64{10, 11}, []string{"a", "zz"}), meta.IDs(nil, []string{"b"}))
	if got := scan(byID, ID{}, false, 0); !slices.Equal(got, []ID{IntID(10), StringID("a"), StringID("b")}) {
		t.Fatalf("by ids: %v", got)
	}
	if n, err := c.Count(meta.Not(byID)); err != nil || n != 3 {
		t.Fatalf("Count(not ids) = %d, %v; want 3", n, err)
	}
	if n, err := c.DeleteWhere(byID); err != nil || n != 3 {
		t.Fatalf("DeleteWhere(ids) = %d, %v; want 3", n, err)
	}
	if got := scan(nil, ID{}, false, 0); !slices.Equal(got, []ID{IntID(2), StringID("B"), StringID("ab")}) {
		t.Fatalf("after DeleteWhere: %v", got)
	}
}

// TestBadIDsAreRefusedWholeWithInvalid prevents an id the log or the
// index cannot hold from reaching them: every write and lookup refuses it
// with errkind.Invalid, naming the id, and nothing changes.
func TestBadIDsAreRefusedWholeWithInvalid(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	vec := randomVectors(rand.New(rand.NewPCG(1, 3)), 2)
	for name, ids := range map[string][]ID{
		"empty string":      {StringID("ok"), StringID("")},
		"513 bytes":         {StringID(strings.Repeat("x", 513))},
		"not UTF-8":         {StringID("a\xff")},
		"integer too large": {IntID(1 << 63)},
		"duplicate string":  {StringID("d"), StringID("d")},
	} {
		if len(ids) == 1 {
			ids = append(ids, IntID(1))
		}
		if err := c.Upsert(ids, vec, nil); errkind.Of(err) != errkind.Invalid || !strings.Contains(err.Error(), "ids[") {
			t.Errorf("%s: Upsert: %v", name, err)
		}
		if name == "duplicate string" {
			continue
		}
		if _, err := c.Delete(ids); errkind.Of(err) != errkind.Invalid {
			t.Errorf("%s: Delete: %v", name, err)
		}
		// A lookup finds nothing under them, as it always did.
		if found, _, _, err := c.Get(append(ids, IntID(1<<63), StringID("")), false); err != nil || len(found) != 0 {
			t.Errorf("%s: Get: %v, %v", name, found, err)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("%d entries after refused writes", c.Len())
	}
	if _, err := c.ScanIDs(nil, StringID(""), true, 1); errkind.Of(err) != errkind.Invalid {
		t.Errorf("ScanIDs after \"\": %v", err)
	}
}

// TestStringKeyCounterSurvivesItsStrings prevents a key handed out to a
// string id from being handed out again after its point is gone: the
// state run a checkpoint writes keeps the counter (package snapshot,
// "State runs"), and a collection that never had a string id writes none.
func TestStringKeyCounterSurvivesItsStrings(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{})
	rng := rand.New(rand.NewPCG(2, 3))
	if err := c.Upsert(IntIDs([]uint64{1, 2}), randomVectors(rng, 2), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	newestRun := func() snapshot.StateRun {
		t.Helper()
		m, err := snapshot.ReadManifest(c.fs, snapshotPath(dir, c.lastCheckpoint.Load()))
		if err != nil || m.IDs != "" || len(m.State) == 0 {
			t.Fatalf("manifest: ids %q, state %v, %v", m.IDs, m.State, err)
		}
		r, err := snapshot.ReadStateRun(c.fs, filepath.Join(dir, snapshot.SegmentsDir, m.State[len(m.State)-1].File))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := newestRun(); r.Next != firstStringKey || slices.ContainsFunc(r.Strings, func(s string) bool { return s != "" }) {
		t.Fatalf("integer-only state run: next %d, strings %q", r.Next, r.Strings)
	}
	if err := c.Upsert([]ID{StringID("s")}, randomVectors(rng, 1), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete([]ID{StringID("s")}); err != nil {
		t.Fatal(err)
	}
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// The string is gone, but its key was handed out: the counter is kept.
	if r := newestRun(); r.Next != firstStringKey+1 || r.Len() != 1 || r.Deleted[0] != 1 {
		t.Fatalf("state run after a deleted string id: %+v", r)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	if err := c.Upsert([]ID{StringID("s")}, randomVectors(rng, 1), nil); err != nil {
		t.Fatal(err)
	}
	if k, ok := c.ids.key("s"); !ok || k != firstStringKey+1 {
		t.Fatalf("re-upserted string got key %d (%v), want the next unused one", k, ok)
	}
}

// TestScansRunBesideStringWrites prevents a scan, which sorts the string
// ids it has not sorted yet, from deadlocking or racing with the applier
// handing out and dropping string keys (run with -race).
func TestScansRunBesideStringWrites(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1})
	defer c.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(7, 7))
		for i := range 300 {
			id := StringID(fmt.Sprintf("w-%d", rng.IntN(40)))
			var err error
			if i%3 == 2 {
				_, err = c.Delete([]ID{id})
			} else {
				err = c.Upsert([]ID{id}, randomVectors(rng, 1), nil)
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			checkIDsSorted(t, c)
			return
		default:
		}
		checkIDsSorted(t, c)
	}
}

func checkIDsSorted(t *testing.T, c *Collection) {
	t.Helper()
	ids, err := c.ScanIDs(nil, StringID("w-1"), true, 0)
	if err != nil || !slices.IsSortedFunc(ids, CompareIDs) {
		t.Fatalf("scan %v (%v) out of order", ids, err)
	}
}
