package collection

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/limits"
)

// fieldValues is one vector field's part of an opUpsertPoints or
// opUpdateVectors record (for opDeleteVectors, only its name): the values
// of the points at positions points of the record's ids.
type fieldValues struct {
	name    string
	multi   bool     // a multivector field: counts[i] rows for points[i]
	dim     int      // floats per row
	points  []uint32 // positions into the record's ids, ascending
	counts  []uint32 // multi: 1..limits.MaxMultivectors rows per point
	vectors []float32
}

func (f *fieldValues) size() int {
	return 4 + len(f.name) + 1 + 4 + 4 + 4*len(f.points) + 4*len(f.counts) + 4*len(f.vectors)
}

// appendFields lays out the fields of a record (package doc, "Log
// records"): nf u32, then per field
//
//	nameLen u32 | name | kind u8 (0 dense, 1 multivector) | dim u32 | m u32 |
//	points [m]u32 | counts [m]u32 (kind 1) | vectors [rows·dim]f32
//
// or, in opDeleteVectors, just nameLen u32 | name.
func (r *record) appendFields(b []byte) []byte {
	b = le.AppendUint32(b, uint32(len(r.fields)))
	for i := range r.fields {
		f := &r.fields[i]
		b = le.AppendUint32(b, uint32(len(f.name)))
		b = append(b, f.name...)
		if r.op == opDeleteVectors {
			continue
		}
		kind := byte(0)
		if f.multi {
			kind = 1
		}
		b = append(b, kind)
		b = le.AppendUint32(b, uint32(f.dim))
		b = le.AppendUint32(b, uint32(len(f.points)))
		for _, p := range f.points {
			b = le.AppendUint32(b, p)
		}
		for _, c := range f.counts {
			b = le.AppendUint32(b, c)
		}
		for _, v := range f.vectors {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b
}

// decodeFields reads the fields that follow a record's ids and returns
// what is left of p. Every length is checked against what p holds before
// anything is allocated; names must be unique, points ascending positions
// of the record's ids.
func (r *record) decodeFields(p []byte) ([]byte, error) {
	if len(p) < 4 {
		return nil, fmt.Errorf("no field count")
	}
	nf := int(le.Uint32(p))
	p = p[4:]
	if limits.CheckVectorFields(nf) != nil || nf > len(p)/4 {
		return nil, fmt.Errorf("%d fields in %d bytes", nf, len(p))
	}
	r.fields = make([]fieldValues, nf)
	seen := make(map[string]bool, nf)
	for i := range r.fields {
		f := &r.fields[i]
		if len(p) < 4 {
			return nil, fmt.Errorf("field %d: truncated name", i)
		}
		nameLen := int(le.Uint32(p))
		p = p[4:]
		if nameLen > limits.MaxFieldName || nameLen > len(p) {
			return nil, fmt.Errorf("field %d: name of %d bytes, %d left", i, nameLen, len(p))
		}
		f.name = string(p[:nameLen])
		p = p[nameLen:]
		if limits.CheckFieldName(f.name) != nil || seen[f.name] {
			return nil, fmt.Errorf("field %d: bad or repeated name %q", i, f.name)
		}
		seen[f.name] = true
		if r.op == opDeleteVectors {
			continue
		}
		if len(p) < 9 {
			return nil, fmt.Errorf("field %q: truncated header", f.name)
		}
		kind, dim, m := p[0], int(le.Uint32(p[1:])), int(le.Uint32(p[5:]))
		p = p[9:]
		if kind > 1 || limits.CheckDim(dim) != nil || m > len(r.ids) {
			return nil, fmt.Errorf("field %q: kind %d, dim %d, %d points of %d", f.name, kind, dim, m, len(r.ids))
		}
		f.multi, f.dim = kind == 1, dim
		words := m
		if f.multi {
			words = 2 * m
		}
		if words > len(p)/4 {
			return nil, fmt.Errorf("field %q: %d points in %d bytes", f.name, m, len(p))
		}
		f.points = make([]uint32, m)
		for j := range f.points {
			f.points[j] = le.Uint32(p[4*j:])
			if int(f.points[j]) >= len(r.ids) || (j > 0 && f.points[j] <= f.points[j-1]) {
				return nil, fmt.Errorf("field %q: point %d at position %d", f.name, j, f.points[j])
			}
		}
		p = p[4*m:]
		rows := m
		if f.multi {
			f.counts = make([]uint32, m)
			rows = 0
			for j := range f.counts {
				f.counts[j] = le.Uint32(p[4*j:])
				if limits.CheckMultivectors(int(f.counts[j])) != nil {
					return nil, fmt.Errorf("field %q: point %d with %d vectors", f.name, j, f.counts[j])
				}
				rows += int(f.counts[j])
			}
			p = p[4*m:]
		}
		if rows > len(p)/4/dim {
			return nil, fmt.Errorf("field %q: %d vectors of dimension %d in %d bytes", f.name, rows, dim, len(p))
		}
		f.vectors = make([]float32, rows*dim)
		for j := range f.vectors {
			f.vectors[j] = math.Float32frombits(le.Uint32(p[4*j:]))
		}
		p = p[4*rows*dim:]
	}
	return p, nil
}
