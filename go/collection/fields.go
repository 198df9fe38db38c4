package collection

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/go/collection/segment"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/vfs"
)

// The vector fields of an open collection, each with its own index.
//
// The set of fields is replaced whole (copy on write) when a field is
// added or removed, so a query takes it with one atomic load and never
// waits for a schema change; the fields' contents change only under
// applyMu, like the documents.
//
// A dense field's index holds one node per point, labelled with the
// point's id, so a point has the field exactly when the index contains
// its id. A multivector field's index holds one node per vector, labelled
// with a number the field hands out in apply order (multiMap.next); its
// multiMap says which labels are whose: Open reads it from the snapshot's
// map file and replay maintains it through the same apply path as live
// writes.

// vectorField is one field of the schema with its index.
type vectorField struct {
	VectorField
	// index is the field's graph segments (package segment): the active
	// graph the builder inserts into and the sealed segments, searched
	// together.
	index *segment.Graphs
	multi *multiMap // MaxSim fields only
	// tail holds the values acknowledged and not yet in index (the
	// mutable tail, package segment): apply appends to it, the builder
	// (build.go) moves its rows into index, and every read looks at both.
	tail    *segment.Tail
	buildMu sync.Mutex // one build of the tail at a time
}

// fieldSet is the collection's schema at one moment: the dense and
// multivector fields and the sparse fields (sparse_fields.go), each
// sorted by name, the names of both distinct.
type fieldSet struct {
	fields []*vectorField
	sparse []*sparseField
	def    *vectorField // the field "", or nil
}

func newFieldSet(fields []*vectorField, sparse []*sparseField) *fieldSet {
	s := &fieldSet{fields: fields, sparse: sparse}
	if len(fields) > 0 && fields[0].Name == "" {
		s.def = fields[0]
	}
	return s
}

// getSparse returns the sparse field of that name, or nil.
func (s *fieldSet) getSparse(name string) *sparseField {
	i, ok := slices.BinarySearchFunc(s.sparse, name, func(f *sparseField, name string) int { return compareNames(f.Name, name) })
	if !ok {
		return nil
	}
	return s.sparse[i]
}

// has reports whether a dense, multivector or sparse field has the name.
func (s *fieldSet) has(name string) bool { return s.get(name) != nil || s.getSparse(name) != nil }

// count is the number of fields of every kind.
func (s *fieldSet) count() int { return len(s.fields) + len(s.sparse) }

// withSparse returns the set plus f (which must be new), without
// changing s.
func (s *fieldSet) withSparse(f *sparseField) *fieldSet {
	sp := slices.Clone(s.sparse)
	i, _ := slices.BinarySearchFunc(sp, f.Name, func(g *sparseField, name string) int { return compareNames(g.Name, name) })
	return newFieldSet(s.fields, slices.Insert(sp, i, f))
}

// sparseSchema returns the sparse fields' definitions.
func (s *fieldSet) sparseSchema() []SparseField {
	out := make([]SparseField, len(s.sparse))
	for i, f := range s.sparse {
		out[i] = f.SparseField
	}
	return out
}

// dropPoints removes the keys' values from every field but keep (nil:
// every field): a whole-point write that did not give those fields, or a
// delete.
func (s *fieldSet) dropPoints(keys []uint64, keep *vectorField) error {
	for _, f := range s.fields {
		if f != keep {
			if err := f.remove(keys); err != nil {
				return err
			}
		}
	}
	for _, f := range s.sparse {
		f.index.Delete(keys)
	}
	return nil
}

// get returns the field of that name, or nil.
func (s *fieldSet) get(name string) *vectorField {
	if name == "" {
		return s.def
	}
	i, ok := slices.BinarySearchFunc(s.fields, name, func(f *vectorField, name string) int { return compareNames(f.Name, name) })
	if !ok {
		return nil
	}
	return s.fields[i]
}

// with returns the set plus f (which must be new), without changing s.
func (s *fieldSet) with(f *vectorField) *fieldSet {
	fields := slices.Clone(s.fields)
	i, _ := slices.BinarySearchFunc(fields, f.Name, func(g *vectorField, name string) int { return compareNames(g.Name, name) })
	return newFieldSet(slices.Insert(fields, i, f), s.sparse)
}

// without returns the set minus the field (of any kind) of that name.
func (s *fieldSet) without(name string) *fieldSet {
	return newFieldSet(slices.DeleteFunc(slices.Clone(s.fields), func(f *vectorField) bool { return f.Name == name }),
		slices.DeleteFunc(slices.Clone(s.sparse), func(f *sparseField) bool { return f.Name == name }))
}

// schema returns the fields' definitions.
func (s *fieldSet) schema() []VectorField {
	out := make([]VectorField, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.VectorField
	}
	return out
}

// legacy reports whether the set is the one dense field "" of a collection
// created the old way (format 2 snapshots, op 1 records).
func (s *fieldSet) legacy() bool {
	return len(s.fields) == 1 && len(s.sparse) == 0 && s.def != nil && s.def.Multivector == SingleVector
}

// newField makes an empty field of spec (checked by the caller).
func newField(spec VectorField, seed uint64) (*vectorField, error) {
	cfg := spec.hnswConfig(seed)
	index, err := hnsw.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("collection: vector field %q: %w", spec.Name, err)
	}
	f := &vectorField{VectorField: spec, index: segment.NewGraphs(cfg, index, nil), tail: segment.NewTail(spec.Dim, spec.Metric)}
	if spec.Multivector != SingleVector {
		f.multi = newMultiMap()
	}
	return f, nil
}

// points returns the ids of the points with a value in the field,
// ascending (for has_vector): the graph's, changed by the tail's rows.
func (f *vectorField) points() []uint64 {
	if f.multi != nil {
		return f.multi.points()
	}
	v := f.tail.Read()
	defer v.Close()
	ids, err := f.index.IDs()
	if err != nil {
		return []uint64{} // closed: Close comes after every read that got past alive
	}
	if v.Len() > 0 {
		in := make(map[uint64]bool, len(ids))
		for _, id := range ids {
			in[id] = true
		}
		v.Keys(func(key uint64, live bool) { in[key] = live })
		ids = ids[:0]
		for id, live := range in {
			if live {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// count is the number of points with a value in the field.
func (f *vectorField) count() int {
	if f.multi != nil {
		return f.multi.len()
	}
	v := f.tail.Read()
	defer v.Close()
	n := f.index.Len()
	if v.Len() > 0 {
		v.Keys(func(key uint64, live bool) {
			switch in := f.index.Contains(key); {
			case live && !in:
				n++
			case !live && in:
				n--
			}
		})
	}
	return n
}

// trained reports whether the field's quantizer is fixed already (always
// for a float field): an SQ8 field trains on its first put.
func (f *vectorField) trained() bool { return f.index.Trained() }

// has reports whether the dense field holds a value of key now (the
// appender's view: only apply calls it).
func (f *vectorField) has(key uint64) bool {
	if held, live := f.tail.Holds(key); held {
		return live
	}
	return f.index.Contains(key)
}

// put sets the field's value of ids (unique): rows of Dim floats, one per
// id for a dense field, counts[i] for the i-th id of a multivector field.
// Only apply calls it: the values go to the tail, not the graph.
func (f *vectorField) put(ids []uint64, vectors []float32, counts []int, _ int) error {
	if !f.index.Trained() && len(vectors) > 0 {
		// The first put is the SQ8 sample, as when Add trained on it:
		// the same live and in replay, whenever the builder runs.
		if err := f.index.Train(vectors); err != nil {
			return err
		}
	}
	if f.multi == nil {
		f.tail.Append(ids, vectors, f.index.Contains)
		return nil
	}
	old, labels := f.multi.assign(ids, counts)
	f.tail.Remove(old, f.index.Contains)
	f.tail.Append(labels, vectors, nil) // labels are never reused: none is in the graph
	return nil
}

// remove drops the field's value of ids (those without one are skipped).
func (f *vectorField) remove(ids []uint64) error {
	if f.multi == nil {
		var held []uint64
		for _, id := range ids {
			if f.has(id) {
				held = append(held, id)
			}
		}
		f.tail.Remove(held, f.index.Contains)
		return nil
	}
	f.tail.Remove(f.multi.drop(ids), f.index.Contains)
	return nil
}

// frozenField is a field's state copied for a snapshot: what to write of
// its segments (segment.Graphs.Seal) and, for a multivector field, its map.
type frozenField struct {
	field *vectorField
	saves []segment.Saving
	vmap  snapshot.VectorMap // multivector fields
}

// fence cuts the field for the snapshot of the last applied record: its
// tail's builds stop before the rows appended later (segment.Tail.Fence),
// which the next active graph takes, and a multivector field's map is
// copied as it stands. The caller holds applyMu; freeze (which it need
// not hold applyMu for) does the rest.
func (f *vectorField) fence() frozenField {
	f.tail.Fence()
	ff := frozenField{field: f}
	if f.multi != nil {
		ff.vmap = f.multi.export()
	}
	return ff
}

// freeze builds the field's tail up to its fence into the active graph,
// seals that graph and notes what the snapshot writes of every segment
// (name names the new files), then lifts the fence. The builder waits
// meanwhile (buildMu); writers do not: their rows are past the fence.
func (f *vectorField) freeze(ff *frozenField, threads int, name func() string) error {
	f.buildMu.Lock()
	defer f.buildMu.Unlock()
	defer f.tail.Unfence()
	for {
		n, err := f.buildLocked(threads)
		if err != nil {
			return fmt.Errorf("build vector field %q: %w", f.Name, err)
		}
		if n == 0 {
			break
		}
	}
	saves, err := f.index.Seal(name)
	if err != nil {
		return fmt.Errorf("vector field %q: %w", f.Name, err)
	}
	ff.saves = saves
	return nil
}

// deletesFileOf names the snapshot file of the i-th field's segment
// tombstones.
func deletesFileOf(i int) string { return fmt.Sprintf("deletes.%02d.idx", i) }

// mapFileOf names the multivector map file of the i-th field ("" for a
// dense field).
func mapFileOf(i int, f *vectorField) string {
	if f.multi == nil {
		return ""
	}
	return fmt.Sprintf("vectors.%02d.map", i)
}

// saveFields writes the fields' new segment files into DIR/segments
// (segDir, fsynced after) and their deletes and map files into the
// snapshot directory dir; it returns the snapshot files' names, the
// manifest's fields and the paths of the segment files it wrote.
func saveFields(fsys vfs.FS, segDir, dir string, frozen []frozenField) (names []string, fields []snapshot.VectorField, wrote []string, err error) {
	for i, ff := range frozen {
		s := specOf(ff.field.VectorField)
		mf := snapshot.VectorField{Name: s.Name, Dim: s.Dim, Metric: s.Metric, M: s.M,
			EfConstruction: s.EfConstruction, Quantization: s.Quantization, Multivector: s.Multivector,
			Memory: s.Memory, Rescore: s.Rescore, MapFile: mapFileOf(i, ff.field)}
		var deleted [][]uint64
		any := false
		for _, sv := range ff.saves {
			path := filepath.Join(segDir, sv.File)
			if sv.Frozen != nil {
				if err := sv.Frozen.Save(fsys, path); err != nil {
					return nil, nil, nil, fmt.Errorf("vector field %q: %w", ff.field.Name, err)
				}
				wrote = append(wrote, path)
			}
			info, err := fsys.Stat(path)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("vector field %q: segment %s: %w", ff.field.Name, sv.File, err)
			}
			mf.Segments = append(mf.Segments, snapshot.Segment{File: sv.File, Size: info.Size(), Live: sv.Live, Deleted: len(sv.Deleted)})
			deleted = append(deleted, sv.Deleted)
			any = any || len(sv.Deleted) > 0
		}
		if any {
			mf.DeletesFile = deletesFileOf(i)
			if err := snapshot.WriteDeletes(fsys, filepath.Join(dir, mf.DeletesFile), deleted); err != nil {
				return nil, nil, nil, fmt.Errorf("vector field %q: %w", ff.field.Name, err)
			}
			names = append(names, mf.DeletesFile)
		}
		if mf.MapFile != "" {
			if err := snapshot.WriteVectorMap(fsys, filepath.Join(dir, mf.MapFile), ff.vmap); err != nil {
				return nil, nil, nil, fmt.Errorf("vector field %q: %w", ff.field.Name, err)
			}
			names = append(names, mf.MapFile)
		}
		fields = append(fields, mf)
	}
	if len(wrote) > 0 {
		if err := fsys.SyncDir(segDir); err != nil {
			return nil, nil, nil, fmt.Errorf("segments %s: %w", segDir, err)
		}
	}
	return names, fields, wrote, nil
}

// loadIndexOf reads the field's index of a snapshot: the segments of a
// format 4 manifest (each file's size checked against the manifest, its
// tombstones from the deletes file), or the one index file of formats 1-3,
// which becomes the active graph (the first checkpoint seals it into a
// segment: old collections are converted then).
func loadIndexOf(fsys vfs.FS, snapDir string, m snapshot.Manifest, i int, spec VectorField, lazy bool) (*segment.Graphs, error) {
	check := func(file string, cfg hnsw.Config) error {
		if cfg.Dim != spec.Dim || cfg.Metric != spec.Metric || cfg.Quantization != spec.Quantization {
			return fmt.Errorf("%w: vector field %q: %s holds dim %d %s %s, the manifest says dim %d %s %s",
				ErrCorrupt, spec.Name, file, cfg.Dim, cfg.Metric, cfg.Quantization, spec.Dim, spec.Metric, spec.Quantization)
		}
		if cfg.Rerank != spec.rescores() {
			return fmt.Errorf("%w: vector field %q: %s keeps float vectors: %v, the manifest says rescore %v",
				ErrCorrupt, spec.Name, file, cfg.Rerank, spec.rescores())
		}
		return nil
	}
	if m.Format < 4 {
		file := indexFileName
		if m.Format == 3 {
			file = m.Vectors[i].IndexFile
		}
		index, err := hnsw.Load(fsys, filepath.Join(snapDir, file), hnsw.LoadOptions{Keys: true})
		if err != nil {
			return nil, err
		}
		if err := check(file, index.Config()); err != nil {
			index.Close()
			return nil, err
		}
		return segment.NewGraphs(index.Config(), index, nil), nil
	}
	v := m.Vectors[i]
	deleted := make([][]uint64, len(v.Segments))
	if v.DeletesFile != "" {
		var err error
		if deleted, err = snapshot.ReadDeletes(fsys, filepath.Join(snapDir, v.DeletesFile), len(v.Segments)); err != nil {
			return nil, err
		}
	}
	segDir := filepath.Join(filepath.Dir(filepath.Dir(snapDir)), snapshot.SegmentsDir)
	var sealed []*segment.Graph
	fail := func(err error) (*segment.Graphs, error) {
		for _, s := range sealed {
			s.Index().Close()
		}
		return nil, err
	}
	// The files are checked against the manifest first, then loaded in
	// parallel (hnsw.Load is one thread's work per file: reading,
	// checksums, the structure check), then registered in order.
	for j, s := range v.Segments {
		info, err := fsys.Stat(filepath.Join(segDir, s.File))
		if err != nil {
			return fail(fmt.Errorf("%w: vector field %q: segment %s: %v", ErrCorrupt, spec.Name, s.File, err))
		}
		if info.Size() != s.Size {
			return fail(fmt.Errorf("%w: vector field %q: segment %s is %d bytes, the manifest says %d", ErrCorrupt, spec.Name, s.File, info.Size(), s.Size))
		}
		if len(deleted[j]) != s.Deleted {
			return fail(fmt.Errorf("%w: vector field %q: segment %s has %d deleted keys, the manifest says %d", ErrCorrupt, spec.Name, s.File, len(deleted[j]), s.Deleted))
		}
	}
	opts := spec.loadOptions()
	opts.DeferCRC = lazy // the vectors' CRCs: the verifier's (verify.go)
	indexes, err := loadSegments(fsys, segDir, v.Segments, opts)
	if err != nil {
		return fail(err)
	}
	for j, s := range v.Segments {
		index := indexes[j]
		indexes[j] = nil // from here fail closes it, with the sealed ones
		if err := check(s.File, index.Config()); err != nil {
			index.Close()
			closeIndexes(indexes)
			return fail(err)
		}
		g, err := segment.LoadedGraph(index, s.File, deleted[j])
		if err != nil {
			index.Close()
			closeIndexes(indexes)
			return fail(fmt.Errorf("%w: vector field %q: %v", ErrCorrupt, spec.Name, err))
		}
		sealed = append(sealed, g)
		if index.Len() != s.Live {
			closeIndexes(indexes)
			return fail(fmt.Errorf("%w: vector field %q: segment %s holds %d live keys, the manifest says %d", ErrCorrupt, spec.Name, s.File, index.Len(), s.Live))
		}
	}
	g, err := segment.Loaded(spec.hnswConfig(0), sealed)
	if err != nil {
		return fail(err)
	}
	if n := g.Len(); n != uniqueKeys(g) {
		return fail(fmt.Errorf("%w: vector field %q: a key is live in two segments", ErrCorrupt, spec.Name))
	}
	return g, nil
}

// loadSegments loads the segment files in parallel, at most GOMAXPROCS
// at a time, and returns their indexes in order; on an error it closes
// those it loaded and returns the first file's error.
func loadSegments(fsys vfs.FS, segDir string, segs []snapshot.Segment, opts hnsw.LoadOptions) ([]*hnsw.Index, error) {
	indexes := make([]*hnsw.Index, len(segs))
	errs := make([]error, len(segs))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(len(segs), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1) - 1); j < len(segs); j = int(next.Add(1) - 1) {
				indexes[j], errs[j] = hnsw.Load(fsys, filepath.Join(segDir, segs[j].File), opts)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			closeIndexes(indexes)
			return nil, err
		}
	}
	return indexes, nil
}

// closeIndexes closes the indexes that are not nil.
func closeIndexes(indexes []*hnsw.Index) {
	for _, x := range indexes {
		if x != nil {
			x.Close()
		}
	}
}

// uniqueKeys counts the distinct live keys of the segments. A key is
// unique within a segment (hnsw.Load checks it), so one segment with keys
// needs no count; more are sorted together, which at 1M keys costs a
// third of the map this was (0.1 s against 0.3 s).
func uniqueKeys(g *segment.Graphs) int {
	if g.Segments() <= 1 {
		return g.Len()
	}
	ids, err := g.IDs()
	if err != nil {
		return -1
	}
	slices.Sort(ids)
	return len(slices.Compact(ids))
}

// loadFields reads the fields of a snapshot: from the manifest's Vectors
// (format 3) or index.hnsw (formats 1 and 2, the one field ""). Each
// field's points must be among the snapshot's count documents, which the
// caller checks id by id (checkFieldPoints).
func loadFields(fsys vfs.FS, snapDir string, m snapshot.Manifest, lazy bool) (_ *fieldSet, err error) {
	schema, err := schemaFromManifest(m)
	if err != nil {
		return nil, err
	}
	var fields []*vectorField
	defer func() {
		if err != nil {
			closeFields(fields)
		}
	}()
	for i, spec := range schema {
		index, err := loadIndexOf(fsys, snapDir, m, i, spec, lazy)
		if err != nil {
			return nil, fmt.Errorf("vector field %q: %w", spec.Name, err)
		}
		f := &vectorField{VectorField: spec, index: index, tail: segment.NewTail(spec.Dim, spec.Metric)}
		fields = append(fields, f)
		var mapFile string
		if m.Format >= 3 {
			mapFile = m.Vectors[i].MapFile
		}
		if spec.Multivector == SingleVector {
			continue
		}
		vmap, err := snapshot.ReadVectorMap(fsys, filepath.Join(snapDir, mapFile))
		if err != nil {
			return nil, fmt.Errorf("vector field %q: %w", spec.Name, err)
		}
		if len(vmap.Labels) != index.Len() {
			return nil, fmt.Errorf("%w: vector field %q: the map holds %d vectors, the index %d",
				ErrCorrupt, spec.Name, len(vmap.Labels), index.Len())
		}
		for _, l := range vmap.Labels {
			if !index.Contains(l) {
				return nil, fmt.Errorf("%w: vector field %q: the map's vector %d is not in the index", ErrCorrupt, spec.Name, l)
			}
		}
		f.multi = importMultiMap(vmap)
	}
	sp, err := loadSparse(fsys, snapDir, m)
	if err != nil {
		return nil, err
	}
	return newFieldSet(fields, sp), nil
}

// checkFieldPoints checks that every point of every field has a document.
func checkFieldPoints(set *fieldSet, hasDoc func(uint64) bool, count int) error {
	if err := checkSparsePoints(set.sparse, hasDoc, count); err != nil {
		return err
	}
	for _, f := range set.fields {
		if n := f.count(); n > count {
			return fmt.Errorf("%w: vector field %q holds %d points, the snapshot %d", ErrCorrupt, f.Name, n, count)
		}
		for _, id := range f.points() {
			if !hasDoc(id) {
				return fmt.Errorf("%w: vector field %q holds point %d, which has no document", ErrCorrupt, f.Name, id)
			}
		}
	}
	return nil
}

func closeFields(fields []*vectorField) {
	for _, f := range fields {
		f.index.Close()
	}
}

// multiMap says which nodes of a multivector field's index hold which
// point's vectors. Queries read it under mu while apply changes it.
type multiMap struct {
	mu     sync.RWMutex
	labels map[uint64][]uint64 // point -> its vectors' labels, in order
	point  map[uint64]uint64   // label -> point
	next   uint64              // the next label handed out
}

func newMultiMap() *multiMap {
	return &multiMap{labels: map[uint64][]uint64{}, point: map[uint64]uint64{}}
}

func importMultiMap(v snapshot.VectorMap) *multiMap {
	m := &multiMap{labels: make(map[uint64][]uint64, len(v.Points)), point: make(map[uint64]uint64, len(v.Labels)), next: v.Next}
	for i, p := range v.Points {
		ls := v.Labels[v.Offsets[i]:v.Offsets[i+1]:v.Offsets[i+1]]
		m.labels[p] = ls
		for _, l := range ls {
			m.point[l] = p
		}
	}
	return m
}

func (m *multiMap) export() snapshot.VectorMap {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v := snapshot.VectorMap{Points: make([]uint64, 0, len(m.labels)), Offsets: []uint64{0}, Labels: make([]uint64, 0, len(m.point)), Next: m.next}
	for p := range m.labels {
		v.Points = append(v.Points, p)
	}
	slices.Sort(v.Points)
	for _, p := range v.Points {
		v.Labels = append(v.Labels, m.labels[p]...)
		v.Offsets = append(v.Offsets, uint64(len(v.Labels)))
	}
	return v
}

func (m *multiMap) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.labels)
}

func (m *multiMap) points() []uint64 {
	m.mu.RLock()
	out := make([]uint64, 0, len(m.labels))
	for p := range m.labels {
		out = append(out, p)
	}
	m.mu.RUnlock()
	slices.Sort(out)
	return out
}

// assign hands out counts[i] new labels to ids[i] and returns the labels
// the ids held before (to remove from the index) and the new ones, in
// order.
func (m *multiMap) assign(ids []uint64, counts []int) (old, fresh []uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	total := 0
	for _, c := range counts {
		total += c
	}
	fresh = make([]uint64, 0, total)
	for i, p := range ids {
		for _, l := range m.labels[p] {
			old = append(old, l)
			delete(m.point, l)
		}
		at := len(fresh)
		for range counts[i] {
			m.point[m.next] = p
			fresh = append(fresh, m.next)
			m.next++
		}
		m.labels[p] = fresh[at:len(fresh):len(fresh)]
	}
	return old, fresh
}

// drop forgets ids and returns the labels they held.
func (m *multiMap) drop(ids []uint64) []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var old []uint64
	for _, p := range ids {
		for _, l := range m.labels[p] {
			old = append(old, l)
			delete(m.point, l)
		}
		delete(m.labels, p)
	}
	return old
}

// labelsOf returns the labels of the points' vectors (for a filter).
func (m *multiMap) labelsOf(points []uint64) []uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := []uint64{}
	for _, p := range points {
		out = append(out, m.labels[p]...)
	}
	return out
}
