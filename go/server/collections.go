package server

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"time"

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
// embedded library's Collection.info() (capi's infoJSON), with "name" for
// "path" (a client has no business with the server's directories).
func describe(name string, c *collection.Collection) map[string]any {
	in := c.Info()
	var checkpointTime any
	if !in.CheckpointTime.IsZero() {
		checkpointTime = in.CheckpointTime.UTC().Format(time.RFC3339Nano)
	}
	r := in.Recovery
	return map[string]any{
		"name": name, "count": in.Count, "dim": in.Dim, "metric": in.Metric, "M": in.M,
		"ef_construction": in.EfConstruction, "quantization": in.Quantization, "fsync": in.Fsync,
		"seq": in.Seq, "last_checkpoint_seq": in.LastCheckpoint, "last_checkpoint_time": checkpointTime,
		"wal_bytes": in.WALBytes, "tombstones": in.Tombstones, "group_commits": in.Groups,
		"writes_logged": in.Records, "fsyncs": in.Syncs, "fsync_seconds": in.SyncSeconds,
		"checkpoints": in.Checkpoints, "checkpoint_seconds": in.CheckpointSecs, "failed": in.Failed,
		"text_fields": textFields(c.TextFields()),
		"recovery": map[string]any{
			"snapshot_seq": r.SnapshotSeq, "replayed_records": r.Replayed, "seconds": r.Duration.Seconds(),
			"torn_tail": map[string]any{"file": r.TornFile, "offset": r.TornOffset, "bytes": r.TornBytes},
			"repaired":  map[string]any{"dropped_records": r.Dropped, "file": r.DroppedFile, "offset": r.DroppedOffset},
		},
	}
}

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request, _ params) error {
	var req createRequest
	if err := s.decodeBody(w, r, &req); err != nil {
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

// textFields describes the text indexes as strata.Collection.info() does.
func textFields(fields []collection.TextField) []map[string]any {
	out := make([]map[string]any, len(fields))
	for i, f := range fields {
		out[i] = map[string]any{"field": f.Field, "analyzer": f.Analyzer, "docs": f.Docs, "terms": f.Terms}
	}
	return out
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
