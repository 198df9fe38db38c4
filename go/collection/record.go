package collection

import (
	"encoding/binary"
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/limits"
)

// Operation codes of WAL records. Part of the log format: do not change.
const (
	opUpsert  byte = 1
	opDelete  byte = 2
	opSetMeta byte = 3
	// opTextIndex creates a full-text index: no ids, one document holding
	// {"field": ..., "analyzer": ...} (see text.go).
	opTextIndex byte = 4
	// opTaggedIDs, or-ed into the op of an upsert, delete or set-metadata
	// record, says that its ids section is tagged (encodeIDs): set on a
	// record with at least one string id, and only then, so a record of
	// integer ids is byte for byte what it was before string ids.
	opTaggedIDs byte = 0x80
	// The vector fields' records (record_fields.go).
	opUpsertPoints  byte = 5 // whole points, with any of the fields
	opUpdateVectors byte = 6 // some fields of existing points
	opDeleteVectors byte = 7 // some fields of points, by name
	opAddField      byte = 8 // no ids, one document: the field's spec
	opRemoveField   byte = 9 // no ids, one document: {"name": ...}
	// opExpire is the reaper's delete (reaper.go): ids and the expiry
	// each had when the reaper saw it expired; applied to the ids whose
	// expiry is still that one.
	opExpire byte = 10
	// opExpires, or-ed into the op of an upsert (1) or an upsert of points
	// (5), says that the record ends with an expiry time per id: set on a
	// record where a point expires, and only then, so a record without
	// one is byte for byte what it was before expiring points.
	opExpires byte = 0x40
)

// Kinds of a tagged id. Part of the log format: do not change.
const (
	idKindInt    byte = 0
	idKindString byte = 1
)

// record is one logged write: the payload of one WAL record. Every record
// states the full new state of the ids it touches (whole vector, whole
// document), so replaying it needs nothing but the records before it.
type record struct {
	op      byte // without opTaggedIDs: encode sets it when an id is a string
	ids     []ID
	dim     int       // opUpsert: the dimension of vectors (the field "")
	vectors []float32 // opUpsert: len(ids)·dim floats
	docs    [][]byte  // opUpsert, opSetMeta, opUpsertPoints: one canonical JSON document per id
	// fields are the values of opUpsertPoints and opUpdateVectors, and
	// (names only) the fields of opDeleteVectors.
	fields []fieldValues
	// expires, for opUpsert and opUpsertPoints, holds one expiry per id
	// (Unix nanoseconds, 0: none), or is nil when no point expires; for
	// opExpire, the expiry each id had when it was reaped.
	expires []int64
}

var le = binary.LittleEndian

// size is the length of the encoded record (at most 4 bytes more than
// exact: the dim field only upserts carry).
func (r *record) size() int {
	size := 1 + 4 + 4 + idsSize(r.ids) + 4*len(r.vectors) + 8*len(r.expires)
	for _, d := range r.docs {
		size += 4 + len(d)
	}
	if r.fields != nil {
		size += 4
		for i := range r.fields {
			size += r.fields[i].size()
		}
	}
	return size
}

// encode lays out the record as described in the package doc.
func (r *record) encode() []byte {
	b := make([]byte, 0, r.size())
	tagged := hasStringIDs(r.ids)
	op := r.op
	if tagged {
		op |= opTaggedIDs
	}
	if r.expires != nil && r.op != opExpire {
		op |= opExpires
	}
	b = append(b, op)
	b = le.AppendUint32(b, uint32(len(r.ids)))
	if r.op == opUpsert {
		b = le.AppendUint32(b, uint32(r.dim))
	}
	b = encodeIDs(b, r.ids, tagged)
	switch r.op {
	case opUpsertPoints, opUpdateVectors, opDeleteVectors:
		b = r.appendFields(b)
	}
	b = appendFloats(b, r.vectors)
	for _, d := range r.docs {
		b = le.AppendUint32(b, uint32(len(d)))
		b = append(b, d...)
	}
	for _, at := range r.expires {
		b = le.AppendUint64(b, uint64(at))
	}
	return b
}

// decodeRecord parses a payload, copying what it keeps (the payload buffer
// is reused by the log reader). Lengths are checked against what the
// payload holds before anything is allocated.
func decodeRecord(p []byte) (record, error) { return decodeRecordIn(p, nil) }

// decodeRecordIn is decodeRecord with the vectors of an upsert copied
// into the free capacity of *arena when they fit there (and *arena
// extended over them), not into a new slice: replay decodes a group of
// records into one arena it reuses once the group is applied.
func decodeRecordIn(p []byte, arena *[]float32) (record, error) {
	var r record
	bad := func(format string, args ...any) (record, error) {
		return record{}, fmt.Errorf("%w: record: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(p) < 5 {
		return bad("%d bytes", len(p))
	}
	r.op = p[0] &^ (opTaggedIDs | opExpires)
	tagged := p[0]&opTaggedIDs != 0
	expiring := p[0]&opExpires != 0
	if expiring && r.op != opUpsert && r.op != opUpsertPoints {
		return bad("expiry times on a record of operation %d", r.op)
	}
	if tagged && (r.op == opTextIndex || r.op == opAddField || r.op == opRemoveField) {
		return bad("tagged ids on a record of operation %d, which has no ids", r.op)
	}
	n := int(le.Uint32(p[1:5]))
	p = p[5:]
	var dim int
	switch r.op {
	case opUpsert:
		if len(p) < 4 {
			return bad("upsert without dim")
		}
		// The dimension is checked against the field "" when the record
		// is applied (apply_fields.go): the field may have been removed
		// and added again since the write was validated.
		dim = int(le.Uint32(p))
		if limits.CheckDim(dim) != nil {
			return bad("upsert of dimension %d", dim)
		}
		r.dim = dim
		p = p[4:]
	case opDelete, opSetMeta, opTextIndex, opUpsertPoints, opUpdateVectors, opDeleteVectors, opAddField, opRemoveField, opExpire:
	default:
		return bad("unknown operation %d", p0(tagged, r.op))
	}
	docCount := n
	switch r.op {
	case opTextIndex, opAddField, opRemoveField:
		if n != 0 {
			return bad("record of operation %d with %d ids", r.op, n)
		}
		docCount = 1
	case opUpdateVectors, opDeleteVectors, opExpire:
		docCount = 0
	}
	var err error
	if r.ids, p, err = decodeIDs(p, n, tagged); err != nil {
		return record{}, err
	}
	switch r.op {
	case opUpsertPoints, opUpdateVectors, opDeleteVectors:
		if p, err = r.decodeFields(p); err != nil {
			return bad("%v", err)
		}
	}
	if r.op == opUpsert {
		if n > len(p)/4/dim {
			return bad("%d vectors of dimension %d in %d bytes", n, dim, len(p))
		}
		if a := arena; a != nil && cap(*a)-len(*a) >= n*dim {
			at := len(*a)
			*a = (*a)[:at+n*dim]
			r.vectors = (*a)[at : at+n*dim : at+n*dim]
		} else {
			r.vectors = make([]float32, n*dim)
		}
		p = p[copy(indexfile.BytesOf(r.vectors), p):]
	}
	if r.op != opDelete && r.op != opExpire && docCount > len(p)/4 {
		return bad("%d documents in %d bytes", docCount, len(p))
	}
	if r.op != opDelete && r.op != opExpire && docCount > 0 {
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
	if expiring || r.op == opExpire {
		if len(p) != 8*n {
			return bad("%d bytes for the expiry times of %d ids", len(p), n)
		}
		r.expires = make([]int64, n)
		some := false
		for i := range r.expires {
			at := int64(le.Uint64(p[8*i:]))
			if at < 0 || (at == 0 && r.op == opExpire) {
				return bad("expiry time %d of ids[%d]", at, i)
			}
			r.expires[i] = at
			some = some || at != 0
		}
		if !some && n > 0 {
			return bad("expiry flag on a record where no point expires")
		}
		p = p[8*n:]
	}
	if len(p) != 0 {
		return bad("%d bytes after the last field", len(p))
	}
	return r, nil
}

// appendFloats appends vs little-endian, as one copy: the host is
// little-endian (package indexfile refuses to build on any other), so the
// floats' memory is their encoding. A 512-d row's 512 appends were most
// of a batch's encoding time.
func appendFloats(b []byte, vs []float32) []byte {
	return append(b, indexfile.BytesOf(vs)...)
}

// p0 is the op byte as it was read, for messages.
func p0(tagged bool, op byte) byte { // the expiry flag is only ever read on ops 1 and 5
	if tagged {
		return op | opTaggedIDs
	}
	return op
}

func hasStringIDs(ids []ID) bool {
	for _, id := range ids {
		if id.kind == kindString {
			return true
		}
	}
	return false
}

// idsSize is the length of ids encoded by encodeIDs.
func idsSize(ids []ID) int {
	if !hasStringIDs(ids) {
		return 8 * len(ids)
	}
	size := 0
	for _, id := range ids {
		if id.kind == kindString {
			size += 1 + 2 + len(id.str)
		} else {
			size += 1 + 8
		}
	}
	return size
}

// encodeIDs appends an ids section, the layout the package doc specifies:
// untagged, n × u64 (integer ids only); tagged, per id a kind byte, then
// a u64 (idKindInt) or a u16 length and the UTF-8 bytes (idKindString).
// Records with ids of new kinds of operation use this pair too.
func encodeIDs(b []byte, ids []ID, tagged bool) []byte {
	for _, id := range ids {
		switch {
		case !tagged:
			b = le.AppendUint64(b, id.num)
		case id.kind == kindString:
			b = append(b, idKindString)
			b = le.AppendUint16(b, uint16(len(id.str)))
			b = append(b, id.str...)
		default:
			b = append(b, idKindInt)
			b = le.AppendUint64(b, id.num)
		}
	}
	return b
}

// decodeIDs reads n ids written by encodeIDs and returns them with the
// rest of p. Every id is checked as a write checks it (a record holds only
// what a write accepted), and a tagged section must hold a string id (an
// integer-only one has the untagged encoding): an id section has one
// encoding. n is checked against what p can hold before allocating.
func decodeIDs(p []byte, n int, tagged bool) ([]ID, []byte, error) {
	bad := func(format string, args ...any) ([]ID, []byte, error) {
		return nil, nil, fmt.Errorf("%w: record: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if !tagged {
		if n > len(p)/8 {
			return bad("%d ids in %d bytes", n, len(p))
		}
		ids := make([]ID, n)
		for i := range ids {
			num := le.Uint64(p[8*i:])
			if limits.CheckIntID(num) != nil {
				return bad("ids[%d] = %d exceeds the largest integer id", i, num)
			}
			ids[i] = ID{num: num}
		}
		return ids, p[8*n:], nil
	}
	const shortest = 1 + 2 + 1 // a one-byte string id
	if n > len(p)/shortest {
		return bad("%d tagged ids in %d bytes", n, len(p))
	}
	ids := make([]ID, n)
	strs := false
	for i := range ids {
		if len(p) < 1 {
			return bad("ids[%d]: truncated", i)
		}
		kind := p[0]
		p = p[1:]
		switch kind {
		case idKindInt:
			if len(p) < 8 {
				return bad("ids[%d]: truncated integer", i)
			}
			num := le.Uint64(p)
			if limits.CheckIntID(num) != nil {
				return bad("ids[%d] = %d exceeds the largest integer id", i, num)
			}
			ids[i] = ID{num: num}
			p = p[8:]
		case idKindString:
			if len(p) < 2 {
				return bad("ids[%d]: truncated string length", i)
			}
			size := int(le.Uint16(p))
			p = p[2:]
			if size > len(p) {
				return bad("ids[%d]: string of %d bytes, %d left", i, size, len(p))
			}
			s := string(p[:size])
			if err := limits.CheckStringID(s); err != nil {
				return bad("ids[%d]: %v", i, err)
			}
			ids[i] = ID{str: s, kind: kindString}
			strs = true
			p = p[size:]
		default:
			return bad("ids[%d]: unknown id kind %d", i, kind)
		}
	}
	if !strs {
		return bad("tagged ids section without a string id")
	}
	return ids, p, nil
}
