package qdrant

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Requests over gRPC. Each protobuf message is translated into the JSON
// form of the same Qdrant request, the one the REST door decodes, and the
// shared call answers it: one parser of ids, vectors, payloads and
// filters (compileFilter builds meta's filter tree from it), one set of
// checks and messages. Constructs strata does not serve (inference
// objects, relevance feedback) are refused here by name. Dense vectors of
// upserts and of plain nearest queries are passed as decoded (doc.go).

// rawJSON is v as JSON; nil for nil. Values no JSON holds (NaN, ±Inf)
// are a bad request.
func rawJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, badRequestf("%v", err)
	}
	return b, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only for values built here from strings and integers
	}
	return b
}

// jsonBool is v as JSON without encoding/json (a Marshal, with its
// reflection and allocation, for a constant of every gRPC query): one
// shared slice each, which the readers of a request's RawMessages only
// read.
func jsonBool(v bool) json.RawMessage {
	if v {
		return jsonTrue
	}
	return jsonFalse
}

var jsonTrue, jsonFalse = json.RawMessage("true"), json.RawMessage("false")

func idJSON(id *pb.PointId) (any, error) {
	switch v := id.GetPointIdOptions().(type) {
	case *pb.PointId_Num:
		return v.Num, nil
	case *pb.PointId_Uuid:
		return v.Uuid, nil
	}
	return nil, badRequestf("a point id needs num or uuid")
}

func idsJSON(ids []*pb.PointId) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(ids))
	for i, id := range ids {
		v, err := idJSON(id)
		if err != nil {
			return nil, err
		}
		out[i] = mustJSON(v)
	}
	return out, nil
}

func denseJSON(data []float32) ([]float32, error) {
	for _, x := range data {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, badRequestf("vector value %g is not a number", x)
		}
	}
	if data == nil {
		data = []float32{}
	}
	return data, nil
}

func multiJSON(m *pb.MultiDenseVector) ([][]float32, error) {
	out := make([][]float32, len(m.GetVectors()))
	for i, v := range m.GetVectors() {
		var err error
		if out[i], err = denseJSON(v.GetData()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sparseJSON(s *pb.SparseVector) (any, error) {
	values, err := denseJSON(s.GetValues())
	if err != nil {
		return nil, err
	}
	indices := s.GetIndices()
	if indices == nil {
		indices = []uint32{}
	}
	return map[string]any{"indices": indices, "values": values}, nil
}

// vectorJSON is one Vector: dense, sparse or multi-dense, in the oneof
// or in the deprecated flat fields older clients send.
func vectorJSON(v *pb.Vector) (any, error) {
	switch k := v.GetVector().(type) {
	case *pb.Vector_Dense:
		return denseJSON(k.Dense.GetData())
	case *pb.Vector_Sparse:
		return sparseJSON(k.Sparse)
	case *pb.Vector_MultiDense:
		return multiJSON(k.MultiDense)
	case *pb.Vector_Document, *pb.Vector_Image, *pb.Vector_Object:
		return nil, unsupportedf("inference objects (document, image, object): strata embeds nothing, send vectors")
	}
	//lint:ignore SA1019 older clients send the flat fields
	data, indices, count := v.GetData(), v.GetIndices(), v.GetVectorsCount()
	switch {
	case indices != nil:
		return sparseJSON(&pb.SparseVector{Values: data, Indices: indices.GetData()})
	case count > 1:
		if len(data)%int(count) != 0 {
			return nil, badRequestf("a multivector of %d numbers does not split into %d vectors", len(data), count)
		}
		dim := len(data) / int(count)
		m := &pb.MultiDenseVector{}
		for i := 0; i < len(data); i += dim {
			m.Vectors = append(m.Vectors, &pb.DenseVector{Data: data[i : i+dim]})
		}
		return multiJSON(m)
	}
	return denseJSON(data)
}

func vectorsJSON(v *pb.Vectors) (any, error) {
	switch k := v.GetVectorsOptions().(type) {
	case *pb.Vectors_Vector:
		return vectorJSON(k.Vector)
	case *pb.Vectors_Vectors:
		out := map[string]any{}
		for name, vec := range k.Vectors.GetVectors() {
			var err error
			if out[name], err = vectorJSON(vec); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, badRequestf("a point needs vectors")
}

// vectorInputJSON is a VectorInput: a point id or a vector.
func vectorInputJSON(v *pb.VectorInput) (any, error) {
	switch k := v.GetVariant().(type) {
	case *pb.VectorInput_Id:
		return idJSON(k.Id)
	case *pb.VectorInput_Dense:
		return denseJSON(k.Dense.GetData())
	case *pb.VectorInput_Sparse:
		return sparseJSON(k.Sparse)
	case *pb.VectorInput_MultiDense:
		return multiJSON(k.MultiDense)
	case *pb.VectorInput_Document, *pb.VectorInput_Image, *pb.VectorInput_Object:
		return nil, unsupportedf("inference objects (document, image, object): strata embeds nothing, send vectors")
	}
	return nil, badRequestf("a vector input needs an id or a vector")
}

func vectorInputsJSON(list []*pb.VectorInput) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(list))
	for i, v := range list {
		j, err := vectorInputJSON(v)
		if err != nil {
			return nil, err
		}
		if out[i], err = rawJSON(j); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// filterJSON is a Filter as the REST door reads it (nil: none).
func filterJSON(f *pb.Filter) (map[string]any, error) {
	if f == nil {
		return nil, nil
	}
	out := map[string]any{}
	for key, list := range map[string][]*pb.Condition{"must": f.GetMust(), "should": f.GetShould(), "must_not": f.GetMustNot()} {
		if len(list) == 0 {
			continue
		}
		conds, err := conditionsJSON(list)
		if err != nil {
			return nil, err
		}
		out[key] = conds
	}
	if ms := f.GetMinShould(); ms != nil {
		conds, err := conditionsJSON(ms.GetConditions())
		if err != nil {
			return nil, err
		}
		out["min_should"] = map[string]any{"conditions": conds, "min_count": ms.GetMinCount()}
	}
	return out, nil
}

func rawFilter(f *pb.Filter) (json.RawMessage, error) {
	m, err := filterJSON(f)
	if err != nil || m == nil {
		return nil, err
	}
	return rawJSON(m)
}

func conditionsJSON(list []*pb.Condition) ([]any, error) {
	out := make([]any, len(list))
	for i, c := range list {
		var err error
		if out[i], err = conditionJSON(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func conditionJSON(c *pb.Condition) (any, error) {
	switch k := c.GetConditionOneOf().(type) {
	case *pb.Condition_Field:
		return fieldJSON(k.Field)
	case *pb.Condition_IsEmpty:
		return map[string]any{"is_empty": map[string]any{"key": k.IsEmpty.GetKey()}}, nil
	case *pb.Condition_IsNull:
		return map[string]any{"is_null": map[string]any{"key": k.IsNull.GetKey()}}, nil
	case *pb.Condition_HasId:
		ids, err := idsJSON(k.HasId.GetHasId())
		if err != nil {
			return nil, err
		}
		if ids == nil {
			ids = []json.RawMessage{}
		}
		return map[string]any{"has_id": ids}, nil
	case *pb.Condition_Filter:
		f, err := filterJSON(k.Filter)
		if f == nil && err == nil {
			f = map[string]any{}
		}
		return f, err
	case *pb.Condition_Nested:
		f, err := filterJSON(k.Nested.GetFilter())
		if err != nil {
			return nil, err
		}
		if f == nil {
			f = map[string]any{}
		}
		return map[string]any{"nested": map[string]any{"key": k.Nested.GetKey(), "filter": f}}, nil
	case *pb.Condition_HasVector:
		return map[string]any{"has_vector": k.HasVector.GetHasVector()}, nil
	}
	return nil, badRequestf("a condition needs one of field, is_empty, has_id, filter, is_null, nested, has_vector")
}

func optional[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func boundsJSON[T any](lt, gt, gte, lte *T) map[string]any {
	out := map[string]any{}
	for name, v := range map[string]any{"lt": optional(lt), "gt": optional(gt), "gte": optional(gte), "lte": optional(lte)} {
		if v != nil {
			out[name] = v
		}
	}
	return out
}

func geoJSON(p *pb.GeoPoint) map[string]any {
	return map[string]any{"lon": p.GetLon(), "lat": p.GetLat()}
}

func lineJSON(l *pb.GeoLineString) map[string]any {
	points := make([]any, len(l.GetPoints()))
	for i, p := range l.GetPoints() {
		points[i] = geoJSON(p)
	}
	return map[string]any{"points": points}
}

// fieldJSON is a FieldCondition: the key and whichever conditions are
// set (the REST door refuses more than one, naming them).
func fieldJSON(f *pb.FieldCondition) (any, error) {
	out := map[string]any{"key": f.GetKey()}
	if m := f.GetMatch(); m != nil {
		match, err := matchJSON(m)
		if err != nil {
			return nil, err
		}
		out["match"] = match
	}
	if r := f.GetRange(); r != nil {
		out["range"] = boundsJSON(r.Lt, r.Gt, r.Gte, r.Lte)
	}
	if r := f.GetDatetimeRange(); r != nil {
		bounds := map[string]any{}
		for name, t := range map[string]*timestamppb.Timestamp{"lt": r.Lt, "gt": r.Gt, "gte": r.Gte, "lte": r.Lte} {
			if t != nil {
				bounds[name] = t.AsTime().UTC().Format(time.RFC3339Nano)
			}
		}
		out["range"] = bounds
	}
	if b := f.GetGeoBoundingBox(); b != nil {
		out["geo_bounding_box"] = map[string]any{"top_left": geoJSON(b.GetTopLeft()), "bottom_right": geoJSON(b.GetBottomRight())}
	}
	if r := f.GetGeoRadius(); r != nil {
		out["geo_radius"] = map[string]any{"center": geoJSON(r.GetCenter()), "radius": r.GetRadius()}
	}
	if p := f.GetGeoPolygon(); p != nil {
		interiors := make([]any, len(p.GetInteriors()))
		for i, l := range p.GetInteriors() {
			interiors[i] = lineJSON(l)
		}
		out["geo_polygon"] = map[string]any{"exterior": lineJSON(p.GetExterior()), "interiors": interiors}
	}
	if v := f.GetValuesCount(); v != nil {
		out["values_count"] = boundsJSON(v.Lt, v.Gt, v.Gte, v.Lte)
	}
	if f.IsEmpty != nil {
		out["is_empty"] = f.GetIsEmpty()
	}
	if f.IsNull != nil {
		out["is_null"] = f.GetIsNull()
	}
	if len(out) == 1 {
		return nil, badRequestf("field condition on %q names no condition", f.GetKey())
	}
	return out, nil
}

func matchJSON(m *pb.Match) (map[string]any, error) {
	switch k := m.GetMatchValue().(type) {
	case *pb.Match_Keyword:
		return map[string]any{"value": k.Keyword}, nil
	case *pb.Match_Integer:
		return map[string]any{"value": k.Integer}, nil
	case *pb.Match_Boolean:
		return map[string]any{"value": k.Boolean}, nil
	case *pb.Match_Text:
		return map[string]any{"text": k.Text}, nil
	case *pb.Match_Phrase:
		return map[string]any{"phrase": k.Phrase}, nil
	case *pb.Match_TextAny:
		return map[string]any{"text_any": k.TextAny}, nil
	case *pb.Match_Keywords:
		return map[string]any{"any": nonNil(k.Keywords.GetStrings())}, nil
	case *pb.Match_Integers:
		return map[string]any{"any": nonNil(k.Integers.GetIntegers())}, nil
	case *pb.Match_ExceptKeywords:
		return map[string]any{"except": nonNil(k.ExceptKeywords.GetStrings())}, nil
	case *pb.Match_ExceptIntegers:
		return map[string]any{"except": nonNil(k.ExceptIntegers.GetIntegers())}, nil
	}
	return nil, badRequestf("a match needs a value")
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// withPayloadJSON is a WithPayloadSelector (nil: the call's default).
func withPayloadJSON(s *pb.WithPayloadSelector) json.RawMessage {
	switch k := s.GetSelectorOptions().(type) {
	case *pb.WithPayloadSelector_Enable:
		return jsonBool(k.Enable)
	case *pb.WithPayloadSelector_Include:
		return mustJSON(map[string]any{"include": nonNil(k.Include.GetFields())})
	case *pb.WithPayloadSelector_Exclude:
		return mustJSON(map[string]any{"exclude": nonNil(k.Exclude.GetFields())})
	}
	return nil
}

// withVectorsJSON is a WithVectorsSelector (nil: the call's default).
func withVectorsJSON(s *pb.WithVectorsSelector) json.RawMessage {
	switch k := s.GetSelectorOptions().(type) {
	case *pb.WithVectorsSelector_Enable:
		return jsonBool(k.Enable)
	case *pb.WithVectorsSelector_Include:
		return mustJSON(nonNil(k.Include.GetNames()))
	}
	return nil
}

func paramsJSON(p *pb.SearchParams) *searchParams {
	if p == nil {
		return nil
	}
	out := &searchParams{Exact: p.GetExact()}
	if p.HnswEf != nil {
		ef := int(min(p.GetHnswEf(), math.MaxInt32))
		out.HnswEf = &ef
	}
	if q := p.GetQuantization(); q != nil {
		out.Quantization = quantizationParamsJSON(q.Ignore, q.Rescore, q.Oversampling)
	}
	return out
}

func lookupJSON(l *pb.LookupLocation) json.RawMessage {
	if l == nil {
		return nil
	}
	loc := map[string]any{"collection": l.GetCollectionName()}
	if l.VectorName != nil {
		loc["vector"] = l.GetVectorName()
	}
	return mustJSON(loc)
}

func intPtr(v *uint64) *int {
	if v == nil {
		return nil
	}
	n := int(min(*v, math.MaxInt32))
	return &n
}

func scoreThreshold(t *float32) *float64 {
	if t == nil {
		return nil
	}
	x := float64(*t)
	return &x
}

var recommendStrategies = map[pb.RecommendStrategy]string{
	pb.RecommendStrategy_AverageVector: "average_vector",
	pb.RecommendStrategy_BestScore:     "best_score",
	pb.RecommendStrategy_SumScores:     "sum_scores",
}

func strategyJSON(s *pb.RecommendStrategy) (*string, error) {
	if s == nil {
		return nil, nil
	}
	name, ok := recommendStrategies[*s]
	if !ok {
		return nil, badRequestf("unknown recommend strategy %v", *s)
	}
	return &name, nil
}

func pairsJSON(pairs []*pb.ContextInputPair) ([]any, error) {
	out := make([]any, len(pairs))
	for i, p := range pairs {
		pos, err := vectorInputJSON(p.GetPositive())
		if err != nil {
			return nil, err
		}
		neg, err := vectorInputJSON(p.GetNegative())
		if err != nil {
			return nil, err
		}
		out[i] = map[string]any{"positive": pos, "negative": neg}
	}
	return out, nil
}

// queryJSON is a Query as query_points' "query" reads it.
func queryJSON(q *pb.Query) (any, error) {
	switch k := q.GetVariant().(type) {
	case nil:
		return nil, nil
	case *pb.Query_Nearest:
		v, err := vectorInputJSON(k.Nearest)
		if err != nil {
			return nil, err
		}
		return map[string]any{"nearest": v}, nil
	case *pb.Query_Recommend:
		pos, err := vectorInputsJSON(k.Recommend.GetPositive())
		if err != nil {
			return nil, err
		}
		neg, err := vectorInputsJSON(k.Recommend.GetNegative())
		if err != nil {
			return nil, err
		}
		strategy, err := strategyJSON(k.Recommend.Strategy)
		if err != nil {
			return nil, err
		}
		return map[string]any{"recommend": recommendInput{Positive: nonNil(pos), Negative: nonNil(neg), Strategy: strategy}}, nil
	case *pb.Query_Discover:
		target, err := vectorInputJSON(k.Discover.GetTarget())
		if err != nil {
			return nil, err
		}
		pairs, err := pairsJSON(k.Discover.GetContext().GetPairs())
		if err != nil {
			return nil, err
		}
		return map[string]any{"discover": map[string]any{"target": target, "context": pairs}}, nil
	case *pb.Query_Context:
		pairs, err := pairsJSON(k.Context.GetPairs())
		if err != nil {
			return nil, err
		}
		return map[string]any{"context": pairs}, nil
	case *pb.Query_Fusion:
		switch k.Fusion {
		case pb.Fusion_RRF:
			return map[string]any{"fusion": "rrf"}, nil
		case pb.Fusion_DBSF:
			return map[string]any{"fusion": "dbsf"}, nil
		}
		return nil, badRequestf("unknown fusion %v", k.Fusion)
	case *pb.Query_Rrf:
		rrf := map[string]any{}
		if k.Rrf.K != nil {
			rrf["k"] = k.Rrf.GetK()
		}
		if w := k.Rrf.GetWeights(); len(w) > 0 {
			rrf["weights"] = w
		}
		return map[string]any{"rrf": rrf}, nil
	case *pb.Query_Sample:
		if k.Sample != pb.Sample_Random {
			return nil, badRequestf("unknown sample %v", k.Sample)
		}
		return map[string]any{"sample": "random"}, nil
	case *pb.Query_OrderBy:
		ob, err := orderByJSON(k.OrderBy)
		if err != nil {
			return nil, err
		}
		return map[string]any{"order_by": ob}, nil
	case *pb.Query_Formula:
		return formulaJSON(k.Formula)
	case *pb.Query_NearestWithMmr:
		v, err := vectorInputJSON(k.NearestWithMmr.GetNearest())
		if err != nil {
			return nil, err
		}
		mmr := map[string]any{}
		if m := k.NearestWithMmr.GetMmr(); m != nil {
			if m.Diversity != nil {
				mmr["diversity"] = m.GetDiversity()
			}
			if m.CandidatesLimit != nil {
				mmr["candidates_limit"] = m.GetCandidatesLimit()
			}
		}
		return map[string]any{"nearest": v, "mmr": mmr}, nil
	case *pb.Query_RelevanceFeedback:
		return nil, unsupportedf("query relevance_feedback")
	}
	return nil, unsupportedf("query %T", q.GetVariant())
}

// prefetchJSON is a PrefetchQuery, nested as deep as it comes (the call
// bounds the depth).
func prefetchJSON(p *pb.PrefetchQuery) (any, error) {
	out := map[string]any{}
	if len(p.GetPrefetch()) > 0 {
		list := make([]any, len(p.GetPrefetch()))
		for i, sub := range p.GetPrefetch() {
			var err error
			if list[i], err = prefetchJSON(sub); err != nil {
				return nil, err
			}
		}
		out["prefetch"] = list
	}
	if p.Query != nil {
		q, err := queryJSON(p.GetQuery())
		if err != nil {
			return nil, err
		}
		out["query"] = q
	}
	if p.Using != nil {
		out["using"] = p.GetUsing()
	}
	if p.Filter != nil {
		f, err := filterJSON(p.GetFilter())
		if err != nil {
			return nil, err
		}
		out["filter"] = f
	}
	if p.Params != nil {
		out["params"] = paramsJSON(p.GetParams())
	}
	if p.ScoreThreshold != nil {
		out["score_threshold"] = p.GetScoreThreshold()
	}
	if p.Limit != nil {
		out["limit"] = p.GetLimit()
	}
	if p.LookupFrom != nil {
		out["lookup_from"] = lookupJSON(p.GetLookupFrom())
	}
	return out, nil
}

// queryPointsRequest translates QueryPoints.
func queryPointsRequest(q *pb.QueryPoints) (*queryRequest, error) {
	req := &queryRequest{Using: q.Using, Limit: intPtr(q.Limit), Offset: intPtr(q.Offset),
		Params: paramsJSON(q.GetParams()), ScoreThreshold: scoreThreshold(q.ScoreThreshold),
		WithPayload: withPayloadJSON(q.GetWithPayload()), WithVector: withVectorsJSON(q.GetWithVectors()),
		LookupFrom: lookupJSON(q.GetLookupFrom())}
	if req.WithPayload == nil {
		req.WithPayload = jsonBool(false)
	}
	var err error
	if req.Filter, err = rawFilter(q.GetFilter()); err != nil {
		return nil, err
	}
	if d, ok := q.GetQuery().GetNearest().GetVariant().(*pb.VectorInput_Dense); ok && len(q.GetPrefetch()) == 0 && q.LookupFrom == nil {
		// the usual query: its vector as it came, without JSON (search1)
		if req.nearest, err = denseJSON(d.Dense.GetData()); err != nil {
			return nil, err
		}
	} else if q.Query != nil {
		v, err := queryJSON(q.GetQuery())
		if err != nil {
			return nil, err
		}
		if req.Query, err = rawJSON(v); err != nil {
			return nil, err
		}
	}
	if len(q.GetPrefetch()) > 0 {
		list := make([]any, len(q.GetPrefetch()))
		for i, p := range q.GetPrefetch() {
			if list[i], err = prefetchJSON(p); err != nil {
				return nil, err
			}
		}
		if req.Prefetch, err = rawJSON(list); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// searchPointsRequest translates SearchPoints (the search API).
func searchPointsRequest(s *pb.SearchPoints) (*queryRequest, error) {
	limit := int(min(s.GetLimit(), math.MaxInt32))
	req := &queryRequest{Limit: &limit, Offset: intPtr(s.Offset), Params: paramsJSON(s.GetParams()),
		ScoreThreshold: scoreThreshold(s.ScoreThreshold),
		WithPayload:    withPayloadJSON(s.GetWithPayload()), WithVector: withVectorsJSON(s.GetWithVectors())}
	var err error
	if req.Filter, err = rawFilter(s.GetFilter()); err != nil {
		return nil, err
	}
	vec, err := denseJSON(s.GetVector())
	if err != nil {
		return nil, err
	}
	var v any = vec
	if s.SparseIndices != nil {
		v = map[string]any{"indices": nonNil(s.GetSparseIndices().GetData()), "values": vec}
	}
	if s.VectorName != nil {
		v = map[string]any{"name": s.GetVectorName(), "vector": v}
	}
	if req.Vector, err = rawJSON(v); err != nil {
		return nil, err
	}
	return req, nil
}

func exampleJSON(e *pb.VectorExample) (any, error) {
	switch k := e.GetExample().(type) {
	case *pb.VectorExample_Id:
		return idJSON(k.Id)
	case *pb.VectorExample_Vector:
		return vectorJSON(k.Vector)
	}
	return nil, badRequestf("an example needs an id or a vector")
}

// recommendPointsRequest translates RecommendPoints into the query API's
// recommend query, which answers it.
func recommendPointsRequest(r *pb.RecommendPoints) (*queryRequest, error) {
	var pos, neg []json.RawMessage
	for _, id := range r.GetPositive() {
		v, err := idJSON(id)
		if err != nil {
			return nil, err
		}
		pos = append(pos, mustJSON(v))
	}
	for _, id := range r.GetNegative() {
		v, err := idJSON(id)
		if err != nil {
			return nil, err
		}
		neg = append(neg, mustJSON(v))
	}
	for _, list := range []struct {
		in  []*pb.Vector
		out *[]json.RawMessage
	}{{r.GetPositiveVectors(), &pos}, {r.GetNegativeVectors(), &neg}} {
		for _, vec := range list.in {
			v, err := vectorJSON(vec)
			if err != nil {
				return nil, err
			}
			raw, err := rawJSON(v)
			if err != nil {
				return nil, err
			}
			*list.out = append(*list.out, raw)
		}
	}
	strategy, err := strategyJSON(r.Strategy)
	if err != nil {
		return nil, err
	}
	q, err := rawJSON(map[string]any{"recommend": recommendInput{Positive: nonNil(pos), Negative: nonNil(neg), Strategy: strategy}})
	if err != nil {
		return nil, err
	}
	limit := int(min(r.GetLimit(), math.MaxInt32))
	req := &queryRequest{Query: q, Using: r.Using, Limit: &limit, Offset: intPtr(r.Offset),
		Params: paramsJSON(r.GetParams()), ScoreThreshold: scoreThreshold(r.ScoreThreshold),
		WithPayload: withPayloadJSON(r.GetWithPayload()), WithVector: withVectorsJSON(r.GetWithVectors()),
		LookupFrom: lookupJSON(r.GetLookupFrom())}
	if req.Filter, err = rawFilter(r.GetFilter()); err != nil {
		return nil, err
	}
	return req, nil
}

// discoverPointsRequest translates DiscoverPoints into a discover (with
// a target) or context (without) query.
func discoverPointsRequest(d *pb.DiscoverPoints) (*queryRequest, error) {
	pairs := make([]any, len(d.GetContext()))
	for i, p := range d.GetContext() {
		pos, err := exampleJSON(p.GetPositive())
		if err != nil {
			return nil, err
		}
		neg, err := exampleJSON(p.GetNegative())
		if err != nil {
			return nil, err
		}
		pairs[i] = map[string]any{"positive": pos, "negative": neg}
	}
	var query any = map[string]any{"context": pairs}
	if t := d.GetTarget().GetSingle(); t != nil {
		target, err := exampleJSON(t)
		if err != nil {
			return nil, err
		}
		query = map[string]any{"discover": map[string]any{"target": target, "context": pairs}}
	}
	q, err := rawJSON(query)
	if err != nil {
		return nil, err
	}
	limit := int(min(d.GetLimit(), math.MaxInt32))
	req := &queryRequest{Query: q, Using: d.Using, Limit: &limit, Offset: intPtr(d.Offset),
		Params:      paramsJSON(d.GetParams()),
		WithPayload: withPayloadJSON(d.GetWithPayload()), WithVector: withVectorsJSON(d.GetWithVectors()),
		LookupFrom: lookupJSON(d.GetLookupFrom())}
	if req.Filter, err = rawFilter(d.GetFilter()); err != nil {
		return nil, err
	}
	return req, nil
}

func selectorJSON(s *pb.PointsSelector) (selectorRequest, error) {
	switch k := s.GetPointsSelectorOneOf().(type) {
	case *pb.PointsSelector_Points:
		ids, err := idsJSON(k.Points.GetIds())
		return selectorRequest{Points: nonNil(ids)}, err
	case *pb.PointsSelector_Filter:
		f, err := filterJSON(k.Filter)
		if f == nil && err == nil {
			f = map[string]any{}
		}
		if err != nil {
			return selectorRequest{}, err
		}
		return selectorRequest{Filter: mustJSON(f)}, nil
	}
	return selectorRequest{}, badRequestf("select points with ids or a filter")
}

// createRequestOf translates CreateCollection.
func createRequestOf(c *pb.CreateCollection) (*createRequest, error) {
	req := &createRequest{}
	switch k := c.GetVectorsConfig().GetConfig().(type) {
	case *pb.VectorsConfig_Params:
		vp, err := vectorParamsJSON(k.Params)
		if err != nil {
			return nil, err
		}
		req.Vectors = mustJSON(vp)
	case *pb.VectorsConfig_ParamsMap:
		named := map[string]any{}
		for name, p := range k.ParamsMap.GetMap() {
			vp, err := vectorParamsJSON(p)
			if err != nil {
				return nil, err
			}
			named[name] = vp
		}
		req.Vectors = mustJSON(named)
	}
	if h := c.GetHnswConfig(); h != nil {
		req.HNSW = hnswJSON(h)
	}
	if q := c.GetQuantizationConfig(); q != nil {
		raw, err := quantizationJSON(q)
		if err != nil {
			return nil, err
		}
		req.QuantizationConfig = raw
	}
	if sp := c.GetSparseVectorsConfig(); sp != nil {
		named := map[string]any{}
		for name, p := range sp.GetMap() {
			params := map[string]any{}
			if p.Modifier != nil {
				switch p.GetModifier() {
				case pb.Modifier_None:
					params["modifier"] = "none"
				case pb.Modifier_Idf:
					params["modifier"] = "idf"
				default:
					return nil, badRequestf("sparse_vectors_config.%s: unknown modifier %v", name, p.GetModifier())
				}
			}
			named[name] = params
		}
		req.SparseVectors = mustJSON(named)
	}
	return req, nil
}

func hnswJSON(h *pb.HnswConfigDiff) *hnswConfig {
	out := &hnswConfig{}
	if h.M != nil {
		m := int(min(h.GetM(), math.MaxInt32))
		out.M = &m
	}
	if h.EfConstruct != nil {
		ef := int(min(h.GetEfConstruct(), math.MaxInt32))
		out.EfConstruct = &ef
	}
	return out
}

var distanceNames = map[pb.Distance]string{pb.Distance_Cosine: "Cosine", pb.Distance_Euclid: "Euclid", pb.Distance_Dot: "Dot", pb.Distance_Manhattan: "Manhattan"}

func vectorParamsJSON(p *pb.VectorParams) (*vectorParams, error) {
	vp := &vectorParams{Size: int(min(p.GetSize(), math.MaxInt32)), Distance: distanceNames[p.GetDistance()]}
	if vp.Distance == "" {
		return nil, badRequestf("distance %v (Cosine, Euclid, Dot or Manhattan)", p.GetDistance())
	}
	if vp.Size == 0 {
		return nil, badRequestf("vectors: size must be positive")
	}
	if h := p.GetHnswConfig(); h != nil {
		vp.HNSW = hnswJSON(h)
	}
	if q := p.GetQuantizationConfig(); q != nil {
		raw, err := quantizationJSON(q)
		if err != nil {
			return nil, err
		}
		vp.QuantizationConfig = raw
	}
	if p.Datatype != nil && p.GetDatatype() != pb.Datatype_Float32 {
		return nil, unsupportedf("datatype %v (vectors are float32)", p.GetDatatype())
	}
	if p.OnDisk != nil {
		vp.OnDisk = mustJSON(p.GetOnDisk())
	}
	if p.MultivectorConfig != nil {
		if p.GetMultivectorConfig().GetComparator() != pb.MultiVectorComparator_MaxSim {
			return nil, unsupportedf("multivector comparator %v (only MaxSim)", p.GetMultivectorConfig().GetComparator())
		}
		vp.MultivectorConfig = mustJSON(map[string]string{"comparator": "max_sim"})
	}
	return vp, nil
}

func quantizationJSON(q *pb.QuantizationConfig) (json.RawMessage, error) {
	s := q.GetScalar()
	if s == nil || s.GetType() != pb.QuantizationType_Int8 {
		return nil, unsupportedf("quantization_config %v (only scalar int8, strata's sq8)", q)
	}
	return mustJSON(map[string]any{"scalar": map[string]any{"type": "int8"}}), nil
}

var fieldTypeNames = map[pb.FieldType]string{
	pb.FieldType_FieldTypeKeyword: "keyword", pb.FieldType_FieldTypeInteger: "integer",
	pb.FieldType_FieldTypeFloat: "float", pb.FieldType_FieldTypeGeo: "geo", pb.FieldType_FieldTypeText: "text",
	pb.FieldType_FieldTypeBool: "bool", pb.FieldType_FieldTypeDatetime: "datetime", pb.FieldType_FieldTypeUuid: "uuid",
}

func indexRequestOf(c *pb.CreateFieldIndexCollection) (*indexRequest, error) {
	req := &indexRequest{FieldName: c.GetFieldName()}
	if c.FieldType == nil {
		return nil, badRequestf("field_type is required (keyword, integer, float, bool, geo, datetime, text, uuid)")
	}
	name, ok := fieldTypeNames[c.GetFieldType()]
	if !ok {
		return nil, badRequestf("unknown field_type %v", c.GetFieldType())
	}
	req.FieldSchema = mustJSON(name)
	switch k := c.GetFieldIndexParams().GetIndexParams().(type) {
	case nil:
	case *pb.PayloadIndexParams_TextIndexParams:
		if name != "text" {
			return nil, badRequestf("field_index_params: text index parameters for a %s index", name)
		}
		params := map[string]any{"type": "text"}
		t := k.TextIndexParams
		if tok, ok := tokenizerNames[t.GetTokenizer()]; ok {
			params["tokenizer"] = tok
		}
		if t.Lowercase != nil {
			params["lowercase"] = t.GetLowercase()
		}
		if t.MinTokenLen != nil {
			params["min_token_len"] = t.GetMinTokenLen()
		}
		if t.MaxTokenLen != nil {
			params["max_token_len"] = t.GetMaxTokenLen()
		}
		if t.PhraseMatching != nil {
			params["phrase_matching"] = t.GetPhraseMatching()
		}
		req.FieldSchema = mustJSON(params)
	default:
		// The parameters of the other index types (is_tenant, lookup,
		// range, ...) change no answer here and are not reported back
		// over gRPC.
	}
	return req, nil
}

var tokenizerNames = map[pb.TokenizerType]string{pb.TokenizerType_Prefix: "prefix", pb.TokenizerType_Whitespace: "whitespace",
	pb.TokenizerType_Word: "word", pb.TokenizerType_Multilingual: "multilingual"}

func orderByJSON(o *pb.OrderBy) (json.RawMessage, error) {
	ob := map[string]any{"key": o.GetKey()}
	if o.Direction != nil {
		if o.GetDirection() == pb.Direction_Desc {
			ob["direction"] = "desc"
		} else {
			ob["direction"] = "asc"
		}
	}
	switch k := o.GetStartFrom().GetValue().(type) {
	case *pb.StartFrom_Float:
		ob["start_from"] = k.Float
	case *pb.StartFrom_Integer:
		ob["start_from"] = k.Integer
	case *pb.StartFrom_Datetime:
		ob["start_from"] = k.Datetime
	case *pb.StartFrom_Timestamp:
		ob["start_from"] = k.Timestamp.AsTime().UTC().Format(time.RFC3339Nano)
	case nil:
	default:
		return nil, badRequestf("order_by.start_from %T", k)
	}
	return rawJSON(ob)
}

func scrollRequestOf(s *pb.ScrollPoints) (*scrollRequest, error) {
	req := &scrollRequest{WithPayload: withPayloadJSON(s.GetWithPayload()), WithVector: withVectorsJSON(s.GetWithVectors())}
	if s.Limit != nil {
		n := int(s.GetLimit())
		req.Limit = &n
	}
	var err error
	if req.Filter, err = rawFilter(s.GetFilter()); err != nil {
		return nil, err
	}
	if s.Offset != nil {
		v, err := idJSON(s.GetOffset())
		if err != nil {
			return nil, err
		}
		req.Offset = mustJSON(v)
	}
	if s.OrderBy != nil {
		if req.OrderBy, err = orderByJSON(s.GetOrderBy()); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func facetRequestOf(f *pb.FacetCounts) (*facetRequest, error) {
	req := &facetRequest{Key: f.GetKey(), Exact: f.Exact}
	if f.Limit != nil {
		n := int(min(f.GetLimit(), math.MaxInt32))
		req.Limit = &n
	}
	var err error
	req.Filter, err = rawFilter(f.GetFilter())
	return req, err
}

func pointsJSON(points []*pb.PointStruct) ([]pointStruct, error) {
	out := make([]pointStruct, len(points))
	for i, p := range points {
		if n, ok := p.GetId().GetPointIdOptions().(*pb.PointId_Num); ok {
			out[i].ID = strconv.AppendUint(nil, n.Num, 10) // mustJSON's text, without reflection
		} else {
			id, err := idJSON(p.GetId())
			if err != nil {
				return nil, fmt.Errorf("points[%d]: %w", i, err)
			}
			out[i].ID = mustJSON(id)
		}
		v, err := vectorsJSON(p.GetVectors())
		if err != nil {
			return nil, err
		}
		if d, ok := v.([]float32); ok {
			out[i].dense = d // the upsert reads it as is (pointStruct.dense)
		} else if out[i].Vector, err = rawJSON(v); err != nil {
			return nil, err
		}
		if out[i].Payload, err = payloadJSON(p.GetPayload()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// updateCollectionRequestOf translates UpdateCollection into PATCH's
// diff; updateCollection checks it (what is fixed at creation is refused
// there, with the REST door's message).
func updateCollectionRequestOf(u *pb.UpdateCollection) (*updateCollectionRequest, error) {
	req := &updateCollectionRequest{}
	if o := u.GetOptimizersConfig(); o != nil {
		d := &optimizersDiff{
			DeletedThreshold: o.DeletedThreshold, VacuumMinVectorNumber: intPtr(o.VacuumMinVectorNumber),
			DefaultSegmentNumber: intPtr(o.DefaultSegmentNumber), MaxSegmentSize: intPtr(o.MaxSegmentSize),
			MemmapThreshold: intPtr(o.MemmapThreshold), IndexingThreshold: intPtr(o.IndexingThreshold),
			FlushIntervalSec: intPtr(o.FlushIntervalSec), PreventUnoptimized: o.PreventUnoptimized,
		}
		switch t := o.GetMaxOptimizationThreads().GetVariant().(type) {
		case *pb.MaxOptimizationThreads_Value:
			d.MaxOptimizationThreads = mustJSON(t.Value)
		case *pb.MaxOptimizationThreads_Setting_:
			d.MaxOptimizationThreads = mustJSON("auto")
		case nil:
			if o.DeprecatedMaxOptimizationThreads != nil {
				d.MaxOptimizationThreads = mustJSON(o.GetDeprecatedMaxOptimizationThreads())
			}
		}
		req.OptimizersConfig = d
	}
	if p := u.GetParams(); p != nil {
		u32 := func(v *uint32) *int {
			if v == nil {
				return nil
			}
			n := int(*v)
			return &n
		}
		req.Params = &paramsDiff{
			ReplicationFactor: u32(p.ReplicationFactor), WriteConsistencyFactor: u32(p.WriteConsistencyFactor),
			ReadFanOutFactor: u32(p.ReadFanOutFactor), ReadFanOutDelayMs: intPtr(p.ReadFanOutDelayMs), OnDiskPayload: p.OnDiskPayload,
		}
	}
	if h := u.GetHnswConfig(); h != nil {
		req.HNSW = hnswDiffJSON(h)
	}
	if q := u.GetQuantizationConfig(); q != nil {
		req.QuantizationConfig = quantizationDiffJSON(q)
	}
	vectorDiffOf := func(p *pb.VectorParamsDiff) vectorDiff {
		d := vectorDiff{OnDisk: p.OnDisk}
		if h := p.GetHnswConfig(); h != nil {
			d.HNSW = hnswDiffJSON(h)
		}
		if q := p.GetQuantizationConfig(); q != nil {
			d.QuantizationConfig = quantizationDiffJSON(q)
		}
		return d
	}
	switch k := u.GetVectorsConfig().GetConfig().(type) {
	case *pb.VectorsConfigDiff_Params:
		req.Vectors = map[string]vectorDiff{"": vectorDiffOf(k.Params)}
	case *pb.VectorsConfigDiff_ParamsMap:
		req.Vectors = map[string]vectorDiff{}
		for name, p := range k.ParamsMap.GetMap() {
			req.Vectors[name] = vectorDiffOf(p)
		}
	}
	if sp := u.GetSparseVectorsConfig(); sp != nil {
		req.SparseVectors = map[string]json.RawMessage{}
		for name, p := range sp.GetMap() {
			params := map[string]any{}
			if p.Modifier != nil {
				switch p.GetModifier() {
				case pb.Modifier_None:
					params["modifier"] = "none"
				case pb.Modifier_Idf:
					params["modifier"] = "idf"
				default:
					return nil, badRequestf("sparse_vectors_config.%s: unknown modifier %v", name, p.GetModifier())
				}
			}
			req.SparseVectors[name] = mustJSON(params)
		}
	}
	if u.StrictModeConfig != nil {
		req.StrictModeConfig = mustJSON(map[string]any{"enabled": u.GetStrictModeConfig().Enabled})
	}
	if len(u.GetMetadata()) > 0 {
		raw, err := payloadJSON(u.GetMetadata())
		if err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		req.Metadata = raw
	}
	return req, nil
}

// hnswDiffJSON is an HnswConfigDiff as PATCH reads it (all its fields).
func hnswDiffJSON(h *pb.HnswConfigDiff) *hnswDiff {
	return &hnswDiff{
		M: intPtr(h.M), EfConstruct: intPtr(h.EfConstruct), FullScanThreshold: intPtr(h.FullScanThreshold),
		MaxIndexingThreads: intPtr(h.MaxIndexingThreads), OnDisk: h.OnDisk, PayloadM: intPtr(h.PayloadM), InlineStorage: h.InlineStorage,
	}
}

// quantizationDiffJSON is a QuantizationConfigDiff in REST's spelling:
// "Disabled", {"scalar": ...}, or the other methods by name (which
// updateCollection refuses, as strata fixes quantization at creation).
func quantizationDiffJSON(q *pb.QuantizationConfigDiff) json.RawMessage {
	switch k := q.GetQuantization().(type) {
	case *pb.QuantizationConfigDiff_Disabled:
		return mustJSON("Disabled")
	case *pb.QuantizationConfigDiff_Scalar:
		s := map[string]any{"type": strings.ToLower(k.Scalar.GetType().String())}
		if x := k.Scalar.Quantile; x != nil && !math.IsNaN(float64(*x)) && !math.IsInf(float64(*x), 0) {
			s["quantile"] = *x // a quantile JSON cannot hold is left out (strata keeps none)
		}
		if k.Scalar.AlwaysRam != nil {
			s["always_ram"] = k.Scalar.GetAlwaysRam()
		}
		return mustJSON(map[string]any{"scalar": s})
	case *pb.QuantizationConfigDiff_Product:
		return mustJSON(map[string]any{"product": map[string]any{}})
	case *pb.QuantizationConfigDiff_Binary:
		return mustJSON(map[string]any{"binary": map[string]any{}})
	case *pb.QuantizationConfigDiff_Turboquant:
		return mustJSON(map[string]any{"turboquant": map[string]any{}})
	}
	return nil
}

// groupSpecOf is what the three groups calls share; with_lookup keeps
// its defaults (with_payload true, with_vectors false) when unset.
func groupSpecOf(groupBy string, groupSize, limit *int, l *pb.WithLookup) groupSpec {
	spec := groupSpec{GroupBy: groupBy, GroupSize: groupSize, Limit: limit}
	if l != nil {
		spec.WithLookup = mustJSON(map[string]any{"collection": l.GetCollection(),
			"with_payload": withPayloadJSON(l.GetWithPayload()), "with_vectors": withVectorsJSON(l.GetWithVectors())})
	}
	return spec
}

func u32Ptr(v uint32) *int {
	n := int(v)
	return &n
}

// queryGroupsRequestOf translates QueryPointGroups through QueryPoints'
// translation (the same query, prefetch and selectors).
func queryGroupsRequestOf(g *pb.QueryPointGroups) (*queryGroupsRequest, error) {
	q, err := queryPointsRequest(&pb.QueryPoints{Prefetch: g.GetPrefetch(), Query: g.Query, Using: g.Using, Filter: g.Filter,
		Params: g.Params, ScoreThreshold: g.ScoreThreshold, WithPayload: g.WithPayload, WithVectors: g.WithVectors, LookupFrom: g.LookupFrom})
	if err == nil {
		err = q.jsonQuery() // groups read the query as JSON
	}
	if err != nil {
		return nil, err
	}
	return &queryGroupsRequest{Prefetch: q.Prefetch, Query: q.Query, Using: q.Using, Filter: q.Filter, Params: q.Params,
		ScoreThreshold: q.ScoreThreshold, WithVector: q.WithVector, WithPayload: q.WithPayload, LookupFrom: q.LookupFrom,
		groupSpec: groupSpecOf(g.GetGroupBy(), intPtr(g.GroupSize), intPtr(g.Limit), g.GetWithLookup())}, nil
}

// searchGroupsRequestOf translates SearchPointGroups through
// SearchPoints' translation.
func searchGroupsRequestOf(g *pb.SearchPointGroups) (*searchGroupsRequest, error) {
	q, err := searchPointsRequest(&pb.SearchPoints{Vector: g.GetVector(), Filter: g.Filter, Params: g.Params,
		ScoreThreshold: g.ScoreThreshold, VectorName: g.VectorName, WithPayload: g.WithPayload, WithVectors: g.WithVectors,
		SparseIndices: g.SparseIndices})
	if err != nil {
		return nil, err
	}
	return &searchGroupsRequest{Vector: q.Vector, Filter: q.Filter, Params: q.Params, WithPayload: q.WithPayload,
		WithVector: q.WithVector, ScoreThreshold: q.ScoreThreshold,
		groupSpec: groupSpecOf(g.GetGroupBy(), u32Ptr(g.GetGroupSize()), u32Ptr(g.GetLimit()), g.GetWithLookup())}, nil
}

// examplesJSON is a recommend request's ids then vectors, as REST's
// positive or negative list.
func examplesJSON(ids []*pb.PointId, vectors []*pb.Vector) ([]json.RawMessage, error) {
	out, err := idsJSON(ids)
	if err != nil {
		return nil, err
	}
	for _, vec := range vectors {
		v, err := vectorJSON(vec)
		if err != nil {
			return nil, err
		}
		raw, err := rawJSON(v)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

// recommendGroupsRequestOf translates RecommendPointGroups.
func recommendGroupsRequestOf(g *pb.RecommendPointGroups) (*recommendGroupsRequest, error) {
	pos, err := examplesJSON(g.GetPositive(), g.GetPositiveVectors())
	if err != nil {
		return nil, err
	}
	neg, err := examplesJSON(g.GetNegative(), g.GetNegativeVectors())
	if err != nil {
		return nil, err
	}
	strategy, err := strategyJSON(g.Strategy)
	if err != nil {
		return nil, err
	}
	req := &recommendGroupsRequest{Positive: pos, Negative: neg, Strategy: strategy, Params: paramsJSON(g.GetParams()),
		WithPayload: withPayloadJSON(g.GetWithPayload()), WithVector: withVectorsJSON(g.GetWithVectors()),
		ScoreThreshold: scoreThreshold(g.ScoreThreshold), Using: g.Using, LookupFrom: lookupJSON(g.GetLookupFrom()),
		groupSpec: groupSpecOf(g.GetGroupBy(), u32Ptr(g.GetGroupSize()), u32Ptr(g.GetLimit()), g.GetWithLookup())}
	if req.Filter, err = rawFilter(g.GetFilter()); err != nil {
		return nil, err
	}
	return req, nil
}

// upsertRequestOf translates the points of an upsert (UpsertPoints or an
// UpdateBatch operation).
func upsertRequestOf(list []*pb.PointStruct, updateFilter *pb.Filter, mode *pb.UpdateMode) (*upsertRequest, error) {
	points, err := pointsJSON(list)
	if err != nil {
		return nil, err
	}
	if points == nil {
		points = []pointStruct{}
	}
	req := &upsertRequest{Points: points}
	if req.UpdateFilter, err = updateFilterJSON(updateFilter); err != nil {
		return nil, err
	}
	if mode != nil {
		name, ok := updateModeNames[*mode]
		if !ok {
			return nil, badRequestf("update_mode %v: one of Upsert, InsertOnly, UpdateOnly", *mode)
		}
		req.UpdateMode = &name
	}
	return req, nil
}

var updateModeNames = map[pb.UpdateMode]string{pb.UpdateMode_Upsert: "upsert", pb.UpdateMode_InsertOnly: "insert_only",
	pb.UpdateMode_UpdateOnly: "update_only"}

// updateFilterJSON is an update_filter as REST reads it: a set but empty
// filter is one that every point matches, as over REST.
func updateFilterJSON(f *pb.Filter) (json.RawMessage, error) {
	if f == nil {
		return nil, nil
	}
	m, err := filterJSON(f)
	if err != nil {
		return nil, fmt.Errorf("update_filter: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return mustJSON(m), nil
}

// updateVectorsRequestOf translates the points of an update_vectors
// (UpdatePointVectors or an UpdateBatch operation).
func updateVectorsRequestOf(list []*pb.PointVectors, updateFilter *pb.Filter) (*updateVectorsRequest, error) {
	filter, err := updateFilterJSON(updateFilter)
	if err != nil {
		return nil, err
	}
	req := &updateVectorsRequest{UpdateFilter: filter}
	for _, p := range list {
		id, err := idJSON(p.GetId())
		if err != nil {
			return nil, err
		}
		v, err := vectorsJSON(p.GetVectors())
		if err != nil {
			return nil, err
		}
		raw, err := rawJSON(v)
		if err != nil {
			return nil, err
		}
		req.Points = append(req.Points, pointVectors{ID: mustJSON(id), Vector: raw})
	}
	return req, nil
}
