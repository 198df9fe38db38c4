package collection

import (
	"fmt"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/limits"
)

// Scored is one result of a query that scores (higher is better):
// QuerySparse, Search and QueryFused.
type Scored struct {
	ID    ID
	Score float64
}

// QuerySparse finds the k points of the sparse field whose vectors have
// the largest dot product with the query (indices and values, any order;
// the field's modifier applied), among those f and among allow (as
// QueryAmong), best first: exact, equal scores ranking the earlier key
// first (package sparse, "Scores and ties"). Only points sharing an index
// with the query are candidates, so fewer than k may come back.
func (c *Collection) QuerySparse(field string, indices []uint32, values []float32, k int, f *meta.Filter, among []ID) ([]Scored, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	sf := c.fields.Load().getSparse(field)
	if sf == nil {
		if c.fields.Load().get(field) != nil {
			return nil, fmt.Errorf("%w: vector field %q is not a sparse field", ErrInvalid, field)
		}
		return nil, fmt.Errorf("%w: no sparse field %q", ErrInvalid, field)
	}
	if err := limits.CheckK(k); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	q, err := sparse.Normalize(indices, values)
	if err != nil {
		return nil, fmt.Errorf("%w: sparse query: %v", ErrInvalid, err)
	}
	sc, err := c.scope(f, among)
	if err != nil {
		return nil, err
	}
	allow, extra := c.indexAllow(sc)
	hits, _, err := sf.index.Search(q, min(k+extra, limits.MaxK), allow)
	if err != nil {
		return nil, fmt.Errorf("collection: sparse field %q: %w", field, err)
	}
	out := make([]Scored, 0, len(hits))
	for _, h := range hits {
		if len(out) == k {
			break
		}
		if sc.expired.has(h.Key) {
			continue
		}
		if id, ok := c.idOf(h.Key); ok { // a string id deleted since: dropped (idsOfResults)
			out = append(out, Scored{ID: id, Score: float64(h.Score)})
		}
	}
	return out, nil
}

// GetSparseVectors returns, of the ids that have a value in the sparse
// field (in request order), the ids and their vectors, sorted by index.
func (c *Collection) GetSparseVectors(ids []ID, field string) (found []ID, vectors []sparse.Vector, err error) {
	if err := c.alive(); err != nil {
		return nil, nil, err
	}
	sf := c.fields.Load().getSparse(field)
	if sf == nil {
		return nil, nil, fmt.Errorf("%w: no sparse field %q", ErrInvalid, field)
	}
	exp := c.expiredNow()
	for _, id := range ids {
		key, ok := c.liveKeyOf(id, exp)
		if !ok {
			continue
		}
		if v, ok := sf.index.Get(key); ok {
			found, vectors = append(found, id), append(vectors, v)
		}
	}
	return found, vectors, nil
}
