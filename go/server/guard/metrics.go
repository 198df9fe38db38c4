package guard

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Observe counts one answered request and its duration. Series are
// labelled by route pattern, never by raw path, so their number stays
// fixed: methods outside HTTP's own are "other", and the doors pass their
// patterns or "other".
//
// Not promhttp.InstrumentHandlerCounter/Duration: they allocate a response
// delegator and a label map per request, and the native query path is
// pinned at zero allocations of the server's own
// (TestQueryHandlerAllocatesNothingOfItsOwn). Each series' children are
// found once and kept: WithLabelValues hashes the labels and takes a lock
// on every call.
func (g *Guard) Observe(door, method, route string, status int, elapsed time.Duration) {
	method = methodLabel(method)
	code := statusText(status)
	key := seriesKey{door, method, route, code}
	s, ok := g.series.Load(key)
	if !ok {
		s, _ = g.series.LoadOrStore(key, &requestSeries{
			requests: g.requests.WithLabelValues(door, method, route, code),
			latency:  g.latency.WithLabelValues(door, method, route, code)})
	}
	rs := s.(*requestSeries)
	rs.requests.Inc()
	rs.latency.Observe(elapsed.Seconds())
}

type seriesKey struct{ door, method, route, status string }

type requestSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// methodLabel keeps the method label to a fixed set: net/http accepts any
// token as a method, and each would otherwise make series of its own.
func methodLabel(method string) string {
	switch method {
	case "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "CONNECT", "TRACE":
		return method
	}
	return "other"
}

// statusText avoids strconv's allocation for the common codes.
func statusText(status int) string {
	switch status {
	case 0, 200:
		return "200"
	case 201:
		return "201"
	case 204:
		return "204"
	case 400:
		return "400"
	case 401:
		return "401"
	case 403:
		return "403"
	case 404:
		return "404"
	case 405:
		return "405"
	case 409:
		return "409"
	case 413:
		return "413"
	case 415:
		return "415"
	case 422:
		return "422"
	case 500:
		return "500"
	case 503:
		return "503"
	}
	return strconv.Itoa(status)
}
