package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/internal/apikey"
	"github.com/strata-db/strata/go/server/internal/httpstatus"
)

// Config configures a Server; zero values pick the defaults named.
type Config struct {
	// DataDir holds one collection directory per collection name.
	DataDir string
	// APIKey, when set, is the bearer token every route but /health and
	// the playground's static files require.
	APIKey string
	// MaxBodyBytes bounds a request body; default 64 MiB. Larger bodies
	// are answered with 413 before they are read.
	MaxBodyBytes int64
	// MaxK bounds a query's k (and a scan's limit); default 10,000.
	MaxK int
	// Logger receives one line per failed request (Info for 4xx, Error for
	// 5xx) and, at Debug, one per request; default slog.Default().
	Logger *slog.Logger
	// Tuning is passed to every collection the server opens or creates.
	Tuning collection.Tuning
	// Registry receives the server's metrics; default a new registry with
	// the Go runtime and process collectors.
	Registry *prometheus.Registry
}

const (
	defaultMaxBodyBytes = 64 << 20
	defaultMaxK         = 10_000
)

// Server serves the REST API, /metrics and the playground over the
// collections in Config.DataDir. It is an http.Handler.
type Server struct {
	cfg      Config
	log      *slog.Logger
	reg      *registry
	metrics  *metrics
	key      apikey.Key
	auth     bool
	closing  atomic.Bool
	bodyPool sync.Pool

	// Routes, built once: ServeHTTP allocates nothing to find a handler.
	health, metricsRoute, collectionsRoute, collectionRoute, pointRoute handler
	ops                                                                 map[string]operation
}

// operation is a POST /collections/{name}/<op> route.
type operation struct {
	route string // the metrics label
	h     handler
}

// New opens every collection under cfg.DataDir and returns a server for them.
func New(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("server: Config.DataDir is empty")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBodyBytes
	}
	if cfg.MaxK <= 0 {
		cfg.MaxK = defaultMaxK
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	engine := newEngineMetrics()
	reg, err := openRegistry(cfg.DataDir, cfg.Tuning, engine.observer)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, reg: reg, auth: cfg.APIKey != ""}
	s.key = apikey.New(cfg.APIKey)
	s.bodyPool.New = func() any { return new(bytes.Buffer) }
	s.buildRoutes()
	if s.metrics, err = newMetrics(cfg.Registry, reg, engine); err != nil {
		reg.closeAll()
		return nil, err
	}
	return s, nil
}

// Close refuses further requests and closes every collection; each
// checkpoints if its log holds writes its snapshot lacks. Call it after
// http.Server.Shutdown has let in-flight requests finish.
func (s *Server) Close() error {
	s.closing.Store(true)
	return s.reg.closeAll()
}

// Timeouts bound how long a client may take; zero values pick the
// defaults named. A client slower than these is disconnected, so a slow or
// stalled client cannot hold a connection (and its goroutine) forever.
type Timeouts struct {
	ReadHeader time.Duration // default 5 s
	Read       time.Duration // the whole request, body included; default 30 s
	Write      time.Duration // handling plus writing the answer; default 60 s
	Idle       time.Duration // between keep-alive requests; default 120 s
}

// HTTPServer returns an http.Server for s with the timeouts t and a
// 64 KiB header limit, logging the server's own errors to the Logger.
func (s *Server) HTTPServer(t Timeouts) *http.Server {
	orDefault := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	return &http.Server{Handler: s,
		ReadHeaderTimeout: orDefault(t.ReadHeader, 5*time.Second),
		ReadTimeout:       orDefault(t.Read, 30*time.Second),
		WriteTimeout:      orDefault(t.Write, 60*time.Second),
		IdleTimeout:       orDefault(t.Idle, 120*time.Second),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
}

// Collections names the open collections.
func (s *Server) Collections() []string { return s.reg.names() }

// handler answers one route. It returns an error instead of writing one,
// so that every error body has the same shape and status mapping.
type handler func(w http.ResponseWriter, r *http.Request, p params) error

// params are the parts of the path a route matched.
type params struct {
	name string // collection
	id   string // point
}

// ServeHTTP routes, authenticates, times and logs a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &httpstatus.Writer{ResponseWriter: w}
	route, h, p, public := s.route(r)
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic serving request", "route", route, "panic", v)
			if sw.Code == 0 {
				s.writeError(sw, r, fmt.Errorf("server: internal error (please report): %v", v))
			}
		}
		elapsed := time.Since(start)
		s.metrics.observe(r.Method, route, sw.Code, elapsed)
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.Code,
				"duration", elapsed, "remote", r.RemoteAddr)
		}
	}()
	if s.auth && !public && !s.authorized(r) {
		sw.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		s.writeError(sw, r, fmt.Errorf("%w: send the header \"Authorization: Bearer <key>\"", ErrUnauthorized))
		return
	}
	if s.closing.Load() {
		s.writeError(sw, r, ErrClosing)
		return
	}
	if err := h(sw, r, p); err != nil {
		s.writeError(sw, r, err)
	}
}

func (s *Server) authorized(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	return s.key.Matches(token)
}

// route finds the handler for r. The route string labels metrics: it is
// the pattern, never the raw path, so that names do not multiply series.
func (s *Server) route(r *http.Request) (route string, h handler, p params, public bool) {
	path := r.URL.Path
	switch path {
	case "/health":
		return path, s.health, p, true
	case "/metrics":
		return path, s.metricsRoute, p, false
	case "/collections":
		return path, s.collectionsRoute, p, false
	}
	if rest, ok := strings.CutPrefix(path, "/collections/"); ok {
		name, op, _ := strings.Cut(rest, "/")
		p.name = name
		switch {
		case op == "" && !strings.HasSuffix(rest, "/"):
			return "/collections/{name}", s.collectionRoute, p, false
		case strings.HasPrefix(op, "points/") && !strings.Contains(op[len("points/"):], "/"):
			p.id = op[len("points/"):]
			return "/collections/{name}/points/{id}", s.pointRoute, p, false
		}
		if o, ok := s.ops[op]; ok {
			return o.route, o.h, p, false
		}
		return "other", notFound, p, false
	}
	if h, ok := playgroundRoute(path); ok {
		return "/playground", method(http.MethodGet, h), p, true
	}
	return "other", notFound, p, false
}

func (s *Server) buildRoutes() {
	s.health = method(http.MethodGet, s.serveHealth)
	s.metricsRoute = method(http.MethodGet, s.serveMetrics)
	s.collectionsRoute = methods(map[string]handler{http.MethodGet: s.listCollections,
		http.MethodPost: s.createCollection})
	s.collectionRoute = methods(map[string]handler{http.MethodGet: s.getCollection,
		http.MethodDelete: s.dropCollection})
	s.pointRoute = method(http.MethodGet, s.getPoint)
	s.ops = map[string]operation{}
	for op, h := range map[string]handler{
		"upsert": s.upsert, "query": s.query, "delete": s.delete, "checkpoint": s.checkpoint,
		"count": s.count, "scan": s.scan, "get": s.get, "metadata": s.updateMetadata,
	} {
		s.ops[op] = operation{route: "/collections/{name}/" + op, h: method(http.MethodPost, h)}
	}
}

func notFound(w http.ResponseWriter, r *http.Request, _ params) error {
	return fmt.Errorf("%w: %s %s", ErrNoRoute, r.Method, truncateForMessage(r.URL.Path))
}

func method(m string, h handler) handler {
	return methods(map[string]handler{m: h})
}

func methods(byMethod map[string]handler) handler {
	return func(w http.ResponseWriter, r *http.Request, p params) error {
		if h, ok := byMethod[r.Method]; ok {
			return h(w, r, p)
		}
		if r.Method == http.MethodHead {
			if h, ok := byMethod[http.MethodGet]; ok {
				return h(w, r, p)
			}
		}
		allowed := make([]string, 0, len(byMethod))
		for m := range byMethod {
			allowed = append(allowed, m)
		}
		slices.Sort(allowed)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		return fmt.Errorf("%w: %s %s (allowed: %s)", ErrMethod, r.Method, truncateForMessage(r.URL.Path),
			strings.Join(allowed, ", "))
	}
}

// writeError answers with {"error": {"code", "message"}}.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code := classify(err)
	if status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "error", err)
	} else {
		s.log.Info("request refused", "method", r.Method, "path", truncateForMessage(r.URL.Path),
			"status", status, "error", err)
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": err.Error()}})
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	// Assigned, not Set: the keys are canonical already, and the
	// Content-Type value is shared (net/http only reads header values).
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body) + 1)}
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

var jsonContentType = []string{"application/json"}

// writeValue answers 200 (or status) with v encoded by encoding/json: for
// the routes whose answers are small.
func writeValue(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("server: encode response: %w", err)
	}
	writeJSON(w, status, body)
	return nil
}

// readBody reads the whole body, at most MaxBodyBytes, into a pooled
// buffer; call release when done with the bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, r.ContentLength, s.cfg.MaxBodyBytes)
	}
	buf := s.bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	release = func() {
		if buf.Cap() <= 1<<20 { // do not pin huge upsert bodies
			s.bodyPool.Put(buf)
		}
	}
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)); err != nil {
		release()
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, nil, fmt.Errorf("%w: the limit is %d bytes", ErrTooLarge, s.cfg.MaxBodyBytes)
		}
		return nil, nil, badRequestf("reading the body: %v", err)
	}
	return buf.Bytes(), release, nil
}

// decodeBody reads the body into v: a JSON object with no unknown fields
// and nothing after it. An empty body is the empty object.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, release, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	defer release()
	return decodeJSON(body, v)
}

func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return badRequestf("the JSON body is truncated")
		}
		return badRequestf("the body is not a JSON object of this route's shape: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequestf("the body holds more than one JSON value")
	}
	return nil
}
