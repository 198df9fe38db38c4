package snapshot

import (
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// Section tags of a multivector map file. Part of the file format: do not
// change.
var (
	tagMapPoints  = indexfile.FourCC("VMPT")
	tagMapOffsets = indexfile.FourCC("VMOF")
	tagMapLabels  = indexfile.FourCC("VMLB")
	tagMapNext    = indexfile.FourCC("VMNX")
)

// VectorMap is the content of a multivector field's map file: the vectors
// of Points[i] are the index nodes labelled Labels[Offsets[i]:Offsets[i+1]],
// in the point's order; Next is the label the next vector gets.
type VectorMap struct {
	Points  []uint64
	Offsets []uint64
	Labels  []uint64
	Next    uint64
}

// WriteVectorMap writes path atomically (see indexfile.Write).
func WriteVectorMap(fs vfs.FS, path string, m VectorMap) error {
	if len(m.Offsets) != len(m.Points)+1 {
		return fmt.Errorf("snapshot: write %s: %d offsets for %d points", path, len(m.Offsets), len(m.Points))
	}
	err := indexfile.Write(fs, path, []indexfile.Section{
		{Tag: tagMapPoints, Data: indexfile.BytesOf(m.Points)},
		{Tag: tagMapOffsets, Data: indexfile.BytesOf(m.Offsets)},
		{Tag: tagMapLabels, Data: indexfile.BytesOf(m.Labels)},
		{Tag: tagMapNext, Data: indexfile.BytesOf([]uint64{m.Next})},
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ReadVectorMap reads path and checks its structure: points strictly
// ascending, every point with at least one vector, labels unique and below
// Next. Whether the labels are the index's nodes is checked by the caller.
func ReadVectorMap(fs vfs.FS, path string) (VectorMap, error) {
	f, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return VectorMap{}, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	var views [4][]uint64
	for i, tag := range []uint32{tagMapPoints, tagMapOffsets, tagMapLabels, tagMapNext} {
		raw, ok := f.Section(tag)
		if !ok {
			return VectorMap{}, fmt.Errorf("%w: %s: missing section %q", ErrCorrupt, path, indexfile.TagName(tag))
		}
		if views[i], err = indexfile.ViewAs[uint64](raw); err != nil {
			return VectorMap{}, fmt.Errorf("%w: %s: misaligned section %q", ErrCorrupt, path, indexfile.TagName(tag))
		}
	}
	points, offsets, labels, next := views[0], views[1], views[2], views[3]
	if len(next) != 1 {
		return VectorMap{}, fmt.Errorf("%w: %s: %d values in VMNX", ErrCorrupt, path, len(next))
	}
	if len(offsets) != len(points)+1 || offsets[0] != 0 || offsets[len(points)] != uint64(len(labels)) {
		return VectorMap{}, fmt.Errorf("%w: %s: %d offsets for %d points and %d labels", ErrCorrupt, path, len(offsets), len(points), len(labels))
	}
	for i := range points {
		if i > 0 && points[i] <= points[i-1] {
			return VectorMap{}, fmt.Errorf("%w: %s: points not ascending at entry %d", ErrCorrupt, path, i)
		}
		if offsets[i+1] <= offsets[i] {
			return VectorMap{}, fmt.Errorf("%w: %s: point %d without vectors", ErrCorrupt, path, points[i])
		}
	}
	seen := make(map[uint64]struct{}, len(labels))
	for _, l := range labels {
		if _, dup := seen[l]; dup || l >= next[0] {
			return VectorMap{}, fmt.Errorf("%w: %s: label %d repeated or not below %d", ErrCorrupt, path, l, next[0])
		}
		seen[l] = struct{}{}
	}
	return VectorMap{Points: append([]uint64(nil), points...), Offsets: append([]uint64(nil), offsets...),
		Labels: append([]uint64(nil), labels...), Next: next[0]}, nil
}
