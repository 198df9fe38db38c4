package collection

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
)

// Query finds the k nearest entries to each of the queries (nq·Dim
// floats) among those whose document matches f (nil: all), writing ids and
// distances into out (nq·k each, padded with -1 and +Inf). ef 0 uses
// max(k, 64); k and ef are bounded by package limits.
func (c *Collection) Query(queries []float32, k, ef int, f *meta.Filter, threads int,
	outIDs []int64, outDists []float32) (hnsw.SearchStats, error) {
	return c.QueryAmong(queries, k, ef, f, nil, threads, outIDs, outDists)
}

// QueryAmong is Query restricted further to the ids in among, when among
// is not nil (an empty, non-nil list allows nothing; ids that do not exist
// are ignored). It serves callers whose filters name ids, which documents
// do not hold (the Qdrant door's has_id).
func (c *Collection) QueryAmong(queries []float32, k, ef int, f *meta.Filter, among []uint64, threads int,
	outIDs []int64, outDists []float32) (hnsw.SearchStats, error) {
	if err := c.alive(); err != nil {
		return hnsw.SearchStats{}, err
	}
	if _, err := batch.CheckSearch(queries, c.opts.Dim, k, outIDs, outDists); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("collection: %w", err)
	}
	if err := limits.CheckEf(ef); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if ef == 0 {
		ef = max(k, hnsw.DefaultEfSearch)
	}
	var filter *hnsw.Filter
	if f != nil && !f.MatchesAll() {
		allow := c.meta.Select(f)
		if allow == nil {
			allow = []uint64{}
		}
		filter = &hnsw.Filter{Allow: allow}
	}
	if among != nil {
		if filter == nil {
			filter = &hnsw.Filter{Allow: among}
		} else {
			filter.Allow = intersectSorted(filter.Allow, among)
		}
	}
	stats, err := c.index.SearchFiltered(queries, k, ef, threads, filter, outIDs, outDists)
	if err != nil {
		return stats, fmt.Errorf("collection: %w", err)
	}
	return stats, nil
}

// intersectSorted returns the ids of ascending (Select's order) that are
// in among (any order), ascending and never nil.
func intersectSorted(ascending, among []uint64) []uint64 {
	in := make(map[uint64]struct{}, len(among))
	for _, id := range among {
		in[id] = struct{}{}
	}
	out := []uint64{}
	for _, id := range ascending {
		if _, ok := in[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

// Documents returns the JSON document of each id (nil where the id is
// negative or gone).
func (c *Collection) Documents(ids []int64) ([][]byte, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	docs := make([][]byte, len(ids))
	for i, id := range ids {
		if id >= 0 {
			docs[i], _ = c.meta.Get(uint64(id))
		}
	}
	return docs, nil
}

// Get returns the ids among ids that exist, in request order, their
// documents and, with vectors, their stored vectors (normalised for the
// cosine metric).
func (c *Collection) Get(ids []uint64, withVectors bool) (found []uint64, docs [][]byte, vectors []float32, err error) {
	if err := c.alive(); err != nil {
		return nil, nil, nil, err
	}
	for _, id := range ids {
		doc, ok := c.meta.Get(id)
		if !ok {
			continue
		}
		if withVectors {
			at := len(vectors)
			vectors = append(vectors, make([]float32, c.opts.Dim)...)
			if err := c.index.GetVectors([]uint64{id}, vectors[at:]); err != nil {
				if errors.Is(err, hnsw.ErrNotFound) {
					vectors = vectors[:at] // deleted since meta.Get
					continue
				}
				return nil, nil, nil, fmt.Errorf("collection: %w", err)
			}
		}
		found, docs = append(found, id), append(docs, doc)
	}
	return found, docs, vectors, nil
}

// Count returns how many entries match f (nil: all).
func (c *Collection) Count(f *meta.Filter) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	if f == nil || f.MatchesAll() {
		return c.meta.Len(), nil
	}
	return c.meta.Count(f), nil
}

// Len is the number of entries. Like Dir, Options, Info, Describe and
// TextFields it describes the collection and answers after Close too (as
// it was at Close); the methods that read or write entries fail with
// ErrClosed then.
func (c *Collection) Len() int { return c.meta.Len() }

// ScanIDs returns up to limit ids matching f (nil: all), ascending, after
// the id after when hasAfter: a page of a scan.
func (c *Collection) ScanIDs(f *meta.Filter, after uint64, hasAfter bool, limit int) ([]uint64, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	if err := limits.CheckScan(limit); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return c.meta.IDsAfter(f, after, hasAfter, limit), nil
}

// Info describes the collection's state.
type Info struct {
	Dir            string
	Count          int
	Dim            int
	Metric         string
	M              int
	EfConstruction int
	Quantization   string
	Fsync          string
	Seq            uint64 // last sequence number applied
	LastCheckpoint uint64 // sequence number of the live snapshot
	CheckpointTime time.Time
	WALBytes       int64
	SnapshotBytes  int64 // files of the live snapshot
	Tombstones     int
	Recovery       Recovery
	Groups         int64 // group commits since open
	Records        int64 // writes logged since open
	Syncs          int64
	SyncSeconds    float64
	Checkpoints    int64
	CheckpointSecs float64
	Vacuums        int64 // index compactions (Tuning.VacuumRatio)
	VacuumSeconds  float64
	Renumbers      int64  // graph renumberings for memory locality
	Failed         string // why writes are refused, if they are
}

// Info returns the collection's state.
func (c *Collection) Info() Info {
	in := Info{Dir: c.dir, Count: c.meta.Len(), Dim: c.opts.Dim, Metric: c.opts.Metric.String(), M: c.opts.M,
		EfConstruction: c.opts.EfConstruction, Quantization: c.opts.Quantization.String(),
		Fsync: c.tuning.Fsync.String(), Seq: c.applied.Load(), LastCheckpoint: c.lastCheckpoint.Load(),
		WALBytes: c.log.Bytes(), SnapshotBytes: c.snapshotBytes.Load(), Tombstones: c.index.Tombstones(), Recovery: c.recovery,
		Groups: c.stats.Groups.Load(), Records: c.stats.Records.Load(), Syncs: c.stats.Syncs.Load(),
		SyncSeconds: float64(c.stats.SyncNanos.Load()) / 1e9, Checkpoints: c.stats.Checkpoints.Load(),
		CheckpointSecs: float64(c.stats.CheckpointNanos.Load()) / 1e9, Vacuums: c.stats.Vacuums.Load(),
		VacuumSeconds: float64(c.stats.VacuumNanos.Load()) / 1e9, Renumbers: c.stats.Renumbers.Load()}
	if at := c.checkpointAt.Load(); at != 0 {
		in.CheckpointTime = time.Unix(0, at)
	}
	if err := c.failed(); err != nil {
		in.Failed = err.Error()
	}
	return in
}

// CheckIntegrity checks the index's graph and that the index and the
// documents hold the same ids.
func (c *Collection) CheckIntegrity() error {
	if err := c.alive(); err != nil {
		return err
	}
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	if err := c.index.CheckIntegrity(); err != nil {
		return fmt.Errorf("collection: %w", err)
	}
	if a, b := c.index.Len(), c.meta.Len(); a != b {
		return fmt.Errorf("%w: index holds %d ids, documents %d", hnsw.ErrCorrupt, a, b)
	}
	return nil
}
