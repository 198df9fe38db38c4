package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// stateRunOf builds a run from entries: doc "" is a deleted entry.
func stateRunOf(next uint64, keys []uint64, docs, strs []string, exp []int64) StateRun {
	r := StateRun{Keys: keys, Deleted: make([]byte, len(keys)), Offsets: []uint64{0}, Strings: strs, Expires: exp, Next: next}
	for i, d := range docs {
		if d == "" {
			r.Deleted[i] = 1
		}
		r.Data = append(r.Data, d...)
		r.Offsets = append(r.Offsets, uint64(len(r.Data)))
	}
	return r
}

func TestStateRunRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateRunName(9))
	want := stateRunOf(FirstStringKey+2, []uint64{3, 5, FirstStringKey + 1}, []string{`{"a":1}`, "", "{}"},
		[]string{"", "", "doc-1"}, []int64{0, 0, 77})
	if err := WriteStateRun(vfs.Default, path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStateRun(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Next != want.Next || got.Len() != 3 || string(got.Data) != string(want.Data) || got.Strings[2] != "doc-1" ||
		got.Expires[2] != 77 || got.Deleted[1] != 1 {
		t.Fatalf("read back %+v, wrote %+v", got, want)
	}
}

// TestStateRunWithoutStringsOrExpiries prevents the sections a run
// leaves out (no string id, no expiry) from reading back as anything but
// none.
func TestStateRunWithoutStringsOrExpiries(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateRunName(3))
	want := stateRunOf(FirstStringKey, []uint64{1, 2}, []string{"{}", ""}, []string{"", ""}, []int64{0, 0})
	if err := WriteStateRun(vfs.Default, path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStateRun(vfs.Default, path)
	if err != nil || got.Len() != 2 || len(got.Expires) != 2 || got.Expires[0] != 0 || got.Strings[0] != "" || got.Deleted[1] != 1 {
		t.Fatalf("read back %+v, %v", got, err)
	}
}

// TestMergeStateRunsNewestWins prevents an older run's entry from
// surviving a newer one's: an overwrite, a delete, a string id moving to
// a new key after its point was deleted.
func TestMergeStateRunsNewestWins(t *testing.T) {
	s := uint64(FirstStringKey)
	old := stateRunOf(s+1, []uint64{1, 2, 3, s}, []string{`{"v":1}`, `{"v":2}`, `{"v":3}`, `{"v":4}`}, []string{"", "", "", "x"}, []int64{0, 5, 0, 0})
	mid := stateRunOf(s+2, []uint64{2, s, s + 1}, []string{"", "", `{"v":6}`}, []string{"", "", "x"}, []int64{0, 0, 9})
	newer := stateRunOf(s+2, []uint64{1, 2}, []string{`{"v":7}`, `{"v":8}`}, []string{"", ""}, []int64{0, 0})
	md, table, exp, err := MergeStateRuns([]StateRun{old, mid, newer})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []uint64{1, 2, 3, s + 1}
	wantDocs := []string{`{"v":7}`, `{"v":8}`, `{"v":3}`, `{"v":6}`}
	if len(md.IDs) != len(wantIDs) {
		t.Fatalf("merged ids %v, want %v", md.IDs, wantIDs)
	}
	for i, id := range wantIDs {
		if md.IDs[i] != id || string(md.Data[md.Offsets[i]:md.Offsets[i+1]]) != wantDocs[i] {
			t.Fatalf("entry %d: %d %s, want %d %s", i, md.IDs[i], md.Data[md.Offsets[i]:md.Offsets[i+1]], id, wantDocs[i])
		}
	}
	if len(table.Keys) != 1 || table.Keys[0] != s+1 || table.Strings[0] != "x" || table.Next != s+2 {
		t.Fatalf("id table %+v", table)
	}
	if len(exp.Keys) != 1 || exp.Keys[0] != s+1 || exp.At[0] != 9 {
		t.Fatalf("expiries %+v (key 2's expiry went with its overwrite)", exp)
	}
	if _, _, _, err := MergeStateRuns([]StateRun{mid, old}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a counter going back: %v", err)
	}
	twice := stateRunOf(s+2, []uint64{s + 1}, []string{"{}"}, []string{"x"}, []int64{0})
	if _, _, _, err := MergeStateRuns([]StateRun{old, twice}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("one string id on two live keys: %v", err)
	}
}

// TestFoldStateRunsIsTheirMerge checks that a checkpoint's fold of runs
// (the newest entry of each key, deleted ones kept unless the fold is
// live) loads as the runs it replaces do.
func TestFoldStateRunsIsTheirMerge(t *testing.T) {
	s := uint64(FirstStringKey)
	old := stateRunOf(s+1, []uint64{1, 2, 3, s}, []string{`{"v":1}`, `{"v":2}`, `{"v":3}`, `{"v":4}`}, []string{"", "", "", "x"}, []int64{0, 5, 0, 0})
	mid := stateRunOf(s+2, []uint64{2, s, s + 1}, []string{"", "", `{"v":6}`}, []string{"", "", "x"}, []int64{0, 0, 9})
	newer := stateRunOf(s+2, []uint64{1, 2}, []string{`{"v":7}`, `{"v":8}`}, []string{"", ""}, []int64{0, 0})
	for _, tc := range []struct {
		runs     []StateRun
		live     bool
		wantKeys []uint64
	}{
		{[]StateRun{old, mid, newer}, true, []uint64{1, 2, 3, s + 1}},
		{[]StateRun{mid, newer}, false, []uint64{1, 2, s, s + 1}},
	} {
		folded := FoldStateRuns(tc.runs, tc.live)
		if !slices.Equal(folded.Keys, tc.wantKeys) || folded.Next != s+2 {
			t.Fatalf("live %v: folded keys %v next %d, want %v next %d", tc.live, folded.Keys, folded.Next, tc.wantKeys, s+2)
		}
		if !tc.live && folded.Deleted[2] == 0 {
			t.Fatalf("key %d is deleted in the newest run holding it; the fold says live", s)
		}
		base := []StateRun{old}
		if tc.live {
			base = nil
		}
		md, table, exp, err := MergeStateRuns(append(slices.Clone(base), folded))
		if err != nil {
			t.Fatal(err)
		}
		wmd, wtable, wexp, err := MergeStateRuns(append(slices.Clone(base), tc.runs...))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(md, wmd) || !reflect.DeepEqual(table, wtable) || !reflect.DeepEqual(exp, wexp) {
			t.Fatalf("live %v: the fold loads as %+v %+v %+v, the runs as %+v %+v %+v", tc.live, md, table, exp, wmd, wtable, wexp)
		}
	}
}

// FuzzReadStateRun reads arbitrary state run files: ReadStateRun must not
// panic, fail only with corruption, and accept only what a checkpoint
// writes.
func FuzzReadStateRun(f *testing.F) {
	seed := filepath.Join(f.TempDir(), "seed")
	err := WriteStateRun(vfs.Default, seed, stateRunOf(FirstStringKey+3, []uint64{2, 4, FirstStringKey + 2},
		[]string{`{"a":[1,2]}`, "", "{}"}, []string{"", "", "é"}, []int64{0, 0, 12}))
	if err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(seed)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), StateRunName(1))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadStateRun(vfs.Default, path)
		if err != nil {
			if !errors.Is(err, indexfile.ErrCorrupt) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not corruption", err)
			}
			return
		}
		for i, k := range r.Keys {
			doc := r.Data[r.Offsets[i]:r.Offsets[i+1]]
			if (i > 0 && k <= r.Keys[i-1]) || r.Deleted[i] > 1 || r.Expires[i] < 0 ||
				(r.Deleted[i] == 1 && (len(doc) != 0 || r.Strings[i] != "" || r.Expires[i] != 0)) ||
				(r.Deleted[i] == 0 && (k >= FirstStringKey) != (r.Strings[i] != "")) || (k >= FirstStringKey && k >= r.Next) {
				t.Fatalf("accepted entry %d: key %d flag %d string %q expiry %d (next %d)", i, k, r.Deleted[i], r.Strings[i], r.Expires[i], r.Next)
			}
		}
		if _, _, _, err := MergeStateRuns([]StateRun{r, r}); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("merge: %v", err)
		}
	})
}
