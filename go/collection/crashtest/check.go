package crashtest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/hnsw"
)

// Model is the state of a collection as the checker knows it: for each id,
// the op that wrote its vector and the op (and kind) that wrote its document.
type Model map[uint64]Entry

// Entry is one id's state in a Model.
type Entry struct {
	VecOp   uint64
	DocOp   uint64
	DocKind byte
	// The two-field workload: ExtraOp wrote the point's ExtraField value,
	// if HasExtra.
	ExtraOp  uint64
	HasExtra bool
	// SparseOp wrote the point's SparseField value, if HasSparse.
	SparseOp  uint64
	HasSparse bool
	// Expires is the point's expiry (Unix nanoseconds, 0 none), always
	// in the future: an upsert that wrote it expired is a delete here.
	Expires int64
}

// Cut says which of a run's events are certain and which possible after a
// crash: ops acknowledged among the first Acked events must be present
// (unless Lower says a weaker fsync policy may lose them), ops attempted
// among the first Attempted events may be present, later ones must not.
type Cut struct {
	Acked, Attempted int
	// Lower, if set, overrides the acknowledged prefix: an ack event at
	// index i binds only if Lower(i) (FsyncBatch and FsyncNever after a
	// power loss).
	Lower func(i int) bool
}

// Report counts what a check verified.
type Report struct {
	Acked     int // acknowledged writes that had to be present and were
	InFlight  int // attempted, unacknowledged writes (either outcome allowed)
	Survived  int // of those, how many were found applied
	Recall    float64
	Fresh     float64
	Entries   int
	Recovered collection.Recovery
}

// workerOps is one writer's ops of a run, in order, with its bounds.
type workerOps struct {
	ops    []Op
	lo, hi int
}

func planOf(events []Event, cut Cut) map[int]*workerOps {
	plan := map[int]*workerOps{}
	pos := map[uint64][2]int{} // op id -> worker, index in its list
	for i, ev := range events {
		if ev.Attempt != nil {
			if i >= cut.Attempted || ev.Attempt.Worker < 0 {
				continue
			}
			w := plan[ev.Attempt.Worker]
			if w == nil {
				w = &workerOps{}
				plan[ev.Attempt.Worker] = w
			}
			pos[ev.Attempt.ID] = [2]int{ev.Attempt.Worker, len(w.ops)}
			w.ops = append(w.ops, *ev.Attempt)
			w.hi = len(w.ops)
			continue
		}
		if i >= cut.Acked || (cut.Lower != nil && !cut.Lower(i)) {
			continue
		}
		if p, ok := pos[ev.Acked]; ok {
			w := plan[p[0]]
			w.lo = max(w.lo, p[1]+1)
		}
	}
	return plan
}

// step applies op to the worker's part of the state.
func step(state Model, op Op) {
	switch op.Kind {
	case KindUpsert:
		for _, id := range op.IDs {
			if Expired(op.ID, id) {
				delete(state, id) // gone for every read, whatever the reaper did yet
				continue
			}
			state[id] = Entry{VecOp: op.ID, DocOp: op.ID, DocKind: KindUpsert, ExtraOp: op.ID, HasExtra: ExtraCount(op.ID, id) > 0,
				SparseOp: op.ID, HasSparse: SparseGiven(op.ID, id), Expires: expiryNanos(op.ID, id)}
		}
	case KindUpdateVectors:
		for _, id := range op.IDs {
			if e, ok := state[id]; ok {
				if op.Arg&1 != 0 {
					e.VecOp = op.ID
				}
				if op.Arg&2 != 0 {
					e.ExtraOp, e.HasExtra = op.ID, true
				}
				if op.Arg&4 != 0 {
					e.SparseOp, e.HasSparse = op.ID, true
				}
				state[id] = e
			}
		}
	case KindDeleteVectors:
		for _, id := range op.IDs {
			if e, ok := state[id]; ok {
				if op.Arg == 1 {
					e.HasSparse = false
				} else {
					e.HasExtra = false
				}
				state[id] = e
			}
		}
	case KindSetMeta:
		for _, id := range op.IDs {
			if e, ok := state[id]; ok {
				e.DocOp, e.DocKind = op.ID, KindSetMeta
				state[id] = e
			}
		}
	case KindDelete:
		for _, id := range op.IDs {
			delete(state, id)
		}
	case KindDeleteWhere:
		for id, e := range state {
			if g := group(e.DocOp, id, e.DocKind); g >= 0 && g < op.Arg {
				delete(state, id)
			}
		}
	}
}

// observed is what the collection holds for one id.
type observed struct {
	doc   string
	vec   []float32
	extra []float32 // the multi-field workload's ExtraField vectors, nil if none
	// kw is its SparseField value, nil if none.
	kw *sparse.Vector
	// expires is its expiry (Collection.ExpiresAt), 0 if none.
	expires int64
}

// Verify checks c against base (the state before the run) and the run's
// events: every worker's ids must hold the state after some number j of its
// ops with lo <= j <= hi, ids no worker wrote must hold base, and the
// index must pass CheckIntegrity and find neighbours about as well as a
// fresh build. It returns the state found, the next run's base.
func Verify(c *collection.Collection, base Model, events []Event, cut Cut) (Model, Report, error) {
	var rep Report
	opts := c.Options()
	dim := opts.Dim
	got, err := readAll(c)
	if err != nil {
		return nil, rep, err
	}
	fields := hasExtraField(c)
	plan := planOf(events, cut)
	result := Model{}
	// Ids of workers without ops in this run must be as they were.
	for id, e := range base {
		if plan[ownerOf(id)] == nil {
			result[id] = e
		}
	}
	for id := range got {
		if _, ok := base[id]; !ok && plan[ownerOf(id)] == nil {
			return nil, rep, fmt.Errorf("%w: id %d exists, but no write of it was ever attempted", ErrPhantom, id)
		}
	}
	workers := slices.Sorted(maps.Keys(plan))
	for _, worker := range workers {
		w := plan[worker]
		state := Model{}
		for id, e := range base {
			if ownerOf(id) == worker {
				state[id] = e
			}
		}
		mine := map[uint64]observed{}
		for id, o := range got {
			if ownerOf(id) == worker {
				mine[id] = o
			}
		}
		var firstDiff, lastDiff string
		match := -1
		for j := 0; j <= w.hi; j++ {
			if j > 0 {
				step(state, w.ops[j-1])
			}
			if j < w.lo {
				continue
			}
			diff := compare(mine, state, worker, dim, opts.Quantization != hnsw.QuantNone, fields)
			if diff == "" {
				match = j
				break
			}
			if firstDiff == "" {
				firstDiff = diff
			}
			lastDiff = diff
		}
		if match < 0 {
			kind := ErrPhantom
			if w.lo > 0 {
				kind = ErrLost
			}
			return nil, rep, fmt.Errorf("%w: worker %d: state matches none of its states after %d..%d of %d ops (acknowledged %d); after %d: %s; after %d: %s",
				kind, worker, w.lo, w.hi, len(w.ops), w.lo, w.lo, firstDiff, w.hi, lastDiff)
		}
		maps.Copy(result, state)
		rep.Acked += w.lo
		rep.InFlight += w.hi - w.lo
		rep.Survived += match - w.lo
	}
	if err := c.CheckIntegrity(); err != nil {
		return nil, rep, err
	}
	rep.Entries = len(result)
	rep.Recovered = c.Info().Recovery
	rep.Recall, rep.Fresh, err = recall(c, got, dim)
	if err != nil {
		return nil, rep, err
	}
	if rep.Recall < rep.Fresh-0.1 {
		return nil, rep, fmt.Errorf("%w: recall@10 %.3f, a fresh build %.3f", ErrRecall, rep.Recall, rep.Fresh)
	}
	return result, rep, nil
}

func readAll(c *collection.Collection) (map[uint64]observed, error) {
	ids, err := c.ScanIDs(nil, collection.ID{}, false, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if !slices.IsSortedFunc(ids, collection.CompareIDs) {
		return nil, fmt.Errorf("%w: ScanIDs out of scan order", ErrPhantom)
	}
	found, docs, vecs, err := c.Get(ids, true)
	if err != nil {
		return nil, err
	}
	if len(found) != len(ids) {
		return nil, fmt.Errorf("%w: ScanIDs lists %d ids, Get finds %d", ErrPhantom, len(ids), len(found))
	}
	dim := c.Options().Dim
	expires, err := c.ExpiresAt(found)
	if err != nil {
		return nil, err
	}
	got := make(map[uint64]observed, len(ids))
	for i, id := range found {
		n, err := EntryOf(id)
		if err != nil {
			return nil, err
		}
		got[n] = observed{doc: string(docs[i]), vec: vecs[i*dim : (i+1)*dim], expires: expires[i]}
	}
	if !hasExtraField(c) {
		return got, nil
	}
	withExtra, extra, counts, err := c.GetVectors(ids, ExtraField)
	if err != nil {
		return nil, err
	}
	at := 0
	for i, id := range withExtra {
		n, err := EntryOf(id)
		if err != nil {
			return nil, err
		}
		o, ok := got[n]
		if !ok {
			return nil, fmt.Errorf("%w: id %v has field %q but no document", ErrPhantom, id, ExtraField)
		}
		o.extra = extra[at : at+counts[i]*ExtraDim]
		at += counts[i] * ExtraDim
		got[n] = o
	}
	withSparse, kw, err := c.GetSparseVectors(ids, SparseField)
	if err != nil {
		return nil, err
	}
	for i, id := range withSparse {
		n, err := EntryOf(id)
		if err != nil {
			return nil, err
		}
		o, ok := got[n]
		if !ok {
			return nil, fmt.Errorf("%w: id %v has field %q but no document", ErrPhantom, id, SparseField)
		}
		o.kw = &kw[i]
		got[n] = o
	}
	return got, nil
}

func hasExtraField(c *collection.Collection) bool {
	for _, f := range c.VectorFields() {
		if f.Name == ExtraField {
			return true
		}
	}
	return false
}

// compare describes the first difference between what a worker's ids hold
// and state, or returns "".
func compare(got map[uint64]observed, state Model, worker, dim int, quantized, fields bool) string {
	for _, id := range slices.Sorted(maps.Keys(state)) {
		e := state[id]
		o, ok := got[id]
		if !ok {
			return fmt.Sprintf("id %d missing (vector of op %d)", id, e.VecOp)
		}
		if want := canonicalDocument(e.DocOp, id, worker, e.DocKind); o.doc != want {
			return fmt.Sprintf("id %d: document %s, want %s", id, o.doc, want)
		}
		if o.expires != e.Expires {
			return fmt.Sprintf("id %d: expires at %d, want %d (op %d)", id, o.expires, e.Expires, e.VecOp)
		}
		if quantized {
			// SQ8 codes decode to vectors that depend on the quantizer's
			// ranges and rounding, not on the written vector alone (a live
			// collection fails an exact or range-clamped comparison too),
			// so only documents, which name the op that wrote them, are
			// compared.
			continue
		}
		want := Vector(e.VecOp, id, dim, nil)
		if !slices.Equal(o.vec, want) {
			return fmt.Sprintf("id %d: vector %v, want op %d's %v", id, o.vec, e.VecOp, want)
		}
		if !fields {
			continue
		}
		var wantExtra []float32
		if e.HasExtra {
			wantExtra = ExtraVectors(e.ExtraOp, id, nil)
		}
		if !slices.Equal(o.extra, wantExtra) {
			return fmt.Sprintf("id %d: field %q %v, want %v (op %d, present %v)", id, ExtraField, o.extra, wantExtra, e.ExtraOp, e.HasExtra)
		}
		switch {
		case !e.HasSparse && o.kw != nil:
			return fmt.Sprintf("id %d: field %q %v, want none", id, SparseField, *o.kw)
		case e.HasSparse && o.kw == nil:
			return fmt.Sprintf("id %d: field %q missing, want op %d's", id, SparseField, e.SparseOp)
		case e.HasSparse:
			want := SparseVector(e.SparseOp, id)
			if !slices.Equal(o.kw.Indices, want.Indices) || !slices.Equal(o.kw.Values, want.Values) {
				return fmt.Sprintf("id %d: field %q %v, want op %d's %v", id, SparseField, *o.kw, e.SparseOp, want)
			}
		}
	}
	for id := range got {
		if _, ok := state[id]; !ok {
			return fmt.Sprintf("id %d present, want absent", id)
		}
	}
	return ""
}

// recall measures recall@10 of c's queries against exact search, and that
// of a fresh index built from the same vectors.
func recall(c *collection.Collection, got map[uint64]observed, dim int) (float64, float64, error) {
	const k, nq = 10, 20
	if len(got) < k {
		return 1, 1, nil
	}
	opts := c.Options()
	fresh, err := hnsw.New(hnsw.Config{Dim: dim, Metric: opts.Metric, M: opts.M, EfConstruction: opts.EfConstruction,
		Seed: opts.Seed, Quantization: opts.Quantization})
	if err != nil {
		return 0, 0, err
	}
	ids := slices.Sorted(maps.Keys(got))
	vecs := make([]float32, 0, len(ids)*dim)
	for _, id := range ids {
		vecs = append(vecs, got[id].vec...)
	}
	if err := fresh.Add(vecs, ids, nil, 1); err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	queries := make([]float32, 0, nq*dim)
	for range nq {
		queries = Vector(rng.Uint64(), 1, dim, queries)
	}
	found, outDists := make([]collection.ID, nq*k), make([]float32, nq*k)
	if _, err := c.Query(queries, k, 64, nil, 1, found, outDists); err != nil {
		return 0, 0, err
	}
	outIDs := make([]int64, nq*k)
	for i, id := range found {
		outIDs[i] = -1
		if !id.IsNone() {
			n, err := EntryOf(id)
			if err != nil {
				return 0, 0, err
			}
			outIDs[i] = int64(n)
		}
	}
	freshIDs := make([]int64, nq*k)
	if err := fresh.Search(queries, k, 64, 1, freshIDs, outDists); err != nil {
		return 0, 0, err
	}
	var hits, freshHits int
	for qi := range nq {
		q := queries[qi*dim : (qi+1)*dim]
		exact := exactTopK(q, ids, vecs, dim, k)
		for i := range k {
			hits += boolInt(exact[outIDs[qi*k+i]])
			freshHits += boolInt(exact[freshIDs[qi*k+i]])
		}
	}
	return float64(hits) / (nq * k), float64(freshHits) / (nq * k), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func exactTopK(q []float32, ids []uint64, vecs []float32, dim, k int) map[int64]bool {
	type cand struct {
		id   uint64
		dist float32
	}
	cands := make([]cand, len(ids))
	for i, id := range ids {
		var d float32
		for j, x := range vecs[i*dim : (i+1)*dim] {
			d += (x - q[j]) * (x - q[j])
		}
		cands[i] = cand{id, d}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			if a.dist < b.dist {
				return -1
			}
			return 1
		}
		return int(int64(a.id) - int64(b.id))
	})
	top := map[int64]bool{}
	for _, c := range cands[:k] {
		top[int64(c.id)] = true
	}
	return top
}
