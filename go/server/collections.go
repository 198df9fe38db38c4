package server

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"net/http"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
)

// createRequest is the body of POST /collections.
type createRequest struct {
	Name           string   `json:"name"`
	Dim            int      `json:"dim"`
	Metric         string   `json:"metric"`
	M              int      `json:"M"`
	EfConstruction int      `json:"ef_construction"`
	Quantization   *string  `json:"quantization"`
	Fsync          string   `json:"fsync"`
	Seed           *uint64  `json:"seed"`
	TextFields     []string `json:"text_fields"`
	TextAnalyzer   string   `json:"text_analyzer"`
}

// describe is the answer of GET /collections/{name}: the keys of the
// embedded library's Collection.info(), with "name" for "path" (a client
// has no business with the server's directories).
func describe(name string, c *collection.Collection) map[string]any {
	info := c.Describe()
	info["name"] = name
	return info
}

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request, _ params) error {
	var req createRequest
	if err := s.decodeBody(r, &req); err != nil {
		return err
	}
	if err := checkName(req.Name); err != nil {
		return err
	}
	opts, err := req.options()
	if err != nil {
		return err
	}
	c, err := s.reg.create(req.Name, opts)
	if err != nil {
		return err
	}
	s.log.Info("collection created", "name", req.Name, "dim", opts.Dim, "metric", opts.Metric.String())
	return writeValue(w, http.StatusCreated, describe(req.Name, c))
}

func (req *createRequest) options() (collection.Options, error) {
	if req.Dim <= 0 {
		return collection.Options{}, invalidf("dim must be a positive integer, got %d", req.Dim)
	}
	if req.Metric == "" {
		req.Metric = "cosine"
	}
	mtr, err := metric.Parse(req.Metric)
	if err != nil {
		return collection.Options{}, invalidf("metric: %v", err)
	}
	q := hnsw.QuantNone
	if req.Quantization != nil {
		switch *req.Quantization {
		case "none", "":
		case "sq8":
			q = hnsw.QuantSQ8
		default:
			return collection.Options{}, invalidf("quantization must be null, \"none\" or \"sq8\", got %q", *req.Quantization)
		}
	}
	if req.Fsync == "" {
		req.Fsync = "always"
	}
	fsync, err := collection.ParseFsync(req.Fsync)
	if err != nil {
		return collection.Options{}, err
	}
	if req.M < 0 || req.EfConstruction < 0 {
		return collection.Options{}, invalidf("M and ef_construction must be positive (0 or absent: default)")
	}
	var seed uint64
	if req.Seed != nil {
		seed = *req.Seed
	} else {
		var b [8]byte
		rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	if _, err := text.ParseAnalyzer(req.TextAnalyzer); err != nil {
		return collection.Options{}, invalidf("text_analyzer: %v", err)
	}
	return collection.Options{Dim: req.Dim, Metric: mtr, M: req.M, EfConstruction: req.EfConstruction,
		Quantization: q, Seed: seed, Fsync: fsync, TextFields: req.TextFields, TextAnalyzer: req.TextAnalyzer}, nil
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request, _ params) error {
	infos := []map[string]any{}
	s.reg.each(func(name string, c *collection.Collection) { infos = append(infos, describe(name, c)) })
	return writeValue(w, http.StatusOK, map[string]any{"collections": infos})
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request, p params) error {
	c, err := s.reg.get(p.name)
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, describe(p.name, c))
}

func (s *Server) dropCollection(w http.ResponseWriter, r *http.Request, p params) error {
	if err := s.reg.drop(p.name); err != nil {
		return err
	}
	s.log.Info("collection dropped", "name", p.name)
	return writeValue(w, http.StatusOK, map[string]any{"dropped": p.name})
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, _ params) error {
	return writeValue(w, http.StatusOK, map[string]any{"status": "ok", "collections": len(s.reg.names())})
}

// rawJSON returns nil for an absent or null field.
func rawJSON(m json.RawMessage) []byte {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return m
}
