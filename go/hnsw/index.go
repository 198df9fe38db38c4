package hnsw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/quant/rabitq"
)

var inf = float32(math.Inf(1))

// lockStripes is the number of node locks; node i uses stripe i%lockStripes.
// Striping instead of one mutex per node keeps the lock array fixed while
// the graph grows.
const lockStripes = 4096

// Index is an HNSW graph over float32 vectors with caller-chosen uint64 ids.
// All methods are safe for concurrent use; see the package doc for what runs
// in parallel with what.
type Index struct {
	cfg     Config
	dk      distance // the metric's kernel
	levelMu float64  // 1/ln(M): scale of the random level distribution

	graph atomic.Pointer[graph]

	writeMu sync.Mutex // serialises Add and other mutations

	// compactMu serialises Compact calls; touched, non-nil while one builds
	// its graph aside, collects the ids Add and Remove write meanwhile
	// (under writeMu). See compact.go.
	compactMu sync.Mutex
	touched   map[uint64]struct{}
	// orderedLive is the live id count when the graph was last renumbered
	// (by a large Add, Compact or Renumber; 0 at creation and load), so
	// that Renumber can skip a graph that has not grown since. Under
	// writeMu.
	orderedLive int
	entryMu     sync.Mutex // held while a node raises the top level
	locks       [lockStripes]sync.Mutex

	mapMu sync.RWMutex
	byID  idTable // live id -> node
	// published is the node count (live nodes and tombstones) that byID
	// accounts for: set with byID when an Add, a Compact or a load
	// publishes its nodes, so that Tombstones reads it under mapMu
	// without waiting for an Add in progress, whose nodes count once
	// published.
	published int
	nextID    uint64     // first id of the next auto-numbered batch
	rng       *rand.Rand // level draws; used under writeMu only
	pcg       *rand.PCG  // rng's source, saved with the index

	// closeMu is held shared by every operation that reads the graph and
	// exclusively by Close, so a memory-mapped file is never unmapped
	// under a running search.
	closeMu sync.RWMutex
	closed  bool
	file    *indexfile.File // mapped file backing vectors, or nil
	// mmapVectors: the vectors were mapped for LoadOptions.MmapVectors
	// (Mapped), not only for LoadOptions.DeferCRC with ram placement.
	mmapVectors bool
	// deferred is the structure check LoadOptions.DeferCRC leaves to
	// Verify (verify.go).
	deferred deferredCheck

	testing searchTesting // zero: production behaviour
	build   buildTesting  // zero: production behaviour

	progress atomic.Int64 // nodes inserted by Add and Compact since creation
	// keys is the live ids in order for filter compilation, built when
	// the index is sealed (sealedKeys) or once the ids stay unchanged
	// between two filtered searches (filter_keys.go).
	keys       atomic.Pointer[keyTable]
	sealedKeys atomic.Bool
	// quietSets is byID.sets+1 at the last filtered search, 0 before one.
	quietSets atomic.Uint64
	pool      sync.Pool // *searcher

	// rabitq holds the RaBitQ codes of the graph (rabitq_codes.go), or nil.
	rabitq atomic.Pointer[rabitqCodes]
	// rabitqBlocks says the codes also carry the SymphonyQG neighbour
	// blocks (BuildRaBitQBlocks, a file holding them, or Config.RaBitQBits
	// = 1 with enough dimensions, whose searches run on them:
	// expandsExactly). Guarded by writeMu.
	rabitqBlocks bool
}

// New creates an empty index. Its parameters are checked against package
// limits.
func New(cfg Config) (*Index, error) {
	cfg.setDefaults()
	if err := limits.CheckEfConstruction(cfg.EfConstruction); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newIndex(cfg), nil
}

// newIndex makes the empty index of a checked cfg. Load calls it directly:
// a file written before ef_construction was bounded holds any value its
// uint32 field can, and must still open.
func newIndex(cfg Config) *Index {
	x := &Index{
		cfg:     cfg,
		dk:      distanceOf(cfg.Metric),
		levelMu: 1 / math.Log(float64(cfg.M)),
		byID:    newIDTable(),
		pcg:     rand.NewPCG(cfg.Seed, 0x5eed5eed),
	}
	x.rng = rand.New(x.pcg)
	x.rabitqBlocks = cfg.RaBitQBits == 1 && cfg.RaBitQLayout == LayoutRecords && rabitq.PaddedDim(cfg.Dim) >= expandedMinDims
	x.graph.Store(newGraph(cfg.Dim, cfg.M, nil, cfg.storesFloats()))
	x.pool.New = func() any { return new(searcher) }
	return x
}

// Config returns the parameters the index was created with (defaults filled in).
func (x *Index) Config() Config { return x.cfg }

// Dim returns the vector dimension.
func (x *Index) Dim() int { return x.cfg.Dim }

// Metric returns the distance metric.
func (x *Index) Metric() metric.Metric { return x.cfg.Metric }

// Len returns the number of live (added and not removed) vectors.
func (x *Index) Len() int {
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	return x.byID.len()
}

// Progress returns how many nodes Add and Compact have inserted since the
// index was created; poll it from another thread to follow a long Add.
func (x *Index) Progress() int64 { return x.progress.Load() }

// Contains reports whether id is live in the index.
func (x *Index) Contains(id uint64) bool {
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	_, ok := x.byID.get(id)
	return ok
}

// acquire takes the shared close lock for an operation, failing if the
// index is closed. Callers defer x.closeMu.RUnlock() on success.
func (x *Index) acquire() error {
	x.closeMu.RLock()
	if x.closed {
		x.closeMu.RUnlock()
		return errClosed
	}
	return nil
}

func (x *Index) getSearcher() *searcher {
	s := x.pool.Get().(*searcher)
	s.testing = x.testing
	return s
}

func (x *Index) putSearcher(s *searcher) { x.pool.Put(s) }

// drawLevels draws the levels of n new nodes, in order (so a seed fixes
// them whatever the thread count), and the upper-level words they need.
func (x *Index) drawLevels(n, strideUp int) (levels []uint8, upperWords int) {
	levels = make([]uint8, n)
	for i := range levels {
		l := x.randomLevel()
		levels[i] = uint8(l)
		upperWords += l * strideUp
	}
	return levels, upperWords
}

// randomLevel draws a node level from the exponential distribution of the
// HNSW paper: P(level >= l) = M^-l.
func (x *Index) randomLevel() int {
	u := 1 - x.rng.Float64() // in (0, 1]
	l := int(-math.Log(u) * x.levelMu)
	return min(l, maxLevel)
}
