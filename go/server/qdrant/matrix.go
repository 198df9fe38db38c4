package qdrant

import (
	"cmp"
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// The distance matrix (search_matrix_pairs, search_matrix_offsets), as
// qdrant-client's local mode computes it: sample points at random among
// those the filter allows that have the field, sort them by id (integers
// first, then UUIDs), and give each its limit nearest among the other
// sampled points (exactly, under the same filter), with Qdrant's scores.
// Fewer than two sampled points make an empty matrix. With sample at
// least the number of allowed points the answer is deterministic.

// matrixRequest is Qdrant's SearchMatrixRequest.
type matrixRequest struct {
	Filter   json.RawMessage `json:"filter"`
	Sample   *int            `json:"sample"`
	Limit    *int            `json:"limit"`
	Using    *string         `json:"using"`
	ShardKey json.RawMessage `json:"shard_key"`
}

// matrixPair is Qdrant's SearchMatrixPair.
type matrixPair struct {
	A     pointID `json:"a"`
	B     pointID `json:"b"`
	Score float64 `json:"score"`
}

// matrixPairs is Qdrant's SearchMatrixPairsResponse.
type matrixPairs struct {
	Pairs []matrixPair `json:"pairs"`
}

// matrixOffsets is Qdrant's SearchMatrixOffsetsResponse.
type matrixOffsets struct {
	OffsetsRow []int     `json:"offsets_row"`
	OffsetsCol []int     `json:"offsets_col"`
	Scores     []float64 `json:"scores"`
	IDs        []pointID `json:"ids"`
}

// matrix is the sampled ids, sorted, and each one's neighbours: offsets
// into ids and scores, best first.
type matrix struct {
	ids       []collection.ID
	neighbors [][]int
	scores    [][]float64
}

func compareIDs(a, b collection.ID) int {
	switch {
	case a.IsString() != b.IsString():
		if a.IsString() {
			return 1
		}
		return -1
	case a.IsString():
		return cmp.Compare(a.Str(), b.Str())
	}
	return cmp.Compare(a.Int(), b.Int())
}

func (h *Handler) distanceMatrix(name string, req *matrixRequest) (*matrix, error) {
	c, err := h.named(name)
	if err != nil {
		return nil, err
	}
	sample, limit := 10, 3
	if req.Sample != nil {
		sample = *req.Sample
	}
	if req.Limit != nil {
		limit = *req.Limit
	}
	if sample < 2 || limit < 1 {
		return nil, badRequestf("Validation error: sample must be at least 2 and limit at least 1, got %d and %d", sample, limit)
	}
	if sample > h.limits.MaxK || limit > h.limits.MaxK {
		return nil, badRequestf("sample and limit must be at most %d (the server's limit: strata-server --max-k)", h.limits.MaxK)
	}
	if err := h.limits.Answer(sample*limit, 0, false); err != nil {
		return nil, err
	}
	using := ""
	if req.Using != nil {
		using = *req.Using
	}
	schema := schemaOf(c)
	field, ok := schema.dense[using]
	if !ok {
		if _, sparse := schema.sparse[using]; sparse {
			return nil, unsupportedf("a distance matrix of the sparse vector %q", using)
		}
		return nil, badRequestf("Wrong input: Not existing vector name error: %s", using)
	}
	f, err := compileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	ids, err := c.ScanIDs(meta.And(f, meta.HasVector(using)), collection.ID{}, false, 0)
	if err != nil {
		return nil, err
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ids = ids[:min(sample, len(ids))]
	slices.SortFunc(ids, compareIDs)
	found, vectors, counts, err := c.GetVectors(ids, using)
	if err != nil {
		return nil, err
	}
	m := &matrix{ids: found}
	if len(found) < 2 {
		return &matrix{}, nil
	}
	offset := make(map[collection.ID]int, len(found))
	for i, id := range found {
		offset[id] = i
	}
	k := min(limit, len(found)-1)
	ef := c.Len() + 1 // exact, as local mode
	hits, dists := make([]collection.ID, k), make([]float32, k)
	row := 0
	for i := range found {
		nq := 1
		if counts != nil {
			nq = counts[i]
		}
		q := vectors[row*field.Dim : (row+nq)*field.Dim]
		row += nq
		among := make([]collection.ID, 0, len(found)-1)
		among = append(append(among, found[:i]...), found[i+1:]...)
		if field.Multivector != collection.SingleVector {
			_, err = c.QueryMulti(using, q, k, ef, f, among, 1, hits, dists)
		} else {
			_, err = c.QueryField(using, q, k, ef, f, among, 1, hits, dists)
		}
		if err != nil {
			return nil, err
		}
		var nb []int
		var sc []float64
		for j := range k {
			if hits[j].IsNone() {
				break
			}
			score := qdrantScore(dists[j], field.Metric)
			if field.Multivector != collection.SingleVector {
				score = multiScore(dists[j], nq, field.Metric)
			}
			nb, sc = append(nb, offset[hits[j]]), append(sc, score)
		}
		m.neighbors, m.scores = append(m.neighbors, nb), append(m.scores, sc)
	}
	return m, nil
}

// searchMatrixPairs answers POST /collections/{name}/points/search/matrix/pairs.
func (h *Handler) searchMatrixPairs(_ context.Context, name string, req *matrixRequest) (matrixPairs, error) {
	m, err := h.distanceMatrix(name, req)
	if err != nil {
		return matrixPairs{}, err
	}
	out := matrixPairs{Pairs: []matrixPair{}}
	for i, nb := range m.neighbors {
		for j, col := range nb {
			out.Pairs = append(out.Pairs, matrixPair{A: pointID{m.ids[i]}, B: pointID{m.ids[col]}, Score: m.scores[i][j]})
		}
	}
	return out, nil
}

// searchMatrixOffsets answers POST /collections/{name}/points/search/matrix/offsets.
func (h *Handler) searchMatrixOffsets(_ context.Context, name string, req *matrixRequest) (matrixOffsets, error) {
	m, err := h.distanceMatrix(name, req)
	if err != nil {
		return matrixOffsets{}, err
	}
	out := matrixOffsets{OffsetsRow: []int{}, OffsetsCol: []int{}, Scores: []float64{}, IDs: []pointID{}}
	for _, id := range m.ids {
		out.IDs = append(out.IDs, pointID{id})
	}
	for i, nb := range m.neighbors {
		for j, col := range nb {
			out.OffsetsRow, out.OffsetsCol = append(out.OffsetsRow, i), append(out.OffsetsCol, col)
			out.Scores = append(out.Scores, m.scores[i][j])
		}
	}
	return out, nil
}
