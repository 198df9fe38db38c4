package server

import (
	"io"

	"github.com/strata-db/strata/go/collection"
)

// RestoreCollection makes the collection called name from a snapshot
// archive (collection.Export's) and opens it, replacing a collection of
// that name only once the archive has been restored and checked whole
// (registry.Registry.Restore): a bad archive fails with an error matching
// collection.ErrArchive and changes nothing.
func (s *Server) RestoreCollection(name string, src io.Reader) (*collection.Collection, error) {
	c, err := s.reg.Restore(name, src, true)
	if err == nil {
		s.log.Info("collection restored from a snapshot", "name", name)
	}
	return c, err
}
