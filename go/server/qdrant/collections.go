package qdrant

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/server/registry"
)

// Distances: Qdrant's name for each strata metric.
var distances = map[string]metric.Metric{"Cosine": metric.Cosine, "Euclid": metric.L2, "Dot": metric.IP, "Manhattan": metric.Manhattan}

func distanceName(m metric.Metric) string {
	for name, mm := range distances {
		if mm == m {
			return name
		}
	}
	return m.String()
}

type hnswConfig struct {
	M                  *int            `json:"m"`
	EfConstruct        *int            `json:"ef_construct"`
	FullScanThreshold  json.RawMessage `json:"full_scan_threshold"`
	MaxIndexingThreads json.RawMessage `json:"max_indexing_threads"`
	OnDisk             json.RawMessage `json:"on_disk"`
	PayloadM           json.RawMessage `json:"payload_m"`
}

type vectorParams struct {
	Size               int             `json:"size"`
	Distance           string          `json:"distance"`
	HNSW               *hnswConfig     `json:"hnsw_config"`
	QuantizationConfig json.RawMessage `json:"quantization_config"`
	OnDisk             json.RawMessage `json:"on_disk"`
	Datatype           *string         `json:"datatype"`
	MultivectorConfig  json.RawMessage `json:"multivector_config"`
}

// createRequest is Qdrant's CreateCollection. Operational settings with no
// bearing on answers (shards, WAL, optimizers, hnsw_config.on_disk,
// on_disk_payload) are accepted and ignored; a vector's on_disk is the
// field's memory placement (collection.MemoryMmap); settings that would
// change answers are refused by name.
type createRequest struct {
	Vectors                json.RawMessage `json:"vectors"`
	ShardNumber            json.RawMessage `json:"shard_number"`
	ShardingMethod         json.RawMessage `json:"sharding_method"`
	ReplicationFactor      json.RawMessage `json:"replication_factor"`
	WriteConsistencyFactor json.RawMessage `json:"write_consistency_factor"`
	OnDiskPayload          json.RawMessage `json:"on_disk_payload"`
	HNSW                   *hnswConfig     `json:"hnsw_config"`
	WalConfig              json.RawMessage `json:"wal_config"`
	OptimizersConfig       json.RawMessage `json:"optimizers_config"`
	InitFrom               json.RawMessage `json:"init_from"`
	QuantizationConfig     json.RawMessage `json:"quantization_config"`
	SparseVectors          json.RawMessage `json:"sparse_vectors"`
	StrictModeConfig       json.RawMessage `json:"strict_mode_config"`
	Metadata               json.RawMessage `json:"metadata"`
}

func present(raw json.RawMessage) bool { return len(raw) != 0 && string(raw) != "null" }

func (req *createRequest) options() (collection.Options, error) {
	if present(req.InitFrom) {
		return collection.Options{}, unsupportedf("init_from")
	}
	// LangChain and LlamaIndex send sparse_vectors: {} with every dense
	// collection: no sparse field is no sparse field.
	sparseFields, err := parseSparseVectors(req.SparseVectors)
	if err != nil {
		return collection.Options{}, err
	}
	if !present(req.Vectors) {
		if len(sparseFields) > 0 {
			return collection.Options{Sparse: sparseFields}, nil
		}
		return collection.Options{}, badRequestf("vectors: the vector parameters (size, distance) are required")
	}
	opts, err := req.denseOptions()
	opts.Sparse = sparseFields
	return opts, err
}

// parseSparseVectors reads Qdrant's sparse_vectors: names to
// SparseVectorParams, {"index": {...}, "modifier": "none" | "idf"}. The
// index settings (on_disk, full_scan_threshold, datatype) are storage
// choices with no bearing on answers: accepted and ignored.
func parseSparseVectors(raw json.RawMessage) ([]collection.SparseField, error) {
	if !present(raw) {
		return nil, nil
	}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, badRequestf("sparse_vectors: an object of names to {index, modifier}: %s", truncate(string(raw)))
	}
	var out []collection.SparseField
	for name, params := range named {
		var p struct {
			Index    json.RawMessage `json:"index"`
			Modifier *string         `json:"modifier"`
		}
		if present(params) {
			if err := strictUnmarshal(params, &p); err != nil {
				return nil, badRequestf("sparse_vectors.%s: {index, modifier}: %s", name, truncate(string(params)))
			}
		}
		f := collection.SparseField{Name: name}
		if p.Modifier != nil {
			m, err := sparse.ParseModifier(*p.Modifier)
			if err != nil {
				return nil, badRequestf("sparse_vectors.%s.modifier %q (none or idf)", name, *p.Modifier)
			}
			f.Modifier = m
		}
		out = append(out, f)
	}
	return out, nil
}

// denseOptions reads "vectors".
func (req *createRequest) denseOptions() (collection.Options, error) {
	var b [8]byte
	rand.Read(b[:])
	seed := binary.LittleEndian.Uint64(b[:])
	if !isNamedVectors(req.Vectors) {
		var vp vectorParams
		if err := strictUnmarshal(req.Vectors, &vp); err != nil || vp.Size == 0 {
			return collection.Options{}, badRequestf("vectors: {size, distance, hnsw_config, ...} or a map of names to them: %s", truncate(string(req.Vectors)))
		}
		f, err := req.field("", &vp)
		if err != nil {
			return collection.Options{}, err
		}
		if f.Multivector == collection.SingleVector {
			return collection.Options{Dim: f.Dim, Metric: f.Metric, M: f.M, EfConstruction: f.EfConstruction,
				Quantization: f.Quantization, Memory: f.Memory, Seed: seed}, nil
		}
		return collection.Options{Vectors: []collection.VectorField{f}, Seed: seed}, nil
	}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(req.Vectors, &named); err != nil {
		return collection.Options{}, badRequestf("vectors: %v", err)
	}
	opts := collection.Options{Vectors: []collection.VectorField{}, Seed: seed}
	for name, raw := range named {
		var vp vectorParams
		if err := strictUnmarshal(raw, &vp); err != nil || vp.Size == 0 {
			return collection.Options{}, badRequestf("vectors.%s: {size, distance, hnsw_config, ...}: %s", name, truncate(string(raw)))
		}
		f, err := req.field(name, &vp)
		if err != nil {
			return collection.Options{}, err
		}
		opts.Vectors = append(opts.Vectors, f)
	}
	return opts, nil
}

// isNamedVectors tells Qdrant's two forms of "vectors" apart: one
// unnamed vector's parameters, or a map of names to them (as Qdrant's
// untagged VectorsConfig does: the parameters are tried first).
func isNamedVectors(raw json.RawMessage) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return false
	}
	_, size := keys["size"]
	_, distance := keys["distance"]
	return !size && !distance
}

// field translates one vector's parameters (the collection's own
// hnsw_config and quantization_config apply where the vector sets none).
func (req *createRequest) field(name string, vp *vectorParams) (collection.VectorField, error) {
	mtr, ok := distances[vp.Distance]
	if !ok {
		return collection.VectorField{}, unsupportedf("distance %q (supported: Cosine, Euclid, Dot, Manhattan)", vp.Distance)
	}
	if vp.Datatype != nil && *vp.Datatype != "float32" {
		return collection.VectorField{}, unsupportedf("datatype %q (vectors are float32)", *vp.Datatype)
	}
	f := collection.VectorField{Name: name, Dim: vp.Size, Metric: mtr, Quantization: hnsw.QuantNone}
	if present(vp.MultivectorConfig) {
		var mc struct {
			Comparator string `json:"comparator"`
		}
		if err := strictUnmarshal(vp.MultivectorConfig, &mc); err != nil || mc.Comparator != "max_sim" {
			return collection.VectorField{}, unsupportedf("multivector_config %s (only {\"comparator\": \"max_sim\"})", truncate(string(vp.MultivectorConfig)))
		}
		f.Multivector = collection.MaxSim
	}
	if present(vp.OnDisk) {
		// Qdrant's on_disk keeps a vector field's original vectors in
		// mmap'd files: strata's mmap placement of the field.
		var onDisk bool
		if err := json.Unmarshal(vp.OnDisk, &onDisk); err != nil {
			return collection.VectorField{}, badRequestf("vectors.on_disk must be a boolean, got %s", truncate(string(vp.OnDisk)))
		}
		if onDisk {
			f.Memory = collection.MemoryMmap
		}
	}
	for _, hc := range []*hnswConfig{req.HNSW, vp.HNSW} { // the vector's own config wins
		if hc == nil {
			continue
		}
		// The ranges are the engine's (package limits); only 0 is this
		// door's to refuse, because to the engine 0 means "the default".
		if hc.M != nil {
			if *hc.M == 0 {
				return collection.VectorField{}, unsupportedf("hnsw_config.m = 0 (a collection without a graph)")
			}
			f.M = *hc.M
		}
		if hc.EfConstruct != nil {
			if *hc.EfConstruct == 0 {
				return collection.VectorField{}, badRequestf("hnsw_config.ef_construct must be positive, got 0")
			}
			f.EfConstruction = *hc.EfConstruct
		}
	}
	for _, raw := range []json.RawMessage{req.QuantizationConfig, vp.QuantizationConfig} {
		if !present(raw) {
			continue
		}
		var q struct {
			Scalar *struct {
				Type      string          `json:"type"`
				Quantile  json.RawMessage `json:"quantile"`
				AlwaysRAM json.RawMessage `json:"always_ram"`
			} `json:"scalar"`
		}
		if err := strictUnmarshal(raw, &q); err != nil || q.Scalar == nil || q.Scalar.Type != "int8" {
			return collection.VectorField{}, unsupportedf("quantization_config %s (only scalar int8, strata's sq8)", raw)
		}
		f.Quantization = hnsw.QuantSQ8
	}
	return f, nil
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// createCollection is create_collection.
func (h *Handler) createCollection(ctx context.Context, name string, req *createRequest) (bool, error) {
	opts, err := req.options()
	if err != nil {
		return false, err
	}
	if h.aliases.isAlias(name) {
		return false, badRequestf("Wrong input: Alias `%s` already exists!", name)
	}
	c, err := h.cfg.Collections.CreateCollection(name, opts)
	if err != nil {
		return false, err
	}
	if isNamedVectors(req.Vectors) && oneUnnamedVector(c.Options()) {
		if err := h.settings.change(c, func(s *settings) error { s.VectorsMap = true; return nil }); err != nil {
			return false, err
		}
	}
	if present(req.Metadata) { // kept as PATCH keeps it, and reported by get_collection
		if _, err := h.updateCollection(ctx, name, &updateCollectionRequest{Metadata: req.Metadata}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// deleteCollection is delete_collection, answered as Qdrant does: true
// when the collection existed, false (200) when it did not. The name is a
// collection's, not an alias's; its aliases go with it.
func (h *Handler) deleteCollection(_ context.Context, name string) (bool, error) {
	if c, err := h.cfg.Collections.Collection(name); err == nil {
		h.indexes.forget(c)
		h.settings.forget(c)
	}
	err := h.cfg.Collections.DropCollection(name)
	if errors.Is(err, registry.ErrUnknownCollection) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := h.forgetAliases(name); err != nil {
		return false, err
	}
	return true, nil
}

func (h *Handler) restDeleteCollection(r *http.Request) (any, error) {
	return h.deleteCollection(r.Context(), r.PathValue("name"))
}

// listCollections is get_collections: the names.
func (h *Handler) listCollections(context.Context) ([]string, error) {
	return h.cfg.Collections.Collections(), nil
}

func (h *Handler) restListCollections(r *http.Request) (any, error) {
	names, err := h.listCollections(r.Context())
	if err != nil {
		return nil, err
	}
	list := []map[string]string{}
	for _, name := range names {
		list = append(list, map[string]string{"name": name})
	}
	return map[string]any{"collections": list}, nil
}

// collectionExists is collection_exists.
func (h *Handler) collectionExists(_ context.Context, name string) (bool, error) {
	_, err := h.named(name)
	if err != nil && status(err) == http.StatusNotFound {
		return false, nil
	}
	if errors.Is(err, registry.ErrUnavailable) { // failed, being retried: it exists
		return true, nil
	}
	return err == nil, err
}

func (h *Handler) restCollectionExists(r *http.Request) (any, error) {
	exists, err := h.collectionExists(r.Context(), r.PathValue("name"))
	return map[string]bool{"exists": exists}, err
}

// collectionInfo is what get_collection answers, typed: each door shapes
// it as Qdrant's CollectionInfo.
type collectionInfo struct {
	Info    collection.Info
	Options collection.Options
	// Schema is payload_schema: each declared index's field to its
	// declaration and the points holding a value of its type.
	Schema map[string]schemaEntry
	// Settings are what PATCH accepted (update.go).
	Settings settings
}

// green reports whether the collection serves writes (Qdrant's status
// green; red after an I/O failure).
func (ci *collectionInfo) green() bool { return ci.Info.Failed == "" }

// getCollection is get_collection.
func (h *Handler) getCollection(_ context.Context, name string) (*collectionInfo, error) {
	c, err := h.named(name)
	if err != nil {
		return nil, err
	}
	schema, err := h.payloadSchema(c)
	if err != nil {
		return nil, err
	}
	accepted, err := h.settings.get(c)
	if err != nil {
		return nil, err
	}
	return &collectionInfo{Info: c.Info(), Options: c.Options(), Schema: schema, Settings: accepted}, nil
}

// restGetCollection answers Qdrant's CollectionInfo: the required fields
// filled with strata's values where it has them and Qdrant's defaults
// where the setting does not exist here (one segment, one shard).
func (h *Handler) restGetCollection(r *http.Request) (any, error) {
	ci, err := h.getCollection(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	in, opts := ci.Info, ci.Options
	state := "green"
	if !ci.green() {
		state = "red"
	}
	schema := map[string]any{}
	for field, e := range ci.Schema {
		info := map[string]any{"data_type": e.index.DataType, "points": e.points}
		if e.index.Params != nil {
			info["params"] = e.index.Params
		}
		schema[field] = info
	}
	var quantization any
	if opts.Quantization == hnsw.QuantSQ8 {
		quantization = map[string]any{"scalar": map[string]any{"type": "int8"}}
	}
	params := map[string]any{
		"vectors":      vectorsInfo(opts, ci.Settings.VectorsMap),
		"shard_number": 1, "replication_factor": 1, "write_consistency_factor": 1, "on_disk_payload": false,
	}
	if len(opts.Sparse) > 0 {
		sp := map[string]any{}
		for _, f := range opts.Sparse {
			sp[f.Name] = map[string]any{"modifier": f.Modifier.String()}
		}
		params["sparse_vectors"] = sp
	}
	config := map[string]any{
		"params":              params,
		"hnsw_config":         map[string]any{"m": in.M, "ef_construct": in.EfConstruction, "full_scan_threshold": 0},
		"optimizer_config":    map[string]any{"deleted_threshold": 0.2, "vacuum_min_vector_number": 1000, "default_segment_number": 1, "flush_interval_sec": 0},
		"wal_config":          map[string]any{"wal_capacity_mb": in.WALBytes >> 20, "wal_segments_ahead": 0},
		"quantization_config": quantization,
	}
	ci.Settings.overlay(config)
	return map[string]any{
		"status": state, "optimizer_status": "ok", "segments_count": 1,
		"points_count": in.Count, "indexed_vectors_count": in.Count, "payload_schema": schema,
		"config": config,
	}, nil
}

// oneUnnamedVector reports whether a collection holds one unnamed dense
// vector (sparse fields beside it or not).
func oneUnnamedVector(opts collection.Options) bool {
	return opts.Vectors == nil || (len(opts.Vectors) == 1 && opts.Vectors[0].Name == "" &&
		opts.Vectors[0].Multivector == collection.SingleVector)
}

// fieldsOf is a collection's dense fields, the one unnamed vector of a
// collection created without fields included.
func fieldsOf(opts collection.Options) []collection.VectorField {
	if opts.Vectors != nil {
		return opts.Vectors
	}
	return []collection.VectorField{{Dim: opts.Dim, Metric: opts.Metric, M: opts.M,
		EfConstruction: opts.EfConstruction, Quantization: opts.Quantization, Memory: opts.Memory}}
}

// vectorsInfo is the "vectors" of a collection's config in the form it
// was created with, as Qdrant keeps it: one unnamed vector's parameters
// for {size, distance}, else a map of names to them ({"": {...}} stays
// a map: asMap).
func vectorsInfo(opts collection.Options, asMap bool) any {
	opts.Vectors = fieldsOf(opts)
	if !asMap && oneUnnamedVector(opts) {
		// One unnamed dense vector (sparse fields beside it or not).
		params := map[string]any{"size": opts.Dim, "distance": distanceName(opts.Metric)}
		if opts.Memory == collection.MemoryMmap {
			params["on_disk"] = true
		}
		return params
	}
	out := map[string]any{}
	for _, f := range opts.Vectors {
		params := map[string]any{"size": f.Dim, "distance": distanceName(f.Metric),
			"hnsw_config": map[string]any{"m": f.M, "ef_construct": f.EfConstruction}}
		if f.Multivector == collection.MaxSim {
			params["multivector_config"] = map[string]any{"comparator": "max_sim"}
		}
		if f.Quantization == hnsw.QuantSQ8 {
			params["quantization_config"] = map[string]any{"scalar": map[string]any{"type": "int8"}}
		}
		if f.Memory == collection.MemoryMmap {
			params["on_disk"] = true
		}
		out[f.Name] = params
	}
	return out
}
