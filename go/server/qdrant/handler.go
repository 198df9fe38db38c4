package qdrant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/internal/apikey"
	"github.com/strata-db/strata/go/server/internal/httpstatus"
)

// Collections are the collections this door serves: server.Server's, so
// both doors see the same ones.
type Collections interface {
	Collection(name string) (*collection.Collection, error)
	CreateCollection(name string, opts collection.Options) (*collection.Collection, error)
	DropCollection(name string) error
	Collections() []string
}

// Config configures a Handler.
type Config struct {
	Collections Collections
	// APIKey, when set, must come in the "api-key" header (as
	// qdrant-client sends it) or as "Authorization: Bearer <key>".
	APIKey string
	// MaxBodyBytes bounds a request body; default 64 MiB.
	MaxBodyBytes int64
	// MaxLimit bounds limit+offset of a query or a scroll page; default 10,000.
	MaxLimit int
	// Logger receives one line per failed request; default slog.Default().
	Logger *slog.Logger
}

// Version is what GET / reports: the Qdrant REST API level this door was
// tested against with qdrant-client (its compatibility check compares
// major and minor versions).
const Version = "1.20.0"

// Handler serves Qdrant's REST API over Config.Collections.
type Handler struct {
	cfg Config
	log *slog.Logger
	key apikey.Key
	mux *http.ServeMux
}

// New returns a Handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Collections == nil {
		return nil, errors.New("qdrant: Config.Collections is nil")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 20
	}
	if cfg.MaxLimit <= 0 {
		cfg.MaxLimit = 10_000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, key: apikey.New(cfg.APIKey), mux: http.NewServeMux()}
	for pattern, fn := range map[string]route{
		"GET /collections":                               h.listCollections,
		"GET /collections/{name}":                        h.getCollection,
		"PUT /collections/{name}":                        h.createCollection,
		"DELETE /collections/{name}":                     h.deleteCollection,
		"GET /collections/{name}/exists":                 h.collectionExists,
		"PUT /collections/{name}/index":                  h.createIndex,
		"PUT /collections/{name}/points":                 h.upsert,
		"POST /collections/{name}/points":                h.retrieve,
		"GET /collections/{name}/points/{id}":            h.getPoint,
		"POST /collections/{name}/points/delete":         h.deletePoints,
		"POST /collections/{name}/points/payload":        h.setPayload,
		"PUT /collections/{name}/points/payload":         h.overwritePayload,
		"POST /collections/{name}/points/payload/delete": h.deletePayload,
		"POST /collections/{name}/points/scroll":         h.scroll,
		"POST /collections/{name}/points/count":          h.count,
		"POST /collections/{name}/points/query":          h.query,
		"POST /collections/{name}/points/query/batch":    h.queryBatch,
		"POST /collections/{name}/points/search":         h.search,
		"POST /collections/{name}/points/search/batch":   h.searchBatch,
	} {
		h.mux.Handle(pattern, fn)
	}
	h.mux.HandleFunc("GET /{$}", root)
	h.mux.Handle("/", route(func(r *http.Request) (any, error) {
		return nil, fmt.Errorf("%w: %s %s (this route is not part of strata's Qdrant API)", ErrNotFound, r.Method, r.URL.Path)
	}))
	return h, nil
}

// route answers one request with the value of "result" or an error.
type route func(r *http.Request) (any, error)

func (fn route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	result, err := fn(r)
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
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(body)
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
	for _, prefix := range []string{"qdrant: bad request: ", "qdrant: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}

// ServeHTTP authenticates and routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.APIKey != "" && !h.authorized(r) {
		route(func(*http.Request) (any, error) {
			return nil, fmt.Errorf("%w: send the header \"api-key: <key>\"", ErrUnauthorized)
		}).ServeHTTP(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	rec := &httpstatus.Writer{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("panic serving Qdrant request", "path", r.URL.Path, "panic", v)
			if rec.Code == 0 {
				route(func(*http.Request) (any, error) {
					return nil, fmt.Errorf("qdrant: internal error (please report): %v", v)
				}).ServeHTTP(rec, r)
			}
		}
		if rec.Code >= 400 {
			h.log.Info("qdrant request failed", "method", r.Method, "path", r.URL.Path, "status", rec.Code)
		}
	}()
	h.mux.ServeHTTP(rec, r)
}

func (h *Handler) authorized(r *http.Request) bool {
	token := r.Header.Get("api-key")
	if token == "" {
		var ok bool
		if token, ok = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok {
			return false
		}
	}
	return h.key.Matches(token)
}

// decode reads the JSON body into v, refusing unknown fields: a field
// this door does not know could change the answer.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
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

func (h *Handler) collection(r *http.Request) (*collection.Collection, error) {
	return h.cfg.Collections.Collection(r.PathValue("name"))
}

// root answers GET / as Qdrant does, outside the envelope: qdrant-client
// reads "version" from the top level for its compatibility check.
func root(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"title":"qdrant - vector search engine","version":%q}`, Version)
}

// updateResult is Qdrant's UpdateResult: strata's writes are durable when
// they return, so every update is "completed", wait or not.
func updateResult(c *collection.Collection) map[string]any {
	return map[string]any{"operation_id": c.Info().Seq, "status": "completed"}
}
