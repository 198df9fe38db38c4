package hnsw

import (
	"fmt"

	"github.com/strata-db/strata/go/metric"
)

// Defaults follow hnswlib's recommended settings.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
	// maxLevel caps the random level; with M=2 the chance of exceeding it is
	// below 2^-31 per node.
	maxLevel = 31
	// maxDim bounds the dimension so that offsets stay well inside int.
	maxDim = 1 << 16
)

// Config holds the parameters fixed at creation.
type Config struct {
	Dim            int
	Metric         metric.Metric
	M              int // max neighbours per node above level 0 (level 0 keeps 2·M); default 16
	EfConstruction int // candidate list size while inserting; default 200
	Seed           uint64
}

func (c *Config) setDefaults() {
	if c.M == 0 {
		c.M = DefaultM
	}
	if c.EfConstruction == 0 {
		c.EfConstruction = DefaultEfConstruction
	}
}

func (c *Config) validate() error {
	if c.Dim <= 0 || c.Dim > maxDim {
		return fmt.Errorf("%w: dim must be in [1, %d], got %d", ErrInvalidArgument, maxDim, c.Dim)
	}
	if !c.Metric.Valid() {
		return fmt.Errorf("%w: unknown metric %d", ErrInvalidArgument, c.Metric)
	}
	if c.M < 2 || c.M > 256 {
		return fmt.Errorf("%w: M must be in [2, 256], got %d", ErrInvalidArgument, c.M)
	}
	if c.EfConstruction < 1 {
		return fmt.Errorf("%w: ef_construction must be positive, got %d", ErrInvalidArgument, c.EfConstruction)
	}
	return nil
}
