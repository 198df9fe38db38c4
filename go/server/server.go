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
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/server/registry"
)

// Config configures a Server; zero values pick the defaults named.
type Config struct {
	// DataDir holds one collection directory per collection name.
	DataDir string
	// APIKey, when set, is the key every route but /health and the
	// playground's static files require (as a bearer token, or in the
	// "api-key" header).
	APIKey string
	// AllowOrigins and Hosts are package guard's: the browser origins
	// allowed to send writes, and the Host names accepted (none: any).
	AllowOrigins []string
	Hosts        []string
	// Limits are the server's request limits (both doors): body size
	// (413 before it is read), k, results per request, answer size.
	Limits guard.Limits
	// Logger receives one line per failed request (Info for 4xx, Error for
	// 5xx) and, at Debug, one per request; default slog.Default().
	Logger *slog.Logger
	// Tuning is passed to every collection the server opens or creates;
	// its FS is also where DataDir lives.
	Tuning collection.Tuning
	// Registry receives the server's metrics; default a new registry with
	// the Go runtime and process collectors.
	Registry *prometheus.Registry
	// PlaygroundModel is a directory of the playground's sentence encoder
	// (make playground-model), served under /model/; "" serves none, and
	// the playground's semantic search is off.
	PlaygroundModel string
}

// Server serves the REST API, /metrics and the playground over the
// collections in Config.DataDir. It is an http.Handler.
type Server struct {
	cfg      Config
	log      *slog.Logger
	reg      *registry.Registry
	metrics  *metrics
	guard    *guard.Guard
	limits   *guard.Limits
	closing  atomic.Bool
	bodyPool sync.Pool

	// mux routes every request to a *route (routes.go); routes holds
	// them by pattern.
	mux    *http.ServeMux
	routes map[string]*route
}

// New opens every collection under cfg.DataDir and returns a server for
// them; a collection that will not open is served as failed and retried
// (see package registry).
func New(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("server: Config.DataDir is empty")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	engine := newEngineMetrics()
	reg, err := registry.Open(cfg.DataDir, registry.Options{FS: cfg.Tuning.FS, Tuning: cfg.Tuning,
		Observer: engine.observer, Forget: engine.forget, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, reg: reg}
	s.bodyPool.New = func() any { return new(bodyBuffer) }
	s.buildRoutes()
	if s.metrics, err = newMetrics(cfg.Registry, reg, engine); err != nil {
		reg.Close()
		return nil, err
	}
	s.guard, err = guard.New(guard.Config{APIKey: cfg.APIKey, AllowOrigins: cfg.AllowOrigins, Hosts: cfg.Hosts,
		Limits: cfg.Limits, Registerer: s.metrics.registry})
	if err != nil {
		reg.Close()
		return nil, err
	}
	s.limits = s.guard.Limits()
	return s, nil
}

// Close refuses further requests and closes every collection; each
// checkpoints if its log holds writes its snapshot lacks. Call it after
// http.Server.Shutdown has let in-flight requests finish.
func (s *Server) Close() error {
	s.closing.Store(true)
	return s.reg.Close()
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

// Guard is the server's guard (admission, limits, request metrics): pass
// it to the other door (qdrant.Config.Guard), so that both share one.
func (s *Server) Guard() *guard.Guard { return s.guard }

// Collections names the collections, open or failed.
func (s *Server) Collections() []string { return s.reg.Names() }

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
	// Assigned, not Set: the keys are canonical already, and the values
	// are shared (net/http only reads header values).
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = contentLength(len(body) + 1)
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

var jsonContentType = []string{"application/json"}

// contentLength is the header value for n bytes: shared for the sizes of
// the usual answers (a query's is a few hundred bytes), so that they
// allocate neither the string nor its slice. Each is a slice of length and
// capacity 1: an append never writes into the table.
func contentLength(n int) []string {
	if n < len(contentLengths) {
		return contentLengths[n : n+1 : n+1]
	}
	return []string{strconv.Itoa(n)}
}

var contentLengths = func() []string {
	table := make([]string, 1<<13)
	var digits []byte
	ends := make([]int, len(table))
	for i := range table {
		digits = strconv.AppendInt(digits, int64(i), 10)
		ends[i] = len(digits)
	}
	all, start := string(digits), 0 // one string; each entry a substring
	for i := range table {
		table[i], start = all[start:ends[i]], ends[i]
	}
	return table
}()

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

// bodyBuffer is a pooled buffer a request body is read into.
type bodyBuffer struct{ data []byte }

// readBody reads the whole body, at most MaxBodyBytes, into a pooled
// buffer; hand it back with releaseBody when done with the bytes. A body
// of announced length is read straight into place (net/http's reader ends
// it there); a chunked one is read until its end or one byte past the
// limit. Neither allocates once the pool is warm.
func (s *Server) readBody(r *http.Request) (*bodyBuffer, error) {
	limit := s.limits.MaxBodyBytes
	if r.ContentLength > limit {
		return nil, s.limits.TooLarge(r.ContentLength)
	}
	buf := s.bodyPool.Get().(*bodyBuffer)
	var err error
	if n := r.ContentLength; n >= 0 {
		buf.data = slices.Grow(buf.data[:0], int(n))[:n]
		_, err = io.ReadFull(r.Body, buf.data)
	} else {
		buf.data, err = readUpTo(buf.data[:0], r.Body, limit+1)
		if err == nil && int64(len(buf.data)) > limit {
			s.releaseBody(buf)
			return nil, s.limits.TooLarge(-1)
		}
	}
	if err != nil {
		s.releaseBody(buf)
		return nil, badRequestf("reading the body: %v", err)
	}
	if err := meta.CheckJSONText(buf.data); err != nil {
		// encoding/json would turn invalid UTF-8 and lone surrogate
		// escapes into U+FFFD: text that changes silently.
		s.releaseBody(buf)
		return nil, badRequestf("the body: %v", err)
	}
	return buf, nil
}

// releaseBody returns buf to the pool, unless it grew for a huge body.
func (s *Server) releaseBody(buf *bodyBuffer) {
	if cap(buf.data) <= 1<<20 {
		buf.data = buf.data[:0]
		s.bodyPool.Put(buf)
	}
}

// readUpTo appends r's bytes to dst until EOF or limit bytes in all.
func readUpTo(dst []byte, r io.Reader, limit int64) ([]byte, error) {
	for int64(len(dst)) < limit {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, int(min(int64(max(512, len(dst))), limit-int64(len(dst)))))
		}
		n, err := r.Read(dst[len(dst):int(min(int64(cap(dst)), limit))])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// decodeBody reads the body into v: a JSON object with no unknown fields
// and nothing after it. An empty body is the empty object.
func (s *Server) decodeBody(r *http.Request, v any) error {
	buf, err := s.readBody(r)
	if err != nil {
		return err
	}
	defer s.releaseBody(buf)
	return decodeJSON(buf.data, v)
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
