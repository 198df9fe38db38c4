package server

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/server/registry"
)

// createRequest is the body of POST /collections.
type createRequest struct {
	Name           string   `json:"name"`
	Dim            int      `json:"dim"`
	Metric         string   `json:"metric"`
	M              int      `json:"M"`
	EfConstruction int      `json:"ef_construction"`
	Quantization   *string  `json:"quantization"`
	Memory         *string  `json:"memory"` // "ram" (default) or "mmap" (collection.Memory)
	Fsync          string   `json:"fsync"`
	Seed           *uint64  `json:"seed"`
	TextFields     []string `json:"text_fields"`
	TextAnalyzer   string   `json:"text_analyzer"`
	// Vectors, instead of Dim and its options, is a schema of named vector
	// fields (collection.ParseVectorFields).
	Vectors json.RawMessage `json:"vectors"`
	// SparseVectors names sparse fields (collection.ParseSparseFields).
	SparseVectors json.RawMessage `json:"sparse_vectors"`
}

// describe is the answer of GET /collections/{name}: the keys of the
// embedded library's Collection.info(), with "name" for "path" (a client
// has no business with the server's directories), and the collection's
// "state" ("ready" or "failed"; see package registry) and "reopens". A
// failed collection also has "error" and "next_retry"; in the listing, one
// that is not open has nothing else.
func describe(st registry.Status) map[string]any {
	info := map[string]any{}
	if st.Collection != nil {
		info = st.Collection.Describe()
	}
	info["name"], info["state"], info["reopens"] = st.Name, st.State, st.Reopens
	if st.State != registry.StateReady {
		info["error"] = st.Error
		info["next_retry"] = st.NextRetry.UTC().Format(time.RFC3339Nano)
	}
	return info
}

// ready is the Status of a collection just created.
func ready(name string, c *collection.Collection) registry.Status {
	return registry.Status{Name: name, State: registry.StateReady, Collection: c}
}

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := s.decodeBody(r, &req); err != nil {
		return err
	}
	if err := registry.CheckName(req.Name); err != nil {
		return err
	}
	opts, err := req.options()
	if err != nil {
		return err
	}
	c, err := s.reg.Create(req.Name, opts)
	if err != nil {
		return err
	}
	s.log.Info("collection created", "name", req.Name, "dim", opts.Dim, "metric", opts.Metric.String())
	return writeValue(w, http.StatusCreated, describe(ready(req.Name, c)))
}

func (req *createRequest) options() (collection.Options, error) {
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
	var seed uint64
	if req.Seed != nil {
		seed = *req.Seed
	} else {
		var b [8]byte
		rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	mem := collection.MemoryRAM
	if req.Memory != nil {
		if mem, err = collection.ParseMemory(*req.Memory); err != nil {
			return collection.Options{}, err
		}
	}
	opts := collection.Options{Dim: req.Dim, Metric: mtr, M: req.M, EfConstruction: req.EfConstruction,
		Quantization: q, Memory: mem, Seed: seed, Fsync: fsync, TextFields: req.TextFields, TextAnalyzer: req.TextAnalyzer}
	if req.Vectors != nil {
		if req.Dim != 0 || req.M != 0 || req.EfConstruction != 0 || req.Quantization != nil || req.Memory != nil {
			return collection.Options{}, invalidf("give \"dim\" and its options (one unnamed field) or \"vectors\" (named fields), not both")
		}
		if opts.Vectors, err = collection.ParseVectorFields(req.Vectors); err != nil {
			return collection.Options{}, err
		}
		opts.Metric = 0
	}
	if opts.Sparse, err = collection.ParseSparseFields(req.SparseVectors); err != nil {
		return collection.Options{}, err
	}
	return opts, nil
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) error {
	infos := []map[string]any{}
	for _, st := range s.reg.List() {
		infos = append(infos, describe(st))
	}
	return writeValue(w, http.StatusOK, map[string]any{"collections": infos})
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request) error {
	st, err := s.reg.Status(r.PathValue("name"))
	if err != nil {
		return err
	}
	if st.Collection == nil {
		// Not open: no info to give beyond why (the listing names it too,
		// /health counts it). A 503, so that clients reading an info get
		// one.
		return fmt.Errorf("%w: %q will not open (retried by itself, next at %s; or POST .../reopen): %s",
			registry.ErrUnavailable, st.Name, st.NextRetry.UTC().Format(time.RFC3339), st.Error)
	}
	return writeValue(w, http.StatusOK, describe(st))
}

// closedUnder tells apart the two ways a request's collection closes
// under it: dropped (collection.ErrClosed, answered 404 as before), or
// re-opened while the request held the old one, when the name is still
// there: that is the failure being recovered, answered 503 so that the
// client retries.
func (s *Server) closedUnder(name string, err error) error {
	if name == "" || !errors.Is(err, collection.ErrClosed) {
		return err
	}
	if _, serr := s.reg.Status(name); serr != nil {
		return err
	}
	return fmt.Errorf("%w: %q was re-opened while this request used it; retry it: %v",
		registry.ErrUnavailable, name, err)
}

// reopenCollection (POST /collections/{name}/reopen) closes a collection
// and opens it again, recovering it from its log: what the server does by
// itself, with backoff, for a failed one.
func (s *Server) reopenCollection(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if _, err := s.reg.Reopen(name); err != nil {
		return err
	}
	s.log.Info("collection re-opened on request", "name", name)
	st, err := s.reg.Status(name)
	if err != nil { // dropped meanwhile
		return err
	}
	return writeValue(w, http.StatusOK, describe(st))
}

func (s *Server) dropCollection(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := s.reg.Drop(name); err != nil {
		return err
	}
	s.log.Info("collection dropped", "name", name)
	return writeValue(w, http.StatusOK, map[string]any{"dropped": name})
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) error {
	list := s.reg.List()
	failed := 0
	for _, st := range list {
		if st.State != registry.StateReady {
			failed++
		}
	}
	// Still 200 when some are failed: the server serves the others, and
	// a load balancer must not take it out of service for one of them.
	// Counts, not names: /health needs no API key, and names are data.
	status := "ok"
	if failed > 0 {
		status = "degraded"
	}
	return writeValue(w, http.StatusOK, map[string]any{"status": status, "collections": len(list), "failed": failed})
}

// rawJSON returns nil for an absent or null field.
func rawJSON(m json.RawMessage) []byte {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return m
}
