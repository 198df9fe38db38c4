package collection

import (
	"fmt"
	"slices"
)

// Applying the vector fields' records (ops 5-9), live and in replay alike.
//
// A write is validated against the schema when it is made, and applied
// after every record logged before it, which may have changed the schema
// (a field removed, or removed and added again with another dimension).
// So apply takes a record's values only for fields that exist, of the
// same kind and dimension, at that point of the log, and ignores the
// rest: the same rule live and in replay, so recovery rebuilds the state
// that was acknowledged.

// matching returns the schema field a record's values are for, or nil if
// there is none of that name, kind and dimension now.
func matching(set *fieldSet, v *fieldValues) *vectorField {
	f := set.get(v.name)
	if f == nil || f.Dim != v.dim || (f.Multivector != SingleVector) != v.multi {
		return nil
	}
	return f
}

// putValues applies v's values for the points of keys (the record's ids'
// keys, by position) at the positions keep says to (nil: all).
func (c *Collection) putValues(f *vectorField, v *fieldValues, ids []uint64, keep func(int) bool) error {
	pointIDs := make([]uint64, 0, len(v.points))
	var counts []int
	vectors := v.vectors
	if keep != nil || v.multi {
		vectors = make([]float32, 0, len(v.vectors))
	}
	row := 0
	for i, p := range v.points {
		rows := 1
		if v.multi {
			rows = int(v.counts[i])
		}
		if keep == nil || keep(int(p)) {
			pointIDs = append(pointIDs, ids[p])
			if v.multi {
				counts = append(counts, rows)
			}
			if keep != nil || v.multi {
				vectors = append(vectors, v.vectors[row*v.dim:(row+rows)*v.dim]...)
			}
		}
		row += rows
	}
	if len(pointIDs) == 0 {
		return nil
	}
	return f.put(pointIDs, vectors, counts, c.tuning.Threads)
}

// applyFieldOp applies one record of ops 5-9 and returns how many points
// (or, for ops 8 and 9, fields) it changed.
func (c *Collection) applyFieldOp(w *pendingWrite) (int, error) {
	set := c.fields.Load()
	rec := &w.rec
	switch rec.op {
	case opUpsertPoints:
		keys, err := c.assignKeys(rec.ids)
		if err != nil {
			return 0, err
		}
		given := map[string]bool{}
		for i := range rec.fields {
			v := &rec.fields[i]
			if f := set.getSparse(v.name); f != nil && v.sparse {
				if err := putSparse(f, v, keys, nil); err != nil {
					return 0, err
				}
				given[f.Name] = true
				continue
			}
			if f := matching(set, v); f != nil {
				if err := c.putValues(f, v, keys, nil); err != nil {
					return 0, err
				}
				given[f.Name] = true
			}
		}
		// A whole-point write: the fields not given (or given only for
		// some points) lose the other points' values.
		for _, f := range set.fields {
			var drop []uint64
			if !given[f.Name] {
				drop = keys
			} else {
				v := &rec.fields[slices.IndexFunc(rec.fields, func(v fieldValues) bool { return v.name == f.Name })]
				drop = without(keys, v.points)
			}
			if len(drop) > 0 {
				if err := f.remove(drop); err != nil {
					return 0, err
				}
			}
		}
		for _, f := range set.sparse {
			drop := keys
			if given[f.Name] {
				v := &rec.fields[slices.IndexFunc(rec.fields, func(v fieldValues) bool { return v.name == f.Name })]
				drop = without(keys, v.points)
			}
			if len(drop) > 0 {
				f.index.Delete(drop)
			}
		}
		c.meta.PutBatch(keys, w.docs)
		c.noteChanged(keys)
		c.putText(keys, w.docs)
		c.expiry.put(keys, rec.expires)
		return len(keys), nil
	case opUpdateVectors:
		// Ids gone since the write was validated are skipped.
		keys := make([]uint64, len(rec.ids))
		live := make([]bool, len(rec.ids))
		for i, id := range rec.ids {
			keys[i], live[i] = c.keyOf(id)
		}
		exists := func(p int) bool { return live[p] }
		changed := map[int]bool{}
		for i := range rec.fields {
			v := &rec.fields[i]
			if sf := set.getSparse(v.name); sf != nil && v.sparse {
				if err := putSparse(sf, v, keys, exists); err != nil {
					return 0, err
				}
			} else if f := matching(set, v); f != nil {
				if err := c.putValues(f, v, keys, exists); err != nil {
					return 0, err
				}
			} else {
				continue
			}
			for _, p := range v.points {
				if exists(int(p)) {
					changed[int(p)] = true
				}
			}
		}
		return len(changed), nil
	case opDeleteVectors:
		ids := make([]uint64, 0, len(rec.ids))
		for _, id := range rec.ids {
			if k, ok := c.keyOf(id); ok {
				ids = append(ids, k)
			}
		}
		for i := range rec.fields {
			if f := set.get(rec.fields[i].name); f != nil {
				if err := f.remove(ids); err != nil {
					return 0, err
				}
			}
			if f := set.getSparse(rec.fields[i].name); f != nil {
				f.index.Delete(ids)
			}
		}
		return len(ids), nil
	case opAddField:
		spec, sp, err := decodeAnySpec(rec.docs[0])
		if err != nil {
			return 0, err
		}
		if sp != nil {
			if set.has(sp.Name) {
				return 0, nil // added meanwhile by an earlier record
			}
			f, err := newSparseField(*sp)
			if err != nil {
				return 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			c.fields.Store(set.withSparse(f))
			return 1, nil
		}
		if set.has(spec.Name) {
			return 0, nil // added meanwhile by an earlier record
		}
		f, err := newField(spec, c.opts.Seed)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		c.fields.Store(set.with(f))
		return 1, nil
	case opRemoveField:
		name, err := decodeFieldName(rec.docs[0])
		if err != nil {
			return 0, err
		}
		if !set.has(name) {
			return 0, nil // removed meanwhile by an earlier record
		}
		// The index is not closed: a query or checkpoint that took the
		// set before holds it still, and the collection's indexes are in
		// memory (no mapping to release), so it goes with the last of them.
		c.fields.Store(set.without(name))
		return 1, nil
	}
	return 0, fmt.Errorf("collection: not a field record: op %d", rec.op)
}

// without returns the ids not at the given positions (ascending).
func without(ids []uint64, positions []uint32) []uint64 {
	if len(positions) == len(ids) {
		return nil
	}
	out := make([]uint64, 0, len(ids)-len(positions))
	j := 0
	for i, id := range ids {
		if j < len(positions) && int(positions[j]) == i {
			j++
			continue
		}
		out = append(out, id)
	}
	return out
}
