package sparse

import (
	"fmt"
	"math"
	"slices"

	"github.com/strata-db/strata/go/limits"
)

// Vector is a sparse vector: Values[i] is the coordinate at Indices[i].
// A Vector that Normalize returned (or that passes Check) has indices
// strictly increasing, finite values and at most limits.MaxSparseNonZeros
// of them.
type Vector struct {
	Indices []uint32
	Values  []float32
}

// Len is the number of stored coordinates.
func (v Vector) Len() int { return len(v.Indices) }

// Normalize validates indices and values as one sparse vector and returns
// it sorted by index, in new slices (the arguments are not kept or
// changed). Unsorted input is sorted; a duplicate index, a value that is
// NaN or infinite, lengths that differ and more than
// limits.MaxSparseNonZeros coordinates are errors wrapping ErrInvalid
// that name the position. Explicit zeros are kept: they make the point a
// candidate of a query that holds their index, as in Qdrant.
func Normalize(indices []uint32, values []float32) (Vector, error) {
	if len(indices) != len(values) {
		return Vector{}, fmt.Errorf("%w: sparse vector has %d indices and %d values", ErrInvalid, len(indices), len(values))
	}
	if err := limits.CheckSparseNonZeros(len(indices)); err != nil {
		return Vector{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i, v := range values {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return Vector{}, fmt.Errorf("%w: sparse vector value %d (index %d) is %v, not finite", ErrInvalid, i, indices[i], v)
		}
	}
	out := Vector{Indices: slices.Clone(indices), Values: slices.Clone(values)}
	if !slices.IsSorted(out.Indices) {
		order := make([]int, len(indices))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case indices[a] < indices[b]:
				return -1
			case indices[a] > indices[b]:
				return 1
			}
			return 0
		})
		for to, from := range order {
			out.Indices[to], out.Values[to] = indices[from], values[from]
		}
	}
	for i := 1; i < len(out.Indices); i++ {
		if out.Indices[i] == out.Indices[i-1] {
			return Vector{}, fmt.Errorf("%w: sparse vector has index %d twice", ErrInvalid, out.Indices[i])
		}
	}
	if out.Indices == nil {
		out.Indices, out.Values = []uint32{}, []float32{}
	}
	return out, nil
}

// Check reports whether v is normalised (what Normalize returns), with an
// error wrapping ErrInvalid naming the first fault. It does not allocate.
func Check(v Vector) error {
	if len(v.Indices) != len(v.Values) {
		return fmt.Errorf("%w: sparse vector has %d indices and %d values", ErrInvalid, len(v.Indices), len(v.Values))
	}
	if err := limits.CheckSparseNonZeros(len(v.Indices)); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i, x := range v.Values {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: sparse vector value %d (index %d) is %v, not finite", ErrInvalid, i, v.Indices[i], x)
		}
		if i > 0 && v.Indices[i] <= v.Indices[i-1] {
			return fmt.Errorf("%w: sparse vector indices not strictly increasing at position %d (%d after %d)", ErrInvalid, i, v.Indices[i], v.Indices[i-1])
		}
	}
	return nil
}

// Dot is the score of a point v for a query q, both normalised: the
// products of the coordinates they share, summed in float64 in increasing
// index order and rounded to float32 once. Every plan of Search computes
// exactly this (see the package doc), so it is also the reference a
// brute-force check compares with. matched reports whether they share an
// index at all; a point that shares none is not a candidate.
func Dot(q, v Vector) (score float32, matched bool) {
	var sum float64
	i, j := 0, 0
	for i < len(q.Indices) && j < len(v.Indices) {
		switch a, b := q.Indices[i], v.Indices[j]; {
		case a < b:
			i++
		case a > b:
			j++
		default:
			sum += float64(q.Values[i]) * float64(v.Values[j])
			matched = true
			i++
			j++
		}
	}
	return float32(sum), matched
}
