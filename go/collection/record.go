package collection

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Operation codes of WAL records. Part of the log format: do not change.
const (
	opUpsert  byte = 1
	opDelete  byte = 2
	opSetMeta byte = 3
	// opTextIndex creates a full-text index: no ids, one document holding
	// {"field": ..., "analyzer": ...} (see text.go).
	opTextIndex byte = 4
)

// record is one logged write: the payload of one WAL record. Every record
// states the full new state of the ids it touches (whole vector, whole
// document), so replaying it needs nothing but the records before it.
type record struct {
	op      byte
	ids     []uint64
	vectors []float32 // opUpsert: len(ids)·dim floats
	docs    [][]byte  // opUpsert, opSetMeta: one canonical JSON document per id
}

var le = binary.LittleEndian

// size is the length of the encoded record (at most 4 bytes more than
// exact: the dim field only upserts carry).
func (r *record) size() int {
	size := 1 + 4 + 4 + 8*len(r.ids) + 4*len(r.vectors)
	for _, d := range r.docs {
		size += 4 + len(d)
	}
	return size
}

// encode lays out the record as described in the package doc.
func (r *record) encode(dim int) []byte {
	b := make([]byte, 0, r.size())
	b = append(b, r.op)
	b = le.AppendUint32(b, uint32(len(r.ids)))
	if r.op == opUpsert {
		b = le.AppendUint32(b, uint32(dim))
	}
	for _, id := range r.ids {
		b = le.AppendUint64(b, id)
	}
	for _, v := range r.vectors {
		b = le.AppendUint32(b, math.Float32bits(v))
	}
	for _, d := range r.docs {
		b = le.AppendUint32(b, uint32(len(d)))
		b = append(b, d...)
	}
	return b
}

// decodeRecord parses a payload, copying what it keeps (the payload buffer
// is reused by the log reader). Lengths are checked against what the
// payload holds before anything is allocated.
func decodeRecord(p []byte, dim int) (record, error) {
	var r record
	bad := func(format string, args ...any) (record, error) {
		return record{}, fmt.Errorf("%w: record: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(p) < 5 {
		return bad("%d bytes", len(p))
	}
	r.op = p[0]
	n := int(le.Uint32(p[1:5]))
	p = p[5:]
	if r.op == opUpsert {
		if len(p) < 4 {
			return bad("upsert without dim")
		}
		if got := int(le.Uint32(p)); got != dim {
			return bad("upsert of dimension %d in a collection of dimension %d", got, dim)
		}
		p = p[4:]
	} else if r.op != opDelete && r.op != opSetMeta && r.op != opTextIndex {
		return bad("unknown operation %d", r.op)
	}
	docCount := n
	if r.op == opTextIndex {
		if n != 0 {
			return bad("text index record with %d ids", n)
		}
		docCount = 1
	}
	if n > len(p)/8 {
		return bad("%d ids in %d bytes", n, len(p))
	}
	r.ids = make([]uint64, n)
	for i := range r.ids {
		r.ids[i] = le.Uint64(p[8*i:])
	}
	p = p[8*n:]
	if r.op == opUpsert {
		if n > len(p)/4/dim {
			return bad("%d vectors of dimension %d in %d bytes", n, dim, len(p))
		}
		r.vectors = make([]float32, n*dim)
		for i := range r.vectors {
			r.vectors[i] = math.Float32frombits(le.Uint32(p[4*i:]))
		}
		p = p[4*n*dim:]
	}
	if r.op != opDelete {
		r.docs = make([][]byte, docCount)
		for i := range r.docs {
			if len(p) < 4 {
				return bad("document %d: truncated length", i)
			}
			size := int(le.Uint32(p))
			p = p[4:]
			if size > len(p) {
				return bad("document %d: %d bytes, %d left", i, size, len(p))
			}
			r.docs[i] = append([]byte(nil), p[:size]...)
			p = p[size:]
		}
	}
	if len(p) != 0 {
		return bad("%d bytes after the last field", len(p))
	}
	return r, nil
}
