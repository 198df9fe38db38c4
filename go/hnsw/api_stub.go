package hnsw

import (
	"errors"

	"github.com/strata-db/strata/go/metric"
)

// TEMPORARY: API skeleton so dependants compile; replaced by the engine.

type Config struct {
	Dim            int
	Metric         metric.Metric
	M              int // default 16
	EfConstruction int // default 200
	Seed           uint64
}

type Index struct{ cfg Config }

var errTODO = errors.New("hnsw: not implemented yet")

func New(cfg Config) (*Index, error) { return &Index{cfg: cfg}, nil }

// Add inserts len(vectors)/Dim vectors. ids nil means sequential ids starting
// at NextID(); outIDs (nil or len n) receives the ids used. threads <= 0 = all cores.
func (x *Index) Add(vectors []float32, ids []uint64, outIDs []uint64, threads int) error {
	return errTODO
}

// Search runs len(queries)/Dim queries; outIDs/outDists have len nq*k,
// padded with -1/+Inf. ef <= 0 means max(k, 64).
func (x *Index) Search(queries []float32, k, ef, threads int, outIDs []int64, outDists []float32) error {
	return errTODO
}
func (x *Index) Len() int               { return 0 }
func (x *Index) Dim() int               { return x.cfg.Dim }
func (x *Index) Metric() metric.Metric  { return x.cfg.Metric }
func (x *Index) Progress() int64        { return 0 }
func (x *Index) CheckIntegrity() error  { return errTODO }
