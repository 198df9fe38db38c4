package crashtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// Workload describes the writes one workload run makes.
type Workload struct {
	Seed    uint64
	Workers int // writer goroutines, each owning its id range
	Ops     int // ops per writer
	Dim     int
	Quant   hnsw.Quantization
	Fsync   collection.Fsync
	// FirstOp numbers this run's ops from FirstOp on, so a chain of runs
	// over one directory never reuses an op id.
	FirstOp uint64
	// CheckpointEvery is the explicit checkpointer's period (0: none);
	// CheckpointBytes the automatic threshold (<0 never).
	CheckpointEvery time.Duration
	CheckpointBytes int64
	SegmentBytes    int64
	Readers         int // query goroutines running alongside
	// Fields runs the multi-field workload: besides the dense field "" of
	// Dim, a multivector field ExtraField and a sparse field SparseField
	// that upserts give to some points, and partial writes (UpdateVectors
	// of any of the fields, DeleteVectors of ExtraField or SparseField)
	// between the other ops.
	Fields bool
	// ReapInterval is the collection's Tuning.ReapInterval: 0 looks every
	// 5 ms, so that kills land in the reaper's deletes too; < 0 runs no
	// background reaper, for tests that map each log record to one op
	// (expired points then stay hidden until a reopen reaps them).
	ReapInterval time.Duration
	// Merge, once every writer has made its ops, waits (at most
	// mergeWait) for the idle collection to merge segments and persist
	// the merge (its own checkpoint), so that a kill can land inside it;
	// in a child, the kill point counts from there on (KillFS.Arm).
	Merge bool
	// idle is called when the writes are done and Merge waits (the
	// child arms its KillFS); only then does Run release hold, the
	// collection's Tuning.HoldMerges, so that no merge starts before.
	idle func()
	hold chan struct{}
}

// mergeWait bounds Merge's wait: the idle look comes within about two
// seconds of the last write (the checkpoint loop looks once a second),
// and a workload whose segments the policy leaves alone just ends.
const mergeWait = 30 * time.Second

// mergeRounds is how many times a Merge workload's writers make their
// ops, with a checkpoint after each round.
const mergeRounds = 3

// ExtraField is the multivector field of the multi-field workload:
// ExtraDim floats a vector, ip (stored as written, so compared exactly).
// SparseField is its sparse field (no modifier).
const (
	ExtraField  = "extra"
	ExtraDim    = 4
	SparseField = "kw"
)

func (w *Workload) options() collection.Options {
	if w.Fields {
		return collection.Options{Vectors: []collection.VectorField{
			{Name: "", Dim: w.Dim, Metric: metric.L2, M: 8, EfConstruction: 48, Quantization: w.Quant},
			{Name: ExtraField, Dim: ExtraDim, Metric: metric.IP, M: 8, EfConstruction: 48, Multivector: collection.MaxSim},
		}, Sparse: []collection.SparseField{{Name: SparseField}}, Seed: w.Seed, Fsync: w.Fsync}
	}
	return collection.Options{Dim: w.Dim, Metric: metric.L2, M: 8, EfConstruction: 48, Quantization: w.Quant,
		Seed: w.Seed, Fsync: w.Fsync}
}

func (w *Workload) tuning(fs vfs.FS) collection.Tuning {
	reap := w.ReapInterval
	if reap == 0 {
		reap = 5 * time.Millisecond
	}
	t := collection.Tuning{FS: fs, CheckpointBytes: w.CheckpointBytes, SegmentBytes: w.SegmentBytes,
		BatchInterval: 2 * time.Millisecond, Threads: 2, ReapInterval: reap}
	if w.hold != nil {
		t.HoldMerges = w.hold
	}
	return t
}

// OpenOrCreate opens the workload's collection in dir, creating it if
// dir holds none. A Merge workload's collection merges nothing until Run
// has called idle.
func (w *Workload) OpenOrCreate(fs vfs.FS, dir string) (*collection.Collection, error) {
	if w.Merge && w.hold == nil {
		w.hold = make(chan struct{})
	}
	if collection.Exists(fs, dir) {
		return collection.Open(dir, w.tuning(fs))
	}
	return collection.Create(dir, w.options(), w.tuning(fs))
}

// Run drives the workload against c, journaling every op, until every
// writer has made its ops. It returns the first unexpected error of a
// write (any error: nothing in the workload is invalid).
func (w *Workload) Run(c *collection.Collection, j *Journal) error {
	var next atomic.Uint64
	next.Store(w.FirstOp)
	var wg sync.WaitGroup
	errs := make(chan error, mergeRounds*w.Workers+w.Readers+2)
	stop := make(chan struct{})
	writers := func() {
		for worker := range w.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := w.writer(c, j, worker, &next); err != nil {
					errs <- fmt.Errorf("writer %d: %w", worker, err)
				}
			}()
		}
	}
	writers()
	var bg sync.WaitGroup
	if w.CheckpointEvery > 0 {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := w.checkpointer(c, j, &next, stop); err != nil {
				errs <- err
			}
		}()
	}
	for r := range w.Readers {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := w.reader(c, r, stop); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	// A Merge workload makes its ops mergeRounds times, each round
	// checkpointed: at least that many sealed segments for the idle
	// merge, however the explicit checkpointer's ticks fell.
	for round := 0; w.Merge && round < mergeRounds; round++ {
		if err := c.Checkpoint(); err != nil {
			errs <- fmt.Errorf("checkpoint after round %d: %w", round, err)
			break
		}
		if round < mergeRounds-1 {
			writers()
			wg.Wait()
		}
	}
	close(stop)
	bg.Wait()
	close(errs)
	if err := errors.Join(collectErrs(errs)...); err != nil || !w.Merge {
		return err
	}
	if w.idle != nil {
		w.idle()
	}
	if w.hold != nil {
		close(w.hold) // the kill point is armed: merges may start
		w.hold = nil
	}
	for deadline := time.Now().Add(mergeWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if in := c.Info(); in.Vacuums > 0 && !in.Merging && in.Seq == in.LastCheckpoint {
			break
		}
	}
	return nil
}

func collectErrs(ch chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}

func (w *Workload) writer(c *collection.Collection, j *Journal, worker int, next *atomic.Uint64) error {
	rng := rand.New(rand.NewPCG(w.Seed, uint64(worker)+1000*w.FirstOp))
	lo := uint64(worker) * IDsPerWorker
	// What exists now, as recovered: UpdateMetadata needs existing ids.
	all := make([]uint64, IDsPerWorker)
	for i := range all {
		all[i] = lo + uint64(i)
	}
	exists := map[uint64]bool{}
	if err := w.present(c, all, exists); err != nil {
		return err
	}
	pick := func(n int) []uint64 {
		ids := make([]uint64, 0, n)
		for range n {
			id := lo + uint64(rng.IntN(IDsPerWorker))
			if !containsID(ids, id) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	for range w.Ops {
		op := Op{ID: next.Add(1) - 1, Worker: worker}
		r := rng.IntN(100)
		if w.Fields && len(exists) > 0 && r < 20 {
			// Partial writes of existing points, 20 of every 100 ops.
			op.Kind, op.Arg = KindUpdateVectors, 1+rng.IntN(7)
			if r < 8 {
				op.Kind, op.Arg = KindDeleteVectors, rng.IntN(2)
			}
			for id := range exists {
				op.IDs = append(op.IDs, id)
				if len(op.IDs) == 1+rng.IntN(3) {
					break
				}
			}
			r = -1
		}
		switch {
		case r < 0:
		case r < 55 || len(exists) == 0:
			op.Kind, op.IDs = KindUpsert, pick(1+rng.IntN(4))
		case r < 75:
			op.Kind = KindSetMeta
			for id := range exists {
				op.IDs = append(op.IDs, id)
				if len(op.IDs) == 1+rng.IntN(3) {
					break
				}
			}
		case r < 94:
			op.Kind, op.IDs = KindDelete, pick(1+rng.IntN(3))
		default:
			op.Kind, op.Arg = KindDeleteWhere, rng.IntN(25)
		}
		if err := j.Attempt(op); err != nil {
			return err
		}
		if err := w.apply(c, op); err != nil {
			return fmt.Errorf("op %d (%c): %w", op.ID, op.Kind, err)
		}
		if err := j.Ack(op.ID); err != nil {
			return err
		}
		switch op.Kind {
		case KindUpsert:
			for _, id := range op.IDs {
				if Expired(op.ID, id) { // as good as deleted
					delete(exists, id)
				} else {
					exists[id] = true
				}
			}
		case KindDelete:
			for _, id := range op.IDs {
				delete(exists, id)
			}
		case KindDeleteWhere:
			// The collection decided which ids matched; ask it.
			clear(exists)
			if err := w.present(c, all, exists); err != nil {
				return err
			}
		}
	}
	return nil
}

// present adds the entries of all that c holds to exists.
func (w *Workload) present(c *collection.Collection, all []uint64, exists map[uint64]bool) error {
	found, _, _, err := c.Get(ExternalIDs(all), false)
	if err != nil {
		return err
	}
	for _, id := range found {
		n, err := EntryOf(id)
		if err != nil {
			return err
		}
		exists[n] = true
	}
	return nil
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// apply submits op to c.
func (w *Workload) apply(c *collection.Collection, op Op) error {
	switch op.Kind {
	case KindUpsert:
		vecs := make([]float32, 0, len(op.IDs)*w.Dim)
		docs := make([]meta.Document, len(op.IDs))
		expiry := collection.Expiry{At: make([]float64, len(op.IDs))}
		for i, id := range op.IDs {
			vecs = Vector(op.ID, id, w.Dim, vecs)
			docs[i] = parseDocument(Document(op.ID, id, op.Worker, op.Kind))
			expiry.At[i] = ExpiresAt(op.ID, id)
		}
		if !w.Fields {
			return c.UpsertExpiring(ExternalIDs(op.IDs), vecs, docs, expiry)
		}
		extra := collection.FieldValues{Points: []int{}}
		for i, id := range op.IDs {
			if n := ExtraCount(op.ID, id); n > 0 {
				extra.Points = append(extra.Points, i)
				extra.Counts = append(extra.Counts, n)
				extra.Vectors = ExtraVectors(op.ID, id, extra.Vectors)
			}
		}
		kw := collection.FieldValues{Points: []int{}, Counts: []int{}, Indices: []uint32{}, Vectors: []float32{}}
		for i, id := range op.IDs {
			if SparseGiven(op.ID, id) {
				kw.Points = append(kw.Points, i)
				kw = appendSparse(kw, SparseVector(op.ID, id))
			}
		}
		return c.UpsertPointsExpiring(ExternalIDs(op.IDs), map[string]collection.FieldValues{"": {Vectors: vecs}, ExtraField: extra, SparseField: kw}, docs, expiry)
	case KindUpdateVectors:
		values := map[string]collection.FieldValues{}
		if op.Arg&1 != 0 {
			var vecs []float32
			for _, id := range op.IDs {
				vecs = Vector(op.ID, id, w.Dim, vecs)
			}
			values[""] = collection.FieldValues{Vectors: vecs}
		}
		if op.Arg&2 != 0 {
			var extra collection.FieldValues
			for _, id := range op.IDs {
				extra.Counts = append(extra.Counts, max(1, ExtraCount(op.ID, id)))
				extra.Vectors = ExtraVectors(op.ID, id, extra.Vectors)
			}
			values[ExtraField] = extra
		}
		if op.Arg&4 != 0 {
			kw := collection.FieldValues{Counts: []int{}, Indices: []uint32{}, Vectors: []float32{}}
			for _, id := range op.IDs {
				kw = appendSparse(kw, SparseVector(op.ID, id))
			}
			values[SparseField] = kw
		}
		_, err := c.UpdateVectors(ExternalIDs(op.IDs), values)
		return err
	case KindDeleteVectors:
		field := ExtraField
		if op.Arg == 1 {
			field = SparseField
		}
		_, err := c.DeleteVectors(ExternalIDs(op.IDs), []string{field})
		return err
	case KindSetMeta:
		docs := make([]meta.Document, len(op.IDs))
		for i, id := range op.IDs {
			docs[i] = parseDocument(Document(op.ID, id, op.Worker, op.Kind))
		}
		_, err := c.UpdateMetadata(ExternalIDs(op.IDs), docs)
		return err
	case KindDelete:
		_, err := c.Delete(ExternalIDs(op.IDs))
		return err
	case KindDeleteWhere:
		f, err := meta.ParseFilter(fmt.Appendf(nil, `{"w":%d,"g":{"$lt":%d}}`, op.Worker, op.Arg))
		if err != nil {
			return err
		}
		_, err = c.DeleteWhere(f)
		return err
	case KindCheckpoint:
		return c.Checkpoint()
	}
	return fmt.Errorf("unknown op kind %q", op.Kind)
}

func (w *Workload) checkpointer(c *collection.Collection, j *Journal, next *atomic.Uint64, stop chan struct{}) error {
	tick := time.NewTicker(w.CheckpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		op := Op{ID: next.Add(1) - 1, Worker: -1, Kind: KindCheckpoint}
		if err := j.Attempt(op); err != nil {
			return err
		}
		if err := c.Checkpoint(); err != nil {
			return fmt.Errorf("checkpoint op %d: %w", op.ID, err)
		}
		if err := j.Ack(op.ID); err != nil {
			return err
		}
	}
}

// reader queries while the writers write: answers must be well-formed.
func (w *Workload) reader(c *collection.Collection, r int, stop chan struct{}) error {
	rng := rand.New(rand.NewPCG(w.Seed, uint64(r)+7777))
	const k = 5
	ids, dists := make([]collection.ID, k), make([]float32, k)
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		q := Vector(rng.Uint64(), 0, w.Dim, nil)
		if _, err := c.Query(q, k, 32, nil, 1, ids, dists); err != nil {
			return fmt.Errorf("reader %d: %w", r, err)
		}
		for i := 1; i < k; i++ {
			if !ids[i].IsNone() && dists[i] < dists[i-1] {
				return fmt.Errorf("reader %d: distances out of order: %v", r, dists)
			}
		}
		for _, id := range ids {
			if _, err := EntryOf(id); err != nil && !id.IsNone() {
				return fmt.Errorf("reader %d: %w", r, err)
			}
		}
		if _, err := c.Documents(ids); err != nil {
			return fmt.Errorf("reader %d: %w", r, err)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// appendSparse appends one point's sparse vector to a field's columns,
// its coordinates in reverse order (the collection sorts them).
func appendSparse(fv collection.FieldValues, v sparse.Vector) collection.FieldValues {
	fv.Counts = append(fv.Counts, len(v.Indices))
	for i := len(v.Indices) - 1; i >= 0; i-- {
		fv.Indices, fv.Vectors = append(fv.Indices, v.Indices[i]), append(fv.Vectors, v.Values[i])
	}
	return fv
}
