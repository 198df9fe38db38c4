package collection

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

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
	index *hnsw.Index
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
	index, err := hnsw.New(spec.hnswConfig(seed))
	if err != nil {
		return nil, fmt.Errorf("collection: vector field %q: %w", spec.Name, err)
	}
	f := &vectorField{VectorField: spec, index: index, tail: segment.NewTail(spec.Dim, spec.Metric)}
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

// frozenField is a field's state copied for a snapshot.
type frozenField struct {
	field  *vectorField
	frozen *hnsw.Frozen
	vmap   snapshot.VectorMap // multivector fields
}

// freeze copies the field's state; the caller holds applyMu.
func (f *vectorField) freeze() (frozenField, error) {
	frozen, err := f.index.Freeze()
	if err != nil {
		return frozenField{}, fmt.Errorf("vector field %q: %w", f.Name, err)
	}
	ff := frozenField{field: f, frozen: frozen}
	if f.multi != nil {
		ff.vmap = f.multi.export()
	}
	return ff, nil
}

// indexFileOf names the snapshot file of the index of the i-th field:
// index.hnsw for the dense field "" (as before fields existed), else by
// position, since names may hold any character.
func indexFileOf(i int, f *vectorField) string {
	if f.Name == "" && f.multi == nil {
		return indexFileName
	}
	return fmt.Sprintf("vectors.%02d.hnsw", i)
}

// mapFileOf names the multivector map file of the i-th field ("" for a
// dense field).
func mapFileOf(i int, f *vectorField) string {
	if f.multi == nil {
		return ""
	}
	return fmt.Sprintf("vectors.%02d.map", i)
}

// saveFields writes the fields' files into the snapshot directory dir and
// returns their names.
func saveFields(fsys vfs.FS, dir string, frozen []frozenField) ([]string, error) {
	var names []string
	for i, ff := range frozen {
		name := indexFileOf(i, ff.field)
		if err := ff.frozen.Save(fsys, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("vector field %q: %w", ff.field.Name, err)
		}
		names = append(names, name)
		if name := mapFileOf(i, ff.field); name != "" {
			if err := snapshot.WriteVectorMap(fsys, filepath.Join(dir, name), ff.vmap); err != nil {
				return nil, fmt.Errorf("vector field %q: %w", ff.field.Name, err)
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// loadFields reads the fields of a snapshot: from the manifest's Vectors
// (format 3) or index.hnsw (formats 1 and 2, the one field ""). Each
// field's points must be among the snapshot's count documents, which the
// caller checks id by id (checkFieldPoints).
func loadFields(fsys vfs.FS, snapDir string, m snapshot.Manifest) (_ *fieldSet, err error) {
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
		file, mapFile := indexFileName, ""
		if m.Format >= 3 {
			file, mapFile = m.Vectors[i].IndexFile, m.Vectors[i].MapFile
		}
		index, err := hnsw.Load(fsys, filepath.Join(snapDir, file), hnsw.LoadOptions{Keys: true})
		if err != nil {
			return nil, fmt.Errorf("vector field %q: %w", spec.Name, err)
		}
		f := &vectorField{VectorField: spec, index: index, tail: segment.NewTail(spec.Dim, spec.Metric)}
		fields = append(fields, f)
		cfg := index.Config()
		if cfg.Dim != spec.Dim || cfg.Metric != spec.Metric || cfg.Quantization != spec.Quantization {
			return nil, fmt.Errorf("%w: vector field %q: %s holds dim %d %s %s, the manifest says dim %d %s %s",
				ErrCorrupt, spec.Name, file, cfg.Dim, cfg.Metric, cfg.Quantization, spec.Dim, spec.Metric, spec.Quantization)
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
