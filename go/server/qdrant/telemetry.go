package qdrant

import (
	"context"
	"net/http"
	"slices"
	"time"
)

// GET /telemetry answers the parts of Qdrant's TelemetryData that strata
// has: the app (name "strata", the API version this door serves, when it
// started) and its collections with their points. The door's request
// counts and latencies are on GET /metrics (Config.Metrics), as
// Prometheus series, not repeated here.

type telemetryApp struct {
	Name    string    `json:"name"`
	Version string    `json:"version"`
	Startup time.Time `json:"startup"`
}

type collectionTelemetry struct {
	ID     string `json:"id"`
	Points int    `json:"points"`
}

type collectionsTelemetry struct {
	NumberOfCollections int                   `json:"number_of_collections"`
	Collections         []collectionTelemetry `json:"collections"`
}

// telemetryData is Qdrant's TelemetryData, the fields strata has.
type telemetryData struct {
	ID          string               `json:"id"`
	App         telemetryApp         `json:"app"`
	Collections collectionsTelemetry `json:"collections"`
}

// telemetry is Qdrant's telemetry call.
func (h *Handler) telemetry(context.Context) (telemetryData, error) {
	names := slices.Sorted(slices.Values(h.cfg.Collections.Collections()))
	out := telemetryData{ID: "strata", App: telemetryApp{Name: "strata", Version: Version, Startup: h.started},
		Collections: collectionsTelemetry{Collections: []collectionTelemetry{}}}
	for _, name := range names {
		c, err := h.cfg.Collections.Collection(name)
		if err != nil {
			continue // failed or dropped meanwhile: not counted
		}
		out.Collections.Collections = append(out.Collections.Collections, collectionTelemetry{ID: name, Points: c.Info().Count})
	}
	out.Collections.NumberOfCollections = len(out.Collections.Collections)
	return out, nil
}

// restNone is the REST route of a call without a collection or a body.
func restNone[Resp any](fn func(context.Context) (Resp, error)) route {
	return func(r *http.Request) (any, error) { return fn(r.Context()) }
}
