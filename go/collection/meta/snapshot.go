package meta

import "fmt"

// Export returns a consistent copy of the index for a snapshot: ids
// ascending, and document i (canonical JSON) at data[offsets[i]:offsets[i+1]],
// with len(offsets) == len(ids)+1, offsets[0] == 0 and the last offset
// len(data). The empty document is stored as "{}".
func (x *Index) Export() (ids []uint64, offsets []uint64, data []byte) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	entries, _ := x.sortedEntries()
	ids = make([]uint64, 0, x.slots.Len())
	offsets = make([]uint64, 1, x.slots.Len()+1)
	size := 2 * (len(x.ids) - len(x.docs)) // the slots past docs hold {}
	for _, doc := range x.docs {
		size += max(len(doc), 2)
	}
	data = make([]byte, 0, size)
	for i := range entries.len() {
		e := entries.at(i)
		if !x.live(e) {
			continue
		}
		ids = append(ids, e.id)
		if doc := x.doc(e.slot); doc != nil {
			data = append(data, doc...)
		} else {
			data = append(data, "{}"...)
		}
		offsets = append(offsets, uint64(len(data)))
	}
	return ids, offsets, data
}

// Import rebuilds an index from Export's output. It is read from disk, so
// everything is checked: the shapes of the three slices, ascending ids,
// offsets within data, and every document as ReadDocument does. Errors
// wrap ErrCorrupt and name the entry.
func Import(ids []uint64, offsets []uint64, data []byte) (*Index, error) {
	if len(offsets) != len(ids)+1 {
		return nil, fmt.Errorf("%w: %d ids need %d offsets, found %d", ErrCorrupt, len(ids), len(ids)+1, len(offsets))
	}
	if offsets[0] != 0 || offsets[len(ids)] != uint64(len(data)) {
		return nil, fmt.Errorf("%w: offsets run from %d to %d, want 0 to %d (the data size)", ErrCorrupt, offsets[0], offsets[len(ids)], len(data))
	}
	x := newIndexSized(len(ids))
	if len(ids) > 0 {
		x.slots.Reserve(ids[len(ids)-1], len(ids)) // ids ascend: the last is the largest
	}
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			return nil, fmt.Errorf("%w: entry %d: id %d does not follow id %d (ids must ascend)", ErrCorrupt, i, id, ids[i-1])
		}
		lo, hi := offsets[i], offsets[i+1]
		if hi < lo || hi > uint64(len(data)) {
			return nil, fmt.Errorf("%w: entry %d (id %d): offsets %d..%d do not delimit a document in %d bytes", ErrCorrupt, i, id, lo, hi, len(data))
		}
		if hi-lo == 2 && data[lo] == '{' && data[lo+1] == '}' {
			x.add(id, Document{}) // the empty document, as Export writes it: nothing to parse or index
			continue
		}
		doc, err := ReadDocument(data[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d (id %d): %v", ErrCorrupt, i, id, err)
		}
		x.add(id, doc) // ids ascend: each is new
	}
	return x, nil
}
