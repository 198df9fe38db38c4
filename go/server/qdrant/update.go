package qdrant

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/vfs"
)

// Collection updates (PATCH /collections/{name}, Qdrant's
// UpdateCollection). Every diff is checked before any is kept: an
// unknown key or a wrong type is a 400 naming it. What the engine fixes
// at creation cannot change: a different m, ef_construct, quantization or
// sparse modifier is refused with a 400 that says so (equal values are
// accepted), since strata does not rebuild a collection's graph in place.
// What changes no answer here (optimizer settings, full_scan_threshold,
// max_indexing_threads, on_disk, payload_m, replication and consistency
// factors, on_disk_payload, sparse index settings) is accepted, kept with
// the collection in <collection dir>/qdrant.settings (a statefile whose
// JSON is the settings document below) and reported back by
// get_collection, as Qdrant reports what it was given. metadata is merged
// into the collection's metadata (a null removes a key), as Qdrant does.
// strict_mode_config changes answers and is refused.

// settingsFile is the accepted settings' file in a collection's
// directory. Do not change.
const settingsFile = "qdrant.settings"

// hnswDiff is Qdrant's HnswConfigDiff.
type hnswDiff struct {
	M                  *int  `json:"m,omitempty"`
	EfConstruct        *int  `json:"ef_construct,omitempty"`
	FullScanThreshold  *int  `json:"full_scan_threshold,omitempty"`
	MaxIndexingThreads *int  `json:"max_indexing_threads,omitempty"`
	OnDisk             *bool `json:"on_disk,omitempty"`
	PayloadM           *int  `json:"payload_m,omitempty"`
	InlineStorage      *bool `json:"inline_storage,omitempty"`
}

// optimizersDiff is Qdrant's OptimizersConfigDiff.
type optimizersDiff struct {
	DeletedThreshold       *float64        `json:"deleted_threshold,omitempty"`
	VacuumMinVectorNumber  *int            `json:"vacuum_min_vector_number,omitempty"`
	DefaultSegmentNumber   *int            `json:"default_segment_number,omitempty"`
	MaxSegmentSize         *int            `json:"max_segment_size,omitempty"`
	MemmapThreshold        *int            `json:"memmap_threshold,omitempty"`
	IndexingThreshold      *int            `json:"indexing_threshold,omitempty"`
	FlushIntervalSec       *int            `json:"flush_interval_sec,omitempty"`
	MaxOptimizationThreads json.RawMessage `json:"max_optimization_threads,omitempty"` // an integer or "auto"
	PreventUnoptimized     *bool           `json:"prevent_unoptimized,omitempty"`
}

// paramsDiff is Qdrant's CollectionParamsDiff.
type paramsDiff struct {
	ReplicationFactor      *int  `json:"replication_factor,omitempty"`
	WriteConsistencyFactor *int  `json:"write_consistency_factor,omitempty"`
	ReadFanOutFactor       *int  `json:"read_fan_out_factor,omitempty"`
	ReadFanOutDelayMs      *int  `json:"read_fan_out_delay_ms,omitempty"`
	OnDiskPayload          *bool `json:"on_disk_payload,omitempty"`
}

// vectorDiff is Qdrant's VectorParamsDiff.
type vectorDiff struct {
	HNSW               *hnswDiff       `json:"hnsw_config,omitempty"`
	QuantizationConfig json.RawMessage `json:"quantization_config,omitempty"`
	OnDisk             *bool           `json:"on_disk,omitempty"`
}

// updateCollectionRequest is Qdrant's UpdateCollection.
type updateCollectionRequest struct {
	Vectors            map[string]vectorDiff      `json:"vectors"`
	OptimizersConfig   *optimizersDiff            `json:"optimizers_config"`
	Params             *paramsDiff                `json:"params"`
	HNSW               *hnswDiff                  `json:"hnsw_config"`
	QuantizationConfig json.RawMessage            `json:"quantization_config"`
	SparseVectors      map[string]json.RawMessage `json:"sparse_vectors"`
	StrictModeConfig   json.RawMessage            `json:"strict_mode_config"`
	Metadata           json.RawMessage            `json:"metadata"`
}

// settings is what PATCH accepted, kept per collection.
type settings struct {
	HNSW      hnswDiff                   `json:"hnsw_config"`
	Vectors   map[string]vectorDiff      `json:"vectors,omitempty"`
	Optimizer optimizersDiff             `json:"optimizer_config"`
	Params    paramsDiff                 `json:"params"`
	Metadata  map[string]json.RawMessage `json:"metadata,omitempty"`
	// VectorsMap: created with vectors {"": {...}}, which the engine
	// holds as one unnamed vector; get_collection answers the map form,
	// as Qdrant keeps the form it was given.
	VectorsMap bool `json:"vectors_map,omitempty"`
}

func newSettings(fsys vfs.FS) *collectionStates[settings] {
	return &collectionStates[settings]{file: settingsFile, what: "collection settings", fs: fsys}
}

// checkFixed refuses a diff of what the engine fixed at creation.
func checkFixed(at string, hd *hnswDiff, m, efConstruction int) error {
	if hd == nil {
		return nil
	}
	if hd.M != nil && *hd.M != m {
		return unsupportedf("%s.m = %d: the collection's graph was built with m = %d and strata does not rebuild it in place "+
			"(create a new collection with the new m)", at, *hd.M, m)
	}
	if hd.EfConstruct != nil && *hd.EfConstruct != efConstruction {
		return unsupportedf("%s.ef_construct = %d: the collection's graph was built with ef_construct = %d and strata does not "+
			"rebuild it in place (create a new collection)", at, *hd.EfConstruct, efConstruction)
	}
	return nil
}

// checkQuantization refuses a quantization other than the field's.
func checkQuantization(at string, raw json.RawMessage, q hnsw.Quantization) error {
	if !present(raw) {
		return nil
	}
	var disabled string
	if json.Unmarshal(raw, &disabled) == nil && disabled == "Disabled" && q == hnsw.QuantNone {
		return nil
	}
	var sq struct {
		Scalar *struct {
			Type      string          `json:"type"`
			Quantile  json.RawMessage `json:"quantile"`
			AlwaysRAM json.RawMessage `json:"always_ram"`
		} `json:"scalar"`
	}
	if strictUnmarshal(raw, &sq) == nil && sq.Scalar != nil && sq.Scalar.Type == "int8" && q == hnsw.QuantSQ8 {
		return nil
	}
	return unsupportedf("%s %s: a collection's quantization is fixed at creation in strata (it is %s)", at, truncate(string(raw)), quantName(q))
}

func quantName(q hnsw.Quantization) string {
	if q == hnsw.QuantSQ8 {
		return "scalar int8"
	}
	return "none"
}

// updateCollection answers PATCH /collections/{name}.
func (h *Handler) updateCollection(_ context.Context, name string, req *updateCollectionRequest) (bool, error) {
	c, err := h.named(name)
	if err != nil {
		return false, err
	}
	if present(req.StrictModeConfig) {
		return false, unsupportedf("strict_mode_config (strata's limits are the server's flags)")
	}
	opts := c.Options()
	fields := map[string]collection.VectorField{}
	for _, f := range c.VectorFields() {
		fields[f.Name] = f
	}
	in := c.Info()
	if err := checkFixed("hnsw_config", req.HNSW, in.M, in.EfConstruction); err != nil {
		return false, err
	}
	if err := checkQuantization("quantization_config", req.QuantizationConfig, opts.Quantization); err != nil {
		return false, err
	}
	for vname, d := range req.Vectors {
		f, ok := fields[vname]
		if !ok {
			return false, badRequestf("Wrong input: Not existing vector name error: %s", vname)
		}
		if err := checkFixed("vectors."+vname+".hnsw_config", d.HNSW, f.M, f.EfConstruction); err != nil {
			return false, err
		}
		if err := checkQuantization("vectors."+vname+".quantization_config", d.QuantizationConfig, f.Quantization); err != nil {
			return false, err
		}
	}
	sparseFields := map[string]collection.SparseField{}
	for _, f := range c.SparseFields() {
		sparseFields[f.Name] = f
	}
	for sname, raw := range req.SparseVectors {
		f, ok := sparseFields[sname]
		if !ok {
			return false, badRequestf("Wrong input: Not existing vector name error: %s", sname)
		}
		parsed, err := parseSparseVectors(json.RawMessage(`{"x":` + string(raw) + `}`))
		if err != nil {
			return false, err
		}
		var p struct {
			Modifier *string `json:"modifier"`
		}
		json.Unmarshal(raw, &p)
		if p.Modifier != nil && parsed[0].Modifier != f.Modifier {
			return false, unsupportedf("sparse_vectors.%s.modifier %q: a sparse field's modifier is fixed at creation in strata (it is %s)",
				sname, *p.Modifier, f.Modifier.String())
		}
	}
	var meta map[string]json.RawMessage
	if present(req.Metadata) {
		if err := strictUnmarshal(req.Metadata, &meta); err != nil {
			return false, badRequestf("metadata must be an object: %v", err)
		}
	}
	err = h.settings.change(c, func(s *settings) error {
		mergeDiff(&s.HNSW, req.HNSW)
		mergeDiff(&s.Optimizer, req.OptimizersConfig)
		mergeDiff(&s.Params, req.Params)
		for vname, d := range req.Vectors {
			if s.Vectors == nil {
				s.Vectors = map[string]vectorDiff{}
			}
			cur := s.Vectors[vname]
			if d.HNSW != nil {
				if cur.HNSW == nil {
					cur.HNSW = &hnswDiff{}
				}
				mergeDiff(cur.HNSW, d.HNSW)
			}
			if d.OnDisk != nil {
				cur.OnDisk = d.OnDisk
			}
			s.Vectors[vname] = cur
		}
		for k, v := range meta {
			if s.Metadata == nil {
				s.Metadata = map[string]json.RawMessage{}
			}
			if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				delete(s.Metadata, k)
			} else {
				s.Metadata[k] = v
			}
		}
		return nil
	})
	return err == nil, err
}

// mergeDiff sets in dst the fields diff sets (both are structs of
// optional fields with omitempty, so their JSON holds only what is set).
func mergeDiff[T any](dst *T, diff *T) {
	if diff == nil {
		return
	}
	b, _ := json.Marshal(diff)
	json.Unmarshal(b, dst)
}

// overlay writes the accepted settings into get_collection's config.
func (s *settings) overlay(config map[string]any) {
	put := func(section string, diff any) {
		m, _ := config[section].(map[string]any)
		if m == nil {
			m = map[string]any{}
			config[section] = m
		}
		b, _ := json.Marshal(diff)
		var kv map[string]any
		json.Unmarshal(b, &kv)
		for k, v := range kv {
			m[k] = v
		}
	}
	put("hnsw_config", s.HNSW)
	put("optimizer_config", s.Optimizer)
	put("params", s.Params)
	if vectors, ok := config["params"].(map[string]any)["vectors"].(map[string]any); ok {
		for vname, d := range s.Vectors {
			v, ok := vectors[vname].(map[string]any)
			if _, unnamed := vectors["size"]; unnamed && vname == "" {
				v, ok = vectors, true // the one unnamed vector's parameters
			}
			if ok {
				if d.HNSW != nil {
					hc, _ := v["hnsw_config"].(map[string]any)
					if hc == nil {
						hc = map[string]any{}
						v["hnsw_config"] = hc
					}
					b, _ := json.Marshal(d.HNSW)
					var kv map[string]any
					json.Unmarshal(b, &kv)
					for k, x := range kv {
						hc[k] = x
					}
				}
				if d.OnDisk != nil {
					v["on_disk"] = *d.OnDisk
				}
			}
		}
	}
	if len(s.Metadata) > 0 {
		config["metadata"] = s.Metadata
	}
}
