package guard

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/strata-db/strata/go/server/internal/apikey"
	"github.com/strata-db/strata/go/server/internal/httpstatus"
)

// Config configures a Guard; zero values pick the defaults named.
type Config struct {
	// APIKey, when set, is the key every route but a door's public ones
	// requires.
	APIKey string
	// AllowOrigins are the browser origins ("http://host:port", or "*"
	// for any) whose pages may send unsafe requests; default none: only
	// the server's own pages (the playground) may.
	AllowOrigins []string
	// Hosts, when not empty, are the host names (without port; "*" for
	// any) a request's Host may name; loopback IP addresses always pass.
	// strata-server sets them when it listens on loopback only: see
	// HostsFor.
	Hosts []string
	// Limits are the server's request limits.
	Limits Limits
	// Registerer receives the request metrics; default none (not exported).
	Registerer prometheus.Registerer
}

// Guard admits requests to both doors and records their metrics. Build one
// per process and hand it to both.
type Guard struct {
	limits  Limits
	key     apikey.Key
	auth    bool
	origins []string
	hosts   []string

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	series   sync.Map // seriesKey → *requestSeries
}

// New returns a Guard, its metrics registered with cfg.Registerer.
func New(cfg Config) (*Guard, error) {
	for _, o := range cfg.AllowOrigins {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return nil, fmt.Errorf("guard: allowed origin %q is not \"*\" nor scheme://host[:port]", o)
		}
	}
	g := &Guard{limits: cfg.Limits.WithDefaults(), key: apikey.New(cfg.APIKey), auth: cfg.APIKey != "",
		origins: cfg.AllowOrigins, hosts: cfg.Hosts,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_requests_total",
			Help: "HTTP requests answered, by door, method, route pattern and status code.",
		}, []string{"door", "method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_http_request_duration_seconds",
			Help:    "Time from routing a request to its handler's return, by door, method, route pattern and status code.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"door", "method", "route", "status"}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{g.requests, g.latency} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("guard: registering the request metrics: %w", err)
			}
		}
	}
	return g, nil
}

// HostsFor is Config.Hosts for a server listening on addrs: the loopback
// names plus extra when every address is loopback only (a DNS-rebinding
// page reaches only such a server, through a name of its own), else extra
// alone (nil: no check).
func HostsFor(addrs []string, extra []string) []string {
	for _, a := range addrs {
		if !IsLoopback(a) {
			return extra
		}
	}
	return append(append([]string(nil), LoopbackHosts...), extra...)
}

// Limits returns the guard's limits, defaults filled in.
func (g *Guard) Limits() *Limits { return &g.limits }

// Wrap is the whole middleware for a door whose routes are ServeMux
// patterns (the Qdrant door): Admit (no route is public), the body limit,
// panic recovery, metrics labelled by door and pattern. Refusals and
// recovered panics are answered by refuse, in the door's own error shape.
func (g *Guard) Wrap(door string, mux *http.ServeMux, refuse func(w http.ResponseWriter, r *http.Request, err error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &httpstatus.Writer{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				if rec.Code == 0 {
					refuse(rec, r, fmt.Errorf("internal error (please report): %v", v))
				}
			}
			pattern := r.Pattern
			if pattern == "" { // refused before routing: label it by the route it asked for
				_, pattern = mux.Handler(r)
			}
			g.Observe(door, r.Method, routeLabel(pattern), rec.Code, time.Since(start))
		}()
		if err := g.Admit(rec, r, false); err != nil {
			refuse(rec, r, err)
			return
		}
		if Preflight(rec, r) {
			rec.WriteHeader(http.StatusNoContent)
			return
		}
		if r.ContentLength > g.limits.MaxBodyBytes {
			refuse(rec, r, g.limits.TooLarge(r.ContentLength))
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, g.limits.MaxBodyBytes)
		mux.ServeHTTP(rec, r)
	})
}

// AsBodyLimit turns the error of reading a body cut short by Wrap's
// MaxBytesReader into the 413 *Error; other errors are returned as they are.
func AsBodyLimit(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return (&Limits{MaxBodyBytes: tooLarge.Limit}).TooLarge(-1)
	}
	return err
}

// routeLabel is a ServeMux pattern without its method ("POST /a/{b}" →
// "/a/{b}"); the catch-all "/" and no match are "other".
func routeLabel(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		pattern = path
	}
	if pattern == "" || pattern == "/" {
		return "other"
	}
	return pattern
}
