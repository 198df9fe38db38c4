package collection

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/limits"
)

// fieldValues is one vector field's part of an opUpsertPoints or
// opUpdateVectors record (for opDeleteVectors, only its name): the values
// of the points at positions points of the record's ids.
type fieldValues struct {
	name    string
	multi   bool      // a multivector field: counts[i] rows for points[i]
	sparse  bool      // a sparse field: counts[i] coordinates for points[i]
	dim     int       // floats per row (0 for a sparse field)
	points  []uint32  // positions into the record's ids, ascending
	counts  []uint32  // multi: 1..limits.MaxMultivectors rows per point; sparse: 0..limits.MaxSparseNonZeros coordinates
	indices []uint32  // sparse: the coordinates' indices, point after point, each point's strictly increasing
	vectors []float32 // sparse: the coordinates' values
}

// kind is the field's kind byte in a record.
func (f *fieldValues) kind() byte {
	switch {
	case f.sparse:
		return kindSparse
	case f.multi:
		return kindMulti
	}
	return kindDense
}

// Kinds of a field's values in a record. Part of the log format: do not
// change.
const (
	kindDense  byte = 0
	kindMulti  byte = 1
	kindSparse byte = 2
)

func (f *fieldValues) size() int {
	return 4 + len(f.name) + 1 + 4 + 4 + 4*len(f.points) + 4*len(f.counts) + 4*len(f.indices) + 4*len(f.vectors)
}

// sparseVector returns the j-th point's vector of a sparse field's
// values, whose coordinates start at from; it shares the record's memory.
func (f *fieldValues) sparseVector(j, from int) sparse.Vector {
	to := from + int(f.counts[j])
	return sparse.Vector{Indices: f.indices[from:to:to], Values: f.vectors[from:to:to]}
}

// appendFields lays out the fields of a record (package doc, "Log
// records"): nf u32, then per field
//
//	nameLen u32 | name | kind u8 (0 dense, 1 multivector, 2 sparse) | dim u32 | m u32 |
//	points [m]u32 | counts [m]u32 (kinds 1, 2) | indices [Σ counts]u32 (kind 2) |
//	vectors [rows·dim]f32 (kinds 0, 1) or values [Σ counts]f32 (kind 2)
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
		b = append(b, f.kind())
		b = le.AppendUint32(b, uint32(f.dim))
		b = le.AppendUint32(b, uint32(len(f.points)))
		for _, p := range f.points {
			b = le.AppendUint32(b, p)
		}
		for _, c := range f.counts {
			b = le.AppendUint32(b, c)
		}
		for _, x := range f.indices {
			b = le.AppendUint32(b, x)
		}
		b = appendFloats(b, f.vectors)
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
		if kind > kindSparse || (kind == kindSparse) != (dim == 0) || (dim != 0 && limits.CheckDim(dim) != nil) || m > len(r.ids) {
			return nil, fmt.Errorf("field %q: kind %d, dim %d, %d points of %d", f.name, kind, dim, m, len(r.ids))
		}
		f.multi, f.sparse, f.dim = kind == kindMulti, kind == kindSparse, dim
		words := m
		if kind != kindDense {
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
		if f.sparse {
			var err error
			if p, err = f.decodeSparse(p); err != nil {
				return nil, err
			}
			continue
		}
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
		p = p[copy(indexfile.BytesOf(f.vectors), p):]
	}
	return p, nil
}

// decodeSparse reads a sparse field's counts, indices and values (p
// holds at least the counts, which decodeFields checked) and returns what
// is left. Every point's vector must be what a write logs: sparse.Check's
// normal form (indices strictly increasing, values finite).
func (f *fieldValues) decodeSparse(p []byte) ([]byte, error) {
	m := len(f.points)
	f.counts = make([]uint32, m)
	total := 0
	for j := range f.counts {
		f.counts[j] = le.Uint32(p[4*j:])
		if limits.CheckSparseNonZeros(int(f.counts[j])) != nil {
			return nil, fmt.Errorf("field %q: point %d with %d non-zeros", f.name, j, f.counts[j])
		}
		total += int(f.counts[j])
	}
	p = p[4*m:]
	if total > len(p)/8 {
		return nil, fmt.Errorf("field %q: %d sparse coordinates in %d bytes", f.name, total, len(p))
	}
	f.indices = make([]uint32, total)
	f.vectors = make([]float32, total)
	for j := range f.indices {
		f.indices[j] = le.Uint32(p[4*j:])
		f.vectors[j] = math.Float32frombits(le.Uint32(p[4*(total+j):]))
	}
	from := 0
	for j := range f.counts {
		if err := sparse.Check(f.sparseVector(j, from)); err != nil {
			return nil, fmt.Errorf("field %q: point %d: %v", f.name, j, err)
		}
		from += int(f.counts[j])
	}
	return p[8*total:], nil
}
