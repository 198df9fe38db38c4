package snapshot

import (
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// Section tags of meta.idx. Part of the file format: do not change.
var (
	tagIDs     = indexfile.FourCC("MIDS")
	tagOffsets = indexfile.FourCC("MOFF")
	tagData    = indexfile.FourCC("MDAT")
)

// Metadata is the content of meta.idx: document i belongs to IDs[i] and is
// Data[Offsets[i]:Offsets[i+1]].
type Metadata struct {
	IDs     []uint64
	Offsets []uint64
	Data    []byte
}

// WriteMetadata writes path atomically (see indexfile.Write).
func WriteMetadata(fs vfs.FS, path string, m Metadata) error {
	if len(m.Offsets) != len(m.IDs)+1 {
		return fmt.Errorf("snapshot: write %s: %d offsets for %d ids", path, len(m.Offsets), len(m.IDs))
	}
	err := indexfile.Write(fs, path, []indexfile.Section{
		{Tag: tagIDs, Data: indexfile.BytesOf(m.IDs)},
		{Tag: tagOffsets, Data: indexfile.BytesOf(m.Offsets)},
		{Tag: tagData, Data: m.Data},
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ReadMetadata reads path and checks the container's structure (ascending
// ids, offsets within the data); the documents themselves are checked by
// whoever parses them.
func ReadMetadata(fs vfs.FS, path string) (Metadata, error) {
	f, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return Metadata{}, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	get := func(tag uint32) ([]byte, error) {
		b, ok := f.Section(tag)
		if !ok {
			return nil, fmt.Errorf("%w: %s: missing section %q", ErrCorrupt, path, indexfile.TagName(tag))
		}
		return b, nil
	}
	var m Metadata
	rawIDs, err := get(tagIDs)
	if err != nil {
		return m, err
	}
	rawOffsets, err := get(tagOffsets)
	if err != nil {
		return m, err
	}
	data, err := get(tagData)
	if err != nil {
		return m, err
	}
	ids, err1 := indexfile.ViewAs[uint64](rawIDs)
	offsets, err2 := indexfile.ViewAs[uint64](rawOffsets)
	if err1 != nil || err2 != nil {
		return m, fmt.Errorf("%w: %s: misaligned section", ErrCorrupt, path)
	}
	if len(offsets) != len(ids)+1 || offsets[0] != 0 || offsets[len(ids)] != uint64(len(data)) {
		return m, fmt.Errorf("%w: %s: %d offsets for %d ids and %d bytes", ErrCorrupt, path, len(offsets), len(ids), len(data))
	}
	for i := range ids {
		if i > 0 && ids[i] <= ids[i-1] {
			return m, fmt.Errorf("%w: %s: ids not ascending at entry %d", ErrCorrupt, path, i)
		}
		if offsets[i+1] < offsets[i] {
			return m, fmt.Errorf("%w: %s: offsets decrease at entry %d", ErrCorrupt, path, i)
		}
	}
	// The sections were copied out of the file (no mapping), so they stay
	// valid after Close; clone anyway to not depend on that.
	return Metadata{IDs: append([]uint64(nil), ids...), Offsets: append([]uint64(nil), offsets...),
		Data: append([]byte(nil), data...)}, nil
}
