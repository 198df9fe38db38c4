package sparse

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// Section tags of a snapshot file (see the package doc). Do not change:
// files written with them must stay readable.
var (
	tagParams  = indexfile.FourCC("SPPR")
	tagKeys    = indexfile.FourCC("SPKY")
	tagStarts  = indexfile.FourCC("SPST")
	tagIndices = indexfile.FourCC("SPIX")
	tagValues  = indexfile.FourCC("SPVL")
)

// formatVersion is the version of the sections' contents, in the params
// section (the container has its own).
const formatVersion = 1

// params is the SPPR section.
type params struct {
	Version  uint32
	Modifier uint32
	Count    uint64 // points
	NonZeros uint64 // coordinates of all points
}

// Frozen is the index as it was when Freeze returned: what a checkpoint
// writes while writes go on.
type Frozen struct {
	modifier Modifier
	keys     []uint64
	starts   []uint64
	rowIdx   []uint32
	rowVal   []float32
	dead     bitset
	live     int
}

// Freeze returns the index's current contents for Write, in O(slots/64):
// the store is append-only between compactions and a compaction builds
// new arrays, so the frozen view shares them and only copies the set of
// dead slots. It takes the read lock: a collection calls it under its
// apply lock, between two applied writes.
func (x *Index) Freeze() *Frozen {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.keys)
	end := x.starts[n]
	return &Frozen{modifier: x.modifier, keys: x.keys[:n:n], starts: x.starts[: n+1 : n+1],
		rowIdx: x.rowIdx[:end:end], rowVal: x.rowVal[:end:end], dead: x.dead.clone(), live: len(x.slots)}
}

// Len is the number of points frozen.
func (f *Frozen) Len() int { return f.live }

// Sections returns the frozen index as the sections of a snapshot file, for
// a caller that puts them in a container of its own; Write writes exactly
// these. Points are in slot order, which Read keeps, so what Read returns
// writes the same bytes again.
func (f *Frozen) Sections() ([]indexfile.Section, error) {
	keys := make([]uint64, 0, f.live)
	starts := make([]uint64, 1, f.live+1)
	nnz := uint64(0)
	for slot := range f.keys {
		if !f.dead.has(uint32(slot)) {
			nnz += f.starts[slot+1] - f.starts[slot]
		}
	}
	indices := make([]uint32, 0, nnz)
	values := make([]float32, 0, nnz)
	for slot, key := range f.keys {
		if f.dead.has(uint32(slot)) {
			continue
		}
		from, to := f.starts[slot], f.starts[slot+1]
		keys = append(keys, key)
		indices = append(indices, f.rowIdx[from:to]...)
		values = append(values, f.rowVal[from:to]...)
		starts = append(starts, uint64(len(indices)))
	}
	head, err := indexfile.EncodeFixed(params{Version: formatVersion, Modifier: uint32(f.modifier),
		Count: uint64(len(keys)), NonZeros: nnz})
	if err != nil {
		return nil, fmt.Errorf("sparse: %w", err)
	}
	return []indexfile.Section{
		{Tag: tagParams, Data: head},
		{Tag: tagKeys, Data: indexfile.BytesOf(keys)},
		{Tag: tagStarts, Data: indexfile.BytesOf(starts)},
		{Tag: tagIndices, Data: indexfile.BytesOf(indices)},
		{Tag: tagValues, Data: indexfile.BytesOf(values)},
	}, nil
}

// Write writes the frozen index to path through fs, replacing the file
// atomically (indexfile.Write: temporary file, fsync, rename, directory
// fsync).
func (f *Frozen) Write(fs vfs.FS, path string) error {
	sections, err := f.Sections()
	if err != nil {
		return err
	}
	if err := indexfile.Write(fs, path, sections); err != nil {
		return fmt.Errorf("sparse: %w", err)
	}
	return nil
}

// Read reads a snapshot file written by Write and returns its index. A
// damaged file is an error wrapping ErrCorrupt or indexfile.ErrCorrupt
// (both of kind errkind.Corrupt) that says what is wrong.
func Read(fs vfs.FS, path string) (*Index, error) {
	file, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("sparse: %w", err)
	}
	defer file.Close()
	x, err := FromFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w (file %q)", err, path)
	}
	return x, nil
}

// FromFile builds the index held by a verified container's sections (what
// Sections wrote). Every count is checked against the sections' lengths
// before anything is allocated, so a damaged file costs no more memory
// than its own size; every row is checked as Check does and every key must
// be unique.
func FromFile(file *indexfile.File) (*Index, error) {
	section := func(tag uint32) ([]byte, error) {
		b, ok := file.Section(tag)
		if !ok {
			return nil, fmt.Errorf("%w: no %q section", ErrCorrupt, indexfile.TagName(tag))
		}
		return b, nil
	}
	raw, err := section(tagParams)
	if err != nil {
		return nil, err
	}
	var p params
	if err := indexfile.DecodeFixed(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: params: %v", ErrCorrupt, err)
	}
	if p.Version != formatVersion {
		return nil, fmt.Errorf("%w: format version %d, this build reads %d", ErrCorrupt, p.Version, formatVersion)
	}
	if p.Modifier >= uint32(numModifiers) {
		return nil, fmt.Errorf("%w: unknown modifier %d", ErrCorrupt, p.Modifier)
	}
	keys, err := view[uint64](section, tagKeys, p.Count)
	if err != nil {
		return nil, err
	}
	if p.Count >= math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d points, more than slots can number", ErrCorrupt, p.Count)
	}
	starts, err := view[uint64](section, tagStarts, p.Count+1)
	if err != nil {
		return nil, err
	}
	indices, err := view[uint32](section, tagIndices, p.NonZeros)
	if err != nil {
		return nil, err
	}
	values, err := view[float32](section, tagValues, p.NonZeros)
	if err != nil {
		return nil, err
	}
	if starts[0] != 0 || starts[p.Count] != p.NonZeros {
		return nil, fmt.Errorf("%w: rows span [%d, %d), want [0, %d)", ErrCorrupt, starts[0], starts[p.Count], p.NonZeros)
	}
	seen := make(map[uint64]struct{}, len(keys))
	for i, key := range keys {
		if starts[i+1] < starts[i] || starts[i+1] > p.NonZeros {
			return nil, fmt.Errorf("%w: row %d spans [%d, %d) of %d coordinates", ErrCorrupt, i, starts[i], starts[i+1], p.NonZeros)
		}
		row := Vector{Indices: indices[starts[i]:starts[i+1]], Values: values[starts[i]:starts[i+1]]}
		if err := Check(row); err != nil {
			return nil, fmt.Errorf("%w: row %d (key %d): %v", ErrCorrupt, i, key, err)
		}
		if _, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: key %d appears twice", ErrCorrupt, key)
		}
		seen[key] = struct{}{}
	}
	x := &Index{modifier: Modifier(p.Modifier), keys: append([]uint64{}, keys...), starts: append([]uint64{}, starts...),
		rowIdx: append([]uint32{}, indices...), rowVal: append([]float32{}, values...),
		dead: make(bitset, (len(keys)+63)/64)}
	x.rebuildPostings()
	return x, nil
}

// view returns the section tagged tag as want elements of T.
func view[T indexfile.Elem](section func(uint32) ([]byte, error), tag uint32, want uint64) ([]T, error) {
	raw, err := section(tag)
	if err != nil {
		return nil, err
	}
	out, err := indexfile.ViewAs[T](raw)
	if err != nil {
		return nil, fmt.Errorf("%w: section %q: %v", ErrCorrupt, indexfile.TagName(tag), err)
	}
	if uint64(len(out)) != want {
		return nil, fmt.Errorf("%w: section %q holds %d entries, params say %d", ErrCorrupt, indexfile.TagName(tag), len(out), want)
	}
	return out, nil
}
