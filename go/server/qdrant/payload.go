package qdrant

import (
	"bytes"
	"encoding/json"
	"net/http"
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

// payloadRequest is the body of set_payload, overwrite_payload and
// delete_payload.
type payloadRequest struct {
	selectorRequest
	Payload json.RawMessage `json:"payload"`
	Keys    []string        `json:"keys"`
	Key     *string         `json:"key"`
}

// editPayload rewrites the payload of the selected points with edit
// (which gets the stored fields and returns the new ones). Each point is
// read and written back: a write to the same point in between is lost.
func (h *Handler) editPayload(r *http.Request, check func(req *payloadRequest) error, edit func(fields map[string]json.RawMessage, req *payloadRequest) map[string]json.RawMessage) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	var req payloadRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Key != nil {
		return nil, unsupportedf("key (setting payload under a nested path)")
	}
	if err := check(&req); err != nil {
		return nil, err
	}
	ids, err := selected(c, &req.selectorRequest)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return updateResult(c), nil
	}
	found, docs, _, err := c.Get(ids, false)
	if err != nil {
		return nil, err
	}
	if len(found) != len(ids) {
		have := make(map[collection.ID]bool, len(found))
		for _, id := range found {
			have[id] = true
		}
		for _, id := range ids {
			if !have[id] {
				return nil, notFoundPoint(id)
			}
		}
	}
	newDocs := make([]meta.Document, len(found))
	for i, doc := range docs {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(doc, &fields); err != nil {
			return nil, err
		}
		data, err := json.Marshal(edit(fields, &req))
		if err != nil {
			return nil, err
		}
		if newDocs[i], err = parsePayload(data, found[i]); err != nil {
			return nil, err
		}
	}
	if _, err := c.UpdateMetadata(found, newDocs); err != nil {
		return nil, err
	}
	return updateResult(c), nil
}

func payloadFields(req *payloadRequest) map[string]json.RawMessage {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(req.Payload))
	if dec.Decode(&fields) != nil {
		return nil
	}
	return fields
}

func checkPayloadBody(req *payloadRequest) error {
	if !present(req.Payload) || payloadFields(req) == nil {
		return badRequestf("payload must be a JSON object")
	}
	return nil
}

func (h *Handler) setPayload(r *http.Request) (any, error) {
	return h.editPayload(r, checkPayloadBody, func(fields map[string]json.RawMessage, req *payloadRequest) map[string]json.RawMessage {
		for k, v := range payloadFields(req) {
			if !present(v) { // Qdrant's merge: a key set to null is removed
				delete(fields, k)
				continue
			}
			fields[k] = v
		}
		return fields
	})
}

func (h *Handler) overwritePayload(r *http.Request) (any, error) {
	return h.editPayload(r, checkPayloadBody, func(_ map[string]json.RawMessage, req *payloadRequest) map[string]json.RawMessage {
		return payloadFields(req)
	})
}

func (h *Handler) deletePayload(r *http.Request) (any, error) {
	check := func(req *payloadRequest) error {
		for _, k := range req.Keys {
			if strings.Contains(k, ".") {
				return unsupportedf("deleting the nested payload key %q", k)
			}
		}
		return nil
	}
	return h.editPayload(r, check, func(fields map[string]json.RawMessage, req *payloadRequest) map[string]json.RawMessage {
		for _, k := range req.Keys {
			delete(fields, k)
		}
		return fields
	})
}
