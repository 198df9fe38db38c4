package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/internal/jsonnum"
)

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// parseVector reads a vector: a list of numbers, or {"": [...]} (the
// unnamed vector by name). Named vectors and sparse vectors are refused.
func parseVector(raw json.RawMessage, dim int) ([]float32, error) {
	return appendVector(make([]float32, 0, dim), raw, dim)
}

// appendVector appends the vector raw holds (as parseVector reads it) to
// dst. A plain list of numbers, what every client sends, is read by
// package jsonnum without reflection; anything else, and every error, by
// encoding/json, which names the problem.
func appendVector(dst []float32, raw json.RawMessage, dim int) ([]float32, error) {
	if out, ok := jsonnum.Float32s(dst, raw); ok {
		if got := len(out) - len(dst); got != dim {
			return nil, badRequestf("Wrong input: Vector dimension error: expected dim: %d, got %d", dim, got)
		}
		return out, nil
	}
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
	for _, x := range v {
		if math.Abs(x) > math.MaxFloat32 {
			return nil, badRequestf("vector value %g is out of float32 range", x)
		}
		dst = append(dst, float32(x))
	}
	return dst, nil
}

// parsePayload turns a Qdrant payload into a strata document; what
// strata's metadata cannot hold (keys with '.' or a leading '$') is a 400
// naming the problem, not a silent change.
func parsePayload(raw json.RawMessage, id collection.ID) (meta.Document, error) {
	if !present(raw) {
		raw = json.RawMessage("{}")
	}
	d, err := meta.ParseDocument(raw)
	if err != nil {
		return meta.Document{}, badRequestf("payload of point %v cannot be stored by strata: %v", pointID{id}, err)
	}
	return d, nil
}

type pointStruct struct {
	ID      json.RawMessage `json:"id"`
	Vector  json.RawMessage `json:"vector"`
	Payload json.RawMessage `json:"payload"`
	// dense is the vector the gRPC door decoded already (one dense
	// vector, checked finite), instead of Vector: the JSON round trip of
	// its numbers was most of a gRPC upsert's cost. See rawVector.
	dense []float32
	// strata's extension (expiry.go): the point's time to live.
	StrataTTL       *float64 `json:"strata_ttl"`
	StrataExpiresAt *float64 `json:"strata_expires_at"`
}

// appendVector appends the point's vector, of dim numbers, to dst.
func (p *pointStruct) appendVector(dst []float32, dim int) ([]float32, error) {
	if p.dense == nil {
		return appendVector(dst, p.Vector, dim)
	}
	if len(p.dense) != dim {
		return nil, badRequestf("Wrong input: Vector dimension error: expected dim: %d, got %d", dim, len(p.dense))
	}
	return append(dst, p.dense...), nil
}

// rawVector is the point's vector as JSON, for the readers of named
// fields.
func (p *pointStruct) rawVector() (json.RawMessage, error) {
	if p.dense == nil {
		return p.Vector, nil
	}
	return json.Marshal(p.dense)
}

type upsertRequest struct {
	Points       []pointStruct   `json:"points"`
	Batch        *upsertBatch    `json:"batch"`
	ShardKey     json.RawMessage `json:"shard_key"`
	UpdateFilter json.RawMessage `json:"update_filter"`
	UpdateMode   *string         `json:"update_mode"`
}

// upsertBatch is Qdrant's columnar form of an upsert.
type upsertBatch struct {
	IDs      []json.RawMessage `json:"ids"`
	Vectors  json.RawMessage   `json:"vectors"`
	Payloads []json.RawMessage `json:"payloads"`
	// strata's extension (expiry.go): one value (or null) per point.
	StrataTTL       []*float64 `json:"strata_ttl"`
	StrataExpiresAt []*float64 `json:"strata_expires_at"`
}

// payload parses the payload of the batch's i-th point, id (none when the
// batch has no payloads).
func (b *upsertBatch) payload(i int, id collection.ID) (meta.Document, error) {
	var p json.RawMessage
	if b.Payloads != nil {
		p = b.Payloads[i]
	}
	return parsePayload(p, id)
}

// upsert is upsert: {points} or {batch}.
func (h *Handler) upsert(_ context.Context, name string, req *upsertRequest) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	if c.Options().Vectors != nil {
		return h.upsertNamed(c, req)
	}
	dim := c.Options().Dim
	var ids []collection.ID
	var vectors []float32
	var docs []meta.Document
	var exps []pointExpiry
	switch {
	case req.Batch != nil && req.Points == nil:
		b := req.Batch
		if ids, err = parseIDs(b.IDs); err != nil {
			return updateResult{}, err
		}
		if exps, err = b.expiry(len(ids)); err != nil {
			return updateResult{}, err
		}
		// the rows as sub-slices of the body, checked once (encoding/json
		// scanned them twice and copied each); anything but a list of
		// JSON values goes to encoding/json, for its error
		var rows []json.RawMessage
		if len(b.Vectors) > 0 {
			rows = rawElements(b.Vectors)
		}
		if rows == nil && json.Unmarshal(b.Vectors, &rows) != nil {
			if named, ok := batchNamed(b.Vectors); ok && len(named) == 1 && named[""] != nil {
				rows = named[""]
			} else {
				return updateResult{}, badRequestf("batch.vectors must be a list of vectors: the collection holds one unnamed vector")
			}
		}
		if len(rows) != len(ids) || (b.Payloads != nil && len(b.Payloads) != len(ids)) {
			return updateResult{}, badRequestf("batch holds %d ids, %d vectors and %d payloads", len(ids), len(rows), len(b.Payloads))
		}
		vectors = make([]float32, 0, len(rows)*dim)
		for i, row := range rows {
			if vectors, err = appendVector(vectors, row, dim); err != nil {
				return updateResult{}, err
			}
			d, err := b.payload(i, ids[i])
			if err != nil {
				return updateResult{}, err
			}
			docs = append(docs, d)
		}
	case req.Points != nil && req.Batch == nil:
		n := len(req.Points)
		ids, vectors, docs, exps = make([]collection.ID, 0, n), make([]float32, 0, n*dim), make([]meta.Document, 0, n), make([]pointExpiry, 0, n)
		for _, p := range req.Points {
			id, err := parseID(p.ID)
			if err != nil {
				return updateResult{}, err
			}
			if vectors, err = p.appendVector(vectors, dim); err != nil {
				return updateResult{}, err
			}
			d, err := parsePayload(p.Payload, id)
			if err != nil {
				return updateResult{}, err
			}
			ids, docs = append(ids, id), append(docs, d)
			exps = append(exps, pointExpiry{ttl: p.StrataTTL, at: p.StrataExpiresAt})
		}
	default:
		return updateResult{}, badRequestf("upsert needs exactly one of \"points\" and \"batch\"")
	}
	// Qdrant keeps the last of repeated ids in one request; strata refuses
	// duplicates, so drop the earlier ones.
	if first := firstOnly(ids, req.UpdateMode); first != nil {
		exps = keepExpiries(first, exps)
		ids, vectors, docs = keepDense(first, ids, vectors, docs, dim)
	}
	exps = keepLast(ids, exps)
	ids, vectors, docs = lastOfEachID(ids, vectors, docs, dim)
	keep, err := writable(c, ids, req.UpdateFilter, req.UpdateMode)
	if err != nil {
		return updateResult{}, err
	}
	exps = keepExpiries(keep, exps)
	if ids, vectors, docs = keepDense(keep, ids, vectors, docs, dim); len(ids) == 0 {
		return updated(c), nil
	}
	expiry, err := expiryOf(exps)
	if err != nil {
		return updateResult{}, err
	}
	if err := c.UpsertExpiring(ids, vectors, docs, expiry); err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}

// batchNamed reads a batch's vectors given as an object of names to one
// value per point.
func batchNamed(raw json.RawMessage) (map[string][]json.RawMessage, bool) {
	var named map[string][]json.RawMessage
	if json.Unmarshal(raw, &named) != nil {
		return nil, false
	}
	return named, true
}

// upsertNamed upserts into a collection of named (or multivector) fields:
// each point gets exactly the fields its VectorStruct names.
func (h *Handler) upsertNamed(c *collection.Collection, req *upsertRequest) (updateResult, error) {
	schema := schemaOf(c)
	var ids []collection.ID
	var points []map[string]pointValue
	var docs []meta.Document
	var exps []pointExpiry
	var err error
	switch {
	case req.Batch != nil && req.Points == nil:
		b := req.Batch
		if ids, err = parseIDs(b.IDs); err != nil {
			return updateResult{}, err
		}
		if exps, err = b.expiry(len(ids)); err != nil {
			return updateResult{}, err
		}
		if b.Payloads != nil && len(b.Payloads) != len(ids) {
			return updateResult{}, badRequestf("batch holds %d ids and %d payloads", len(ids), len(b.Payloads))
		}
		points = make([]map[string]pointValue, len(ids))
		for i := range points {
			points[i] = map[string]pointValue{}
		}
		named, ok := batchNamed(b.Vectors)
		if !ok {
			var rows []json.RawMessage
			if err := json.Unmarshal(b.Vectors, &rows); err != nil {
				return updateResult{}, badRequestf("batch.vectors must be a list of vectors or an object of names to lists")
			}
			named = map[string][]json.RawMessage{"": rows}
		}
		for name, rows := range named {
			if len(rows) != len(ids) {
				return updateResult{}, badRequestf("batch holds %d ids and %d vectors of %q", len(ids), len(rows), name)
			}
			for i, row := range rows {
				v, err := parseFieldValue(row, name, schema)
				if err != nil {
					return updateResult{}, err
				}
				points[i][name] = v
			}
		}
		for i := range ids {
			d, err := b.payload(i, ids[i])
			if err != nil {
				return updateResult{}, err
			}
			docs = append(docs, d)
		}
	case req.Points != nil && req.Batch == nil:
		for _, p := range req.Points {
			id, err := parseID(p.ID)
			if err != nil {
				return updateResult{}, err
			}
			raw, err := p.rawVector()
			if err != nil {
				return updateResult{}, err
			}
			v, err := parsePointVectors(raw, schema)
			if err != nil {
				return updateResult{}, err
			}
			d, err := parsePayload(p.Payload, id)
			if err != nil {
				return updateResult{}, err
			}
			ids, points, docs = append(ids, id), append(points, v), append(docs, d)
			exps = append(exps, pointExpiry{ttl: p.StrataTTL, at: p.StrataExpiresAt})
		}
	default:
		return updateResult{}, badRequestf("upsert needs exactly one of \"points\" and \"batch\"")
	}
	if first := firstOnly(ids, req.UpdateMode); first != nil {
		exps = keepExpiries(first, exps)
		ids, points, docs = keepNamed(first, ids, points, docs)
	}
	exps = keepLast(ids, exps)
	// Qdrant keeps the last of repeated ids in one request.
	last := make(map[collection.ID]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	if len(last) != len(ids) {
		var keptIDs []collection.ID
		var keptPoints []map[string]pointValue
		var keptDocs []meta.Document
		for i, id := range ids {
			if last[id] == i {
				keptIDs, keptPoints, keptDocs = append(keptIDs, id), append(keptPoints, points[i]), append(keptDocs, docs[i])
			}
		}
		ids, points, docs = keptIDs, keptPoints, keptDocs
	}
	keep, err := writable(c, ids, req.UpdateFilter, req.UpdateMode)
	if err != nil {
		return updateResult{}, err
	}
	exps = keepExpiries(keep, exps)
	if ids, points, docs = keepNamed(keep, ids, points, docs); len(ids) == 0 {
		return updated(c), nil
	}
	expiry, err := expiryOf(exps)
	if err != nil {
		return updateResult{}, err
	}
	if err := c.UpsertPointsExpiring(ids, columns(points, schema), docs, expiry); err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}

func lastOfEachID(ids []collection.ID, vectors []float32, docs []meta.Document, dim int) ([]collection.ID, []float32, []meta.Document) {
	last := make(map[collection.ID]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	if len(last) == len(ids) {
		return ids, vectors, docs
	}
	var outIDs []collection.ID
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
	ID      pointID         `json:"id"`
	Version *uint64         `json:"version,omitempty"`
	Score   *float64        `json:"score,omitempty"`
	Payload json.RawMessage `json:"payload"`
	// Vector is a list of numbers (the one unnamed vector) or an object
	// of names to vectors (named fields, multivector fields).
	Vector any `json:"vector"`
	// OrderValue is the order_by value of a scroll ordered by a key: a
	// number, or a datetime's microseconds since the epoch (int64).
	OrderValue any `json:"order_value,omitempty"`
}

// records looks ids up and shapes them as Qdrant's records; ids that are
// gone are left out.
func records(c *collection.Collection, ids []collection.ID, sel payloadSelector, withVector bool) ([]record, error) {
	// The vectors of named fields come from namedVectors.
	found, docs, vectors, err := c.Get(ids, withVector && c.Options().Vectors == nil)
	if err != nil {
		return nil, err
	}
	dim := c.Options().Dim
	var named []map[string]any
	if withVector {
		if named, err = namedVectors(c, found); err != nil {
			return nil, err
		}
	}
	out := make([]record, len(found))
	for i, id := range found {
		out[i].ID = pointID{id}
		if out[i].Payload, err = sel.project(docs[i]); err != nil {
			return nil, err
		}
		switch {
		case named != nil:
			out[i].Vector = named[i]
		case withVector:
			out[i].Vector = vectors[i*dim : (i+1)*dim]
		}
	}
	return out, nil
}

// retrieveRequest is Qdrant's PointRequest.
type retrieveRequest struct {
	IDs         []json.RawMessage `json:"ids"`
	WithPayload json.RawMessage   `json:"with_payload"`
	WithVector  json.RawMessage   `json:"with_vector"`
	ShardKey    json.RawMessage   `json:"shard_key"`
}

// retrieve is retrieve: the records of the ids that exist.
func (h *Handler) retrieve(_ context.Context, name string, req *retrieveRequest) ([]record, error) {
	c, err := h.named(name)
	if err != nil {
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

// getPoint is one point, its payload and vectors.
func (h *Handler) getPoint(_ context.Context, name string, id collection.ID) (record, error) {
	c, err := h.named(name)
	if err != nil {
		return record{}, err
	}
	recs, err := records(c, []collection.ID{id}, payloadSelector{all: true}, true)
	if err != nil {
		return record{}, err
	}
	if len(recs) == 0 {
		return record{}, notFoundPoint(id)
	}
	return recs[0], nil
}

func (h *Handler) restGetPoint(r *http.Request) (any, error) {
	if _, err := h.collection(r); err != nil {
		return nil, err
	}
	id, err := parsePathID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return h.getPoint(r.Context(), r.PathValue("name"), id)
}

func notFoundPoint(id collection.ID) error {
	return &pointError{id}
}

type pointError struct{ id collection.ID }

func (e *pointError) Error() string {
	return "Not found: No point with id " + pointID{e.id}.String() + " found"
}
func (e *pointError) Unwrap() error { return ErrNotFound }

// selectorRequest is Qdrant's points selector: ids or a filter.
type selectorRequest struct {
	Points   []json.RawMessage `json:"points"`
	Filter   json.RawMessage   `json:"filter"`
	ShardKey json.RawMessage   `json:"shard_key"`
}

// selected returns the ids a selector names that exist.
func selected(c *collection.Collection, req *selectorRequest) ([]collection.ID, error) {
	switch {
	case req.Points != nil && !present(req.Filter):
		ids, err := parseIDs(req.Points)
		if err != nil {
			return nil, err
		}
		// A selector is a set: an id listed twice is selected once
		// (the engine refuses repeated ids in one write).
		seen := make(map[collection.ID]bool, len(ids))
		return slices.DeleteFunc(ids, func(id collection.ID) bool {
			dup := seen[id]
			seen[id] = true
			return dup
		}), nil
	case req.Points == nil && present(req.Filter):
		p, err := compileFilter(req.Filter)
		if err != nil {
			return nil, err
		}
		return c.ScanIDs(p, collection.ID{}, false, 0)
	}
	return nil, badRequestf("select points with exactly one of \"points\" (ids) and \"filter\"")
}

// deletePoints is delete: {points} or {filter}.
func (h *Handler) deletePoints(_ context.Context, name string, req *selectorRequest) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	ids, err := selected(c, req)
	if err != nil {
		return updateResult{}, err
	}
	if _, err := c.Delete(ids); err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}
