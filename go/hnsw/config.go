package hnsw

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// Defaults follow hnswlib's recommended settings.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
	// DefaultRaBitQBits is the RaBitQBits a door uses when its caller
	// names no width: 1-bit codes refined with the float vectors searched as
	// fast as 8-bit ones at 100k x 512 (bench/results/rabitq-go) in a
	// seventh of the memory (88 bytes per vector against 624).
	DefaultRaBitQBits = 1
	// DefaultCodesOnlyBits is the RaBitQBits of a codes-only index
	// (Config.RaBitQCodesOnly) whose caller names no width: 3 bits keep
	// a node in under a fifth of a float vector's memory at 512-d
	// (BenchmarkRaBitQModes, bench/results/rabitq-modes).
	DefaultCodesOnlyBits = 3
	// maxLevel caps the random level; with M=2 the chance of exceeding it is
	// below 2^-31 per node.
	maxLevel = 31
)

// Config holds the parameters fixed at creation.
type Config struct {
	Dim            int
	Metric         metric.Metric
	M              int // max neighbours per node above level 0 (level 0 keeps 2·M); default 16
	EfConstruction int // candidate list size while inserting; default 200
	Seed           uint64
	// Quantization selects how the graph stores and compares vectors.
	Quantization Quantization
	// Rerank, with QuantSQ8, keeps the float vectors too and re-ranks each
	// search's candidates with them, so recall matches the float index.
	// Without it only codes are kept (about 4× less memory for vectors).
	Rerank bool
	// Keys makes the ids a collection's internal keys: any uint64 up to
	// batch.MaxKey instead of batch.MaxID. Searches still return them as
	// int64 bit patterns (a key from 2^63 up is negative; -1 remains "no
	// result"). Not stored in the file: Load takes it from LoadOptions.
	Keys bool
	// RaBitQBits, with QuantNone, makes the index keep RaBitQ codes of
	// its nodes current by itself (1-bit codes for the traversal, plus
	// codes of RaBitQBits bits for re-ranking when it is 2-8), so that
	// graph searches run on them (rabitq_keep.go); 0 keeps none (codes
	// can still be built by hand with BuildRaBitQ).
	RaBitQBits int
	// RaBitQCodesOnly, with RaBitQBits in [2, 8], keeps no float vectors:
	// the graph is built on the float vectors of the index's one Add,
	// which are dropped once coded; searches re-rank with the extended
	// codes and report their estimates (rabitq_codesonly.go). Not in the
	// file's parameters: a file without vectors and with bit planes is one.
	RaBitQCodesOnly bool
	// RaBitQLayout, with RaBitQBits = 1, chooses how the codes are laid
	// out for the traversal: LayoutRecords (the HNSW graph with neighbour
	// records, rabitq_blocks.go), LayoutQG (SymphonyQG's quantized graph,
	// rabitq_qg.go) or LayoutRows (the HNSW graph on the code rows alone).
	// Stored in the file as the presence of section RBQG (LayoutQG) or
	// section RBQL (LayoutRows).
	RaBitQLayout Layout
}

// Layout is the traversal layout of a RaBitQ index (Config.RaBitQLayout).
type Layout uint8

const (
	// LayoutRecords searches the HNSW graph on the codes, each node's
	// neighbours' codes beside its level-0 links.
	LayoutRecords Layout = iota
	// LayoutQG searches a quantized graph of degree 32 without upper
	// levels, one row per node holding its vector, its neighbours' ids and
	// their codes relative to it (rabitq_qg.go).
	LayoutQG
	// LayoutRows searches the HNSW graph on each node's code row (1-bit
	// code and factors, (D/64 + 3)·8 bytes) read one neighbour at a time,
	// refining with the float vectors: no per-edge copy of the codes, so
	// with the vectors memory-mapped only the graph and the rows are
	// resident.
	LayoutRows
)

func (l Layout) String() string {
	switch l {
	case LayoutRecords:
		return "records"
	case LayoutQG:
		return "qg"
	case LayoutRows:
		return "rows"
	}
	return fmt.Sprintf("layout(%d)", uint8(l))
}

// maxID is the largest id Add and Load accept.
func (c *Config) maxID() uint64 {
	if c.Keys {
		return batch.MaxKey
	}
	return batch.MaxID
}

// Quantization is the vector encoding of a graph. The values are part of
// the C ABI and the file format: do not change them.
type Quantization uint8

const (
	QuantNone Quantization = 0 // float32 vectors
	QuantSQ8  Quantization = 1 // 8-bit scalar quantization, see package sq8
)

func (q Quantization) String() string {
	if q == QuantSQ8 {
		return "sq8"
	}
	return "none"
}

func (c *Config) setDefaults() {
	if c.M == 0 {
		c.M = DefaultM
	}
	if c.EfConstruction == 0 {
		c.EfConstruction = DefaultEfConstruction
	}
}

// storesFloats reports whether float vectors are kept.
func (c *Config) storesFloats() bool { return c.Quantization == QuantNone || c.Rerank }

func (c *Config) validate() error {
	if err := limits.CheckDim(c.Dim); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if !c.Metric.Valid() {
		return fmt.Errorf("%w: unknown metric %d", ErrInvalidArgument, c.Metric)
	}
	if err := limits.CheckM(c.M); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if c.Quantization > QuantSQ8 {
		return fmt.Errorf("%w: unknown quantization %d", ErrInvalidArgument, c.Quantization)
	}
	if c.Rerank && c.Quantization == QuantNone {
		return fmt.Errorf("%w: rerank needs a quantized index", ErrInvalidArgument)
	}
	if c.RaBitQBits < 0 || c.RaBitQBits > rabitq.MaxBits {
		return fmt.Errorf("%w: rabitq bits must be in [1, %d], got %d", ErrInvalidArgument, rabitq.MaxBits, c.RaBitQBits)
	}
	if c.Metric == metric.Manhattan && (c.Quantization != QuantNone || c.RaBitQBits > 0) {
		return fmt.Errorf("%w: the l1 metric needs float vectors (neither sq8 nor rabitq codes estimate it)", ErrInvalidArgument)
	}
	if c.RaBitQCodesOnly && (c.RaBitQBits < 2 || c.Quantization != QuantNone) {
		return fmt.Errorf("%w: a codes-only index re-ranks with extended rabitq codes: it needs rabitq bits in [2, %d], got %d", ErrInvalidArgument, rabitq.MaxBits, c.RaBitQBits)
	}
	if c.RaBitQBits > 0 && c.Quantization != QuantNone {
		return fmt.Errorf("%w: rabitq codes are built from float vectors; the index is %s", ErrInvalidArgument, c.Quantization)
	}
	switch {
	case c.RaBitQLayout > LayoutRows:
		return fmt.Errorf("%w: unknown rabitq layout %d", ErrInvalidArgument, c.RaBitQLayout)
	case c.RaBitQLayout == LayoutRows && (c.RaBitQBits != 1 || c.RaBitQCodesOnly):
		return fmt.Errorf("%w: the rows layout refines 1-bit estimates with the float vectors: it needs rabitq bits 1 and float vectors, got bits %d (codes-only %t)",
			ErrInvalidArgument, c.RaBitQBits, c.RaBitQCodesOnly)
	case c.RaBitQLayout == LayoutQG && (c.RaBitQBits != 1 || c.RaBitQCodesOnly):
		return fmt.Errorf("%w: the qg layout measures every node it expands with its float vector: it needs rabitq bits 1 and float vectors, got bits %d (codes-only %t)",
			ErrInvalidArgument, c.RaBitQBits, c.RaBitQCodesOnly)
	}
	if c.EfConstruction < 1 || c.EfConstruction > math.MaxUint32 {
		// New checks the tighter limits.MaxEfConstruction; this is what
		// the file's uint32 field can hold, all Load may assume.
		return fmt.Errorf("%w: ef_construction %d does not fit the index file's uint32", ErrInvalidArgument, c.EfConstruction)
	}
	return nil
}
