package server

import (
	"net/http"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/vfs"
)

// Other doors (package qdrant) serve the same collections through these
// methods, so a collection created by one is seen by the other.

// Collection returns the open collection called name; the error matches
// ErrUnknownCollection, or ErrBadName for a name no collection can have.
func (s *Server) Collection(name string) (*collection.Collection, error) { return s.reg.Get(name) }

// CreateCollection creates and opens a collection; the error matches
// collection.ErrExists if the name is taken, ErrBadName for a bad name.
func (s *Server) CreateCollection(name string, opts collection.Options) (*collection.Collection, error) {
	c, err := s.reg.Create(name, opts)
	if err == nil {
		s.log.Info("collection created", "name", name, "dim", opts.Dim, "metric", opts.Metric.String())
	}
	return c, err
}

// DropCollection closes and deletes a collection (ErrUnknownCollection if
// there is none).
func (s *Server) DropCollection(name string) error {
	err := s.reg.Drop(name)
	if err == nil {
		s.log.Info("collection dropped", "name", name)
	}
	return err
}

// Files is the file system and the directory of the data dir: other doors
// keep their state files there, beside the collections (see package
// registry's layout).
func (s *Server) Files() (vfs.FS, string) { return s.reg.FS(), s.reg.Dir() }

// MetricsHandler serves the server's metrics in Prometheus's text format
// (its /metrics), for another door to serve on its own port: the requests
// of every door are counted there, labelled by door.
func (s *Server) MetricsHandler() http.Handler { return s.metrics.handler }
