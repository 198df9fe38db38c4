package collection

import (
	"fmt"
	"runtime"
	"time"

	"github.com/strata-db/strata/go/collection/meta"
)

// maxGroupBytes bounds one group commit, so a burst of large batches does
// not become one giant write.
const maxGroupBytes = 64 << 20

// request is one write waiting for the committer.
type request struct {
	pendingWrite
	payload []byte
	done    chan struct{}
	err     error
	count   int // ids the write changed, set when applied
}

// pendingWrite is a write on its way into memory, live or from the log.
type pendingWrite struct {
	rec  record
	docs []meta.Document // parsed rec.docs
	seq  uint64
	req  *request // nil during replay
}

// submit validates nothing (callers did), queues the write and waits until
// it is durable (per the fsync policy) and applied.
func (c *Collection) submit(rec record, docs []meta.Document) (int, error) {
	c.closeMu.RLock()
	if c.closed {
		c.closeMu.RUnlock()
		return 0, ErrClosed
	}
	if err := c.failed(); err != nil {
		c.closeMu.RUnlock()
		return 0, err
	}
	r := &request{pendingWrite: pendingWrite{rec: rec, docs: docs}, payload: rec.encode(),
		done: make(chan struct{})}
	r.req = r
	c.requests <- r
	c.closeMu.RUnlock()
	<-r.done
	return r.count, r.err
}

func (c *Collection) failed() error {
	if p := c.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records the first failure; every later write gets it.
func (c *Collection) fail(err error) error {
	wrapped := fmt.Errorf("%w: %w", ErrFailed, err)
	c.failure.CompareAndSwap(nil, &wrapped)
	return c.failed()
}

// commitLoop is the logger: it takes every queued request (a group),
// appends them to the log in one write, fsyncs once for all of them
// (FsyncAlways) and applies the group or hands it to applyLoop. Requests
// queued while a group is logged form the next group, so the more writers
// wait, the fewer fsyncs each one pays for.
func (c *Collection) commitLoop() {
	defer c.wg.Done()
	defer close(c.logged)
	for {
		var group []*request
		select {
		case r := <-c.requests:
			group = append(group, r)
		case <-c.stop:
			// Close holds closeMu, so nothing new is queued: drain.
			for {
				select {
				case r := <-c.requests:
					c.logAndApply([]*request{r}, len(r.payload))
				default:
					return
				}
			}
		}
		size := len(group[0].payload)
	drain:
		for size < maxGroupBytes {
			select {
			case r := <-c.requests:
				group = append(group, r)
				size += len(r.payload)
			default:
				break drain
			}
		}
		c.logAndApply(group, size)
	}
}

// smallGroupBytes is the size below which a group's apply is short next
// to an fsync, so that the logger gains more by applying it itself and
// letting its writers come back than by overlapping the next fsync with
// its apply.
const smallGroupBytes = 256 << 10

// logAndApply logs the group and then applies a small one on the logger's
// own goroutine, once applyLoop has nothing left before it (the log's
// order is the apply's order), lets the woken writers run, and only then
// tells the builder about the rows: a goroutine readied first runs first
// on this P, and the builder readied before the writers (as apply did)
// took the P from them for a whole build step. The measured reasons:
//
//   - Applied here, a small group's ack needs no handoff to the applier
//     (one goroutine fewer to ready per group), and the logger decides
//     when the builder is readied: after the writers. With the builder
//     running, a single-row ack's time off the disk (its latency less the
//     fsyncs it waited for) fell from 69 to 24-26 us at the median with
//     one writer and from 171 to 93-97 us with eight (p90 0.34-0.46x),
//     BenchmarkAckSingle, 6 alternating rounds, load 16-22.
//   - Without the wait for the writers, the writers of the group being
//     applied missed the next group and formed the one after: N writers
//     of single rows split into two alternating groups of N/2, two fsyncs
//     per round (measured 0.25 fsyncs per ack with 8 writers), and on this
//     kind of virtual disk an fsync costs more CPU (120-150 us of kernel
//     time) than everything else a single-row ack does together.
//
// A group of large batches goes to applyLoop: its apply is long and worth
// overlapping with the next group's fsync.
func (c *Collection) logAndApply(group []*request, size int) {
	err := c.failed()
	if err == nil {
		err = c.logGroup(group)
	}
	if err != nil {
		finish(group, err)
		return
	}
	if size >= smallGroupBytes || c.handedOff.Load() > 0 {
		c.handedOff.Add(1)
		c.logged <- group
		if size < smallGroupBytes {
			<-group[len(group)-1].done // finish closes them in order
			runtime.Gosched()
		}
		return
	}
	c.applyGroup(group)
	runtime.Gosched()
	c.kickBuilder()
}

// applyLoop applies the groups the logger hands over, in the order they
// were logged.
func (c *Collection) applyLoop() {
	defer c.wg.Done()
	for group := range c.logged {
		c.applyGroup(group)
		c.handedOff.Add(-1)
		c.kickBuilder()
	}
}

// applyGroup applies a logged group and wakes its callers.
func (c *Collection) applyGroup(group []*request) {
	writes := make([]pendingWrite, len(group))
	for i, r := range group {
		writes[i] = r.pendingWrite
	}
	err := c.failed()
	if err == nil {
		if err = c.apply(writes); err != nil {
			// The log holds what memory lacks: only a reopen, which
			// replays the log, gets them back in step.
			err = c.fail(fmt.Errorf("apply: %w", err))
		}
	}
	finish(group, err)
	if err == nil && c.tuning.CheckpointBytes > 0 &&
		c.log.Bytes()-c.walAtSnapshot.Load() >= c.tuning.CheckpointBytes {
		select {
		case c.checkpointKick <- struct{}{}:
		default:
		}
	}
}

func finish(group []*request, err error) {
	for _, r := range group {
		r.err = err
		close(r.done)
	}
}

// logGroup appends the group's records and syncs them per the policy.
func (c *Collection) logGroup(group []*request) error {
	payloads := make([][]byte, len(group))
	for i, r := range group {
		payloads[i] = r.payload
	}
	c.walMu.Lock()
	defer c.walMu.Unlock()
	first, err := c.log.Append(payloads)
	if err == nil && c.tuning.Fsync == FsyncAlways {
		err = c.syncLocked()
	}
	if err != nil {
		return c.fail(fmt.Errorf("log: %w", err))
	}
	for i, r := range group {
		r.seq = first + uint64(i)
	}
	c.stats.Groups.Add(1)
	c.stats.Records.Add(int64(len(group)))
	if o := c.tuning.Observer; o != nil {
		o.Group(len(group))
	}
	return nil
}

func (c *Collection) syncLocked() error {
	began := time.Now()
	err := c.log.Sync()
	took := time.Since(began)
	c.stats.Syncs.Add(1)
	c.stats.SyncNanos.Add(int64(took))
	if o := c.tuning.Observer; o != nil {
		o.Fsync(took)
	}
	return err
}

// syncLoop is FsyncBatch's background fsync.
func (c *Collection) syncLoop() {
	defer c.wg.Done()
	tick := time.NewTicker(c.tuning.BatchInterval)
	defer tick.Stop()
	var synced uint64
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		c.walMu.Lock()
		if next := c.log.NextSeq(); next != synced && c.failed() == nil {
			if err := c.syncLocked(); err != nil {
				c.fail(fmt.Errorf("log: %w", err))
			}
			synced = next
		}
		c.walMu.Unlock()
	}
}

// apply brings the writes, in sequence order, into memory. Runs of
// upserts are merged into one parallel index insert (a later write of an
// id in the run wins, as it would applied one by one).
func (c *Collection) apply(writes []pendingWrite) error {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	for i := 0; i < len(writes); {
		w := &writes[i]
		if w.rec.op != opUpsert {
			if err := c.applyOne(w); err != nil {
				return err
			}
			i++
			continue
		}
		j := i + 1
		for j < len(writes) && writes[j].rec.op == opUpsert {
			j++
		}
		if err := c.applyUpserts(writes[i:j]); err != nil {
			return err
		}
		i = j
	}
	c.applied.Store(writes[len(writes)-1].seq)
	c.backpressure()
	return nil
}

func (c *Collection) applyOne(w *pendingWrite) error {
	n := 0
	switch w.rec.op {
	case opDelete:
		keys := c.keysOf(w.rec.ids)
		// A point expired and not reaped yet is gone for every read: the
		// caller's count leaves it out, as a missing id. Only the count
		// reads the clock; the apply is the same live and in replay.
		gone := 0
		if w.req != nil {
			gone = c.expiry.countExpired(keys, c.now())
		}
		var err error
		if n, err = c.deleteKeys(keys); err != nil {
			return err
		}
		n -= gone
	case opExpire:
		// The reaper's delete: only the ids whose expiry is still the one
		// it saw (not upserted again since), live and in replay alike.
		keys := make([]uint64, 0, len(w.rec.ids))
		for i, id := range w.rec.ids {
			if k, ok := c.keyOf(id); ok && c.expiry.get(k) == w.rec.expires[i] {
				keys = append(keys, k)
			}
		}
		var err error
		if n, err = c.deleteKeys(keys); err != nil {
			return err
		}
	case opSetMeta:
		// An id deleted since the write was validated (or, in replay,
		// deleted before a snapshot that came later) is skipped.
		keys, docs := make([]uint64, 0, len(w.rec.ids)), w.docs[:0:0]
		for i, id := range w.rec.ids {
			if k, ok := c.keyOf(id); ok {
				keys, docs = append(keys, k), append(docs, w.docs[i])
			}
		}
		c.meta.PutBatch(keys, docs)
		c.noteChanged(keys)
		c.putText(keys, docs)
		n = len(keys)
	case opTextIndex:
		if err := c.applyTextIndex(w.rec.docs[0]); err != nil {
			return err
		}
	default:
		var err error
		if n, err = c.applyFieldOp(w); err != nil {
			return err
		}
	}
	if w.req != nil {
		w.req.count = n
	}
	return nil
}

// deleteKeys removes the points of keys and returns how many existed.
func (c *Collection) deleteKeys(keys []uint64) (int, error) {
	n := c.meta.Delete(keys)
	c.noteChanged(keys)
	c.deleteText(keys)
	if err := c.fields.Load().dropPoints(keys, nil); err != nil {
		return 0, err
	}
	if h := c.hooks.docsDeleted; h != nil {
		h()
	}
	c.expiry.clear(keys)
	// A deleted string's mapping goes with its point.
	c.ids.remove(keys)
	return n, nil
}

// applyUpserts applies a run of op 1 records: the field "" of every point
// written, and no other field (a whole-point write). A run written for a
// field "" that is gone, or has another dimension now (removed and added
// again since the writes were validated), writes the documents alone.
func (c *Collection) applyUpserts(run []pendingWrite) error {
	set := c.fields.Load()
	def := set.def
	if def != nil && (def.multi != nil || def.Dim != run[0].rec.dim) {
		def = nil
	}
	for i := range run {
		if run[i].rec.dim != run[0].rec.dim {
			// Written across a change of the field "": apply them in
			// two runs, each of one dimension.
			if err := c.applyUpserts(run[:i]); err != nil {
				return err
			}
			return c.applyUpserts(run[i:])
		}
	}
	dim := run[0].rec.dim
	if len(run) > 1 && def != nil && !def.trained() {
		// An SQ8 index trains its ranges on its first Add: make that the
		// first upsert record alone, live and in replay alike, so that
		// recovery rebuilds the same codes however records were grouped.
		if err := c.applyUpserts(run[:1]); err != nil {
			return err
		}
		run = run[1:]
	}
	if len(run) == 1 {
		w := &run[0]
		keys, err := c.assignKeys(w.rec.ids)
		if err != nil {
			return err
		}
		if err := c.putDefault(set, def, keys, w.rec.vectors); err != nil {
			return err
		}
		c.meta.PutBatch(keys, w.docs)
		c.noteChanged(keys)
		c.putText(keys, w.docs)
		c.expiry.put(keys, w.rec.expires)
		if w.req != nil {
			w.req.count = len(keys)
		}
		return nil
	}
	// Sized for the whole run up front: a replayed group of 4,096
	// single-row records grew these a slice copy at a time.
	rows := 0
	for wi := range run {
		rows += len(run[wi].rec.ids)
	}
	last := make(map[uint64]int, rows) // key -> position in the merged batch
	ids := make([]uint64, 0, rows)
	vectors := make([]float32, 0, rows*dim)
	docs := make([]meta.Document, 0, rows)
	var expires []int64 // nil while no record of the run has expiry times
	for wi := range run {
		w := &run[wi]
		keys, err := c.assignKeys(w.rec.ids)
		if err != nil {
			return err
		}
		for i, id := range keys {
			vec := w.rec.vectors[i*dim : (i+1)*dim]
			var exp int64
			if w.rec.expires != nil {
				exp = w.rec.expires[i]
				if expires == nil {
					expires = make([]int64, len(ids), rows)
				}
			}
			if at, ok := last[id]; ok {
				copy(vectors[at*dim:], vec)
				docs[at] = w.docs[i]
				if expires != nil {
					expires[at] = exp
				}
				continue
			}
			last[id] = len(ids)
			ids = append(ids, id)
			vectors = append(vectors, vec...)
			docs = append(docs, w.docs[i])
			if expires != nil {
				expires = append(expires, exp)
			}
		}
		if w.req != nil {
			w.req.count = len(w.rec.ids)
		}
	}
	if err := c.putDefault(set, def, ids, vectors); err != nil {
		return err
	}
	c.meta.PutBatch(ids, docs)
	c.noteChanged(ids)
	c.putText(ids, docs)
	c.expiry.put(ids, expires)
	return nil
}

// assignKeys returns the keys of an upsert's ids, handing out keys to new
// string ids in the order they come (log order: replay hands out the same
// ones). Only the applier calls it.
func (c *Collection) assignKeys(ids []ID) ([]uint64, error) {
	keys := make([]uint64, len(ids))
	for i, id := range ids {
		if id.kind != kindString {
			keys[i] = id.num
			continue
		}
		k, err := c.ids.assign(id.str)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// putDefault writes the vectors of ids into the field def ("" if it
// matches the records, else nil: none) and drops the ids' values of every
// other field. A collection of the field "" alone has no other field.
func (c *Collection) putDefault(set *fieldSet, def *vectorField, ids []uint64, vectors []float32) error {
	if def != nil {
		if err := def.put(ids, vectors, nil, c.tuning.Threads); err != nil {
			return err
		}
	}
	return set.dropPoints(ids, def)
}
