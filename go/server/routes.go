package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/server/internal/httpstatus"
)

// buildRoutes registers the routes, one ServeMux pattern each. Every
// pattern's handler is a *route, which admits, times, logs and answers the
// request, so that a handler only writes its answer or returns an error.
// The same paths with another method answer 405 naming the methods
// allowed, and any other path 404, both through a *route too.
func (s *Server) buildRoutes() {
	s.mux = http.NewServeMux()
	s.routes = map[string]*route{}
	var paths []string
	methods := map[string][]string{} // path → the methods it serves
	fallbacks := map[string]*route{} // path → its 405 route
	add := func(pattern, label string, public bool, h handler) {
		m, path, _ := strings.Cut(pattern, " ")
		rt := &route{s: s, label: label, public: public, h: h}
		s.routes[pattern] = rt
		s.mux.Handle(pattern, rt)
		if _, ok := fallbacks[path]; !ok {
			paths = append(paths, path)
			fallbacks[path] = &route{s: s, label: label, public: public}
		}
		methods[path] = append(methods[path], m)
	}
	api := func(pattern string, h handler) {
		_, path, _ := strings.Cut(pattern, " ")
		add(pattern, path, false, h)
	}

	add("GET /health", "/health", true, s.serveHealth)
	api("GET /metrics", s.serveMetrics)
	api("GET /collections", s.listCollections)
	api("POST /collections", s.createCollection)
	api("GET /collections/{name}", s.getCollection)
	api("DELETE /collections/{name}", s.dropCollection)
	api("GET /collections/{name}/points/{id}", s.getPoint)
	for op, h := range map[string]handler{
		"upsert": s.upsert, "query": s.query, "delete": s.delete, "checkpoint": s.checkpoint,
		"count": s.count, "scan": s.scan, "get": s.get, "metadata": s.updateMetadata,
		"text_index": s.createTextIndex, "check_integrity": s.checkIntegrity,
		"reopen": s.reopenCollection, "update_vectors": s.updateVectors, "delete_vectors": s.deleteVectors,
		"add_vector_field": s.addVectorField, "remove_vector_field": s.removeVectorField,
		"add_sparse_field": s.addSparseField, "search": s.search,
	} {
		api("POST /collections/{name}/"+op, h)
	}
	for file, h := range playgroundHandlers(s.cfg.PlaygroundModel) {
		if file == "index.html" {
			add("GET /{$}", "/playground", true, h)
		}
		add("GET /"+file, "/playground", true, h)
	}
	for _, path := range paths {
		fb := fallbacks[path]
		allowed := slices.Sorted(slices.Values(methods[path]))
		fb.h = methodNotAllowed(strings.Join(allowed, ", "))
		s.routes[path] = fb
		s.mux.Handle(path, fb)
	}
	s.routes["/"] = &route{s: s, label: "other", h: notFound}
	s.mux.Handle("/", s.routes["/"])
}

// ServeHTTP routes a request (see asSent) to its route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.URL.Path, "//") {
		// An empty segment names no route (ServeMux would redirect to
		// the path without it).
		s.routes["/"].ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, asSent(r))
}

// asSent returns r, or a copy whose escaped path ServeMux splits into the
// segments of r.URL.Path as sent. ServeMux matches the escaped path,
// cleaned: it would redirect "/collections/.." to "/" and take
// "/collections/a%2Fb" for one name, where this door routes the decoded
// path segment by segment, so that ".." is a collection name (refused as
// one) and "a%2Fb" is two segments. The usual request has neither, and is
// routed as it is, without a copy.
func asSent(r *http.Request) *http.Request {
	path := r.URL.Path
	dots := strings.Contains(path, "/.")
	if r.URL.RawPath == "" && !dots {
		return r
	}
	u := *r.URL
	u.RawPath = ""
	if dots {
		segments := strings.Split(path, "/")
		for i, seg := range segments {
			if seg == "." || seg == ".." {
				segments[i] = strings.Repeat("%2E", len(seg))
			} else {
				segments[i] = url.PathEscape(seg)
			}
		}
		u.RawPath = strings.Join(segments, "/")
	}
	copied := r.WithContext(r.Context())
	copied.URL = &u
	return copied
}

// handler answers one route. It returns an error instead of writing one,
// so that every error body has the same shape and status mapping.
type handler func(w http.ResponseWriter, r *http.Request) error

// route is what ServeMux calls for one pattern: the shared part of every
// answer around its handler.
type route struct {
	s      *Server
	label  string // the metrics label: the pattern's path, never the raw path, so names do not multiply series
	public bool   // served without the API key
	h      handler
}

// statusWriters recycles the routes' status-recording writers: one fewer
// allocation per request.
var statusWriters = sync.Pool{New: func() any { return new(httpstatus.Writer) }}

// ServeHTTP admits, times, logs and answers a request.
func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := rt.s
	start := time.Now()
	sw := statusWriters.Get().(*httpstatus.Writer)
	*sw = httpstatus.Writer{ResponseWriter: w}
	abort := false
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic serving request", "route", rt.label, "panic", v)
			if sw.Code == 0 {
				s.writeError(sw, r, fmt.Errorf("server: internal error (please report): %v", v))
			}
		}
		elapsed := time.Since(start)
		s.guard.Observe("native", r.Method, rt.label, sw.Code, elapsed)
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.Code,
				"duration", elapsed, "remote", r.RemoteAddr)
		}
		*sw = httpstatus.Writer{} // no handler keeps its writer past ServeHTTP
		statusWriters.Put(sw)
		if abort {
			panic(http.ErrAbortHandler)
		}
	}()
	if err := s.guard.Admit(sw, r, rt.public); err != nil {
		s.writeError(sw, r, err)
		return
	}
	if guard.Preflight(sw, r) {
		sw.WriteHeader(http.StatusNoContent)
		return
	}
	if s.closing.Load() {
		s.writeError(sw, r, ErrClosing)
		return
	}
	if err := rt.h(sw, r); err != nil {
		if sw.Code != 0 {
			// A streamed answer failed half-way: its 200 is sent, so
			// cut the connection rather than end a truncated body cleanly.
			s.log.Error("request failed after its answer began", "method", r.Method, "path", r.URL.Path, "error", err)
			abort = true
			return
		}
		s.writeError(sw, r, s.closedUnder(r.PathValue("name"), err))
	}
}

func notFound(w http.ResponseWriter, r *http.Request) error {
	return fmt.Errorf("%w: %s %s", ErrNoRoute, r.Method, truncateForMessage(r.URL.Path))
}

// methodNotAllowed answers a path's other methods.
func methodNotAllowed(allowed string) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allowed)
		return fmt.Errorf("%w: %s %s (allowed: %s)", ErrMethod, r.Method, truncateForMessage(r.URL.Path), allowed)
	}
}

// collectionAndBody is the prelude of most routes on one collection: the
// collection the path names, and the body decoded into req (decodeBody).
func (s *Server) collectionAndBody(r *http.Request, req any) (*collection.Collection, error) {
	c, err := s.reg.Get(r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return c, s.decodeBody(r, req)
}

// collectionAndRawBody is the prelude of the routes that decode their body
// themselves (upsert, query): the collection the path names, and the body
// in a pooled buffer, to hand back with releaseBody.
func (s *Server) collectionAndRawBody(r *http.Request) (*collection.Collection, *bodyBuffer, error) {
	c, err := s.reg.Get(r.PathValue("name"))
	if err != nil {
		return nil, nil, err
	}
	buf, err := s.readBody(r)
	return c, buf, err
}
