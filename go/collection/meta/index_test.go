package meta

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestGetReturnsACopy prevents a caller that edits the returned JSON from
// corrupting the stored document (and with it, the next replace).
func TestGetReturnsACopy(t *testing.T) {
	x := NewIndex()
	x.Put(7, mustDoc(t, `{"a": "x"}`))
	x.Put(8, Document{})
	got, _ := x.Get(7)
	copy(got, `{"b"`)
	if again, _ := x.Get(7); string(again) != `{"a":"x"}` {
		t.Fatalf("stored document changed to %s", again)
	}
	if empty, ok := x.Get(8); !ok || string(empty) != `{}` {
		t.Fatalf("Get of an empty document = %s, %v", empty, ok)
	}
	if _, ok := x.Get(9); ok {
		t.Fatal("Get of an absent id succeeded")
	}
	x.Put(7, mustDoc(t, `{"a": "y"}`))
	if n := x.Count(mustFilter(t, `{"a": "x"}`)); n != 0 {
		t.Fatalf("old value still indexed after replace: %d", n)
	}
}

// TestEmptyDocumentsAreLiveIDs: every id has a document, so {} still counts
// for negations and for a filter with no conditions.
func TestEmptyDocumentsAreLiveIDs(t *testing.T) {
	x := NewIndex()
	x.PutBatch([]uint64{3, 1, 2}, []Document{{}, mustDoc(t, `{"a": 1}`), {}})
	for filter, want := range map[string][]uint64{
		`{}`:                        {1, 2, 3},
		`{"a": {"$ne": 1}}`:         {2, 3},
		`{"a": {"$exists": false}}`: {2, 3},
		`{"$not": {"a": 1}}`:        {2, 3},
		`{"a": null}`:               {2, 3},
	} {
		if got := x.Select(mustFilter(t, filter)); !slices.Equal(got, want) {
			t.Errorf("Select %s = %v, want %v", filter, got, want)
		}
	}
	if got := x.Select(nil); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("Select(nil) = %v", got)
	}
}

// TestIDsAfterPagesInIDOrder covers the page arguments: after is
// exclusive, a limit of zero means no limit, and ids come out ascending
// however they were inserted.
func TestIDsAfterPagesInIDOrder(t *testing.T) {
	x := NewIndex()
	for _, id := range []uint64{50, 10, 40, 20, 30, 1 << 63} {
		x.Put(id, mustDoc(t, fmt.Sprintf(`{"even": %v}`, id%20 == 0)))
	}
	all := mustFilter(t, `{}`)
	even := mustFilter(t, `{"even": true}`)
	for _, tc := range []struct {
		f        *Filter
		after    uint64
		hasAfter bool
		limit    int
		want     []uint64
	}{
		{all, 0, false, 0, []uint64{10, 20, 30, 40, 50, 1 << 63}},
		{all, 0, false, 2, []uint64{10, 20}},
		{all, 20, true, 2, []uint64{30, 40}},
		{all, 25, true, -1, []uint64{30, 40, 50, 1 << 63}},
		{all, 1 << 63, true, 0, []uint64{}},
		{even, 0, false, 0, []uint64{20, 40}},
		{even, 20, true, 1, []uint64{40}},
		{even, 0, true, 0, []uint64{20, 40}}, // 1<<63 % 20 == 8
	} {
		got := x.IDsAfter(tc.f, tc.after, tc.hasAfter, tc.limit)
		if !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("IDsAfter(after %d/%v, limit %d) = %v, want %v", tc.after, tc.hasAfter, tc.limit, got, tc.want)
		}
	}
}

// TestDeleteCountsOnlyPresentIDs keeps Delete's result usable as "how many
// were removed", with repeats and unknown ids in the list.
func TestDeleteCountsOnlyPresentIDs(t *testing.T) {
	x := NewIndex()
	x.PutBatch([]uint64{1, 2, 3}, []Document{{}, {}, {}})
	if n := x.Delete([]uint64{2, 2, 9, 3}); n != 2 {
		t.Fatalf("Delete = %d, want 2", n)
	}
	if x.Len() != 1 || !x.Contains(1) || x.Contains(2) {
		t.Fatalf("Len %d, Contains(1) %v, Contains(2) %v", x.Len(), x.Contains(1), x.Contains(2))
	}
}

// TestPutBatchRejectsMismatchedLengths: a caller bug must not silently drop
// documents.
func TestPutBatchRejectsMismatchedLengths(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "2 ids and 1 documents") {
			t.Fatalf("recovered %v", r)
		}
	}()
	NewIndex().PutBatch([]uint64{1, 2}, []Document{{}})
}

// TestImportRejectsCorruptInput: each kind of damage is refused with
// ErrCorrupt and a message naming the entry.
func TestImportRejectsCorruptInput(t *testing.T) {
	x := NewIndex()
	x.Put(5, mustDoc(t, `{"a":1}`))
	x.Put(9, Document{})
	ids, offsets, data := x.Export()
	if !slices.Equal(ids, []uint64{5, 9}) || !slices.Equal(offsets, []uint64{0, 7, 9}) || string(data) != `{"a":1}{}` {
		t.Fatalf("Export = %v %v %s", ids, offsets, data)
	}
	for _, tc := range []struct {
		ids, offsets []uint64
		data, want   string
	}{
		{[]uint64{5, 9}, []uint64{0, 7}, `{"a":1}{}`, "2 ids need 3 offsets, found 2"},
		{[]uint64{5}, nil, ``, "1 ids need 2 offsets, found 0"},
		{[]uint64{5, 9}, []uint64{1, 7, 9}, `{"a":1}{}`, "offsets run from 1 to 9, want 0 to 9"},
		{[]uint64{5, 9}, []uint64{0, 7, 8}, `{"a":1}{}`, "offsets run from 0 to 8, want 0 to 9"},
		{[]uint64{9, 5}, []uint64{0, 7, 9}, `{"a":1}{}`, "entry 1: id 5 does not follow id 9"},
		{[]uint64{5, 5}, []uint64{0, 7, 9}, `{"a":1}{}`, "entry 1: id 5 does not follow id 5"},
		{[]uint64{5, 9}, []uint64{0, 10, 9}, `{"a":1}{}`, "entry 0 (id 5): offsets 0..10 do not delimit a document in 9 bytes"},
		{[]uint64{5, 9}, []uint64{0, 8, 9}, `{"a":1}{}`, "entry 0 (id 5): meta: invalid document"},
		{[]uint64{5, 9}, []uint64{0, 7, 9}, `{"a":1}[]`, "entry 1 (id 9): meta: invalid document: a document must be a JSON object, not a list"},
		{[]uint64{5, 9}, []uint64{0, 7, 9}, `{"$":1}{}`, "entry 0 (id 5): meta: invalid document: key \"$\": keys may not start with '$'"},
		{[]uint64{5, 9}, []uint64{0, 7, 7}, `{"a":1}`, "entry 1 (id 9): meta: invalid document: a document must be a JSON object, not empty input"},
	} {
		_, err := Import(tc.ids, tc.offsets, []byte(tc.data))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Import(%v, %v, %s) = %v, want ErrCorrupt containing %q", tc.ids, tc.offsets, tc.data, err, tc.want)
		}
	}
	y, err := Import(nil, []uint64{0}, nil)
	if err != nil || y.Len() != 0 {
		t.Fatalf("Import of an empty export: %v, %v", y, err)
	}
}

// TestConcurrentReadersAndWriters runs selects against puts and deletes;
// under -race it checks the locking, and every select must see a
// consistent state (no id twice, ascending, matching).
func TestConcurrentReadersAndWriters(t *testing.T) {
	x := NewIndex()
	docs := []Document{mustDoc(t, `{"k": 1}`), mustDoc(t, `{"k": 2}`), mustDoc(t, `{"k": [1, 2]}`)}
	f := mustFilter(t, `{"k": 1}`)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				id := uint64((i*7 + w*13) % 500)
				if i%5 == 4 {
					x.Delete([]uint64{id})
				} else {
					x.Put(id, docs[(i+w)%3])
				}
			}
		}()
	}
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				ids := x.Select(f)
				if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
					errs <- fmt.Errorf("select returned %v", ids)
					return
				}
				for _, id := range x.IDsAfter(nil, 100, true, 20) {
					if id <= 100 {
						errs <- fmt.Errorf("IDsAfter(100) returned %d", id)
						return
					}
				}
				x.Export()
				x.Count(f)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkIntegrity(t, x)
}
