package qdrant

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// Queries by example: a point id where a vector goes (query, nearest,
// recommend, discover, context) and the scores that are not a distance to
// one vector. The request is decoded into a vectorQuery (planQuery), which
// runQuery answers; both REST and gRPC call these two.
//
// The scores are qdrant-client's local mode's (distances.py), computed
// from each point's similarities to the examples (collection.DistancesTo,
// exact): sim is cos, dot, or −‖a−b‖² for Euclid (Qdrant's "core"
// similarities, higher better), Σ of the best per query row for a
// multivector. With fs(x) = x/(1+|x|) and s(x) = (fs(x)+1)/2:
//
//	recommend best_score   s(max sim to positives) if above the best negative, else −s(max sim to negatives)
//	recommend sum_scores   Σ sim to positives − Σ sim to negatives
//	recommend average_vector  nearest to 2·mean(positives) − mean(negatives) (mean(positives) alone
//	                       without negatives; a multivector: the rows of the positives, then the
//	                       negated rows of the negatives)
//	discover               Σ over pairs of sign(sim+ − sim−), plus s(sim to target)
//	context                Σ over pairs of fs(min(sim+ − sim− − ε, 0)), ε = 2^-23
//
// All of them rank higher first, whatever the distance. Points given by
// id in the searched collection are left out of the answer, as Qdrant does.

// queryKind is the shape of a planned query.
type queryKind int

const (
	queryNone    queryKind = iota // no query: points in id order, score unscored
	queryNearest                  // nearest to rows (nq of them for a multivector field)
	queryScored                   // score() over the distances to examples
	querySample                   // random points, score unscored
)

// unscored is the score of a point that a query does not score (no
// query, sample, order_by): 1.0, qdrant-client's local mode's
// (record_to_scored_point and _sample_randomly in local_collection.py,
// qdrant-client 1.20).
const unscored = 1.0

// unscoredScores is n unscored scores.
func unscoredScores(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = unscored
	}
	return out
}

// vectorQuery is a decoded query against one vector field.
type vectorQuery struct {
	kind  queryKind
	field collection.VectorField
	// queryNearest: the query's rows.
	rows []float32
	nq   int
	// queryScored: the example values (rows, counts per example for a
	// multivector field) and the score of a point from its similarities
	// to them, in order.
	examples []float32
	counts   []int
	score    func(sims []float64) float64
	// exclude are the ids the query named in the searched collection.
	exclude []collection.ID
	// exact (search_params.exact) ranks a multivector nearest query
	// over every allowed point (collection.DistancesTo): the field's
	// graph holds rows, and ef = the point count can miss points whose
	// rows are all beyond it (a groups query over every point did).
	exact bool
	// mmr, for queryNearest: pick by maximal marginal relevance.
	mmr *mmrQuery
}

// mmrQuery is a nearest query's {"mmr": ...}.
type mmrQuery struct {
	lambda     float64 // 1 − diversity
	candidates int     // candidates_limit; −1: the query's limit
}

// exampleLookup resolves point ids given as examples: their vectors of one field
// in one collection (lookup_from, else the searched collection and field).
type exampleLookup struct {
	c     *collection.Collection
	field collection.VectorField
	same  bool // the searched collection: named ids are excluded
}

// value is one example value: rows of the field's Dim floats (count of
// them) and, when it was given by id, that id.
type value struct {
	rows  []float32
	count int
	id    *collection.ID
}

// input reads a VectorInput: a point id, or a vector (a list of vectors
// for a multivector field).
func (l *exampleLookup) input(raw json.RawMessage, what string) (value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && (raw[0] == '"' || (raw[0] >= '0' && raw[0] <= '9')) {
		id, err := parseID(raw)
		if err != nil {
			return value{}, err
		}
		found, vectors, counts, err := l.c.GetVectors([]collection.ID{id}, l.field.Name)
		if err != nil {
			return value{}, err
		}
		if len(found) == 0 {
			if recs, _ := records(l.c, []collection.ID{id}, payloadSelector{}, false); len(recs) == 1 {
				return value{}, badRequestf("Wrong input: Vector with name %q for point %v not found (%s)", l.field.Name, pointID{id}, what)
			}
			return value{}, notFoundPoint(id)
		}
		n := 1
		if counts != nil {
			n = counts[0]
		}
		return value{rows: vectors, count: n, id: &id}, nil
	}
	if l.field.Multivector != collection.SingleVector {
		rows, n, err := parseMultiQuery(raw, l.field.Dim)
		return value{rows: rows, count: n}, err
	}
	if len(raw) > 0 && raw[0] == '{' {
		return value{}, unsupportedf("%s %s: a sparse vector or another query (a dense vector or a point id here)", what, truncate(string(raw)))
	}
	v, err := parseVector(raw, l.field.Dim)
	return value{rows: v, count: 1}, err
}

// inputs reads a list of VectorInputs.
func (l *exampleLookup) inputs(raw []json.RawMessage, what string) ([]value, error) {
	out := make([]value, 0, len(raw))
	for _, r := range raw {
		v, err := l.input(r, what)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// lookupLocation is Qdrant's LookupLocation.
type lookupLocation struct {
	Collection string          `json:"collection"`
	Vector     *string         `json:"vector"`
	ShardKey   json.RawMessage `json:"shard_key"`
}

// newLookup returns where ids given as examples are looked up for a
// search of field in c: lookup_from (raw, may be absent), else c.
func (h *Handler) newLookup(c *collection.Collection, field collection.VectorField, raw json.RawMessage) (*exampleLookup, error) {
	if !present(raw) {
		return &exampleLookup{c: c, field: field, same: true}, nil
	}
	var loc lookupLocation
	if err := strictUnmarshal(raw, &loc); err != nil {
		return nil, badRequestf("lookup_from: {collection, vector}: %v", err)
	}
	other, err := h.named(loc.Collection)
	if err != nil {
		return nil, err
	}
	name := field.Name
	if loc.Vector != nil {
		name = *loc.Vector
	}
	f, ok := schemaOf(other).dense[name]
	if !ok {
		return nil, badRequestf("Wrong input: Not existing vector name error: %s (lookup_from %s)", name, loc.Collection)
	}
	if f.Dim != field.Dim || (f.Multivector == collection.SingleVector) != (field.Multivector == collection.SingleVector) {
		return nil, badRequestf("Wrong input: lookup_from %s vector %q (dim %d) does not fit the searched vector %q (dim %d)",
			loc.Collection, name, f.Dim, field.Name, field.Dim)
	}
	return &exampleLookup{c: other, field: f, same: other == c}, nil
}

// excluded collects the ids of values given by id in the searched
// collection.
func (l *exampleLookup) excluded(values ...[]value) []collection.ID {
	if !l.same {
		return nil
	}
	var out []collection.ID
	for _, vs := range values {
		for _, v := range vs {
			if v.id != nil {
				out = append(out, *v.id)
			}
		}
	}
	return out
}

// recommendInput is Qdrant's RecommendInput (and the recommend API's
// positive, negative and strategy).
type recommendInput struct {
	Positive []json.RawMessage `json:"positive"`
	Negative []json.RawMessage `json:"negative"`
	Strategy *string           `json:"strategy"`
}

type contextPair struct {
	Positive json.RawMessage `json:"positive"`
	Negative json.RawMessage `json:"negative"`
}

// contextPairs reads a ContextInput: one pair or a list of them.
func contextPairs(raw json.RawMessage, what string) ([]contextPair, error) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return nil, nil
	}
	if raw[0] == '{' {
		var p contextPair
		if err := strictUnmarshal(raw, &p); err != nil {
			return nil, badRequestf("%s: a context pair is {positive, negative}: %v", what, err)
		}
		return []contextPair{p}, nil
	}
	var pairs []contextPair
	if err := strictUnmarshal(raw, &pairs); err != nil {
		return nil, badRequestf("%s: a list of {positive, negative} pairs: %v", what, err)
	}
	return pairs, nil
}

// planQuery decodes a universal query ("query" of QueryRequest) against
// field: a vector or point id (nearest), {"nearest"}, {"recommend"},
// {"discover"}, {"context"} or {"sample": "random"}.
func (h *Handler) planQuery(c *collection.Collection, field collection.VectorField, raw, lookupFrom json.RawMessage) (*vectorQuery, error) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return &vectorQuery{kind: queryNone, field: field}, nil
	}
	l, err := h.newLookup(c, field, lookupFrom)
	if err != nil {
		return nil, err
	}
	if raw[0] != '{' {
		return nearestOf(l, raw)
	}
	q, err := objectFields(raw)
	if err != nil {
		return nil, badRequestf("query: %v", err)
	}
	if mmrRaw, ok := q["mmr"]; ok && len(q) == 2 && present(q["nearest"]) {
		return nearestMMR(l, q["nearest"], mmrRaw)
	}
	if len(q) != 1 {
		return nil, badRequestf("query: one of nearest, recommend, discover, context, sample (got %d keys)", len(q))
	}
	for name, body := range q {
		switch name {
		case "nearest":
			return nearestOf(l, body)
		case "recommend":
			var in recommendInput
			if err := strictUnmarshal(body, &in); err != nil {
				return nil, badRequestf("query.recommend: {positive, negative, strategy}: %v", err)
			}
			return recommendQuery(l, &in)
		case "discover":
			var in struct {
				Target  json.RawMessage `json:"target"`
				Context json.RawMessage `json:"context"`
			}
			if err := strictUnmarshal(body, &in); err != nil {
				return nil, badRequestf("query.discover: {target, context}: %v", err)
			}
			pairs, err := contextPairs(in.Context, "query.discover.context")
			if err != nil {
				return nil, err
			}
			return discoverQuery(l, in.Target, pairs)
		case "context":
			pairs, err := contextPairs(body, "query.context")
			if err != nil {
				return nil, err
			}
			return contextQuery(l, pairs)
		case "sample":
			var s string
			if err := json.Unmarshal(body, &s); err != nil || s != "random" {
				return nil, badRequestf("query.sample: only \"random\", got %s", truncate(string(body)))
			}
			return &vectorQuery{kind: querySample, field: field}, nil
		default:
			return nil, unsupportedf("query %q (strata's Qdrant door answers nearest, recommend, discover, context and sample)", name)
		}
	}
	panic("unreachable")
}

func nearestOf(l *exampleLookup, raw json.RawMessage) (*vectorQuery, error) {
	v, err := l.input(raw, "nearest")
	if err != nil {
		return nil, err
	}
	return &vectorQuery{kind: queryNearest, field: l.field, rows: v.rows, nq: v.count, exclude: l.excluded([]value{v})}, nil
}

// nearestMMR plans {"nearest": v, "mmr": {diversity, candidates_limit}}:
// Qdrant's maximal marginal relevance, answered by collection.QueryMMR
// with Lambda = 1 − diversity (default diversity 0.5) among the
// candidates_limit nearest (default: the query's limit, as local mode).
// The engine picks as local mode does (relevance, then λ·sim(q, d) −
// (1−λ)·max sim(d, picked), −‖a−b‖² for Euclid); exact ties may be broken
// differently (the engine takes the nearer candidate, local mode the last
// pending one).
func nearestMMR(l *exampleLookup, nearest, raw json.RawMessage) (*vectorQuery, error) {
	var in struct {
		Diversity       *float64 `json:"diversity"`
		CandidatesLimit *int     `json:"candidates_limit"`
	}
	if err := strictUnmarshal(raw, &in); err != nil {
		return nil, badRequestf("query.mmr: {diversity, candidates_limit}: %v", err)
	}
	if l.field.Multivector != collection.SingleVector {
		return nil, unsupportedf("query.mmr on the multivector %q (strata answers mmr on dense vectors)", l.field.Name)
	}
	q, err := nearestOf(l, nearest)
	if err != nil {
		return nil, err
	}
	diversity := 0.5
	if in.Diversity != nil {
		diversity = *in.Diversity
	}
	if !(diversity >= 0 && diversity <= 1) {
		return nil, badRequestf("query.mmr.diversity must be in [0, 1], got %v", diversity)
	}
	q.mmr = &mmrQuery{lambda: 1 - diversity, candidates: -1}
	if c := in.CandidatesLimit; c != nil {
		if *c < 0 {
			return nil, badRequestf("query.mmr.candidates_limit must be 0 or more, got %d", *c)
		}
		q.mmr.candidates = *c
	}
	return q, nil
}

// recommendQuery plans a recommendation (strategy average_vector by
// default, best_score, sum_scores).
func recommendQuery(l *exampleLookup, in *recommendInput) (*vectorQuery, error) {
	strategy := "average_vector"
	if in.Strategy != nil {
		strategy = *in.Strategy
	}
	pos, err := l.inputs(in.Positive, "positive")
	if err != nil {
		return nil, err
	}
	neg, err := l.inputs(in.Negative, "negative")
	if err != nil {
		return nil, err
	}
	exclude := l.excluded(pos, neg)
	field := l.field
	switch strategy {
	case "average_vector":
		if len(pos) == 0 {
			return nil, badRequestf("Bad request: Positive vectors are required for the average_vector strategy")
		}
		q := &vectorQuery{kind: queryNearest, field: field, exclude: exclude}
		if field.Multivector != collection.SingleVector {
			for _, v := range pos {
				q.rows, q.nq = append(q.rows, v.rows...), q.nq+v.count
			}
			for _, v := range neg {
				for _, x := range v.rows {
					q.rows = append(q.rows, -x)
				}
				q.nq += v.count
			}
			return q, nil
		}
		q.rows, q.nq = mean(pos, field.Dim), 1
		if len(neg) > 0 {
			avgNeg := mean(neg, field.Dim)
			for i := range q.rows {
				q.rows[i] = q.rows[i] + q.rows[i] - avgNeg[i]
			}
		}
		return q, nil
	case "best_score", "sum_scores":
		if len(pos)+len(neg) == 0 {
			return nil, badRequestf("Bad request: No positive or negative examples given")
		}
		q := scoredQuery(field, exclude, pos, neg)
		np := len(pos)
		if strategy == "sum_scores" {
			q.score = func(sims []float64) float64 {
				var p, n float64
				for i, s := range sims {
					if i < np {
						p += s
					} else {
						n += s
					}
				}
				return p - n
			}
			return q, nil
		}
		q.score = func(sims []float64) float64 {
			p, n := math.Inf(-1), math.Inf(-1)
			for i, s := range sims {
				if i < np {
					p = max(p, s)
				} else {
					n = max(n, s)
				}
			}
			if p > n {
				return scaledSigmoid(p)
			}
			return -scaledSigmoid(n)
		}
		return q, nil
	}
	return nil, badRequestf("recommend strategy %q: one of average_vector, best_score, sum_scores", strategy)
}

func discoverQuery(l *exampleLookup, target json.RawMessage, pairs []contextPair) (*vectorQuery, error) {
	if !present(target) {
		return nil, badRequestf("discover: target is required")
	}
	t, err := l.input(target, "target")
	if err != nil {
		return nil, err
	}
	values, err := pairValues(l, pairs)
	if err != nil {
		return nil, err
	}
	q := scoredQuery(l.field, l.excluded([]value{t}, values), append([]value{t}, values...))
	q.score = func(sims []float64) float64 {
		rank := 0.0
		for i := 1; i+1 < len(sims); i += 2 {
			switch {
			case sims[i] > sims[i+1]:
				rank++
			case sims[i] < sims[i+1]:
				rank--
			}
		}
		return rank + scaledSigmoid(sims[0])
	}
	return q, nil
}

// contextEpsilon is f32::EPSILON, the margin of Qdrant's context score.
const contextEpsilon = 1.1920929e-7

func contextQuery(l *exampleLookup, pairs []contextPair) (*vectorQuery, error) {
	if len(pairs) == 0 {
		return nil, badRequestf("context: at least one {positive, negative} pair is required")
	}
	values, err := pairValues(l, pairs)
	if err != nil {
		return nil, err
	}
	q := scoredQuery(l.field, l.excluded(values), values)
	q.score = func(sims []float64) float64 {
		var sum float64
		for i := 0; i+1 < len(sims); i += 2 {
			sum += fastSigmoid(min(float64(float32(sims[i]-sims[i+1]-contextEpsilon)), 0))
		}
		return sum
	}
	return q, nil
}

func pairValues(l *exampleLookup, pairs []contextPair) ([]value, error) {
	var out []value
	for _, p := range pairs {
		if !present(p.Positive) || !present(p.Negative) {
			return nil, badRequestf("a context pair needs both positive and negative")
		}
		pos, err := l.input(p.Positive, "context positive")
		if err != nil {
			return nil, err
		}
		neg, err := l.input(p.Negative, "context negative")
		if err != nil {
			return nil, err
		}
		out = append(out, pos, neg)
	}
	return out, nil
}

func scoredQuery(field collection.VectorField, exclude []collection.ID, lists ...[]value) *vectorQuery {
	q := &vectorQuery{kind: queryScored, field: field, exclude: exclude}
	for _, vs := range lists {
		for _, v := range vs {
			q.examples = append(q.examples, v.rows...)
			if field.Multivector != collection.SingleVector {
				q.counts = append(q.counts, v.count)
			}
		}
	}
	return q
}

func mean(values []value, dim int) []float32 {
	sum := make([]float64, dim)
	for _, v := range values {
		for i, x := range v.rows {
			sum[i] += float64(x)
		}
	}
	out := make([]float32, dim)
	for i := range out {
		out[i] = float32(sum[i] / float64(len(values)))
	}
	return out
}

func fastSigmoid(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return x / (1 + math.Abs(x))
}

func scaledSigmoid(x float64) float64 { return 0.5 * (fastSigmoid(x) + 1) }

// similarity is Qdrant's core similarity for a strata distance d of a
// query of nq rows (1 for a dense field): higher is better.
func similarity(d float32, nq int, m metric.Metric) float64 {
	if m == metric.L2 {
		return -float64(d)
	}
	return float64(nq) - float64(d)
}

// ranked is a query's answer before records are looked up: ids in rank
// order and Qdrant's scores.
type ranked struct {
	ids    []collection.ID
	scores []float64
}

// runQuery answers q with the first k points f allows, best first.
// ef is the search's ef (0: the default).
func (h *Handler) runQuery(c *collection.Collection, q *vectorQuery, k, ef int, f *meta.Filter) (ranked, error) {
	if len(q.exclude) > 0 {
		f = meta.And(f, meta.Not(idFilter(q.exclude)))
	}
	switch q.kind {
	case queryNone:
		ids, err := c.ScanIDs(f, collection.ID{}, false, k)
		return ranked{ids: ids, scores: unscoredScores(len(ids))}, err
	case querySample:
		ids, err := c.ScanIDs(f, collection.ID{}, false, 0)
		if err != nil {
			return ranked{}, err
		}
		rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		ids = ids[:min(k, len(ids))]
		return ranked{ids: ids, scores: unscoredScores(len(ids))}, nil
	case queryScored:
		ids, dists, err := c.DistancesTo(q.field.Name, q.examples, q.counts, f, nil)
		if err != nil {
			return ranked{}, err
		}
		ne := len(q.counts)
		if q.counts == nil {
			ne = len(q.examples) / q.field.Dim
		}
		counts := q.counts
		sims := make([]float64, ne)
		type hit struct {
			id    collection.ID
			score float64
		}
		hits := make([]hit, len(ids))
		for p, id := range ids {
			for e := range ne {
				nq := 1
				if counts != nil {
					nq = counts[e]
				}
				sims[e] = similarity(dists[p*ne+e], nq, q.field.Metric)
			}
			hits[p] = hit{id, q.score(sims)}
		}
		slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
		hits = hits[:min(k, len(hits))]
		out := ranked{}
		for _, h := range hits {
			out.ids, out.scores = append(out.ids, h.id), append(out.scores, h.score)
		}
		return out, nil
	}
	ids, dists := make([]collection.ID, k), make([]float32, k)
	var err error
	multi := q.field.Multivector != collection.SingleVector
	if multi && q.exact {
		return exactMulti(c, q, k, f)
	}
	if q.mmr != nil {
		// Local mode picks at most k (limit+offset) of candidates_limit
		// points (search1 sets the default, the query's limit).
		fetch := q.mmr.candidates
		if fetch < 0 {
			fetch = k
		}
		if fetch == 0 {
			return ranked{}, nil
		}
		k = min(k, fetch)
		ids, dists = ids[:k], dists[:k]
		_, err = c.QueryMMR(q.field.Name, q.rows, k, ef, collection.MMR{Lambda: q.mmr.lambda, FetchK: fetch}, f, nil, 1, ids, dists)
	} else if multi {
		_, err = c.QueryMulti(q.field.Name, q.rows, k, ef, f, nil, 1, ids, dists)
	} else {
		_, err = c.QueryField(q.field.Name, q.rows, k, ef, f, nil, 1, ids, dists)
	}
	if err != nil {
		return ranked{}, err
	}
	n := 0
	for n < k && !ids[n].IsNone() {
		n++
	}
	out := ranked{ids: ids[:n], scores: make([]float64, n)}
	for i := range n {
		if multi {
			out.scores[i] = multiScore(dists[i], q.nq, q.field.Metric)
		} else {
			out.scores[i] = qdrantScore(dists[i], q.field.Metric)
		}
	}
	return out, nil
}

// higherIsBetter tells whether q's scores rank higher first.
func (q *vectorQuery) higherIsBetter() bool {
	return q.kind != queryNearest || !lowerIsBetter(q.field.Metric)
}

// exactMulti answers a multivector nearest query over every allowed
// point, exactly.
func exactMulti(c *collection.Collection, q *vectorQuery, k int, f *meta.Filter) (ranked, error) {
	ids, dists, err := c.DistancesTo(q.field.Name, q.rows, []int{q.nq}, f, nil)
	if err != nil {
		return ranked{}, err
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(dists[a], dists[b]) })
	out := ranked{}
	for _, i := range order[:min(k, len(order))] {
		out.ids, out.scores = append(out.ids, ids[i]), append(out.scores, multiScore(dists[i], q.nq, q.field.Metric))
	}
	return out, nil
}
