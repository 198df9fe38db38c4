package flat

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// Config describes a flat index.
type Config struct {
	Dim    int
	Metric metric.Metric
}

// Index is an exact brute-force index. All methods are safe for concurrent use.
type Index struct {
	dim    int
	metric metric.Metric

	mu      sync.RWMutex
	vectors []float32         // row-major, len(ids)*dim floats
	ids     []uint64          // ids[row]
	rows    map[uint64]uint32 // id -> row
	nextID  uint64            // first id handed out when Add gets no ids

	progress atomic.Int64 // vectors stored by Add since New, upserts included
}

// maxRows is the most vectors an index holds: rows are uint32.
const maxRows = math.MaxUint32

// New returns an empty index.
func New(cfg Config) (*Index, error) {
	if err := limits.CheckDim(cfg.Dim); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if !cfg.Metric.Valid() {
		return nil, fmt.Errorf("%w: unknown metric %d", ErrConfig, uint8(cfg.Metric))
	}
	return &Index{dim: cfg.Dim, metric: cfg.Metric, rows: make(map[uint64]uint32)}, nil
}

// Add stores len(vectors)/Dim vectors. With ids nil, ids are handed out
// sequentially from one past the largest id ever stored. An id already in the
// index has its vector replaced. outIDs, if not nil, must have one slot per
// vector and receives the ids used. threads is accepted for symmetry with
// hnsw and ignored: storing is a copy, bounded by memory bandwidth.
func (x *Index) Add(vectors []float32, ids []uint64, outIDs []uint64, threads int) error {
	n, err := batch.CheckAdd(vectors, x.dim, ids, outIDs)
	if err != nil {
		return fmt.Errorf("flat: %w", err)
	}
	if n == 0 {
		return nil
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkRoom(n, ids == nil); err != nil {
		return err
	}
	for i := range n {
		id := x.nextID
		if ids != nil {
			id = ids[i]
		}
		row, exists := x.rows[id]
		if !exists {
			row = uint32(len(x.ids))
			x.ids = append(x.ids, id)
			x.vectors = append(x.vectors, vectors[i*x.dim:(i+1)*x.dim]...)
			x.rows[id] = row
		}
		dst := x.vectors[int(row)*x.dim : (int(row)+1)*x.dim]
		if exists {
			copy(dst, vectors[i*x.dim:])
		}
		if x.metric.NeedsNormalize() {
			metric.Normalize(dst)
		}
		if id >= x.nextID {
			x.nextID = id + 1
		}
		if outIDs != nil {
			outIDs[i] = id
		}
		x.progress.Add(1)
	}
	return nil
}

// checkRoom fails before any change if n more rows, or n more sequential
// ids, might not fit. Upserts are counted as new rows: the bound is only
// ever reached in theory.
func (x *Index) checkRoom(n int, sequential bool) error {
	if n > maxRows-len(x.ids) {
		return fmt.Errorf("%w: %d stored + %d new vectors exceed %d", ErrFull, len(x.ids), n, maxRows)
	}
	if sequential && x.nextID > batch.MaxID-uint64(n)+1 {
		return fmt.Errorf("%w: no %d sequential ids left after %d", ErrFull, n, x.nextID)
	}
	return nil
}

// Search writes, for each of the len(queries)/Dim queries, the k nearest
// stored vectors to outIDs/outDists (len nq*k, row-major), padded with -1 /
// +Inf when fewer than k exist. ef is accepted for symmetry with hnsw and
// ignored. Queries are spread over threads goroutines (all cores if <= 0).
func (x *Index) Search(queries []float32, k, ef, threads int, outIDs []int64, outDists []float32) error {
	nq, err := batch.CheckSearch(queries, x.dim, k, outIDs, outDists)
	if err != nil {
		return fmt.Errorf("flat: %w", err)
	}
	// ef means nothing to an exact scan, but both indexes refuse the same
	// arguments.
	if err := limits.CheckEf(ef); err != nil {
		return fmt.Errorf("flat: %w: %w", batch.ErrInvalid, err)
	}
	if nq == 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()

	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	workers := min(threads, nq)
	if workers == 1 {
		s := x.newSearcher(k)
		for q := range nq {
			s.search(queries, q, outIDs, outDists)
		}
		return nil
	}

	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		panicked atomic.Value
	)
	for range workers {
		wg.Go(func() {
			// A panic on a goroutine the caller did not start would kill the
			// process (the C ABI's recover cannot reach it): hand it back.
			defer func() {
				if r := recover(); r != nil {
					panicked.CompareAndSwap(nil, fmt.Sprint(r))
				}
			}()
			s := x.newSearcher(k)
			for {
				q := int(next.Add(1) - 1)
				if q >= nq {
					return
				}
				s.search(queries, q, outIDs, outDists)
			}
		})
	}
	wg.Wait()
	if r := panicked.Load(); r != nil {
		panic(fmt.Sprintf("flat: search worker: %v", r))
	}
	return nil
}

// searcher holds one goroutine's scratch space, reused across its queries.
type searcher struct {
	x     *Index
	k     int
	best  *topK
	query []float32 // normalised copy of the query, cosine only
}

func (x *Index) newSearcher(k int) *searcher {
	s := &searcher{x: x, k: k, best: newTopK(k)}
	if x.metric.NeedsNormalize() {
		s.query = make([]float32, x.dim)
	}
	return s
}

// search answers query q; the caller holds x.mu for reading.
func (s *searcher) search(queries []float32, q int, outIDs []int64, outDists []float32) {
	x, dim := s.x, s.x.dim
	query := queries[q*dim : (q+1)*dim]
	if s.query != nil {
		copy(s.query, query)
		metric.Normalize(s.query)
		query = s.query
	}
	s.best.reset()
	for row, id := range x.ids {
		s.best.push(x.metric.Distance(query, x.vectors[row*dim:(row+1)*dim]), id)
	}
	s.best.drain(outIDs[q*s.k:(q+1)*s.k], outDists[q*s.k:(q+1)*s.k])
}

// Len returns the number of stored vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Dim returns the vector dimension.
func (x *Index) Dim() int { return x.dim }

// Metric returns the distance metric.
func (x *Index) Metric() metric.Metric { return x.metric }

// Progress returns how many vectors Add has stored since New, upserts
// included. It is safe to poll while Add runs.
func (x *Index) Progress() int64 { return x.progress.Load() }

// CheckIntegrity verifies that storage, ids and the id map agree and that
// no stored value is NaN or infinite.
func (x *Index) CheckIntegrity() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.vectors) != len(x.ids)*x.dim {
		return fmt.Errorf("%w: %d floats for %d rows of dim %d", ErrCorrupt, len(x.vectors), len(x.ids), x.dim)
	}
	if len(x.rows) != len(x.ids) {
		return fmt.Errorf("%w: id map has %d entries for %d rows", ErrCorrupt, len(x.rows), len(x.ids))
	}
	for row, id := range x.ids {
		if got, ok := x.rows[id]; !ok || int(got) != row {
			return fmt.Errorf("%w: row %d holds id %d but the map says row %d (present %v)", ErrCorrupt, row, id, got, ok)
		}
		if id >= x.nextID {
			return fmt.Errorf("%w: row %d holds id %d at or past the next sequential id %d", ErrCorrupt, row, id, x.nextID)
		}
	}
	if err := batch.CheckFinite(x.vectors, x.dim, "stored vectors"); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
}
