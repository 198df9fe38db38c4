package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
)

// include says which parts of each point an answer carries.
type include struct{ metadata, distances, vectors, expiresAt bool }

// parseInclude reads an "include" list; absent means def.
func parseInclude(list []string, def include) (include, error) {
	if list == nil {
		return def, nil
	}
	var in include
	for _, item := range list {
		switch item {
		case "metadata":
			in.metadata = true
		case "distances", "distance":
			in.distances = true
		case "vectors", "vector":
			in.vectors = true
		case "expires_at":
			in.expiresAt = true
		default:
			return in, invalidf("include: unknown item %q (want metadata, distances, vectors, expires_at)", item)
		}
	}
	return in, nil
}

// appendExpiresAt appends a point's "expires_at": Unix seconds, or null
// for a point that never expires.
func appendExpiresAt(b []byte, nanos int64) []byte {
	b = append(b, `,"expires_at":`...)
	if nanos == 0 {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, float64(nanos)/1e9, 'f', -1, 64)
}

func parseFilter(raw json.RawMessage) (*meta.Filter, error) {
	raw = rawJSON(raw)
	if raw == nil {
		return nil, nil
	}
	return meta.ParseFilter(raw)
}

type upsertRequest struct {
	IDs      json.RawMessage `json:"ids"`
	Vectors  json.RawMessage `json:"vectors"`
	Metadata json.RawMessage `json:"metadata"`
	// TTL (seconds from now) or ExpiresAt (Unix seconds): a number for
	// every point, or a list of one number (or null: never) per point.
	TTL       json.RawMessage `json:"ttl"`
	ExpiresAt json.RawMessage `json:"expires_at"`
}

// expiry reads an upsert's "ttl" / "expires_at" into a collection.Expiry
// (null in a list is NaN, the engine's "never"); the engine checks values,
// counts and that at most one is given.
func (req *upsertRequest) expiry() (collection.Expiry, error) {
	var e collection.Expiry
	for _, f := range []struct {
		raw  json.RawMessage
		name string
		out  *[]float64
	}{{req.TTL, "ttl", &e.TTL}, {req.ExpiresAt, "expires_at", &e.At}} {
		raw := rawJSON(f.raw)
		if raw == nil {
			continue
		}
		if raw[0] != '[' {
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return e, invalidf("%s: a number of seconds, or a list of one (or null) per id", f.name)
			}
			*f.out = []float64{v}
			continue
		}
		var list []*float64
		if err := json.Unmarshal(raw, &list); err != nil {
			return e, invalidf("%s: a number of seconds, or a list of one (or null) per id", f.name)
		}
		if len(list) == 0 {
			return e, invalidf("%s is empty: give one value or one per id", f.name)
		}
		values := make([]float64, len(list))
		for i, v := range list {
			values[i] = math.NaN()
			if v != nil {
				values[i] = *v
			}
		}
		*f.out = values
	}
	return e, nil
}

func (s *Server) upsert(w http.ResponseWriter, r *http.Request) error {
	c, buf, err := s.collectionAndRawBody(r)
	if err != nil {
		return err
	}
	defer s.releaseBody(buf)
	body := buf.data
	var req upsertRequest
	err = eachField(body, func(key string, value []byte) error {
		switch key {
		case "ids":
			req.IDs = value
		case "vectors":
			req.Vectors = value
		case "metadata":
			req.Metadata = value
		case "ttl":
			req.TTL = value
		case "expires_at":
			req.ExpiresAt = value
		default:
			return badRequestf("unknown field %q", key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rawJSON(req.IDs) == nil || rawJSON(req.Vectors) == nil {
		return badRequestf("upsert needs \"ids\" and \"vectors\"")
	}
	if req.Vectors[0] == '{' {
		return s.upsertPoints(w, c, &req)
	}
	ids, err := parseIDs(nil, req.IDs, "ids")
	if err != nil {
		return err
	}
	dim := c.Options().Dim
	vectors, n, err := parseVectors(make([]float32, 0, len(ids)*dim), req.Vectors, dim, "vectors")
	if err != nil {
		return err
	}
	if n != len(ids) {
		return invalidf("%d ids for %d vectors", len(ids), n)
	}
	docs, err := parseDocs(req.Metadata, n)
	if err != nil {
		return err
	}
	expiry, err := req.expiry()
	if err != nil {
		return err
	}
	if err := c.UpsertExpiring(ids, vectors, docs, expiry); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]int{"upserted": n})
}

// parseDocs reads an upsert's optional "metadata": n documents.
func parseDocs(raw json.RawMessage, n int) ([]meta.Document, error) {
	raw = rawJSON(raw)
	if raw == nil {
		return nil, nil
	}
	docs, err := meta.ParseDocuments(raw)
	if err != nil {
		return nil, err
	}
	if len(docs) != n {
		return nil, invalidf("%d metadata documents for %d ids", len(docs), n)
	}
	return docs, nil
}

type idsOrFilter struct {
	IDs    json.RawMessage `json:"ids"`
	Filter json.RawMessage `json:"filter"`
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	var req idsOrFilter
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	hasIDs, hasFilter := rawJSON(req.IDs) != nil, rawJSON(req.Filter) != nil
	if hasIDs == hasFilter {
		return badRequestf("delete needs exactly one of \"ids\" and \"filter\"")
	}
	var deleted int
	if hasIDs {
		ids, err := parseIDs(nil, req.IDs, "ids")
		if err != nil {
			return err
		}
		deleted, err = c.Delete(ids)
		if err != nil {
			return err
		}
	} else {
		f, err := parseFilter(req.Filter)
		if err != nil {
			return err
		}
		if deleted, err = c.DeleteWhere(f); err != nil {
			return err
		}
	}
	return writeValue(w, http.StatusOK, map[string]int{"deleted": deleted})
}

type metadataRequest struct {
	IDs      json.RawMessage `json:"ids"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *Server) updateMetadata(w http.ResponseWriter, r *http.Request) error {
	var req metadataRequest
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if rawJSON(req.IDs) == nil || rawJSON(req.Metadata) == nil {
		return badRequestf("metadata needs \"ids\" and \"metadata\"")
	}
	ids, err := parseIDs(nil, req.IDs, "ids")
	if err != nil {
		return err
	}
	docs, err := meta.ParseDocuments(req.Metadata)
	if err != nil {
		return err
	}
	n, err := c.UpdateMetadata(ids, docs)
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]int{"updated": n})
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if err := c.Checkpoint(); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]uint64{"checkpoint": c.Info().LastCheckpoint})
}

// createTextIndex answers POST /collections/{name}/text_index: a BM25 index
// over a metadata field of every existing and future point (durable when it
// answers; collection.CreateTextIndex).
func (s *Server) createTextIndex(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Field    string `json:"field"`
		Analyzer string `json:"analyzer"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if req.Field == "" {
		return badRequestf("text_index needs \"field\"")
	}
	if err := c.CreateTextIndex(req.Field, req.Analyzer); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]string{"text_index": req.Field})
}

// checkIntegrity answers POST /collections/{name}/check_integrity with
// {"ok": true} or {"ok": false, "problem": ...}: a broken invariant is the
// answer to the question asked, not a failed request.
func (s *Server) checkIntegrity(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	err = c.CheckIntegrity()
	switch {
	case err == nil:
		return writeValue(w, http.StatusOK, map[string]any{"ok": true})
	case errors.Is(err, hnsw.ErrCorrupt):
		return writeValue(w, http.StatusOK, map[string]any{"ok": false, "problem": err.Error()})
	}
	return err
}

func (s *Server) count(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Filter json.RawMessage `json:"filter"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	f, err := parseFilter(req.Filter)
	if err != nil {
		return err
	}
	n, err := c.Count(f)
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]int{"count": n})
}

type getRequest struct {
	IDs     json.RawMessage `json:"ids"`
	Include []string        `json:"include"`
	// Vectors names vector fields whose values each point carries in
	// "vectors" ({field: value}, the fields it has).
	Vectors []string `json:"vectors"`
}

// get answers POST /collections/{name}/get: the points among ids that
// exist, in request order.
func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	var req getRequest
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if rawJSON(req.IDs) == nil {
		return badRequestf("get needs \"ids\"")
	}
	ids, err := parseIDs(nil, req.IDs, "ids")
	if err != nil {
		return err
	}
	in, err := parseInclude(req.Include, include{metadata: true})
	if err != nil {
		return err
	}
	if err := s.limits.Answer(len(ids), c.Options().Dim, in.vectors); err != nil {
		return err
	}
	return s.writePoints(w, c, ids, in, false, nil, req.Vectors)
}

type scanRequest struct {
	Filter  json.RawMessage `json:"filter"`
	After   json.RawMessage `json:"after"` // an id or null
	Limit   int             `json:"limit"`
	Include []string        `json:"include"`
}

// scan answers a page of the points matching a filter, in scan order
// (integer ids ascending, then string ids in byte order), and the
// "next_after" to pass for the next page (null after the last).
func (s *Server) scan(w http.ResponseWriter, r *http.Request) error {
	var req scanRequest
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	f, err := parseFilter(req.Filter)
	if err != nil {
		return err
	}
	if req.Limit == 0 {
		req.Limit = 1000
	}
	if req.Limit < 0 {
		return invalidf("limit must be 1 or more, got %d", req.Limit)
	}
	in, err := parseInclude(req.Include, include{metadata: true})
	if err != nil {
		return err
	}
	if err := s.limits.Answer(req.Limit, c.Options().Dim, in.vectors); err != nil {
		return err
	}
	var after collection.ID
	hasAfter := rawJSON(req.After) != nil
	if hasAfter {
		rd := numberReader{data: req.After, what: "after", row: -1, col: -1}
		if after, err = rd.id(); err == nil {
			err = rd.end()
		}
		if err != nil {
			return err
		}
	}
	ids, err := c.ScanIDs(f, after, hasAfter, req.Limit)
	if err != nil {
		return err
	}
	var next *collection.ID
	if len(ids) == req.Limit {
		next = &ids[len(ids)-1]
	}
	return s.writePoints(w, c, ids, in, true, next, nil)
}

// writePoints answers {"points": [{"id", "metadata", "vector"}]} and, for
// a scan, "next_after".
func (s *Server) writePoints(w http.ResponseWriter, c *collection.Collection, ids []collection.ID, in include, scan bool, next *collection.ID,
	named []string) error {
	found, docs, vectors, err := c.Get(ids, in.vectors)
	if err != nil {
		return err
	}
	var expires []int64
	if in.expiresAt {
		if expires, err = c.ExpiresAt(found); err != nil {
			return err
		}
	}
	dim := c.Options().Dim
	a := answer{w: w}
	b := make([]byte, 0, min(64+len(found)*(32+dim*12), streamAt+streamAt/4))
	b = append(b, `{"points":[`...)
	for i, id := range found {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendID(b, id)
		if in.metadata {
			b = append(b, `,"metadata":`...)
			b = append(b, docs[i]...)
		}
		if in.vectors {
			b = append(b, `,"vector":`...)
			b = appendFloats(b, vectors[i*dim:(i+1)*dim])
		}
		if in.expiresAt {
			b = appendExpiresAt(b, expires[i])
		}
		if named != nil {
			if b, err = appendNamed(b, c, id, named); err != nil {
				return err
			}
		}
		b = append(b, '}')
		b = a.spill(b)
	}
	b = append(b, ']')
	if next != nil {
		b = append(b, `,"next_after":`...)
		b = appendID(b, *next)
	} else if scan {
		b = append(b, `,"next_after":null`...)
	}
	a.finish(append(b, '}'))
	return nil
}

// getPoint answers GET /collections/{name}/points/{id}[?include=vector].
func (s *Server) getPoint(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	c, err := s.reg.Get(name)
	if err != nil {
		return err
	}
	id, err := pathID(r.PathValue("id"))
	if err != nil {
		return err
	}
	withVector := false
	switch v := r.URL.Query().Get("include"); v {
	case "", "metadata":
	case "vector", "vectors":
		withVector = true
	default:
		return invalidf("include must be \"vector\" or absent, got %q", truncateForMessage(v))
	}
	found, docs, vectors, err := c.Get([]collection.ID{id}, withVector)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("%w: no point %v in %q", collection.ErrNotFound, id, name)
	}
	b := appendID([]byte(`{"id":`), id)
	b = append(append(b, `,"metadata":`...), docs[0]...)
	if withVector {
		b = appendFloats(append(b, `,"vector":`...), vectors)
	}
	writeJSON(w, http.StatusOK, append(b, '}'))
	return nil
}

func appendFloats(b []byte, fs []float32) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return append(b, ']')
}

// pathID reads the {id} of a point's URL: digits are an integer id (as a
// JSON number reads them: no leading zeros, at most 2^63-1), anything
// else a string id.
func pathID(segment string) (collection.ID, error) {
	if segment == "" || strings.Trim(segment, "0123456789") != "" {
		return collection.StringID(segment), nil
	}
	rd := numberReader{data: []byte(segment), what: "point id", row: -1, col: -1}
	n, err := rd.intID()
	if err == nil {
		err = rd.end()
	}
	return collection.IntID(n), err
}
