package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
)

// queryRequest is the body of POST /collections/{name}/query.
type queryRequest struct {
	Vector  json.RawMessage `json:"vector"`
	Vectors json.RawMessage `json:"vectors"`
	K       int             `json:"k"`
	HasK    bool            `json:"-"` // K was sent (a pointer would cost an allocation)
	Ef      int             `json:"ef"`
	Filter  json.RawMessage `json:"filter"`
	Include []string        `json:"include"`
	// Exact asks for the exact k nearest: ef is raised to the number of
	// points, which makes the planner scan every (allowed) vector instead
	// of walking the graph (see hnsw's choosePlan: the scan wins whenever
	// ef >= the number allowed). With SQ8 and no float copy kept, the scan
	// compares codes, so "exact" is exact over the quantized vectors.
	Exact bool `json:"exact"`
	// Using names the vector field searched (fields.go); absent: "".
	Using *string `json:"using"`
	// Sparse is a sparse field's query (sparse.go), with Using the field.
	Sparse json.RawMessage `json:"sparse"`
	// The text side (textquery.go): a BM25 query, hybrid with Vector.
	Text      *string         `json:"text"`
	TextField string          `json:"text_field"`
	Fusion    json.RawMessage `json:"fusion"`
	K1        *float64        `json:"k1"`
	B         *float64        `json:"b"`
}

const defaultK = 10

// decode reads a query body; see eachField for why not encoding/json. An
// "include" list is appended to include (scratch with room for the usual
// words).
func (req *queryRequest) decode(body []byte, include []string) error {
	return eachField(body, func(key string, value []byte) error {
		switch key {
		case "vector":
			req.Vector = value
		case "vectors":
			req.Vectors = value
		case "k":
			var err error
			req.K, err = smallInt(key, value)
			req.HasK = true
			return err
		case "ef":
			var err error
			req.Ef, err = smallInt(key, value)
			return err
		case "filter":
			req.Filter = value
		case "include":
			var err error
			req.Include, err = decodeStrings(include, key, value)
			return err
		// The rarer fields go through encoding/json (decodeCopy: see why).
		case "exact":
			return decodeCopy(key, value, &req.Exact)
		case "using":
			return decodeCopy(key, value, &req.Using)
		case "sparse":
			req.Sparse = value
		case "text":
			return decodeCopy(key, value, &req.Text)
		case "text_field":
			return decodeCopy(key, value, &req.TextField)
		case "fusion":
			req.Fusion = value
		case "k1":
			return decodeCopy(key, value, &req.K1)
		case "b":
			return decodeCopy(key, value, &req.B)
		default:
			return badRequestf("unknown field %q", key)
		}
		return nil
	})
}

// queryScratch is reused across queries: the "include" words, the decoded
// query vectors, the engine's outputs and the response bytes.
type queryScratch struct {
	include []string
	vectors []float32
	ids     []collection.ID
	dists   []float32
	out     []byte
}

var queryPool = sync.Pool{New: func() any { return new(queryScratch) }}

// queryOptions checks what every query takes (k, ef, include, filter) for a
// call of nq queries, and returns the ef to search with: with "exact", one
// past the collection's size, so the planner scans every allowed vector.
func (s *Server) queryOptions(c *collection.Collection, req *queryRequest, nq int) (k, ef int, in include, f *meta.Filter, err error) {
	k = defaultK
	if req.HasK {
		k = req.K
	}
	if k < 1 || k > s.limits.MaxK {
		return 0, 0, in, nil, invalidf("k must be between 1 and %d, got %d (the server's limit: strata-server --max-k)", s.limits.MaxK, k)
	}
	if in, err = parseInclude(req.Include, include{metadata: true, distances: true}); err != nil {
		return 0, 0, in, nil, err
	}
	if in.expiresAt {
		return 0, 0, in, nil, invalidf("include: expires_at is answered by get and scan, not by queries")
	}
	if err = s.limits.Answer(nq*k, c.Options().Dim, in.vectors); err != nil {
		return 0, 0, in, nil, err
	}
	if f, err = parseFilter(req.Filter); err != nil {
		return 0, 0, in, nil, err
	}
	ef = req.Ef
	if req.Exact {
		ef = max(c.Len()+1, k)
	}
	return k, ef, in, f, nil
}

func (s *Server) query(w http.ResponseWriter, r *http.Request) error {
	c, buf, err := s.collectionAndRawBody(r)
	if err != nil {
		return err
	}
	defer s.releaseBody(buf)
	sc := queryPool.Get().(*queryScratch)
	defer queryPool.Put(sc)
	var req queryRequest
	if err := req.decode(buf.data, sc.include[:0]); err != nil {
		return err
	}
	if c := cap(req.Include); c > cap(sc.include) && c <= 16 {
		sc.include = req.Include[:0] // grown: keep the room, not a huge list's
	}
	if req.Text != nil {
		return s.queryText(w, c, &req)
	}
	if req.Fusion != nil || req.K1 != nil || req.B != nil || req.TextField != "" {
		return badRequestf("fusion, text_field, k1 and b belong to a text query: add \"text\"")
	}
	if rawJSON(req.Sparse) != nil {
		return s.querySparse(w, c, &req)
	}
	if req.Using != nil {
		return s.queryField(w, c, &req, sc)
	}
	dim := c.Options().Dim
	batch := rawJSON(req.Vectors) != nil
	if batch == (rawJSON(req.Vector) != nil) {
		return badRequestf("query needs exactly one of \"vector\" (one query) and \"vectors\" (a batch)")
	}
	nq := 1
	if batch {
		sc.vectors, nq, err = parseVectors(sc.vectors[:0], req.Vectors, dim, "vectors")
	} else {
		sc.vectors, err = parseVector(sc.vectors[:0], req.Vector, "vector")
		if err == nil && len(sc.vectors) != dim {
			err = invalidf("vector holds %d numbers, the collection's dimension is %d", len(sc.vectors), dim)
		}
	}
	if err != nil {
		return err
	}
	k, ef, in, f, err := s.queryOptions(c, &req, nq)
	if err != nil {
		return err
	}
	total := nq * k
	sc.ids = grow(sc.ids, total)
	sc.dists = grow(sc.dists, total)
	threads := 1
	if nq > 1 {
		threads = 0
	}
	stats, err := c.Query(sc.vectors, k, ef, f, threads, sc.ids, sc.dists)
	if err != nil {
		return err
	}
	a := answer{w: w}
	out, err := appendResults(sc.out[:0], a.spill, c, sc.ids, sc.dists, nq, k, in, batch, stats)
	if err == nil {
		a.finish(out)
	}
	if cap(out) <= 2*streamAt {
		sc.out = out[:0] // else a huge hit grew it: do not keep that in the pool
	}
	if cap(sc.ids) > 1<<16 {
		sc.ids, sc.dists = nil, nil // a big batch's: let them go
	}
	return err
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// appendExtras writes the "metadata" (docs[i]; null for a point deleted
// between search and lookup) and "vector" fields of hit id, as in asks.
// docs is read only when in.metadata.
func appendExtras(b []byte, c *collection.Collection, in include, id collection.ID, docs [][]byte, i int) ([]byte, error) {
	if in.metadata {
		b = append(b, `,"metadata":`...)
		if docs[i] == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, docs[i]...)
		}
	}
	if in.vectors {
		found, _, v, err := c.Get([]collection.ID{id}, true)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"vector":`...)
		if len(found) == 0 {
			b = append(b, "null"...)
		} else {
			b = appendFloats(b, v)
		}
	}
	return b, nil
}

// appendResults writes {"results": [...], "stats": {...}}: a list of
// {"id", "distance", "metadata", "vector"} per query, the list itself for a
// single query or a list of lists for a batch; padding (-1) is left out.
// After each hit, spill (if not nil) may send the bytes so far and return
// b emptied, so that a large answer is streamed, never held whole; the
// documents are read one query at a time for the same reason.
func appendResults(b []byte, spill func([]byte) []byte, c *collection.Collection, ids []collection.ID, dists []float32, nq, k int,
	in include, batch bool, stats hnsw.SearchStats) ([]byte, error) {
	var docs [][]byte
	b = append(b, `{"results":[`...)
	for q := range nq {
		if in.metadata {
			var err error
			if docs, err = c.Documents(ids[q*k : (q+1)*k]); err != nil {
				return nil, err
			}
		}
		if batch {
			if q > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
		}
		for j := range k {
			i := q*k + j
			if ids[i].IsNone() {
				break
			}
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendID(b, ids[i])
			if in.distances {
				b = append(b, `,"distance":`...)
				b = appendDistance(b, dists[i])
			}
			var err error
			if b, err = appendExtras(b, c, in, ids[i], docs, j); err != nil {
				return nil, err
			}
			b = append(b, '}')
			if spill != nil {
				b = spill(b)
			}
		}
		if batch {
			b = append(b, ']')
		}
	}
	b = append(b, `],"stats":{"plan":"`...)
	b = append(b, stats.Plan.String()...)
	b = append(b, `","distance_computations":`...)
	b = strconv.AppendInt(b, stats.DistanceComputations, 10)
	b = append(b, `,"allowed":`...)
	b = strconv.AppendInt(b, int64(stats.Allowed), 10)
	b = append(b, `,"ef":`...)
	b = strconv.AppendInt(b, int64(stats.EfSearch), 10)
	return append(b, "}}"...), nil
}

// appendDistance writes a distance; JSON has no infinities, and an
// overflowing L2 distance is the only way to get one.
func appendDistance(b []byte, d float32) []byte {
	if math.IsInf(float64(d), 0) || math.IsNaN(float64(d)) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, float64(d), 'g', -1, 32)
}
