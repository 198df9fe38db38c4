package text

import (
	"fmt"
	"math"
	"slices"

	"github.com/strata-db/strata/go/limits"
)

// Fusion says how a hybrid query merges its vector and text rankings.
//
//	rrf:       score(d) = Σ_sides 1 / (RRFK + rank_side(d)), rank from 1
//	weighted:  score(d) = Alpha · v(d) + (1 − Alpha) · t(d)
//
// where, among each side's own candidates, v(d) = (dmax − dist(d)) /
// (dmax − dmin) and t(d) = (bm25(d) − smin) / (smax − smin) (min-max
// normalised to [0, 1]; 1 when all candidates tie), and a side that did not
// find d contributes 0.
type Fusion struct {
	Weighted bool
	Alpha    float64 // weight of the vector side in [0, 1] (weighted only)
	RRFK     float64 // rrf's k; 0 picks 60 (Cormack et al.)
}

// DefaultRRFK is the constant of reciprocal rank fusion.
const DefaultRRFK = 60

// Check returns an error for out-of-range parameters.
func (f Fusion) Check() error {
	if f.Weighted && !(f.Alpha >= 0 && f.Alpha <= 1) {
		return fmt.Errorf("%w: fusion alpha must be in [0, 1], got %v", ErrInvalid, f.Alpha)
	}
	if !(f.RRFK >= 0 && f.RRFK <= limits.MaxRRFK) {
		return fmt.Errorf("%w: rrf k must be in [0, 1e6], got %v", ErrInvalid, f.RRFK)
	}
	return nil
}

// Sources say which side(s) of a hybrid query found a hit.
type Sources uint8

// Sources bits. Part of the C ABI: do not change.
const (
	FromVector Sources = 1
	FromText   Sources = 2
)

// Fused is one hit of a hybrid query.
type Fused struct {
	ID       uint64
	Score    float32 // the fused score, higher is better
	Distance float32 // the vector distance, NaN if the vector side did not find it
	BM25     float32 // the text score, 0 if the text side did not find it
	Sources  Sources
}

// Neighbor is one hit of the vector side, nearest first.
type Neighbor struct {
	ID       uint64
	Distance float32
}

// Fuse merges the two rankings (each best first) into the top k.
func Fuse(vector []Neighbor, text []Hit, k int, f Fusion) []Fused {
	byID := make(map[uint64]int, len(vector)+len(text))
	var out []Fused
	at := func(id uint64) *Fused {
		i, ok := byID[id]
		if !ok {
			i = len(out)
			byID[id] = i
			out = append(out, Fused{ID: id, Distance: float32(math.NaN())})
		}
		return &out[i]
	}
	rrfK := f.RRFK
	if rrfK == 0 {
		rrfK = DefaultRRFK
	}
	var dmin, dmax, smin, smax float64
	if len(vector) > 0 {
		dmin, dmax = float64(vector[0].Distance), float64(vector[0].Distance)
		for _, v := range vector {
			dmin, dmax = min(dmin, float64(v.Distance)), max(dmax, float64(v.Distance))
		}
	}
	if len(text) > 0 {
		smin, smax = float64(text[0].Score), float64(text[0].Score)
		for _, t := range text {
			smin, smax = min(smin, float64(t.Score)), max(smax, float64(t.Score))
		}
	}
	for rank, v := range vector {
		h := at(v.ID)
		h.Sources |= FromVector
		h.Distance = v.Distance
		if f.Weighted {
			norm := 1.0
			if dmax > dmin {
				norm = (dmax - float64(v.Distance)) / (dmax - dmin)
			}
			h.Score += float32(f.Alpha * norm)
		} else {
			h.Score += float32(1 / (rrfK + float64(rank+1)))
		}
	}
	for rank, t := range text {
		h := at(t.ID)
		h.Sources |= FromText
		h.BM25 = t.Score
		if f.Weighted {
			norm := 1.0
			if smax > smin {
				norm = (float64(t.Score) - smin) / (smax - smin)
			}
			h.Score += float32((1 - f.Alpha) * norm)
		} else {
			h.Score += float32(1 / (rrfK + float64(rank+1)))
		}
	}
	slices.SortFunc(out, func(a, b Fused) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}
