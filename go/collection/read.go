package collection

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
)

// Query finds the k nearest entries to each of the queries (nq·Dim
// floats) among those whose document matches f (nil: all), writing ids and
// distances into out (nq·k each, padded with NoID and +Inf). ef 0 uses
// max(k, 64); k and ef are bounded by package limits.
func (c *Collection) Query(queries []float32, k, ef int, f *meta.Filter, threads int,
	outIDs []ID, outDists []float32) (hnsw.SearchStats, error) {
	return c.QueryAmong(queries, k, ef, f, nil, threads, outIDs, outDists)
}

// keyScratch holds the index's int64 results before they become IDs.
var keyScratch = sync.Pool{New: func() any { return new([]int64) }}

// QueryAmong is Query restricted further to the ids in among, when among
// is not nil (an empty, non-nil list allows nothing; ids that do not exist
// are ignored).
func (c *Collection) QueryAmong(queries []float32, k, ef int, f *meta.Filter, among []ID, threads int,
	outIDs []ID, outDists []float32) (hnsw.SearchStats, error) {
	return c.QueryField("", queries, k, ef, f, among, threads, outIDs, outDists)
}

// QueryField is QueryAmong over the dense vector field named field
// (Qdrant's using; "" is the unnamed field): queries holds nq rows of the
// field's Dim floats. Points without a value in the field are never
// returned. A multivector field is queried with QueryMulti.
func (c *Collection) QueryField(field string, queries []float32, k, ef int, f *meta.Filter, among []ID, threads int,
	outIDs []ID, outDists []float32) (hnsw.SearchStats, error) {
	if err := c.alive(); err != nil {
		return hnsw.SearchStats{}, err
	}
	vf, err := c.queriedField(field, false)
	if err != nil {
		return hnsw.SearchStats{}, err
	}
	if len(outIDs) != len(outDists) {
		return hnsw.SearchStats{}, fmt.Errorf("%w: outputs hold %d ids and %d distances", ErrInvalid, len(outIDs), len(outDists))
	}
	scratch := keyScratch.Get().(*[]int64)
	defer keyScratch.Put(scratch)
	if cap(*scratch) < len(outIDs) {
		*scratch = make([]int64, len(outIDs))
	}
	keys := (*scratch)[:len(outIDs)]
	if _, err := batch.CheckSearch(queries, vf.Dim, k, keys, outDists); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("collection: %w", err)
	}
	if err := limits.CheckEf(ef); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if ef == 0 {
		ef = max(k, hnsw.DefaultEfSearch)
	}
	allow, expired, err := c.allowedOrExpired(f, among)
	if err != nil {
		return hnsw.SearchStats{}, err
	}
	stats, err := vf.search(queries, k, ef, threads, allow, expired, keys, outDists)
	if err != nil {
		return stats, fmt.Errorf("collection: %w", err)
	}
	c.idsOfResults(keys, outIDs, outDists, k)
	return stats, nil
}

// QueryMulti finds the k points nearest by MAX_SIM (maxsim.go) to one
// multivector query, 1 to limits.MaxMultivectors rows of the multivector
// field's Dim floats, among those f and among allow (as QueryAmong),
// writing ids and distances into out (k each, padded with NoID and +Inf).
// ef 0 uses max(k, 64).
func (c *Collection) QueryMulti(field string, query []float32, k, ef int, f *meta.Filter, among []ID, threads int,
	outIDs []ID, outDists []float32) (hnsw.SearchStats, error) {
	if err := c.alive(); err != nil {
		return hnsw.SearchStats{}, err
	}
	vf, err := c.queriedField(field, true)
	if err != nil {
		return hnsw.SearchStats{}, err
	}
	if err := checkMultiQuery(vf, query); err != nil {
		return hnsw.SearchStats{}, err
	}
	if err := batch.CheckFinite(query, vf.Dim, "query"); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("collection: %w", err)
	}
	if err := limits.CheckK(k); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(outIDs) != k || len(outDists) != k {
		return hnsw.SearchStats{}, fmt.Errorf("%w: outputs hold %d ids and %d distances, want %d each", ErrInvalid, len(outIDs), len(outDists), k)
	}
	if err := limits.CheckEf(ef); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if ef == 0 {
		ef = max(k, hnsw.DefaultEfSearch)
	}
	sc, err := c.scope(f, among)
	if err != nil {
		return hnsw.SearchStats{}, err
	}
	scratch := keyScratch.Get().(*[]int64)
	defer keyScratch.Put(scratch)
	if cap(*scratch) < k {
		*scratch = make([]int64, k)
	}
	keys := (*scratch)[:k]
	stats, err := vf.searchMulti(query, k, ef, sc, threads, keys, outDists)
	if err != nil {
		return stats, fmt.Errorf("collection: %w", err)
	}
	c.idsOfResults(keys, outIDs, outDists, k)
	return stats, nil
}

// queriedField returns the field a query names, which must be of the kind
// the call serves.
func (c *Collection) queriedField(name string, multi bool) (*vectorField, error) {
	vf := c.fields.Load().get(name)
	switch {
	case vf == nil:
		return nil, fmt.Errorf("%w: no vector field %q", ErrInvalid, name)
	case multi && vf.multi == nil:
		return nil, fmt.Errorf("%w: vector field %q is dense: query it with QueryField", ErrInvalid, name)
	case !multi && vf.multi != nil:
		return nil, fmt.Errorf("%w: vector field %q is a multivector field: query it with QueryMulti", ErrInvalid, name)
	}
	return vf, nil
}

// readScope is what one read may return, resolved from its filter, its
// among list and one reading of the clock (allowedOrExpired): the keys
// allow lets through (nil: every key) that have not expired. With a list,
// the expired keys are taken out of it; without one, expired lists them.
//
// It is the one way reads hide expired points (expiry.go), the dense
// search's: an index is asked for as many more results as expired holds
// and they are dropped (vectorField.search makes up for the tail's
// hidden rows so too); past maxHiddenExtra of them, an index that takes an allow
// list gets the list of the points not expired instead (indexAllow) and
// the dense search a deny list. So a read of a collection with a few
// points waiting for the reaper costs no list of every point.
type readScope struct {
	allow   []uint64
	expired expiredSet
}

// scope resolves a read's restrictions (allowedOrExpired).
func (c *Collection) scope(f *meta.Filter, among []ID) (readScope, error) {
	allow, expired, err := c.allowedOrExpired(f, among)
	return readScope{allow: allow, expired: expired}, err
}

// indexAllow returns the allow list to give an index that takes only one
// (nil: all) and how many results more to ask of it: the caller drops
// the keys s.expired holds from its answer.
func (c *Collection) indexAllow(s readScope) (allow []uint64, extra int) {
	switch n := len(s.expired.keys); {
	case n == 0:
		return s.allow, 0
	case n <= maxHiddenExtra:
		return nil, n // allow is nil whenever expired is not empty
	}
	return s.expired.without(c.meta.Select(nil)), 0
}

// allowedOrExpired is allowed for a read that can skip the expired keys
// itself (a dense search makes up for them as for the tail's hidden rows):
// the expired keys are taken out of a list, and with no list (nil: all)
// returned instead, so that nothing is built per point. Both come from
// one reading of the clock.
func (c *Collection) allowedOrExpired(f *meta.Filter, among []ID) ([]uint64, expiredSet, error) {
	var allow []uint64
	if f != nil && !f.MatchesAll() {
		bound, err := c.bindVectors(c.resolve(f))
		if err != nil {
			return nil, expiredSet{}, err
		}
		if allow = c.meta.Select(bound); allow == nil {
			allow = []uint64{}
		}
	}
	expired := c.expiredNow()
	if among != nil {
		amongKeys := c.keysOf(among) // ids no write accepts allow nothing, as absent ones
		if allow == nil {
			allow = amongKeys
		} else {
			allow = intersectSorted(allow, amongKeys)
		}
	}
	if allow == nil {
		return nil, expired, nil
	}
	return expired.without(allow), expiredSet{}, nil
}

// bindVectors replaces the filter's has_vector conditions with the keys
// of the points having those fields; a field that does not exist is an
// error.
func (c *Collection) bindVectors(f *meta.Filter) (*meta.Filter, error) {
	names := f.VectorFields()
	if len(names) == 0 {
		return f, nil
	}
	set := c.fields.Load()
	for _, name := range names {
		if !set.has(name) {
			return nil, fmt.Errorf("%w: has_vector: no vector field %q", ErrInvalid, name)
		}
	}
	return f.BindVectors(func(name string) []uint64 {
		if sf := set.getSparse(name); sf != nil {
			return sf.points()
		}
		return set.get(name).points()
	}), nil
}

// idsOfResults turns the index's results (keys as int64, -1 padding) into
// ids. A string key whose id was deleted after the search found it is
// dropped, and the query's later results move up: a write concurrent with
// a query may or may not be seen, but a result always names an id.
func (c *Collection) idsOfResults(keys []int64, out []ID, dists []float32, k int) {
	for q := 0; q < len(keys); q += k {
		w := q
		for i := q; i < q+k; i++ {
			key := keys[i]
			if key == -1 {
				continue
			}
			id, ok := c.idOf(uint64(key))
			if !ok {
				continue
			}
			out[w], dists[w] = id, dists[i]
			w++
		}
		for ; w < q+k; w++ {
			out[w], dists[w] = NoID, float32(math.Inf(1))
		}
	}
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
// NoID, invalid or gone).
func (c *Collection) Documents(ids []ID) ([][]byte, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	docs := make([][]byte, len(ids))
	exp := c.expiredNow()
	for i, id := range ids {
		if id.IsNone() {
			continue
		}
		if k, ok := c.liveKeyOf(id, exp); ok {
			docs[i], _ = c.meta.Get(k)
		}
	}
	return docs, nil
}

// Get returns the ids among ids that exist, in request order, their
// documents and, with vectors, their stored vectors (normalised for the
// cosine metric). An id no write accepts exists nowhere: it is left out,
// as before string ids.
func (c *Collection) Get(ids []ID, withVectors bool) (found []ID, docs [][]byte, vectors []float32, err error) {
	if err := c.alive(); err != nil {
		return nil, nil, nil, err
	}
	var def *vectorField
	var get func(key uint64, out []float32) error
	if withVectors {
		if def, err = c.defaultField(); err != nil {
			return nil, nil, nil, err
		}
	}
	if withVectors {
		v := def.tail.Read()
		defer v.Close()
		get = func(key uint64, out []float32) error { return def.getVectors(&v, []uint64{key}, out) }
	}
	exp := c.expiredNow()
	for _, id := range ids {
		key, ok := c.liveKeyOf(id, exp)
		if !ok {
			continue
		}
		doc, ok := c.meta.Get(key)
		if !ok {
			continue
		}
		if withVectors {
			at := len(vectors)
			vectors = append(vectors, make([]float32, def.Dim)...)
			if err := get(key, vectors[at:]); err != nil {
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

// GetVectors returns, of the ids that have a value in the named field (in
// request order), the ids, their vectors (normalised for the cosine
// metric) and, for a multivector field, how many vectors each has (nil
// for a dense field: one each).
func (c *Collection) GetVectors(ids []ID, field string) (found []ID, vectors []float32, counts []int, err error) {
	if err := c.alive(); err != nil {
		return nil, nil, nil, err
	}
	f := c.fields.Load().get(field)
	if f == nil {
		return nil, nil, nil, fmt.Errorf("%w: no vector field %q", ErrInvalid, field)
	}
	var labels []uint64
	v := f.tail.Read()
	defer v.Close()
	exp := c.expiredNow()
	for _, id := range ids {
		key, ok := c.liveKeyOf(id, exp)
		if !ok {
			continue
		}
		labels = labels[:0]
		if f.multi != nil {
			f.multi.mu.RLock()
			labels = append(labels, f.multi.labels[key]...)
			f.multi.mu.RUnlock()
		} else if f.holds(&v, key) {
			labels = append(labels, key)
		}
		if len(labels) == 0 {
			continue
		}
		at := len(vectors)
		vectors = append(vectors, make([]float32, len(labels)*f.Dim)...)
		if err := f.getVectors(&v, labels, vectors[at:]); err != nil {
			if errors.Is(err, hnsw.ErrNotFound) {
				vectors = vectors[:at] // replaced or deleted since
				continue
			}
			return nil, nil, nil, fmt.Errorf("collection: %w", err)
		}
		found = append(found, id)
		if f.multi != nil {
			counts = append(counts, len(labels))
		}
	}
	return found, vectors, counts, nil
}

// Count returns how many entries match f (nil: all).
func (c *Collection) Count(f *meta.Filter) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	exp := c.expiredNow()
	if f == nil || f.MatchesAll() {
		// Of the keys expired at the clock reading, those the reaper has
		// deleted since are gone from meta too: subtract only those it
		// still holds, looked up with its count in one read.
		return c.meta.LenWithout(exp.keys), nil
	}
	bound, err := c.bindVectors(c.resolve(f))
	if err != nil {
		return 0, err
	}
	if !exp.empty() {
		return len(exp.without(c.meta.Select(bound))), nil
	}
	return c.meta.Count(bound), nil
}

// Len is the number of entries. Like Dir, Options, Info, Describe and
// TextFields it describes the collection and answers after Close too (as
// it was at Close); the methods that read or write entries fail with
// ErrClosed then.
func (c *Collection) Len() int { return c.meta.LenWithout(c.expiredNow().keys) }

// ScanIDs returns up to limit ids matching f (nil: all; limit 0: no
// limit) in scan order (integers ascending, then strings in byte order),
// after the id after when hasAfter: a page of a scan. after need not be
// present (deleted since the last page, say).
func (c *Collection) ScanIDs(f *meta.Filter, after ID, hasAfter bool, limit int) ([]ID, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	if err := limits.CheckScan(limit); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if hasAfter {
		if err := checkID(after, 0); err != nil {
			return nil, fmt.Errorf("after: %w", err)
		}
	}
	f, err := c.bindVectors(c.resolve(f))
	if err != nil {
		return nil, err
	}
	out := []ID{}
	exp := c.expiredNow()
	if !hasAfter || !after.IsString() {
		// Keys ascend integers first, then string keys (2^63 and up). The
		// page asks for as many more as there are expired keys to skip.
		ask := limit
		if limit > 0 {
			ask += len(exp.keys)
		}
		for _, k := range c.meta.IDsAfter(f, after.num, hasAfter, ask) {
			if k >= firstStringKey || (limit > 0 && len(out) == limit) {
				break
			}
			if !exp.has(k) {
				out = append(out, ID{num: k})
			}
		}
		if limit > 0 && len(out) == limit {
			return out, nil
		}
	}
	if c.ids.len() == 0 {
		return out, nil
	}
	var matching []uint64 // string keys matching f, ascending; nil: all
	if !f.MatchesAll() {
		matching = c.meta.IDsAfter(f, firstStringKey-1, true, 0)
		if len(matching) == 0 {
			return out, nil
		}
	}
	names := c.ids.sortedNames()
	start := 0
	if hasAfter && after.IsString() {
		start, _ = slices.BinarySearch(names, after.str)
		if start < len(names) && names[start] == after.str {
			start++
		}
	}
	for _, s := range names[start:] {
		k, ok := c.ids.key(s)
		if !ok || !c.meta.Contains(k) || exp.has(k) {
			continue
		}
		if matching != nil {
			if _, in := slices.BinarySearch(matching, k); !in {
				continue
			}
		}
		out = append(out, ID{str: s, kind: kindString})
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
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
	Tombstones     int   // summed over the vector fields
	Vectors        []VectorField
	Sparse         []SparseField
	Recovery       Recovery
	Groups         int64 // group commits since open
	Records        int64 // writes logged since open
	Syncs          int64
	SyncSeconds    float64
	Checkpoints    int64
	CheckpointSecs float64
	Vacuums        int64 // segment merges and rewrites (Tuning.VacuumRatio; package segment)
	VacuumSeconds  float64
	Renumbers      int64 // graph renumberings for memory locality
	// TailRows is how many acknowledged values wait in the vector fields'
	// tails for the builder (searched exactly meanwhile); Built how many
	// it has moved into the graphs since Open.
	TailRows int
	Built    int64
	// Segments is how many graph segments holding nodes the vector
	// fields have, summed (the active graphs with nodes among them).
	Segments int
	// Merging is set while a merge of segments builds (package segment,
	// "Merging") and until the checkpoint that writes it has run: what
	// Segments counts is about to change, or the change is not on disk.
	Merging bool
	Failed  string // why writes are refused, if they are
	// Verification is the background check of the segment CRCs Open
	// deferred (verify.go): "pending", "verified" or "failed" (then every
	// read and write returns VerifyError). Unverified is the bytes left.
	Verification string
	VerifyError  string
	Unverified   uint64
}

// Info returns the collection's state.
func (c *Collection) Info() Info {
	opts := c.Options()
	tombstones, segments := 0, 0
	for _, f := range c.fields.Load().fields {
		tombstones += f.index.Tombstones()
		segments += f.index.Segments()
	}
	in := Info{Dir: c.dir, Count: c.Len(), Dim: opts.Dim, Metric: opts.Metric.String(), M: opts.M,
		EfConstruction: opts.EfConstruction, Quantization: opts.Quantization.String(), Vectors: c.VectorFields(),
		Fsync: c.tuning.Fsync.String(), Seq: c.applied.Load(), LastCheckpoint: c.lastCheckpoint.Load(),
		WALBytes: c.log.Bytes(), SnapshotBytes: c.snapshotBytes.Load(), Tombstones: tombstones, Recovery: c.recovery,
		Sparse: c.SparseFields(),
		Groups: c.stats.Groups.Load(), Records: c.stats.Records.Load(), Syncs: c.stats.Syncs.Load(),
		SyncSeconds: float64(c.stats.SyncNanos.Load()) / 1e9, Checkpoints: c.stats.Checkpoints.Load(),
		CheckpointSecs: float64(c.stats.CheckpointNanos.Load()) / 1e9, Vacuums: c.stats.Vacuums.Load(),
		VacuumSeconds: float64(c.stats.VacuumNanos.Load()) / 1e9, Renumbers: c.stats.Renumbers.Load()}
	in.TailRows, in.Built = c.tailStats()
	in.Segments, in.Merging = segments, c.merging.Load()
	if at := c.checkpointAt.Load(); at != 0 {
		in.CheckpointTime = time.Unix(0, at)
	}
	if err := c.failed(); err != nil {
		in.Failed = err.Error()
	}
	in.Verification = c.verification()
	if err := c.damage(); err != nil {
		in.VerifyError = err.Error()
	}
	if in.Verification == VerifyPending {
		in.Unverified = c.unverified()
	}
	return in
}

// Seq is Info().Seq, the sequence number of the last write applied,
// without Info's other figures (its fields, counts and log size): what a
// write's answer reports.
func (c *Collection) Seq() uint64 { return c.applied.Load() }

// CheckIntegrity checks the index's graph and that the index and the
// documents hold the same ids.
func (c *Collection) CheckIntegrity() error {
	if err := c.alive(); err != nil {
		return err
	}
	c.checkpointMu.Lock()
	defer c.checkpointMu.Unlock()
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	// The checks compare graphs and documents: the tails go in first.
	if err := c.drainLocked(); err != nil {
		return fmt.Errorf("collection: %w", err)
	}
	set := c.fields.Load()
	for _, f := range set.fields {
		if err := f.index.CheckIntegrity(); err != nil {
			return fmt.Errorf("collection: vector field %q: %w", f.Name, err)
		}
		if f.multi != nil {
			if a, b := f.index.Len(), len(f.multi.point); a != b {
				return fmt.Errorf("%w: vector field %q: index holds %d vectors, its map %d", hnsw.ErrCorrupt, f.Name, a, b)
			}
		}
	}
	if set.legacy() {
		if a, b := set.def.index.Len(), c.meta.Len(); a != b {
			return fmt.Errorf("%w: index holds %d ids, documents %d", hnsw.ErrCorrupt, a, b)
		}
	}
	for _, f := range set.sparse {
		if err := f.index.CheckIntegrity(); err != nil {
			return fmt.Errorf("collection: sparse field %q: %w", f.Name, err)
		}
	}
	if err := checkFieldPoints(set, c.meta.Contains, c.meta.Len()); err != nil {
		return fmt.Errorf("%w: %w", hnsw.ErrCorrupt, err)
	}
	// Every expiry belongs to a point: a delete drops it with the point.
	for _, k := range c.expiry.export().Keys {
		if !c.meta.Contains(k) {
			return fmt.Errorf("%w: key %d has an expiry time but no point", hnsw.ErrCorrupt, k)
		}
	}
	return nil
}
