package collection

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// MAX_SIM over a multivector field.
//
// The score of a point for a query of nq vectors is
//
//	Σ_i max_j sim(q_i, v_j)
//
// over the point's vectors v_j (ColBERT's late interaction; Qdrant's
// max_sim comparator). strata reports distances, smaller nearer, so a
// multivector query answers
//
//	dist = Σ_i min_j d(q_i, v_j)
//
// with d the field's metric: 1 - <q, v> for ip and cosine (vectors
// normalised), so dist = nq - MAX_SIM; and the squared Euclidean
// distance for l2, as for dense fields (Qdrant's Euclid MAX_SIM sums the
// negated squared distances and reports the square root of the sum's
// magnitude: qdrant-client's local mode scores [[0,1],[3,3]] against
// [[0,0],[3,4]] as √2; the ranking is this sum's).
//
// Candidates come from the field's index over the individual vectors:
// each query vector finds its multiCandidates(k, ef) nearest vectors (at
// the search's ef: the query's, or max(k, 64)), whose points are then
// re-scored exactly over all of their vectors. Recall is measured
// against the exact MAX_SIM over every point
// (TestMultivectorRecallAgainstExactMaxSim, which logs it per ef).
//
// A query scores every allowed point exactly instead (PlanExact) when
// they hold at most exactMaxSimRows vectors, or when ef is at least the
// allowed point count: the doors' exact flag asks so (ef = the point
// count + 1), and as a graph budget that is no bound at all, since it
// counts points where the graph holds vectors, yet misses points whose
// vectors all lie beyond that many nearest.

// exactMaxSimRows is how many vectors a query scores exactly rather than
// search the graph: nq distances each, about what nq graph searches at
// the default ef cost (one to three thousand distances each at M = 16),
// and exact.
const exactMaxSimRows = 4096

// multiCandidates is how many nearest vectors each query vector fetches.
func multiCandidates(k, ef int) int { return max(k, ef) }

// multiExact reports whether a query at ef scores every point allow lets
// through (nil: all) exactly (the package doc above).
func (f *vectorField) multiExact(allow []uint64, ef int) bool {
	m := f.multi
	m.mu.RLock()
	defer m.mu.RUnlock()
	if allow == nil {
		return ef >= len(m.labels) || len(m.point) <= exactMaxSimRows
	}
	if ef >= len(allow) {
		return true
	}
	rows := 0
	for _, p := range allow {
		if rows += len(m.labels[p]); rows > exactMaxSimRows {
			return false
		}
	}
	return true
}

// maxSimScratch is one query's reusable buffers.
type maxSimScratch struct {
	queries []float32
	ids     []int64
	dists   []float32
	rows    []float32
	labels  []uint64
	points  []uint64
	scored  []scoredPoint
}

type scoredPoint struct {
	id   uint64
	dist float32
}

var maxSimPool = sync.Pool{New: func() any { return new(maxSimScratch) }}

// maxSimDistance is Σ_i min_j d(q_i, v_j) for nq query rows and nv point
// rows of dim floats.
func maxSimDistance(m metric.Metric, queries []float32, nq int, rows []float32, nv, dim int) float32 {
	var sum float32
	for i := range nq {
		q := queries[i*dim : (i+1)*dim]
		best := float32(math.Inf(1))
		for j := range nv {
			v := rows[j*dim : (j+1)*dim]
			best = min(best, m.Distance(q, v))
		}
		sum += best
	}
	return sum
}

// searchMulti answers one multivector query (nq rows of f.Dim floats) with
// the k nearest points by MAX_SIM among those sc admits (readScope: the
// graph is told to deny the expired points' vectors), into outIDs and
// outDists (k each, padded with -1 and +Inf).
func (f *vectorField) searchMulti(query []float32, k, ef int, sc readScope, threads int,
	outIDs []int64, outDists []float32) (hnsw.SearchStats, error) {
	allow := sc.allow
	dim := f.Dim
	nq := len(query) / dim
	s := maxSimPool.Get().(*maxSimScratch)
	defer maxSimPool.Put(s)
	s.queries = append(s.queries[:0], query...)
	if f.Metric.NeedsNormalize() {
		for i := range nq {
			metric.Normalize(s.queries[i*dim : (i+1)*dim])
		}
	}
	v := f.tail.Read()
	defer v.Close()
	var stats hnsw.SearchStats
	s.points = s.points[:0]
	if f.multiExact(allow, ef) {
		// Every allowed point is a candidate.
		stats.Plan, stats.EfSearch = hnsw.PlanExact, ef
		f.multi.mu.RLock()
		if allow == nil {
			for p := range f.multi.labels {
				if !sc.expired.has(p) {
					s.points = append(s.points, p)
				}
			}
		} else {
			for _, p := range allow {
				if _, ok := f.multi.labels[p]; ok {
					s.points = append(s.points, p)
				}
			}
		}
		f.multi.mu.RUnlock()
		stats.Allowed = len(s.points)
	} else {
		var filter *hnsw.Filter
		switch {
		case allow != nil:
			filter = &hnsw.Filter{Allow: f.multi.labelsOf(allow)}
		case !sc.expired.empty():
			filter = &hnsw.Filter{Deny: f.multi.labelsOf(sc.expired.keys)}
		}
		per := multiCandidates(k, ef)
		s.ids = slices.Grow(s.ids[:0], nq*per)[:nq*per]
		s.dists = slices.Grow(s.dists[:0], nq*per)[:nq*per]
		var err error
		if stats, err = f.index.SearchFiltered(s.queries, per, max(ef, per), threads, filter, s.ids, s.dists); err != nil {
			return stats, err
		}
		// The candidate points, each once.
		f.multi.mu.RLock()
		for _, l := range s.ids {
			if l < 0 {
				continue
			}
			if p, ok := f.multi.point[uint64(l)]; ok {
				s.points = append(s.points, p)
			}
		}
		// Every point with a vector in the tail is a candidate: the tail is
		// searched exactly (its distances are counted as the candidates
		// are scored, below).
		if v.Len() > 0 {
			allowed := allowFunc(allow)
			fromGraph := len(s.points)
			v.Rows(func(l uint64, _ []float32) {
				if p, ok := f.multi.point[l]; ok && (allowed == nil || allowed(p)) && !sc.expired.has(p) {
					s.points = append(s.points, p)
				}
			})
			if len(s.points) > fromGraph {
				stats.Merge(hnsw.SearchStats{Plan: hnsw.PlanExact})
			}
		}
		f.multi.mu.RUnlock()
	}
	slices.Sort(s.points)
	s.points = slices.Compact(s.points)
	s.scored = s.scored[:0]
	for _, p := range s.points {
		f.multi.mu.RLock()
		s.labels = append(s.labels[:0], f.multi.labels[p]...)
		f.multi.mu.RUnlock()
		if len(s.labels) == 0 {
			continue // overwritten or deleted since the search
		}
		s.rows = slices.Grow(s.rows[:0], len(s.labels)*dim)[:len(s.labels)*dim]
		if err := f.getVectors(&v, s.labels, s.rows); err != nil {
			if errors.Is(err, hnsw.ErrNotFound) {
				continue // replaced between the two reads
			}
			return stats, err
		}
		stats.DistanceComputations += int64(nq * len(s.labels))
		s.scored = append(s.scored, scoredPoint{id: p, dist: maxSimDistance(f.Metric, s.queries, nq, s.rows, len(s.labels), dim)})
	}
	sortScored(s.scored)
	for i := range k {
		if i < len(s.scored) {
			outIDs[i], outDists[i] = int64(s.scored[i].id), s.scored[i].dist
		} else {
			outIDs[i], outDists[i] = -1, float32(math.Inf(1))
		}
	}
	return stats, nil
}

// checkMultiQuery checks the shape of a multivector query.
func checkMultiQuery(f *vectorField, query []float32) error {
	if len(query) == 0 || len(query)%f.Dim != 0 {
		return fmt.Errorf("%w: a query of field %q is 1 to %d vectors of %d floats, got %d floats",
			ErrInvalid, f.Name, limits.MaxMultivectors, f.Dim, len(query))
	}
	if n := len(query) / f.Dim; n > limits.MaxMultivectors {
		return fmt.Errorf("%w: a query of field %q is at most %d vectors, got %d", ErrInvalid, f.Name, limits.MaxMultivectors, n)
	}
	return nil
}
