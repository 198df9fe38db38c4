package qdrant

import (
	"encoding/json"
	"math"

	"github.com/strata-db/strata/go/limits"
)

// quantizationParams is a search's params.quantization. strata's SQ8
// fields keep their float vectors and re-score every candidate of the
// graph's ef-bounded list with them (collection.VectorField.CodesOnly
// off), so Qdrant's oversampling (limit x oversampling candidates
// pre-selected on codes, then re-scored) is a wider list: ef at least
// ceil(limit x oversampling). ignore and rescore are accepted and change
// nothing: the floats always re-score, which is what Qdrant does by
// default when it has them.
type quantizationParams struct {
	Ignore       *bool    `json:"ignore"`
	Rescore      *bool    `json:"rescore"`
	Oversampling *float64 `json:"oversampling"`
}

// efFor is the ef a search of k results runs at under p (nil: the
// engine's default, 0), or a 400 naming what is wrong.
func (p *searchParams) efFor(k int) (int, error) {
	ef := 0
	if p == nil {
		return ef, nil
	}
	if p.HnswEf != nil {
		ef = max(*p.HnswEf, k)
	}
	if !present(p.Quantization) {
		return ef, nil
	}
	var q quantizationParams
	if err := strictUnmarshal(p.Quantization, &q); err != nil {
		return 0, badRequestf("params.quantization must be {\"ignore\", \"rescore\", \"oversampling\"}: %v", err)
	}
	if o := q.Oversampling; o != nil {
		if math.IsNaN(*o) || *o < 1 {
			return 0, badRequestf("params.quantization.oversampling must be at least 1, got %v", *o)
		}
		want := math.Ceil(float64(k) * *o)
		ef = max(ef, k, int(min(want, float64(limits.MaxEf))))
	}
	return ef, nil
}

// quantizationParamsJSON is a gRPC search's QuantizationSearchParams as the
// REST params.quantization, or nil.
func quantizationParamsJSON(ignore, rescore *bool, oversampling *float64) json.RawMessage {
	if ignore == nil && rescore == nil && oversampling == nil {
		return nil
	}
	return mustJSON(quantizationParams{Ignore: ignore, Rescore: rescore, Oversampling: oversampling})
}
