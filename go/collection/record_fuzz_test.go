package collection

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// FuzzDecodeRecord decodes arbitrary WAL payloads: decodeRecord must not
// panic or allocate beyond what the payload can hold, must fail only with
// ErrCorrupt, and whatever it accepts must encode back to the same bytes
// (a record has one encoding, so replay cannot read a different write).
func FuzzDecodeRecord(f *testing.F) {
	const dim = 4
	seeds := []record{
		{op: opUpsert, ids: IntIDs([]uint64{1, 2}), dim: dim, vectors: []float32{1, 2, 3, 4, 5, 6, 7, 8}, docs: [][]byte{[]byte(`{"a":1}`), []byte(`{}`)}},
		{op: opUpsert, dim: dim},
		{op: opDelete, ids: IntIDs([]uint64{7, 1 << 62})},
		{op: opSetMeta, ids: IntIDs([]uint64{3}), docs: [][]byte{[]byte(`{"tags":["x","y"]}`)}},
		{op: opUpsert, ids: []ID{StringID("doc-1"), IntID(9)}, dim: dim, vectors: []float32{1, 2, 3, 4, 5, 6, 7, 8}, docs: [][]byte{[]byte(`{}`), []byte(`{}`)}},
		{op: opDelete, ids: []ID{StringID("é"), StringID("123e4567-e89b-12d3-a456-426614174000")}},
		{op: opSetMeta, ids: []ID{StringID("x")}, docs: [][]byte{[]byte(`{"a":[1]}`)}},
		{op: opUpsertPoints, ids: IntIDs([]uint64{4, 9}), docs: [][]byte{[]byte(`{}`), []byte(`{"b":2}`)}, fields: []fieldValues{
			{name: "", dim: 2, points: []uint32{0, 1}, vectors: []float32{1, 2, 3, 4}},
			{name: "colbert", multi: true, dim: 1, points: []uint32{1}, counts: []uint32{3}, vectors: []float32{5, 6, 7}},
		}},
		{op: opUpsertPoints, ids: []ID{StringID("p"), IntID(2)}, docs: [][]byte{[]byte(`{}`), []byte(`{}`)}, fields: []fieldValues{
			{name: "t", dim: 1, points: []uint32{1}, vectors: []float32{1}},
		}},
		{op: opUpdateVectors, ids: IntIDs([]uint64{4}), fields: []fieldValues{{name: "text", dim: 3, points: []uint32{0}, vectors: []float32{1, 2, 3}}}},
		{op: opDeleteVectors, ids: []ID{IntID(4), StringID("q")}, fields: []fieldValues{{name: "image"}, {name: "text"}}},
		{op: opAddField, docs: [][]byte{encodeSpec(VectorField{Name: "x", Dim: 3, M: 16, EfConstruction: 200})}},
		{op: opRemoveField, docs: [][]byte{encodeFieldName("x")}},
		{op: opUpsertPoints, ids: IntIDs([]uint64{4, 9, 11}), docs: [][]byte{[]byte(`{}`), []byte(`{}`), []byte(`{}`)}, fields: []fieldValues{
			{name: "", dim: 1, points: []uint32{0}, vectors: []float32{1}},
			{name: "kw", sparse: true, points: []uint32{0, 2}, counts: []uint32{2, 0}, indices: []uint32{3, 70000}, vectors: []float32{0.5, -1}},
		}},
		{op: opUpdateVectors, ids: []ID{StringID("s"), IntID(3)}, fields: []fieldValues{
			{name: "kw", sparse: true, points: []uint32{1}, counts: []uint32{3}, indices: []uint32{0, 1, 2}, vectors: []float32{0, 1, 2}},
		}},
		{op: opAddField, docs: [][]byte{encodeSparseSpec(SparseField{Name: "kw", Modifier: 1})}},
		{op: opUpsert, ids: IntIDs([]uint64{1, 2}), dim: 1, vectors: []float32{1, 2}, docs: [][]byte{[]byte(`{}`), []byte(`{}`)},
			expires: []int64{1_700_000_000_000_000_000, 0}},
		{op: opUpsertPoints, ids: []ID{StringID("c"), IntID(2)}, docs: [][]byte{[]byte(`{}`), []byte(`{}`)}, fields: []fieldValues{
			{name: "t", dim: 1, points: []uint32{1}, vectors: []float32{1}},
		}, expires: []int64{5, 6}},
		{op: opExpire, ids: []ID{StringID("c"), IntID(2)}, expires: []int64{5, 6}},
	}
	for _, r := range seeds {
		f.Add(r.encode())
	}
	f.Add([]byte{opUpsert, 0xff, 0xff, 0xff, 0xff, dim, 0, 0, 0})
	f.Add([]byte{opDelete | opTaggedIDs, 0xff, 0xff, 0xff, 0xff, idKindString, 0xff, 0xff})
	f.Add([]byte{opDelete | opTaggedIDs, 1, 0, 0, 0, idKindInt, 1, 0, 0, 0, 0, 0, 0, 0})            // tagged, no string
	f.Add([]byte{opUpsert | opExpires, 0, 0, 0, 0, 1, 0, 0, 0})                                     // the flag with no point expiring
	f.Add([]byte{opDelete | opExpires, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}) // the flag on a delete
	f.Fuzz(func(t *testing.T, payload []byte) {
		rec, err := decodeRecord(payload)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		for i, id := range rec.ids {
			if err := checkID(id, i); err != nil {
				t.Fatalf("decoded an id no write accepts: %v", err)
			}
		}
		if again := rec.encode(); !bytes.Equal(again, payload) {
			t.Fatalf("decoded record encodes to %x, read from %x", again, payload)
		}
		if rec.size() < len(payload) {
			t.Fatalf("size() = %d for %d bytes", rec.size(), len(payload))
		}
	})
}

// TestIntegerRecordsKeepTheirBytes prevents string ids (and expiring
// points) from changing the log of an integer-only collection: old logs
// must replay and new ones be readable by the same rules, byte for byte
// (ops 1-3 untagged, no expiry flag without an expiring point); and pins
// the expiring forms.
func TestIntegerRecordsKeepTheirBytes(t *testing.T) {
	for _, c := range []struct {
		rec  record
		want string
	}{
		{record{op: opDelete, ids: IntIDs([]uint64{7, 1 << 62})}, "0202000000" + "0700000000000000" + "0000000000000040"},
		{record{op: opUpsert, ids: IntIDs([]uint64{1}), dim: 1, vectors: []float32{1}, docs: [][]byte{[]byte("{}")}},
			"0101000000" + "01000000" + "0100000000000000" + "0000803f" + "02000000" + "7b7d"},
		{record{op: opSetMeta, ids: []ID{StringID("ab"), IntID(5)}, docs: [][]byte{[]byte("{}"), []byte("{}")}},
			"8302000000" + "01" + "0200" + "6162" + "00" + "0500000000000000" + "02000000" + "7b7d" + "02000000" + "7b7d"},
		// Expiring points: the flag 0x40 and a u64 per id after the documents.
		{record{op: opUpsert, ids: IntIDs([]uint64{1}), dim: 1, vectors: []float32{1}, docs: [][]byte{[]byte("{}")}, expires: []int64{258}},
			"4101000000" + "01000000" + "0100000000000000" + "0000803f" + "02000000" + "7b7d" + "0201000000000000"},
		{record{op: opExpire, ids: IntIDs([]uint64{1}), expires: []int64{258}},
			"0a01000000" + "0100000000000000" + "0201000000000000"},
	} {
		if got := hex.EncodeToString(c.rec.encode()); got != c.want {
			t.Errorf("op %d: %s, want %s", c.rec.op, got, c.want)
		}
	}
}
