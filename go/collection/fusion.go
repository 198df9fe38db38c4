package collection

import (
	"fmt"
	"math"
	"slices"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// Hybrid queries across fields: QueryFused runs several sub-queries
// (dense, multivector and sparse fields, a BM25 text index), each with its
// own limit, under one filter, and fuses their ranked lists into one, as
// Qdrant's query API does with prefetch and {"fusion": "rrf" | "dbsf"}.
// Fuse, the fusion alone, serves a door that nests sub-queries.
//
// The scores of a sub-query's list (Search), higher is better:
//
//	dense field         cosine, ip: 1 − distance (the similarity); l2: −√distance
//	multivector field   cosine, ip: nq − distance (Σ of the best similarities); l2: −√distance
//	sparse field        the dot product (with the field's modifier)
//	text index          the BM25 score
//
// Fusion of lists L_1..L_n, each best first (ranks from 0):
//
//	rrf:   score(p) = Σ_{i: p ∈ L_i} 1 / (k + rank_i(p))            k = RRFK, default 2 (Qdrant's)
//	       weighted (Weights, one w_i per list): Σ 1 / ((rank_i(p) + 1)/w_i + k − 1), 0 where w_i ≤ 0
//	dbsf:  score(p) = Σ_{i: p ∈ L_i} (s_i(p) − (μ_i − 3σ_i)) / (6σ_i)
//
// where μ_i and σ_i are the mean and the sample standard deviation (n − 1)
// of L_i's scores; a list of one point, or whose scores are all equal,
// gives each of its points 0.5; an empty list adds nothing. These are
// qdrant-client's local mode (hybrid/fusion.py: reciprocal_rank_fusion
// with ranking_constant_k 2, distribution_based_score_fusion), computed in
// float64 as Python does, and so are the ties: equal fused scores keep
// the order in which the points first appear, list after list (Python's
// stable sort over a dict in insertion order). The local mode fuses the
// scores Qdrant reports, in which Euclid is the distance itself (lower is
// better); the engine's l2 score is its negation, so that dbsf ranks near
// points first for every metric.

// FusionMethod says how QueryFused and Fuse combine lists.
type FusionMethod uint8

const (
	// RRF is reciprocal rank fusion.
	RRF FusionMethod = 1
	// DBSF is distribution-based score fusion.
	DBSF FusionMethod = 2
)

func (m FusionMethod) String() string {
	switch m {
	case RRF:
		return "rrf"
	case DBSF:
		return "dbsf"
	}
	return fmt.Sprintf("FusionMethod(%d)", m)
}

// ParseFusion parses "rrf" and "dbsf".
func ParseFusion(s string) (FusionMethod, error) {
	switch s {
	case "rrf":
		return RRF, nil
	case "dbsf":
		return DBSF, nil
	}
	return 0, fmt.Errorf("%w: fusion must be \"rrf\" or \"dbsf\", got %q", ErrInvalid, s)
}

// Fusion is a fusion method and its parameter.
type Fusion struct {
	Method FusionMethod
	// RRFK is rrf's constant k (0 picks DefaultRRFK); dbsf has none.
	RRFK float64
	// Weights, if not nil, weigh rrf's lists (one per list, Fuse's
	// order); dbsf takes none.
	Weights []float64
}

// DefaultRRFK is Qdrant's constant of reciprocal rank fusion.
const DefaultRRFK = 2

func (f Fusion) check() error {
	if f.Method != RRF && f.Method != DBSF {
		return fmt.Errorf("%w: unknown fusion method %d", ErrInvalid, f.Method)
	}
	if f.Weights != nil && f.Method != RRF {
		return fmt.Errorf("%w: weights are rrf's, not %v's", ErrInvalid, f.Method)
	}
	for _, w := range f.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("%w: rrf weights must be finite, got %v", ErrInvalid, w)
		}
	}
	if !(f.RRFK >= 0 && f.RRFK <= limits.MaxRRFK) {
		return fmt.Errorf("%w: rrf k must be in [0, %g], got %v", ErrInvalid, float64(limits.MaxRRFK), f.RRFK)
	}
	return nil
}

// SubQuery is one ranked list of a fused query: a search of one field.
type SubQuery struct {
	// Field is the vector field searched (dense, multivector or sparse),
	// or with Text the metadata field of the text index ("" for the
	// collection's only one).
	Field string
	// Vector is a dense field's query (Dim floats) or a multivector
	// field's (1 to limits.MaxMultivectors rows of Dim floats).
	Vector []float32
	// Indices and Values are a sparse field's query.
	Indices []uint32
	Values  []float32
	// Text, when not "", makes this a BM25 query of a text index.
	Text string
	BM25 text.Params
	// Limit is the length of the list, in [1, limits.MaxK].
	Limit int
	// Ef is the search's candidate list for a graph field (0: max(Limit, 64)).
	Ef int
	// Filter, if not nil, restricts this list further (and-ed with the
	// fused query's filter).
	Filter *meta.Filter
}

// Search runs one sub-query among the points f and among allow (as
// QueryAmong) and returns its list, best first, scored as the package
// doc's table says.
func (c *Collection) Search(q SubQuery, f *meta.Filter, among []ID, threads int) ([]Scored, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	if err := limits.CheckK(q.Limit); err != nil {
		return nil, fmt.Errorf("%w: sub-query limit: %w", ErrInvalid, err)
	}
	if q.Filter != nil {
		if f == nil {
			f = q.Filter
		} else {
			f = meta.And(f, q.Filter)
		}
	}
	if q.Text != "" {
		return c.searchText(q, f, among)
	}
	set := c.fields.Load()
	if set.getSparse(q.Field) != nil {
		if q.Vector != nil {
			return nil, fmt.Errorf("%w: vector field %q is sparse: give indices and values", ErrInvalid, q.Field)
		}
		return c.QuerySparse(q.Field, q.Indices, q.Values, q.Limit, f, among)
	}
	vf := set.get(q.Field)
	if vf == nil {
		return nil, fmt.Errorf("%w: no vector field %q", ErrInvalid, q.Field)
	}
	if q.Indices != nil || q.Values != nil {
		return nil, fmt.Errorf("%w: vector field %q is not sparse: give a vector", ErrInvalid, q.Field)
	}
	ids, dists := make([]ID, q.Limit), make([]float32, q.Limit)
	nq := 1
	var err error
	if vf.multi != nil {
		nq = len(q.Vector) / max(vf.Dim, 1)
		_, err = c.QueryMulti(q.Field, q.Vector, q.Limit, q.Ef, f, among, threads, ids, dists)
	} else {
		if len(q.Vector) != vf.Dim {
			return nil, fmt.Errorf("%w: query of vector field %q: %d floats for dimension %d", ErrInvalid, q.Field, len(q.Vector), vf.Dim)
		}
		_, err = c.QueryField(q.Field, q.Vector, q.Limit, q.Ef, f, among, threads, ids, dists)
	}
	if err != nil {
		return nil, err
	}
	out := make([]Scored, 0, len(ids))
	for i, id := range ids {
		if id.IsNone() {
			break
		}
		out = append(out, Scored{ID: id, Score: fusionScore(vf.Metric, dists[i], nq)})
	}
	return out, nil
}

// fusionScore is a dense (nq = 1) or MAX_SIM (nq query vectors) distance
// as a score, higher is better: nq − d for cosine and ip, −√d for l2, −d
// for l1.
func fusionScore(m metric.Metric, d float32, nq int) float64 {
	switch m {
	case metric.L2:
		return -math.Sqrt(math.Max(float64(d), 0))
	case metric.Manhattan:
		return -float64(d)
	}
	return float64(nq) - float64(d)
}

func (c *Collection) searchText(q SubQuery, f *meta.Filter, among []ID) ([]Scored, error) {
	if q.Vector != nil || q.Indices != nil || q.Values != nil {
		return nil, fmt.Errorf("%w: a text sub-query takes no vector", ErrInvalid)
	}
	if err := text.CheckQuery(q.Text); err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	index, err := c.textIndex(q.Field)
	if err != nil {
		return nil, err
	}
	sc, err := c.scope(f, among)
	if err != nil {
		return nil, err
	}
	hits, err := c.searchTextIndex(index, q.Text, q.Limit, q.BM25, sc)
	if err != nil {
		return nil, err
	}
	out := make([]Scored, 0, len(hits))
	for _, h := range hits {
		if id, ok := c.idOf(h.ID); ok {
			out = append(out, Scored{ID: id, Score: float64(h.Score)})
		}
	}
	return out, nil
}

// QueryFused runs the sub-queries, each among the points f (nil: all) and
// among (as QueryAmong) allow and its own Filter, and returns the k best
// of their fused lists (the package doc's formulas), best first.
func (c *Collection) QueryFused(subs []SubQuery, fusion Fusion, k int, f *meta.Filter, among []ID, threads int) ([]Scored, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	if err := limits.CheckFusedQueries(len(subs)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := limits.CheckK(k); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := fusion.check(); err != nil {
		return nil, err
	}
	lists := make([][]Scored, len(subs))
	for i, q := range subs {
		list, err := c.Search(q, f, among, threads)
		if err != nil {
			return nil, fmt.Errorf("sub-query %d: %w", i, err)
		}
		lists[i] = list
	}
	// Each sub-query read the clock: a point that expired between them is
	// dropped from every list (expiry is for good: a later reading hides
	// whatever an earlier one did).
	if exp := c.expiredNow(); !exp.empty() {
		for i, list := range lists {
			lists[i] = slices.DeleteFunc(list, func(s Scored) bool {
				k, ok := c.keyOf(s.ID)
				return !ok || exp.has(k)
			})
		}
	}
	return Fuse(lists, fusion, k)
}

// Fuse combines ranked lists (each best first, an id at most once in
// each) into the limit best by the fusion's formula (package doc).
func Fuse(lists [][]Scored, fusion Fusion, limit int) ([]Scored, error) {
	if err := fusion.check(); err != nil {
		return nil, err
	}
	if err := limits.CheckK(limit); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	rrfK := fusion.RRFK
	if rrfK == 0 {
		rrfK = DefaultRRFK
	}
	if fusion.Weights != nil && len(fusion.Weights) != len(lists) {
		return nil, fmt.Errorf("%w: %d rrf weights for %d lists: one weight per list", ErrInvalid, len(fusion.Weights), len(lists))
	}
	at := map[ID]int{}
	var out []Scored
	add := func(id ID, score float64) {
		i, ok := at[id]
		if !ok {
			at[id] = len(out)
			out = append(out, Scored{ID: id})
			i = len(out) - 1
		}
		out[i].Score += score
	}
	for i, list := range lists {
		switch {
		case len(list) == 0:
		case fusion.Method == RRF && fusion.Weights != nil:
			w := fusion.Weights[i]
			for rank, s := range list {
				if w <= 0 {
					add(s.ID, 0)
				} else {
					add(s.ID, 1/((float64(rank)+1)/w+rrfK-1))
				}
			}
		case fusion.Method == RRF:
			for rank, s := range list {
				add(s.ID, 1/(rrfK+float64(rank)))
			}
		default:
			low, span := dbsfRange(list)
			for _, s := range list {
				if span == 0 {
					add(s.ID, 0.5)
				} else {
					add(s.ID, (s.Score-low)/span)
				}
			}
		}
	}
	SortByScore(out)
	return out[:min(limit, len(out))], nil
}

// SortByScore sorts list best (highest) score first, stably: equal
// scores keep their order (in Fuse, the order of first appearance), as
// qdrant-client's local mode's sorts over dicts in insertion order do.
// Fuse and the Qdrant door's formula re-scoring rank with it.
func SortByScore(list []Scored) {
	slices.SortStableFunc(list, func(a, b Scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
}

// dbsfRange is [μ − 3σ, μ + 3σ] of a list's scores as (low, width); width
// 0 for one score or equal ones.
func dbsfRange(list []Scored) (low, width float64) {
	if len(list) == 1 {
		return 0, 0
	}
	var sum float64
	for _, s := range list {
		sum += s.Score
	}
	mean := sum / float64(len(list))
	var variance float64
	for _, s := range list {
		variance += (s.Score - mean) * (s.Score - mean)
	}
	variance /= float64(len(list) - 1)
	if variance == 0 {
		return 0, 0
	}
	sd := math.Sqrt(variance)
	low, high := mean-3*sd, mean+3*sd
	return low, high - low
}
