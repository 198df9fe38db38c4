package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/text"
)

// queryText answers a query with "text": BM25 alone, or hybrid with
// "vector" (one query; a batch has no text form). The answer is
// {"results": [hit]} with hit = {"id", "score", "distance", "sources",
// "metadata", "vector"}: score is BM25 (text alone) or the fused score,
// distance is null where the vector side did not find the hit, and sources
// is "vector", "text" or "both". There is no "stats": the text side has no
// graph plan to report.
func (s *Server) queryText(w http.ResponseWriter, c *collection.Collection, req *queryRequest) error {
	if rawJSON(req.Vectors) != nil {
		return badRequestf("a text query takes one \"vector\" (hybrid) or none, not \"vectors\"")
	}
	var vec []float32
	if raw := rawJSON(req.Vector); raw != nil {
		var err error
		if vec, err = parseVector(nil, raw, "vector"); err != nil {
			return err
		}
		if dim := c.Options().Dim; len(vec) != dim {
			return invalidf("vector holds %d numbers, the collection's dimension is %d", len(vec), dim)
		}
	}
	fusion, err := parseFusion(req.Fusion)
	if err != nil {
		return err
	}
	var params text.Params // zero: Lucene's defaults
	if req.K1 != nil {
		params.K1, params.HasK1 = *req.K1, true
	}
	if req.B != nil {
		params.B, params.HasB = *req.B, true
	}
	k, ef, in, f, err := s.queryOptions(c, req, 1)
	if err != nil {
		return err
	}
	hits, err := c.QueryText(vec, collection.TextQuery{Text: *req.Text, Field: req.TextField, BM25: params},
		k, ef, f, 1, fusion)
	if err != nil {
		return err
	}
	out, err := appendTextResults(nil, c, hits, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseFusion reads "rrf" (the default) or {"alpha": a}.
func parseFusion(raw json.RawMessage) (text.Fusion, error) {
	raw = rawJSON(raw)
	if raw == nil {
		return text.Fusion{}, nil
	}
	if raw[0] == '"' {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil || name != "rrf" {
			return text.Fusion{}, invalidf("fusion must be \"rrf\" or {\"alpha\": a}, got %s", truncateForMessage(string(raw)))
		}
		return text.Fusion{}, nil
	}
	var weighted struct {
		Alpha *float64 `json:"alpha"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&weighted); err != nil || weighted.Alpha == nil {
		return text.Fusion{}, badRequestf("fusion must be \"rrf\" or {\"alpha\": a}, got %s", truncateForMessage(string(raw)))
	}
	fu := text.Fusion{Weighted: true, Alpha: *weighted.Alpha}
	if err := fu.Check(); err != nil {
		return text.Fusion{}, err
	}
	return fu, nil
}

var sourceNames = [...]string{text.FromVector: "vector", text.FromText: "text", text.FromVector | text.FromText: "both"}

// appendTextResults writes {"results": [hit, ...]} for QueryText's hits.
func appendTextResults(b []byte, c *collection.Collection, hits []collection.Hit, in include) ([]byte, error) {
	var docs [][]byte
	if in.metadata {
		ids := make([]collection.ID, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		var err error
		if docs, err = c.Documents(ids); err != nil {
			return nil, err
		}
	}
	b = append(b, `{"results":[`...)
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendID(b, h.ID)
		b = append(b, `,"score":`...)
		b = appendDistance(b, h.Score)
		if in.distances {
			b = append(b, `,"distance":`...)
			b = appendDistance(b, h.Distance) // NaN (not found by the vector side) is null
		}
		b = append(b, `,"sources":"`...)
		b = append(b, sourceNames[h.Sources]...)
		b = append(b, '"')
		var err error
		if b, err = appendExtras(b, c, in, h.ID, docs, i); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}
