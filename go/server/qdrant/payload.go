package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// payloadSelector is with_payload: everything, nothing, some keys
// (dotted paths) or all but some top-level keys.
type payloadSelector struct {
	all     bool
	include []string
	exclude []string
}

func parsePayloadSelector(raw json.RawMessage, def bool) (payloadSelector, error) {
	switch string(raw) {
	case "true", "false": // qdrant-client's, without reflection
		return payloadSelector{all: string(raw) == "true"}, nil
	}
	if !present(raw) {
		return payloadSelector{all: def}, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return payloadSelector{all: b}, nil
	}
	var keys []string
	if json.Unmarshal(raw, &keys) == nil {
		return payloadSelector{include: keys}, nil
	}
	var sel struct {
		Include []string `json:"include"`
		Exclude []string `json:"exclude"`
	}
	if err := strictUnmarshal(raw, &sel); err != nil || (sel.Include == nil) == (sel.Exclude == nil) {
		return payloadSelector{}, badRequestf("with_payload must be a bool, a list of keys, {\"include\": [...]} or {\"exclude\": [...]}, got %s", truncate(string(raw)))
	}
	for _, k := range sel.Exclude {
		if strings.Contains(k, ".") {
			return payloadSelector{}, unsupportedf("with_payload exclude of a nested key %q", k)
		}
	}
	return payloadSelector{include: sel.Include, exclude: sel.Exclude}, nil
}

// none reports whether s selects no payload at all.
func (s payloadSelector) none() bool { return !s.all && s.include == nil && s.exclude == nil }

// project returns the payload to answer for a stored document (nil: none).
func (s payloadSelector) project(doc []byte) (json.RawMessage, error) {
	switch {
	case s.all:
		return doc, nil
	case s.include == nil && s.exclude == nil:
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return nil, err
	}
	if s.exclude != nil {
		for _, k := range s.exclude {
			delete(fields, k)
		}
		return json.Marshal(fields)
	}
	out := map[string]any{}
	for _, path := range s.include {
		v, ok := lookup(fields, path)
		if !ok {
			continue
		}
		put(out, strings.Split(path, "."), v)
	}
	return json.Marshal(out)
}

func lookup(fields map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	parts := strings.Split(path, ".")
	for i, part := range parts {
		v, ok := fields[part]
		if !ok {
			return nil, false
		}
		if i == len(parts)-1 {
			return v, true
		}
		fields = nil
		if json.Unmarshal(v, &fields) != nil || fields == nil {
			return nil, false
		}
	}
	return nil, false
}

func put(out map[string]any, parts []string, v json.RawMessage) {
	for _, part := range parts[:len(parts)-1] {
		next, ok := out[part].(map[string]any)
		if !ok {
			next = map[string]any{}
			out[part] = next
		}
		out = next
	}
	out[parts[len(parts)-1]] = v
}

// parseWithVector reads with_vector: a bool, or a list of vector names
// of which only the unnamed one ("") exists.
func parseWithVector(raw json.RawMessage, def bool) (bool, error) {
	switch string(raw) {
	case "true", "false": // qdrant-client's, without reflection
		return string(raw) == "true", nil
	}
	if !present(raw) {
		return def, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var names []string
	if json.Unmarshal(raw, &names) == nil {
		// A list of names asks for vectors; every field's are answered
		// (a superset of the names asked for).
		return len(names) > 0, nil
	}
	return false, badRequestf("with_vector must be a bool or a list of vector names, got %s", truncate(string(raw)))
}

// payloadRequest is the body of set_payload, overwrite_payload,
// delete_payload and clear_payload: the points (ids, or a filter) and
// what to do to their payloads.
type payloadRequest struct {
	selectorRequest
	Payload json.RawMessage `json:"payload"`
	Keys    []string        `json:"keys"`
	Key     *string         `json:"key"`
}

// payloadEdit is one payload operation, checked: it turns a stored
// payload into the new one.
type payloadEdit func(doc meta.Document) (meta.Document, error)

// editPayloads applies edit to the selected points' payloads. As Qdrant
// does, a point of an id list that the collection does not hold does not
// stop the others: they are written, and the answer is then a 404 naming
// the first id missing. Each point is read and written back: a write to
// the same point in between is lost.
func (h *Handler) editPayloads(name string, sel *selectorRequest, edit payloadEdit) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	ids, err := selected(c, sel)
	if err != nil {
		return updateResult{}, err
	}
	if len(ids) == 0 {
		return updated(c), nil
	}
	found, docs, _, err := c.Get(ids, false)
	if err != nil {
		return updateResult{}, err
	}
	newDocs := make([]meta.Document, len(found))
	for i, raw := range docs {
		doc, err := meta.ReadDocument(raw)
		if err != nil {
			return updateResult{}, fmt.Errorf("qdrant: stored payload of point %v: %w", pointID{found[i]}, err)
		}
		if newDocs[i], err = edit(doc); err != nil {
			return updateResult{}, badRequestf("payload of point %v cannot be stored by strata: %v", pointID{found[i]}, err)
		}
	}
	if len(found) > 0 {
		if _, err := c.UpdateMetadata(found, newDocs); err != nil {
			return updateResult{}, err
		}
	}
	if len(found) != len(ids) {
		have := make(map[collection.ID]bool, len(found))
		for _, id := range found {
			have[id] = true
		}
		for _, id := range ids {
			if !have[id] {
				return updateResult{}, notFoundPoint(id)
			}
		}
	}
	return updated(c), nil
}

func (req *payloadRequest) payload() (meta.Document, error) {
	if !present(req.Payload) || bytes.TrimSpace(req.Payload)[0] != '{' {
		return meta.Document{}, badRequestf("payload must be a JSON object")
	}
	d, err := meta.ParseDocument(req.Payload)
	if err != nil {
		return meta.Document{}, badRequestf("payload cannot be stored by strata: %v", err)
	}
	return d, nil
}

// setPayload merges the payload into each point's (a null removes the
// key), or with key into the object at that path (meta.Document.SetAt).
func (h *Handler) setPayload(_ context.Context, name string, req *payloadRequest) (updateResult, error) {
	src, err := req.payload()
	if err != nil {
		return updateResult{}, err
	}
	if req.Key == nil {
		return h.editPayloads(name, &req.selectorRequest, func(doc meta.Document) (meta.Document, error) { return doc.Merge(src) })
	}
	path, err := checkKey(*req.Key, "key")
	if err != nil {
		return updateResult{}, err
	}
	return h.editPayloads(name, &req.selectorRequest, func(doc meta.Document) (meta.Document, error) { return doc.SetAt(path, src) })
}

// overwritePayload replaces each point's payload.
func (h *Handler) overwritePayload(_ context.Context, name string, req *payloadRequest) (updateResult, error) {
	if req.Key != nil {
		return updateResult{}, badRequestf("key: overwrite_payload replaces the whole payload (set_payload takes a key)")
	}
	src, err := req.payload()
	if err != nil {
		return updateResult{}, err
	}
	return h.editPayloads(name, &req.selectorRequest, func(meta.Document) (meta.Document, error) { return src, nil })
}

// deletePayload removes each key (a Qdrant key: nested, through lists)
// from each point's payload.
func (h *Handler) deletePayload(_ context.Context, name string, req *payloadRequest) (updateResult, error) {
	if req.Key != nil || present(req.Payload) {
		return updateResult{}, badRequestf("delete_payload takes keys, not key or payload")
	}
	paths := make([]meta.Path, len(req.Keys))
	for i, k := range req.Keys {
		var err error
		if paths[i], err = checkKey(k, fmt.Sprintf("keys[%d]", i)); err != nil {
			return updateResult{}, err
		}
	}
	return h.editPayloads(name, &req.selectorRequest, func(doc meta.Document) (meta.Document, error) {
		for _, p := range paths {
			var err error
			if doc, err = doc.DeleteAt(p); err != nil {
				return meta.Document{}, err
			}
		}
		return doc, nil
	})
}

// clearPayload empties each point's payload; the body is a points
// selector ({"points": [...]} or {"filter": ...}).
func (h *Handler) clearPayload(_ context.Context, name string, req *payloadRequest) (updateResult, error) {
	if req.Key != nil || present(req.Payload) || req.Keys != nil {
		return updateResult{}, badRequestf("clear_payload takes a points selector only ({\"points\": [...]} or {\"filter\": ...})")
	}
	return h.editPayloads(name, &req.selectorRequest, func(meta.Document) (meta.Document, error) { return meta.Document{}, nil })
}
