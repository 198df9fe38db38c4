package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// Answers over gRPC: the shared calls' typed answers as Qdrant's
// protobuf messages.

func pbID(id collection.ID) *pb.PointId {
	if id.IsString() {
		return &pb.PointId{PointIdOptions: &pb.PointId_Uuid{Uuid: id.Str()}}
	}
	return &pb.PointId{PointIdOptions: &pb.PointId_Num{Num: uint64(id.Int())}}
}

// pbPayload reads a stored payload (canonical JSON) as protobuf Values:
// integers stay integers, other numbers are doubles.
func pbPayload(raw json.RawMessage) (map[string]*pb.Value, error) {
	if len(raw) == 0 {
		return nil, nil // no payload asked for: on the wire, as an empty map
	}
	out := map[string]*pb.Value{}
	// A stored payload is valid compact JSON: its top level is split
	// without reflection (objectFields) and only nested values and
	// escaped strings are decoded (pbJSONValue); encoding/json decoding
	// the whole object was most of a served gRPC query's answer.
	if fields, ok := splitObject(raw); ok {
		for k, v := range fields {
			value, err := pbJSONValue(v)
			if err != nil {
				return nil, fmt.Errorf("qdrant: stored payload: %w", err)
			}
			out[k] = value
		}
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("qdrant: stored payload: %w", err)
	}
	for k, v := range fields {
		out[k] = pbValue(v)
	}
	return out, nil
}

// pbJSONValue is pbValue of one valid JSON value, read directly when it
// is a number, a literal or a string without escapes.
func pbJSONValue(raw json.RawMessage) (*pb.Value, error) {
	switch raw[0] {
	case 't', 'f':
		return pbValue(raw[0] == 't'), nil
	case 'n':
		return pbValue(nil), nil
	case '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return pbValue(string(raw[1 : len(raw)-1])), nil
		}
	case '{', '[':
	default:
		return pbValue(json.Number(raw)), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return pbValue(v), nil
}

func pbValue(v any) *pb.Value {
	switch x := v.(type) {
	case nil:
		return &pb.Value{Kind: &pb.Value_NullValue{}}
	case bool:
		return &pb.Value{Kind: &pb.Value_BoolValue{BoolValue: x}}
	case string:
		return &pb.Value{Kind: &pb.Value_StringValue{StringValue: x}}
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			if n, err := x.Int64(); err == nil {
				return &pb.Value{Kind: &pb.Value_IntegerValue{IntegerValue: n}}
			}
		}
		f, _ := x.Float64()
		return &pb.Value{Kind: &pb.Value_DoubleValue{DoubleValue: f}}
	case []any:
		list := &pb.ListValue{Values: make([]*pb.Value, len(x))}
		for i, e := range x {
			list.Values[i] = pbValue(e)
		}
		return &pb.Value{Kind: &pb.Value_ListValue{ListValue: list}}
	case map[string]any:
		s := &pb.Struct{Fields: make(map[string]*pb.Value, len(x))}
		for k, e := range x {
			s.Fields[k] = pbValue(e)
		}
		return &pb.Value{Kind: &pb.Value_StructValue{StructValue: s}}
	}
	panic(fmt.Sprintf("qdrant: JSON value of type %T", v))
}

// pbVectorOutput is one field's value as records hold it.
func pbVectorOutput(v any) (*pb.VectorOutput, error) {
	switch x := v.(type) {
	case []float32:
		return &pb.VectorOutput{Vector: &pb.VectorOutput_Dense{Dense: &pb.DenseVector{Data: x}}}, nil
	case [][]float32:
		m := &pb.MultiDenseVector{Vectors: make([]*pb.DenseVector, len(x))}
		for i, row := range x {
			m.Vectors[i] = &pb.DenseVector{Data: row}
		}
		return &pb.VectorOutput{Vector: &pb.VectorOutput_MultiDense{MultiDense: m}}, nil
	case map[string]any:
		indices, _ := x["indices"].([]uint32)
		values, _ := x["values"].([]float32)
		return &pb.VectorOutput{Vector: &pb.VectorOutput_Sparse{Sparse: &pb.SparseVector{Indices: indices, Values: values}}}, nil
	}
	return nil, fmt.Errorf("qdrant: vector of type %T", v)
}

func pbVectors(v any) (*pb.VectorsOutput, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []float32:
		out, err := pbVectorOutput(x)
		return &pb.VectorsOutput{VectorsOptions: &pb.VectorsOutput_Vector{Vector: out}}, err
	case map[string]any:
		named := &pb.NamedVectorsOutput{Vectors: make(map[string]*pb.VectorOutput, len(x))}
		for name, e := range x {
			out, err := pbVectorOutput(e)
			if err != nil {
				return nil, err
			}
			named.Vectors[name] = out
		}
		return &pb.VectorsOutput{VectorsOptions: &pb.VectorsOutput_Vectors{Vectors: named}}, nil
	}
	return nil, fmt.Errorf("qdrant: vectors of type %T", v)
}

func pbOrderValue(v any) *pb.OrderValue {
	switch x := v.(type) {
	case int64:
		return &pb.OrderValue{Variant: &pb.OrderValue_Int{Int: x}}
	case float64:
		return &pb.OrderValue{Variant: &pb.OrderValue_Float{Float: x}}
	}
	return nil
}

// pbPoints converts records to RetrievedPoints or ScoredPoints: the
// ids, payload and vectors they share are converted here, once, and
// point builds the i-th message from them. The ids' messages are
// allocated together (two allocations for an answer, not two per point).
func pbPoints[P any](recs []record, point func(i int, r *record, id *pb.PointId, payload map[string]*pb.Value, vectors *pb.VectorsOutput) P) ([]P, error) {
	out := make([]P, len(recs))
	ids, nums := make([]pb.PointId, len(recs)), make([]pb.PointId_Num, len(recs))
	for i := range recs {
		if id := recs[i].ID.ID; id.IsString() {
			ids[i].PointIdOptions = &pb.PointId_Uuid{Uuid: id.Str()}
		} else {
			nums[i].Num = id.Int()
			ids[i].PointIdOptions = &nums[i]
		}
		payload, err := pbPayload(recs[i].Payload)
		if err != nil {
			return nil, err
		}
		vectors, err := pbVectors(recs[i].Vector)
		if err != nil {
			return nil, err
		}
		out[i] = point(i, &recs[i], &ids[i], payload, vectors)
	}
	return out, nil
}

func pbRetrieved(recs []record) ([]*pb.RetrievedPoint, error) {
	return pbPoints(recs, func(_ int, r *record, id *pb.PointId, payload map[string]*pb.Value, vectors *pb.VectorsOutput) *pb.RetrievedPoint {
		return &pb.RetrievedPoint{Id: id, Payload: payload, Vectors: vectors, OrderValue: pbOrderValue(r.OrderValue)}
	})
}

func pbScored(recs []record) ([]*pb.ScoredPoint, error) {
	points := make([]pb.ScoredPoint, len(recs)) // one allocation, as the ids'
	return pbPoints(recs, func(i int, r *record, id *pb.PointId, payload map[string]*pb.Value, vectors *pb.VectorsOutput) *pb.ScoredPoint {
		p := &points[i]
		p.Id, p.Payload, p.Vectors, p.OrderValue = id, payload, vectors, pbOrderValue(r.OrderValue)
		if r.Score != nil {
			p.Score = float32(*r.Score)
		}
		if r.Version != nil {
			p.Version = *r.Version
		}
		return p
	})
}

func pbUpdate(u updateResult, start time.Time) *pb.PointsOperationResponse {
	return &pb.PointsOperationResponse{Result: &pb.UpdateResult{OperationId: &u.OperationID, Status: pb.UpdateStatus_Completed},
		Time: elapsed(start)}
}

var pbDistances = map[string]pb.Distance{"Cosine": pb.Distance_Cosine, "Euclid": pb.Distance_Euclid, "Dot": pb.Distance_Dot, "Manhattan": pb.Distance_Manhattan}

var pbSchemaTypes = map[string]pb.PayloadSchemaType{
	"keyword": pb.PayloadSchemaType_Keyword, "integer": pb.PayloadSchemaType_Integer, "float": pb.PayloadSchemaType_Float,
	"geo": pb.PayloadSchemaType_Geo, "text": pb.PayloadSchemaType_Text, "bool": pb.PayloadSchemaType_Bool,
	"datetime": pb.PayloadSchemaType_Datetime, "uuid": pb.PayloadSchemaType_Uuid,
}

func u64(n int) *uint64 {
	v := uint64(max(n, 0))
	return &v
}

func pbVectorParams(f collection.VectorField) *pb.VectorParams {
	p := &pb.VectorParams{Size: uint64(f.Dim), Distance: pbDistances[distanceName(f.Metric)],
		HnswConfig: &pb.HnswConfigDiff{M: u64(f.M), EfConstruct: u64(f.EfConstruction)}}
	if f.Multivector == collection.MaxSim {
		p.MultivectorConfig = &pb.MultiVectorConfig{Comparator: pb.MultiVectorComparator_MaxSim}
	}
	if f.Quantization == hnsw.QuantSQ8 {
		p.QuantizationConfig = &pb.QuantizationConfig{Quantization: &pb.QuantizationConfig_Scalar{Scalar: &pb.ScalarQuantization{Type: pb.QuantizationType_Int8}}}
	}
	if f.Memory == collection.MemoryMmap {
		p.OnDisk = new(true)
	}
	return p
}

// pbCollectionInfo is get_collection's answer as REST's restGetCollection
// shapes it, in protobuf.
func pbCollectionInfo(ci *collectionInfo) (*pb.CollectionInfo, error) {
	in, opts := ci.Info, ci.Options
	state := pb.CollectionStatus_Green
	if !ci.green() {
		state = pb.CollectionStatus_Red
	}
	vectors := &pb.VectorsConfig{}
	if !ci.Settings.VectorsMap && oneUnnamedVector(opts) { // the form of creation, as vectorsInfo
		params := &pb.VectorParams{Size: uint64(opts.Dim), Distance: pbDistances[distanceName(opts.Metric)]}
		if opts.Memory == collection.MemoryMmap {
			params.OnDisk = new(true)
		}
		vectors.Config = &pb.VectorsConfig_Params{Params: params}
	} else {
		m := &pb.VectorParamsMap{Map: map[string]*pb.VectorParams{}}
		for _, f := range fieldsOf(opts) {
			m.Map[f.Name] = pbVectorParams(f)
		}
		vectors.Config = &pb.VectorsConfig_ParamsMap{ParamsMap: m}
	}
	params := &pb.CollectionParams{ShardNumber: 1, VectorsConfig: vectors, ReplicationFactor: new(uint32), WriteConsistencyFactor: new(uint32)}
	*params.ReplicationFactor, *params.WriteConsistencyFactor = 1, 1
	if len(opts.Sparse) > 0 {
		sp := &pb.SparseVectorConfig{Map: map[string]*pb.SparseVectorParams{}}
		for _, f := range opts.Sparse {
			mod := pb.Modifier_None
			if f.Modifier.String() == "idf" {
				mod = pb.Modifier_Idf
			}
			sp.Map[f.Name] = &pb.SparseVectorParams{Modifier: &mod}
		}
		params.SparseVectorsConfig = sp
	}
	var quantization *pb.QuantizationConfig
	if opts.Quantization == hnsw.QuantSQ8 {
		quantization = &pb.QuantizationConfig{Quantization: &pb.QuantizationConfig_Scalar{Scalar: &pb.ScalarQuantization{Type: pb.QuantizationType_Int8}}}
	}
	schema := map[string]*pb.PayloadSchemaInfo{}
	for field, e := range ci.Schema {
		schema[field] = &pb.PayloadSchemaInfo{DataType: pbSchemaTypes[e.index.DataType], Points: u64(e.points),
			Params: pbIndexParams(e.index)}
	}
	deleted, vacuum, segments, flush := 0.2, uint64(1000), uint64(1), uint64(0)
	info := &pb.CollectionInfo{
		Status: state, OptimizerStatus: &pb.OptimizerStatus{Ok: true}, SegmentsCount: 1,
		PointsCount: u64(in.Count), IndexedVectorsCount: u64(in.Count), PayloadSchema: schema,
		Config: &pb.CollectionConfig{
			Params:             params,
			HnswConfig:         &pb.HnswConfigDiff{M: u64(in.M), EfConstruct: u64(in.EfConstruction), FullScanThreshold: u64(0)},
			OptimizerConfig:    &pb.OptimizersConfigDiff{DeletedThreshold: &deleted, VacuumMinVectorNumber: &vacuum, DefaultSegmentNumber: &segments, FlushIntervalSec: &flush},
			WalConfig:          &pb.WalConfigDiff{WalCapacityMb: u64(int(in.WALBytes >> 20)), WalSegmentsAhead: u64(0)},
			QuantizationConfig: quantization,
		},
	}
	return info, pbOverlay(info.Config, &ci.Settings)
}

// pbOverlay writes what PATCH accepted into get_collection's config, as
// settings.overlay does over REST.
func pbOverlay(cfg *pb.CollectionConfig, s *settings) error {
	u64 := func(dst **uint64, v *int) {
		if v != nil {
			x := uint64(*v)
			*dst = &x
		}
	}
	u32 := func(dst **uint32, v *int) {
		if v != nil {
			x := uint32(*v)
			*dst = &x
		}
	}
	hnsw := func(dst *pb.HnswConfigDiff, d *hnswDiff) {
		u64(&dst.M, d.M)
		u64(&dst.EfConstruct, d.EfConstruct)
		u64(&dst.FullScanThreshold, d.FullScanThreshold)
		u64(&dst.MaxIndexingThreads, d.MaxIndexingThreads)
		u64(&dst.PayloadM, d.PayloadM)
		if d.OnDisk != nil {
			dst.OnDisk = d.OnDisk
		}
		if d.InlineStorage != nil {
			dst.InlineStorage = d.InlineStorage
		}
	}
	hnsw(cfg.HnswConfig, &s.HNSW)
	o, d := cfg.OptimizerConfig, &s.Optimizer
	if d.DeletedThreshold != nil {
		o.DeletedThreshold = d.DeletedThreshold
	}
	u64(&o.VacuumMinVectorNumber, d.VacuumMinVectorNumber)
	u64(&o.DefaultSegmentNumber, d.DefaultSegmentNumber)
	u64(&o.MaxSegmentSize, d.MaxSegmentSize)
	u64(&o.MemmapThreshold, d.MemmapThreshold)
	u64(&o.IndexingThreshold, d.IndexingThreshold)
	u64(&o.FlushIntervalSec, d.FlushIntervalSec)
	if d.PreventUnoptimized != nil {
		o.PreventUnoptimized = d.PreventUnoptimized
	}
	var threads int
	if json.Unmarshal(d.MaxOptimizationThreads, &threads) == nil && len(d.MaxOptimizationThreads) > 0 {
		o.MaxOptimizationThreads = &pb.MaxOptimizationThreads{Variant: &pb.MaxOptimizationThreads_Value{Value: uint64(threads)}}
	} else if len(d.MaxOptimizationThreads) > 0 {
		o.MaxOptimizationThreads = &pb.MaxOptimizationThreads{Variant: &pb.MaxOptimizationThreads_Setting_{
			Setting: pb.MaxOptimizationThreads_Auto}}
	}
	p := cfg.Params
	u32(&p.ReplicationFactor, s.Params.ReplicationFactor)
	u32(&p.WriteConsistencyFactor, s.Params.WriteConsistencyFactor)
	u32(&p.ReadFanOutFactor, s.Params.ReadFanOutFactor)
	u64(&p.ReadFanOutDelayMs, s.Params.ReadFanOutDelayMs)
	if s.Params.OnDiskPayload != nil {
		p.OnDiskPayload = *s.Params.OnDiskPayload
	}
	for vname, vd := range s.Vectors {
		var v *pb.VectorParams
		switch k := p.GetVectorsConfig().GetConfig().(type) {
		case *pb.VectorsConfig_Params:
			if vname == "" {
				v = k.Params
			}
		case *pb.VectorsConfig_ParamsMap:
			v = k.ParamsMap.GetMap()[vname]
		}
		if v == nil {
			continue
		}
		if vd.HNSW != nil {
			if v.HnswConfig == nil {
				v.HnswConfig = &pb.HnswConfigDiff{}
			}
			hnsw(v.HnswConfig, vd.HNSW)
		}
		if vd.OnDisk != nil {
			v.OnDisk = vd.OnDisk
		}
	}
	if len(s.Metadata) > 0 {
		meta, err := pbPayload(mustJSON(s.Metadata))
		if err != nil {
			return fmt.Errorf("qdrant: collection metadata: %w", err)
		}
		cfg.Metadata = meta
	}
	return nil
}

func pbFacetHits(hits []facetHit) []*pb.FacetHit {
	out := make([]*pb.FacetHit, len(hits))
	for i, h := range hits {
		v := &pb.FacetValue{}
		switch x := h.Value.(type) {
		case bool:
			v.Variant = &pb.FacetValue_BoolValue{BoolValue: x}
		case int64:
			v.Variant = &pb.FacetValue_IntegerValue{IntegerValue: x}
		case string:
			v.Variant = &pb.FacetValue_StringValue{StringValue: x}
		}
		out[i] = &pb.FacetHit{Value: v, Count: uint64(h.Count)}
	}
	return out
}

// pbIndexParams reports a text index's parameters (the JSON they were
// declared with, over either door); other types' are not reported.
func pbIndexParams(ix payloadIndex) *pb.PayloadIndexParams {
	if ix.DataType != "text" || ix.Params == nil {
		return nil
	}
	var p struct {
		Tokenizer      string  `json:"tokenizer"`
		Lowercase      *bool   `json:"lowercase"`
		MinTokenLen    *uint64 `json:"min_token_len"`
		MaxTokenLen    *uint64 `json:"max_token_len"`
		PhraseMatching *bool   `json:"phrase_matching"`
	}
	if json.Unmarshal(ix.Params, &p) != nil {
		return nil
	}
	t := &pb.TextIndexParams{Lowercase: p.Lowercase, MinTokenLen: p.MinTokenLen, MaxTokenLen: p.MaxTokenLen, PhraseMatching: p.PhraseMatching}
	for tok, name := range tokenizerNames {
		if name == p.Tokenizer {
			t.Tokenizer = tok
		}
	}
	return &pb.PayloadIndexParams{IndexParams: &pb.PayloadIndexParams_TextIndexParams{TextIndexParams: t}}
}

// pbGroups is a groups answer: each group's value, its hits and its
// looked-up point.
func pbGroups(res groupsResult) (*pb.GroupsResult, error) {
	out := &pb.GroupsResult{Groups: make([]*pb.PointGroup, len(res.Groups))}
	for i, g := range res.Groups {
		hits, err := pbScored(g.Hits)
		if err != nil {
			return nil, err
		}
		pg := &pb.PointGroup{Hits: hits}
		switch v := g.ID.(type) {
		case int64: // Qdrant answers a non-negative integer as unsigned
			if v >= 0 {
				pg.Id = &pb.GroupId{Kind: &pb.GroupId_UnsignedValue{UnsignedValue: uint64(v)}}
			} else {
				pg.Id = &pb.GroupId{Kind: &pb.GroupId_IntegerValue{IntegerValue: v}}
			}
		case string:
			pg.Id = &pb.GroupId{Kind: &pb.GroupId_StringValue{StringValue: v}}
		default:
			return nil, fmt.Errorf("qdrant: group value %v (%T) is neither a string nor an integer", v, v)
		}
		if g.Lookup != nil {
			lookup, err := pbRetrieved([]record{*g.Lookup})
			if err != nil {
				return nil, err
			}
			pg.Lookup = lookup[0]
		}
		out.Groups[i] = pg
	}
	return out, nil
}
