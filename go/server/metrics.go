package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/strata-db/strata/go/collection"
)

// metrics are the server's Prometheus series. Request series are labelled
// by route pattern ("/collections/{name}/query"), never by raw path, so
// their number stays fixed. Collection series are read from
// collection.Info at scrape time; the engine counts fsyncs, checkpoints and
// group commits as running totals, so those are exported as summaries
// without quantiles (_count and _sum: rate(_sum)/rate(_count) is the mean).
type metrics struct {
	registry *prometheus.Registry
	handler  http.Handler
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(registry *prometheus.Registry, reg *registry) (*metrics, error) {
	if registry == nil {
		registry = prometheus.NewRegistry()
		registry.MustRegister(collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{registry: registry,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status code.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_http_request_duration_seconds",
			Help:    "Time from routing a request to its handler's return, by method, route pattern and status code.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"method", "route", "status"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, &collectionCollector{reg: reg}} {
		if err := registry.Register(c); err != nil {
			return nil, err
		}
	}
	m.handler = promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
	return m, nil
}

func (m *metrics) observe(method, route string, status int, elapsed time.Duration) {
	code := statusText(status)
	m.requests.WithLabelValues(method, route, code).Inc()
	m.latency.WithLabelValues(method, route, code).Observe(elapsed.Seconds())
}

// statusText avoids strconv's allocation for the common codes.
func statusText(status int) string {
	switch status {
	case 0, 200:
		return "200"
	case 201:
		return "201"
	case 400:
		return "400"
	case 401:
		return "401"
	case 404:
		return "404"
	case 405:
		return "405"
	case 409:
		return "409"
	case 413:
		return "413"
	case 422:
		return "422"
	case 500:
		return "500"
	case 503:
		return "503"
	}
	return strconv.Itoa(status)
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, _ params) error {
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}

var (
	descPoints = prometheus.NewDesc("strata_collection_points",
		"Points (ids with a vector and a document) in the collection.", []string{"collection"}, nil)
	descWAL = prometheus.NewDesc("strata_collection_wal_bytes",
		"Bytes in the collection's write-ahead log since its last checkpoint.", []string{"collection"}, nil)
	descTombstones = prometheus.NewDesc("strata_collection_tombstones",
		"Deleted index slots not yet reused.", []string{"collection"}, nil)
	descFsync = prometheus.NewDesc("strata_wal_fsync_duration_seconds",
		"Time spent in fsyncs of the write-ahead log since the collection was opened.", []string{"collection"}, nil)
	descCheckpoint = prometheus.NewDesc("strata_checkpoint_duration_seconds",
		"Time spent in checkpoints since the collection was opened.", []string{"collection"}, nil)
	descGroup = prometheus.NewDesc("strata_group_commit_records",
		"Writes per group commit (count: groups, sum: writes) since the collection was opened.", []string{"collection"}, nil)
	descFailed = prometheus.NewDesc("strata_collection_failed",
		"1 if the collection refuses writes after an I/O failure.", []string{"collection"}, nil)
)

// collectionCollector reads every open collection's Info at scrape time.
type collectionCollector struct{ reg *registry }

func (cc *collectionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPoints, descWAL, descTombstones, descFsync, descCheckpoint, descGroup, descFailed} {
		ch <- d
	}
}

func (cc *collectionCollector) Collect(ch chan<- prometheus.Metric) {
	cc.reg.each(func(name string, c *collection.Collection) {
		in := c.Info()
		failed := 0.0
		if in.Failed != "" {
			failed = 1
		}
		ch <- prometheus.MustNewConstMetric(descPoints, prometheus.GaugeValue, float64(in.Count), name)
		ch <- prometheus.MustNewConstMetric(descWAL, prometheus.GaugeValue, float64(in.WALBytes), name)
		ch <- prometheus.MustNewConstMetric(descTombstones, prometheus.GaugeValue, float64(in.Tombstones), name)
		ch <- prometheus.MustNewConstMetric(descFailed, prometheus.GaugeValue, failed, name)
		ch <- prometheus.MustNewConstSummary(descFsync, uint64(in.Syncs), in.SyncSeconds, nil, name)
		ch <- prometheus.MustNewConstSummary(descCheckpoint, uint64(in.Checkpoints), in.CheckpointSecs, nil, name)
		ch <- prometheus.MustNewConstSummary(descGroup, uint64(in.Groups), float64(in.Records), nil, name)
	})
}
