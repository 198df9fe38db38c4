package meta

import (
	"slices"
	"testing"
)

// TestEmptyDocumentsTakeNoSlots: an index of points whose documents are
// all {} keeps no document slots (Import and Put alike); one document
// other than {} extends them to its slot only, and every Get, Export
// and filter answers as before, across deletes and slot reuse.
func TestEmptyDocumentsTakeNoSlots(t *testing.T) {
	const n = 1000
	ids := make([]uint64, n)
	offsets := make([]uint64, n+1)
	var data []byte
	for i := range ids {
		ids[i] = uint64(i)
		data = append(data, "{}"...)
		offsets[i+1] = uint64(len(data))
	}
	x, err := Import(ids, offsets, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.docs) != 0 {
		t.Fatalf("an index of empty documents keeps %d document slots", len(x.docs))
	}
	doc, err := ReadDocument([]byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	x.Put(500, doc)
	if len(x.docs) != 501 {
		t.Fatalf("one document at slot 500: %d slots", len(x.docs))
	}
	for _, id := range []uint64{0, 499, 501, n - 1} {
		if got, ok := x.Get(id); !ok || string(got) != "{}" {
			t.Fatalf("Get(%d) = %s, %v", id, got, ok)
		}
	}
	if got, ok := x.Get(500); !ok || string(got) != `{"a":1}` {
		t.Fatalf("Get(500) = %s, %v", got, ok)
	}
	x.Delete([]uint64{500, 900})
	x.Put(2000, doc) // reuses a freed slot
	x.Put(2001, Document{})
	gotIDs, gotOffsets, gotData := x.Export()
	y, err := Import(gotIDs, gotOffsets, gotData)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{0, 500, 900, 2000, 2001} {
		a, okA := x.Get(id)
		b, okB := y.Get(id)
		if okA != okB || string(a) != string(b) {
			t.Fatalf("id %d: %s %v before export, %s %v after", id, a, okA, b, okB)
		}
	}
	if got, ok := y.Get(2000); !ok || string(got) != `{"a":1}` {
		t.Fatalf("Get(2000) after the round trip = %s, %v", got, ok)
	}
	if !slices.Contains(gotIDs, 2001) || slices.Contains(gotIDs, 900) {
		t.Fatalf("exported ids %v...", gotIDs[:5])
	}
}
