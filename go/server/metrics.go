package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/registry"
)

// metrics are the server's Prometheus series. The request series are
// package guard's, shared with the Qdrant door (Guard.Observe). Gauges of each collection are read from
// collection.Info at scrape time; fsync and checkpoint durations and
// group-commit sizes are histograms fed by each collection's
// collection.Observer as they happen.
type metrics struct {
	registry *prometheus.Registry
	handler  http.Handler
	engine   *engineMetrics
}

// engineMetrics are the write-path histograms, labelled by collection.
// They exist before any collection is opened, so that the registry can
// hand each collection its observer.
type engineMetrics struct {
	fsync      *prometheus.HistogramVec
	checkpoint *prometheus.HistogramVec
	group      *prometheus.HistogramVec
}

func newEngineMetrics() *engineMetrics {
	return &engineMetrics{
		fsync: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_wal_fsync_duration_seconds",
			Help:    "Duration of each fsync of a collection's write-ahead log.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .5},
		}, []string{"collection"}),
		checkpoint: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_checkpoint_duration_seconds",
			Help:    "Duration of each checkpoint (snapshot written, CURRENT switched, log trimmed).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"collection"}),
		group: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_group_commit_writes",
			Help:    "Writes carried by each group commit (one log append and at most one fsync).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 1024},
		}, []string{"collection"}),
	}
}

// observer returns the collection.Observer of the collection named name.
func (e *engineMetrics) observer(name string) collection.Observer {
	return &collectionObserver{fsync: e.fsync.WithLabelValues(name),
		checkpoint: e.checkpoint.WithLabelValues(name), group: e.group.WithLabelValues(name)}
}

// forget deletes the series of the collection named name (after a drop),
// so that /metrics does not report dropped collections for ever.
func (e *engineMetrics) forget(name string) {
	for _, h := range []*prometheus.HistogramVec{e.fsync, e.checkpoint, e.group} {
		h.DeleteLabelValues(name)
	}
}

type collectionObserver struct{ fsync, checkpoint, group prometheus.Observer }

func (o *collectionObserver) Fsync(d time.Duration)      { o.fsync.Observe(d.Seconds()) }
func (o *collectionObserver) Checkpoint(d time.Duration) { o.checkpoint.Observe(d.Seconds()) }
func (o *collectionObserver) Group(writes int)           { o.group.Observe(float64(writes)) }

func newMetrics(promRegistry *prometheus.Registry, reg *registry.Registry, engine *engineMetrics) (*metrics, error) {
	if promRegistry == nil {
		promRegistry = prometheus.NewRegistry()
		promRegistry.MustRegister(collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{registry: promRegistry, engine: engine}
	for _, c := range []prometheus.Collector{&collectionCollector{reg: reg},
		engine.fsync, engine.checkpoint, engine.group} {
		if err := promRegistry.Register(c); err != nil {
			return nil, err
		}
	}
	m.handler = promhttp.HandlerFor(promRegistry, promhttp.HandlerOpts{})
	return m, nil
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}

var (
	descPoints = prometheus.NewDesc("strata_collection_points",
		"Points (ids with a vector and a document) in the collection.", []string{"collection"}, nil)
	descWAL = prometheus.NewDesc("strata_collection_wal_bytes",
		"Bytes in the collection's write-ahead log since its last checkpoint.", []string{"collection"}, nil)
	descTombstones = prometheus.NewDesc("strata_collection_tombstones",
		"Removed or overwritten vectors still in the index, until a vacuum rebuilds it.", []string{"collection"}, nil)
	descVacuums = prometheus.NewDesc("strata_collection_vacuums_total",
		"Index rebuilds by the background checkpoint to drop tombstones, since the collection was opened.",
		[]string{"collection"}, nil)
	descRenumbers = prometheus.NewDesc("strata_collection_renumbers_total",
		"Renumberings of the index's graph for memory locality as it grew, since the collection was opened.",
		[]string{"collection"}, nil)
	descFailed = prometheus.NewDesc("strata_collection_failed",
		"1 if the collection refuses writes after an I/O failure or will not open (it is being retried).",
		[]string{"collection"}, nil)
	descReopens = prometheus.NewDesc("strata_collection_reopens_total",
		"Re-opens of the collection after failures (and on request), since the server started.",
		[]string{"collection"}, nil)
)

// collectionCollector reads every collection's state, and every open
// one's Info, at scrape time.
type collectionCollector struct{ reg *registry.Registry }

func (cc *collectionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPoints, descWAL, descTombstones, descVacuums, descRenumbers,
		descFailed, descReopens} {
		ch <- d
	}
}

func (cc *collectionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range cc.reg.List() {
		name := st.Name
		failed := 0.0
		if st.State != registry.StateReady {
			failed = 1
		}
		ch <- prometheus.MustNewConstMetric(descFailed, prometheus.GaugeValue, failed, name)
		ch <- prometheus.MustNewConstMetric(descReopens, prometheus.CounterValue, float64(st.Reopens), name)
		if st.Collection == nil {
			continue
		}
		in := st.Collection.Info()
		ch <- prometheus.MustNewConstMetric(descPoints, prometheus.GaugeValue, float64(in.Count), name)
		ch <- prometheus.MustNewConstMetric(descWAL, prometheus.GaugeValue, float64(in.WALBytes), name)
		ch <- prometheus.MustNewConstMetric(descTombstones, prometheus.GaugeValue, float64(in.Tombstones), name)
		ch <- prometheus.MustNewConstMetric(descVacuums, prometheus.CounterValue, float64(in.Vacuums), name)
		ch <- prometheus.MustNewConstMetric(descRenumbers, prometheus.CounterValue, float64(in.Renumbers), name)
	}
}
