package qdrant

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/server/internal/httpstatus"
	"github.com/strata-db/strata/go/vfs"
)

// Collections are the collections this door serves: server.Server's, so
// both doors see the same ones.
type Collections interface {
	Collection(name string) (*collection.Collection, error)
	CreateCollection(name string, opts collection.Options) (*collection.Collection, error)
	DropCollection(name string) error
	Collections() []string
	// Files is the file system and the directory of the data dir, where
	// the door keeps its state files (aliases.go).
	Files() (vfs.FS, string)
}

// Config configures a Handler.
type Config struct {
	Collections Collections
	// Guard admits every request (API key in the "api-key" header, as
	// qdrant-client sends it, or as "Authorization: Bearer <key>"; origin,
	// Host and media type), bounds bodies and answers by its Limits
	// (limit+offset of a query and a scroll page by MaxK), and records
	// the request metrics: server.Server.Guard, so that both doors share
	// one. Default a guard of its own with no API key and default limits,
	// its metrics unexported.
	Guard *guard.Guard
	// Logger receives one line per failed request; default slog.Default().
	Logger *slog.Logger
	// Metrics, if set, answers GET /metrics on this door's port, as
	// Qdrant's does: server.Server.MetricsHandler, where this door's
	// requests are counted (by Guard) under door="qdrant". Unset, the
	// route is a 404.
	Metrics http.Handler
	// SnapshotsDir holds the collections' snapshots (snapshots.go), one
	// directory per collection; default <data>/qdrant.snapshots.
	SnapshotsDir string
}

// Version is what GET / reports: the Qdrant REST API level this door was
// tested against with qdrant-client (its compatibility check compares
// major and minor versions).
const Version = "1.20.0"

// Handler serves Qdrant's REST API over Config.Collections.
type Handler struct {
	cfg       Config
	log       *slog.Logger
	guard     *guard.Guard
	limits    *guard.Limits
	mux       *http.ServeMux
	guarded   http.Handler
	indexes   *payloadIndexes
	settings  *collectionStates[settings]
	aliases   *aliasTable
	snapshots *snapshotStore
	started   time.Time
}

// New returns a Handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Collections == nil {
		return nil, errors.New("qdrant: Config.Collections is nil")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Guard == nil {
		var err error
		if cfg.Guard, err = guard.New(guard.Config{}); err != nil {
			return nil, err
		}
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, guard: cfg.Guard, limits: cfg.Guard.Limits(), mux: http.NewServeMux(), started: time.Now().UTC()}
	fsys, dir := cfg.Collections.Files()
	h.indexes, h.settings = newPayloadIndexes(fsys), newSettings(fsys)
	if cfg.SnapshotsDir == "" {
		cfg.SnapshotsDir = filepath.Join(dir, "qdrant.snapshots")
	}
	h.snapshots = &snapshotStore{fs: fsys, root: cfg.SnapshotsDir}
	var err error
	if h.aliases, err = openAliases(fsys, dir); err != nil {
		return nil, err
	}
	for pattern, fn := range map[string]route{
		"GET /collections":                                      h.restListCollections,
		"GET /collections/{name}":                               h.restGetCollection,
		"PUT /collections/{name}":                               restNew(h.createCollection),
		"DELETE /collections/{name}":                            h.restDeleteCollection,
		"PATCH /collections/{name}":                             restOn(h, h.updateCollection),
		"GET /collections/{name}/exists":                        h.restCollectionExists,
		"PUT /collections/{name}/index":                         restOn(h, h.createIndex),
		"DELETE /collections/{name}/index/{field}":              h.restDeleteIndex,
		"POST /collections/{name}/facet":                        restOn(h, h.facet),
		"PUT /collections/{name}/points":                        restOn(h, h.upsert),
		"POST /collections/{name}/points":                       restOn(h, h.retrieve),
		"GET /collections/{name}/points/{id}":                   h.restGetPoint,
		"POST /collections/{name}/points/delete":                restOn(h, h.deletePoints),
		"POST /collections/{name}/points/batch":                 restOn(h, h.updateBatch),
		"POST /collections/{name}/points/payload":               restOn(h, h.setPayload),
		"PUT /collections/{name}/points/payload":                restOn(h, h.overwritePayload),
		"POST /collections/{name}/points/payload/delete":        restOn(h, h.deletePayload),
		"POST /collections/{name}/points/payload/clear":         restOn(h, h.clearPayload),
		"POST /collections/{name}/points/scroll":                restOn(h, h.scroll),
		"POST /collections/{name}/points/count":                 restOn(h, h.count),
		"POST /collections/{name}/points/query":                 restOn(h, h.query),
		"POST /collections/{name}/points/query/batch":           restBatch(h, h.queryBatch),
		"POST /collections/{name}/points/search":                restOn(h, h.search),
		"POST /collections/{name}/points/search/batch":          restBatch(h, h.searchBatch),
		"PUT /collections/{name}/points/vectors":                restOn(h, h.updateVectors),
		"POST /collections/{name}/points/vectors/delete":        restOn(h, h.deleteVectors),
		"POST /collections/{name}/points/recommend":             restOn(h, h.recommendPoints),
		"POST /collections/{name}/points/recommend/batch":       restBatch(h, h.recommendBatch),
		"POST /collections/{name}/points/discover":              restOn(h, h.discoverPoints),
		"POST /collections/{name}/points/discover/batch":        restBatch(h, h.discoverBatch),
		"POST /collections/{name}/points/search/groups":         restOn(h, h.searchGroups),
		"POST /collections/{name}/points/recommend/groups":      restOn(h, h.recommendGroups),
		"POST /collections/{name}/points/query/groups":          restOn(h, h.queryGroups),
		"POST /collections/{name}/points/search/matrix/pairs":   restOn(h, h.searchMatrixPairs),
		"POST /collections/{name}/points/search/matrix/offsets": restOn(h, h.searchMatrixOffsets),
		"POST /collections/aliases":                             h.restUpdateAliases,
		"GET /aliases":                                          h.restListAliases,
		"GET /collections/{name}/aliases":                       h.restCollectionAliases,
	} {
		h.mux.Handle(pattern, fn)
	}
	h.registerSnapshots()
	h.mux.HandleFunc("GET /{$}", root)
	if cfg.Metrics != nil {
		h.mux.Handle("GET /metrics", cfg.Metrics)
	}
	h.mux.Handle("GET /telemetry", restNone(h.telemetry))
	h.mux.Handle("/", route(func(r *http.Request) (any, error) {
		return nil, fmt.Errorf("%w: %s %s (this route is not part of strata's Qdrant API)", ErrNotFound, r.Method, r.URL.Path)
	}))
	h.guarded = h.guard.Wrap("qdrant", h.mux, h.refuse)
	return h, nil
}

// route answers one request with the value of "result" or an error.
type route func(r *http.Request) (any, error)

// A qdrantCall is one Qdrant call on the collection named, shared by the REST
// and gRPC doors: each door decodes its request into Req, calls, and
// encodes Resp (REST as JSON, gRPC as protobuf). Validation, limits and
// errors are the call's; a door only translates.
type qdrantCall[Req, Resp any] func(ctx context.Context, name string, req *Req) (Resp, error)

// restOn is the REST route of a call on an existing collection: the
// collection is looked up before the body is read, so that a request to
// a missing collection answers 404 whatever its body.
func restOn[Req, Resp any](h *Handler, fn qdrantCall[Req, Resp]) route {
	return func(r *http.Request) (any, error) {
		if _, err := h.collection(r); err != nil {
			return nil, err
		}
		var req Req
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return fn(r.Context(), r.PathValue("name"), &req)
	}
}

// restNew is the REST route of a call whose collection need not exist.
func restNew[Req, Resp any](fn qdrantCall[Req, Resp]) route {
	return func(r *http.Request) (any, error) {
		var req Req
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return fn(r.Context(), r.PathValue("name"), &req)
	}
}

func (fn route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	result, err := fn(r)
	if b, ok := result.(batchResult); ok && err == nil {
		writeBatch(w, b, start)
		return
	}
	if err == nil {
		buf := getAnswerBuffer()
		defer putAnswerBuffer(buf)
		b, ok, encErr := appendResult(append((*buf)[:0], `{"result":`...), result)
		if ok && encErr == nil {
			b = append(b, `,"status":"ok","time":`...)
			b, encErr = appendFloat(b, time.Since(start).Seconds(), 64)
			b = append(b, '}')
			*buf = b
			if encErr == nil {
				writeAnswer(w, http.StatusOK, b)
				return
			}
		}
		err = encErr
	}
	elapsed := time.Since(start).Seconds()
	var body []byte
	code := http.StatusOK
	if err == nil {
		body, err = json.Marshal(envelope{Result: result, Status: "ok", Time: elapsed})
	}
	if err != nil {
		code = status(err)
		body, _ = json.Marshal(errorEnvelope{Status: errorStatus{Error: message(err)}, Time: elapsed})
	}
	writeAnswer(w, code, body)
}

// writeAnswer sends one whole JSON answer with its length.
func writeAnswer(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	// Assigned, not Set: the keys are canonical already.
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(code)
	w.Write(body)
}

var jsonContentType = []string{"application/json"}

// batchResult is the result of a batch route, one element per search: it
// is encoded and sent one search at a time, each let go once sent, so the
// server never holds the whole answer's JSON (a batch of 100 searches
// with vectors held 4.4 GB before).
type batchResult []any

// writeBatch answers the envelope of b. An element that fails to encode
// after the 200 is sent cuts the connection: the client sees an error,
// not a truncated answer that parses.
func writeBatch(w http.ResponseWriter, b batchResult, start time.Time) {
	buf := getAnswerBuffer()
	defer putAnswerBuffer(buf)
	elem := func(i int) ([]byte, error) {
		out, ok, err := appendResult((*buf)[:0], b[i])
		if !ok {
			return json.Marshal(b[i])
		}
		if err == nil {
			*buf = out
		}
		return out, err
	}
	var first []byte
	if len(b) > 0 {
		var err error
		if first, err = elem(0); err != nil {
			route(func(*http.Request) (any, error) { return nil, err }).ServeHTTP(w, nil)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"result":[`)
	bw.Write(first)
	for i := 1; i < len(b); i++ {
		enc, err := elem(i)
		if err != nil {
			bw.Flush()
			panic(http.ErrAbortHandler)
		}
		b[i] = nil
		bw.WriteByte(',')
		bw.Write(enc)
	}
	fmt.Fprintf(bw, `],"status":"ok","time":%g}`, time.Since(start).Seconds())
	bw.Flush()
}

type envelope struct {
	Result any     `json:"result"`
	Status string  `json:"status"`
	Time   float64 `json:"time"`
}

type errorStatus struct {
	Error string `json:"error"`
}

type errorEnvelope struct {
	Status errorStatus `json:"status"`
	Time   float64     `json:"time"`
}

// message is the error text without the package prefixes a client does
// not need ("qdrant: bad request: ").
func message(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"qdrant: bad request: ", "qdrant: ", "guard: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}

// ServeHTTP admits (Config.Guard), routes and answers a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &httpstatus.Writer{ResponseWriter: w}
	h.guarded.ServeHTTP(rec, r)
	if rec.Code >= 400 {
		h.log.Info("qdrant request failed", "method", r.Method, "path", r.URL.Path, "status", rec.Code)
	}
}

// refuse answers the guard's refusals and recovered panics in Qdrant's
// error shape.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var refused *guard.Error
	if !errors.As(err, &refused) {
		h.log.Error("panic serving Qdrant request", "path", r.URL.Path, "panic", err)
		err = fmt.Errorf("qdrant: %w", err)
	}
	route(func(*http.Request) (any, error) { return nil, err }).ServeHTTP(w, r)
}

// decode reads the JSON body into v, refusing unknown fields: a field
// this door does not know could change the answer.
func decode(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return guard.AsBodyLimit(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := meta.CheckJSONText(body); err != nil {
		// encoding/json would turn invalid UTF-8 and lone surrogate
		// escapes into U+FFFD: text that changes silently.
		return badRequestf("Format error in JSON body: %v", err)
	}
	switch req := v.(type) {
	case *queryRequest:
		if decodeQueryRequest(body, req) {
			return nil
		}
		*req = queryRequest{}
	case *upsertRequest:
		if decodeUpsertRequest(body, req) {
			return nil
		}
		*req = upsertRequest{}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequestf("Format error in JSON body: %v", err)
	}
	if dec.More() {
		return badRequestf("Format error in JSON body: more than one JSON value")
	}
	return nil
}

// readBody reads the whole body: a body of announced length up to
// sizedBody in one allocation of that length (net/http's reader ends it
// there; io.ReadAll grows its buffer from 512 bytes, five allocations for
// a query of 128 numbers), any other as io.ReadAll reads it, within the
// guard's body limit either way.
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n < 0 || n > sizedBody {
		return io.ReadAll(r.Body)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		return nil, err
	}
	return body, nil
}

const sizedBody = 1 << 20

func (h *Handler) collection(r *http.Request) (*collection.Collection, error) {
	return h.named(r.PathValue("name"))
}

// named returns the collection named, or named by the alias name (the
// calls' lookup).
func (h *Handler) named(name string) (*collection.Collection, error) {
	return h.cfg.Collections.Collection(h.aliases.resolve(name))
}

// root answers GET / as Qdrant does, outside the envelope: qdrant-client
// reads "version" from the top level for its compatibility check.
func root(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"title":"qdrant - vector search engine","version":%q}`, Version)
}

// updateResult is Qdrant's UpdateResult: strata's writes are durable when
// they return, so every update is "completed", wait or not.
type updateResult struct {
	OperationID uint64 `json:"operation_id"`
	Status      string `json:"status"`
}

func updated(c *collection.Collection) updateResult {
	return updateResult{OperationID: c.Seq(), Status: "completed"}
}
