package collection

import (
	"bytes"
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
		{op: opUpsert, ids: []uint64{1, 2}, vectors: []float32{1, 2, 3, 4, 5, 6, 7, 8}, docs: [][]byte{[]byte(`{"a":1}`), []byte(`{}`)}},
		{op: opUpsert},
		{op: opDelete, ids: []uint64{7, 1 << 62}},
		{op: opSetMeta, ids: []uint64{3}, docs: [][]byte{[]byte(`{"tags":["x","y"]}`)}},
	}
	for _, r := range seeds {
		f.Add(r.encode(dim))
	}
	f.Add([]byte{opUpsert, 0xff, 0xff, 0xff, 0xff, dim, 0, 0, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		rec, err := decodeRecord(payload, dim)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if again := rec.encode(dim); !bytes.Equal(again, payload) {
			t.Fatalf("decoded record encodes to %x, read from %x", again, payload)
		}
	})
}
