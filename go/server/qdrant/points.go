package qdrant

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"regexp"
	"strconv"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

var uuidPattern = regexp.MustCompile(`^(?i)(urn:uuid:)?\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$`)

// parseID reads a Qdrant point id: an unsigned integer below 2^63 (strata's
// id space). UUIDs are refused, not mapped: see the package doc.
func parseID(raw json.RawMessage) (uint64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && uuidPattern.MatchString(s) {
			return 0, unsupportedf("UUID point id %q: strata's Qdrant API takes unsigned integer ids below 2^63", s)
		}
		return 0, badRequestf("point id %s is neither an unsigned integer nor a UUID", raw)
	}
	id, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, badRequestf("point id %s is not an unsigned integer", truncate(string(raw)))
	}
	if id > math.MaxInt64 {
		return 0, unsupportedf("point id %d: strata ids are below 2^63", id)
	}
	return id, nil
}

func parseIDs(raws []json.RawMessage) ([]uint64, error) {
	ids := make([]uint64, len(raws))
	for i, raw := range raws {
		var err error
		if ids[i], err = parseID(raw); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// parseVector reads a vector: a list of numbers, or {"": [...]} (the
// unnamed vector by name). Named vectors and sparse vectors are refused.
func parseVector(raw json.RawMessage, dim int) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var named map[string]json.RawMessage
		if err := json.Unmarshal(raw, &named); err != nil || len(named) != 1 || named[""] == nil {
			return nil, unsupportedf("named or sparse vectors: a collection holds one unnamed vector")
		}
		raw = named[""]
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, badRequestf("a vector must be a list of numbers: %v", err)
	}
	if len(v) != dim {
		return nil, badRequestf("Wrong input: Vector dimension error: expected dim: %d, got %d", dim, len(v))
	}
	out := make([]float32, dim)
	for i, x := range v {
		if math.Abs(x) > math.MaxFloat32 {
			return nil, badRequestf("vector value %g is out of float32 range", x)
		}
		out[i] = float32(x)
	}
	return out, nil
}

// parsePayload turns a Qdrant payload into a strata document; what
// strata's metadata cannot hold (lists of objects, keys with '.') is a 400
// naming the problem, not a silent change.
func parsePayload(raw json.RawMessage, id uint64) (meta.Document, error) {
	if !present(raw) {
		raw = json.RawMessage("{}")
	}
	d, err := meta.ParseDocument(raw)
	if err != nil {
		return meta.Document{}, badRequestf("payload of point %d cannot be stored by strata: %v", id, err)
	}
	return d, nil
}

type pointStruct struct {
	ID      json.RawMessage `json:"id"`
	Vector  json.RawMessage `json:"vector"`
	Payload json.RawMessage `json:"payload"`
}

type upsertRequest struct {
	Points []pointStruct `json:"points"`
	Batch  *struct {
		IDs      []json.RawMessage `json:"ids"`
		Vectors  json.RawMessage   `json:"vectors"`
		Payloads []json.RawMessage `json:"payloads"`
	} `json:"batch"`
	ShardKey     json.RawMessage `json:"shard_key"`
	UpdateFilter json.RawMessage `json:"update_filter"`
}

func (h *Handler) upsert(r *http.Request) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	var req upsertRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if present(req.UpdateFilter) {
		return nil, unsupportedf("update_filter")
	}
	dim := c.Options().Dim
	var ids []uint64
	var vectors []float32
	var docs []meta.Document
	switch {
	case req.Batch != nil && req.Points == nil:
		b := req.Batch
		if ids, err = parseIDs(b.IDs); err != nil {
			return nil, err
		}
		var rows []json.RawMessage
		if err := json.Unmarshal(b.Vectors, &rows); err != nil {
			return nil, unsupportedf("batch.vectors must be a list of vectors (named vectors are not supported)")
		}
		if len(rows) != len(ids) || (b.Payloads != nil && len(b.Payloads) != len(ids)) {
			return nil, badRequestf("batch holds %d ids, %d vectors and %d payloads", len(ids), len(rows), len(b.Payloads))
		}
		for i, row := range rows {
			v, err := parseVector(row, dim)
			if err != nil {
				return nil, err
			}
			vectors = append(vectors, v...)
			var p json.RawMessage
			if b.Payloads != nil {
				p = b.Payloads[i]
			}
			d, err := parsePayload(p, ids[i])
			if err != nil {
				return nil, err
			}
			docs = append(docs, d)
		}
	case req.Points != nil && req.Batch == nil:
		for _, p := range req.Points {
			id, err := parseID(p.ID)
			if err != nil {
				return nil, err
			}
			v, err := parseVector(p.Vector, dim)
			if err != nil {
				return nil, err
			}
			d, err := parsePayload(p.Payload, id)
			if err != nil {
				return nil, err
			}
			ids, vectors, docs = append(ids, id), append(vectors, v...), append(docs, d)
		}
	default:
		return nil, badRequestf("upsert needs exactly one of \"points\" and \"batch\"")
	}
	// Qdrant keeps the last of repeated ids in one request; strata refuses
	// duplicates, so drop the earlier ones.
	ids, vectors, docs = lastOfEachID(ids, vectors, docs, dim)
	if err := c.Upsert(ids, vectors, docs); err != nil {
		return nil, err
	}
	return updateResult(c), nil
}

func lastOfEachID(ids []uint64, vectors []float32, docs []meta.Document, dim int) ([]uint64, []float32, []meta.Document) {
	last := make(map[uint64]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	if len(last) == len(ids) {
		return ids, vectors, docs
	}
	var outIDs []uint64
	var outVecs []float32
	var outDocs []meta.Document
	for i, id := range ids {
		if last[id] == i {
			outIDs, outDocs = append(outIDs, id), append(outDocs, docs[i])
			outVecs = append(outVecs, vectors[i*dim:(i+1)*dim]...)
		}
	}
	return outIDs, outVecs, outDocs
}

// record is Qdrant's Record (and, with Score and Version, ScoredPoint).
type record struct {
	ID      uint64          `json:"id"`
	Version *uint64         `json:"version,omitempty"`
	Score   *float64        `json:"score,omitempty"`
	Payload json.RawMessage `json:"payload"`
	Vector  []float32       `json:"vector"`
	// OrderValue is the order_by value of a scroll ordered by a key.
	OrderValue *float64 `json:"order_value,omitempty"`
}

// records looks ids up and shapes them as Qdrant's records; ids that are
// gone are left out.
func records(c *collection.Collection, ids []uint64, sel payloadSelector, withVector bool) ([]record, error) {
	found, docs, vectors, err := c.Get(ids, withVector)
	if err != nil {
		return nil, err
	}
	dim := c.Options().Dim
	out := make([]record, len(found))
	for i, id := range found {
		out[i].ID = id
		if out[i].Payload, err = sel.project(docs[i]); err != nil {
			return nil, err
		}
		if withVector {
			out[i].Vector = vectors[i*dim : (i+1)*dim]
		}
	}
	return out, nil
}

func (h *Handler) retrieve(r *http.Request) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		IDs         []json.RawMessage `json:"ids"`
		WithPayload json.RawMessage   `json:"with_payload"`
		WithVector  json.RawMessage   `json:"with_vector"`
		ShardKey    json.RawMessage   `json:"shard_key"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	ids, err := parseIDs(req.IDs)
	if err != nil {
		return nil, err
	}
	sel, err := parsePayloadSelector(req.WithPayload, true)
	if err != nil {
		return nil, err
	}
	withVector, err := parseWithVector(req.WithVector, true)
	if err != nil {
		return nil, err
	}
	if err := h.limits.Answer(len(ids), c.Options().Dim, withVector); err != nil {
		return nil, err
	}
	return records(c, ids, sel, withVector)
}

func (h *Handler) getPoint(r *http.Request) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	id, err := parseID(json.RawMessage(r.PathValue("id")))
	if err != nil {
		return nil, err
	}
	recs, err := records(c, []uint64{id}, payloadSelector{all: true}, true)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, notFoundPoint(id)
	}
	return recs[0], nil
}

func notFoundPoint(id uint64) error {
	return &pointError{id}
}

type pointError struct{ id uint64 }

func (e *pointError) Error() string {
	return "Not found: No point with id " + strconv.FormatUint(e.id, 10) + " found"
}
func (e *pointError) Unwrap() error { return ErrNotFound }

// selectorRequest is Qdrant's points selector: ids or a filter.
type selectorRequest struct {
	Points   []json.RawMessage `json:"points"`
	Filter   json.RawMessage   `json:"filter"`
	ShardKey json.RawMessage   `json:"shard_key"`
}

// selected returns the ids a selector names that exist.
func selected(c *collection.Collection, req *selectorRequest) ([]uint64, error) {
	switch {
	case req.Points != nil && !present(req.Filter):
		return parseIDs(req.Points)
	case req.Points == nil && present(req.Filter):
		p, err := compileFilter(req.Filter)
		if err != nil {
			return nil, err
		}
		return c.ScanIDs(p, 0, false, 0)
	}
	return nil, badRequestf("select points with exactly one of \"points\" (ids) and \"filter\"")
}

func (h *Handler) deletePoints(r *http.Request) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	var req selectorRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	ids, err := selected(c, &req)
	if err != nil {
		return nil, err
	}
	if _, err := c.Delete(ids); err != nil {
		return nil, err
	}
	return updateResult(c), nil
}
