package snapshot

import (
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// Section tags of a deletes file. Part of the file format: do not change.
var (
	tagDelOffsets = indexfile.FourCC("DOFF")
	tagDelKeys    = indexfile.FourCC("DKEY")
)

// WriteDeletes writes a field's deletes file (the package doc) atomically:
// deleted[i], ascending, are the keys removed from the field's i-th
// segment since its file was written.
func WriteDeletes(fs vfs.FS, path string, deleted [][]uint64) error {
	offsets := make([]uint64, 1, len(deleted)+1)
	var keys []uint64
	for _, d := range deleted {
		keys = append(keys, d...)
		offsets = append(offsets, uint64(len(keys)))
	}
	err := indexfile.Write(fs, path, []indexfile.Section{
		{Tag: tagDelOffsets, Data: indexfile.BytesOf(offsets)},
		{Tag: tagDelKeys, Data: indexfile.BytesOf(keys)},
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ReadDeletes reads a deletes file of segments segments and checks it:
// offsets from 0, non-decreasing, ending at the number of keys, each
// segment's keys strictly ascending.
func ReadDeletes(fs vfs.FS, path string, segments int) ([][]uint64, error) {
	f, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	return decodeDeletes(f, path, segments)
}

func decodeDeletes(f *indexfile.File, path string, segments int) ([][]uint64, error) {
	var views [2][]uint64
	for i, tag := range []uint32{tagDelOffsets, tagDelKeys} {
		raw, ok := f.Section(tag)
		if !ok {
			return nil, fmt.Errorf("%w: %s: missing section %q", ErrCorrupt, path, indexfile.TagName(tag))
		}
		v, err := indexfile.ViewAs[uint64](raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: misaligned section %q", ErrCorrupt, path, indexfile.TagName(tag))
		}
		views[i] = v
	}
	offsets, keys := views[0], views[1]
	if len(offsets) != segments+1 || offsets[0] != 0 || offsets[segments] != uint64(len(keys)) {
		return nil, fmt.Errorf("%w: %s: %d offsets for %d segments and %d keys", ErrCorrupt, path, len(offsets), segments, len(keys))
	}
	out := make([][]uint64, segments)
	for i := range segments {
		lo, hi := offsets[i], offsets[i+1]
		if hi < lo {
			return nil, fmt.Errorf("%w: %s: offsets decrease at segment %d", ErrCorrupt, path, i)
		}
		d := keys[lo:hi:hi]
		for j := 1; j < len(d); j++ {
			if d[j] <= d[j-1] {
				return nil, fmt.Errorf("%w: %s: segment %d: keys not ascending at %d", ErrCorrupt, path, i, j)
			}
		}
		out[i] = append([]uint64(nil), d...)
	}
	return out, nil
}
