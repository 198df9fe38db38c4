package hnsw

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/sq8"
	"github.com/strata-db/strata/go/vfs"
)

// Section tags of a saved index. Part of the file format: do not change.
var (
	tagParams     = indexfile.FourCC("HNSW") // fileParams
	tagRNG        = indexfile.FourCC("RNG ") // level generator state
	tagVectors    = indexfile.FourCC("VECS") // []float32, count·dim (absent for codes-only)
	tagCodes      = indexfile.FourCC("CODE") // []uint8, count·dim (SQ8 only)
	tagShares     = indexfile.FourCC("SHAR") // []float32, count (SQ8 only)
	tagQuantLo    = indexfile.FourCC("SQLO") // []float32, dim (SQ8 only)
	tagLevel0     = indexfile.FourCC("LVL0") // []uint32, count·(1+2M)
	tagUpper      = indexfile.FourCC("UPPR") // []uint32, upperUsed
	tagUpperStart = indexfile.FourCC("USTA") // []uint32, count
	tagLevels     = indexfile.FourCC("LEVL") // []uint8, count
	tagLabels     = indexfile.FourCC("LABL") // []uint64, count
	tagFlags      = indexfile.FourCC("FLAG") // []uint32, count
	tagParent     = indexfile.FourCC("PRNT") // []uint32, count: level-0 tree (tree.go); absent in older files
	// "INDG" ([]int32 in-degrees) was written before PRNT and is ignored.
	tagRank = indexfile.FourCC("RANK") // []uint32, count: insertion order of a renumbered graph (optional)
)

// fileParams is the fixed-size parameter block of a saved index.
type fileParams struct {
	Dim, M, EfConstruction uint32
	Metric, Quantization   uint8
	Rerank                 uint8
	RaBitQBits             uint8 // 0 in files written before Config.RaBitQBits
	Seed                   uint64
	Count, UpperUsed       uint64
	Entry                  uint64
	NextID                 uint64
	QuantStep, QuantLoNorm float32
}

// ErrFormat marks a file that passed its checksums but does not describe a
// valid index (wrong section sizes, links out of range, ...). It wraps
// indexfile.ErrCorrupt so callers can test for either.
var ErrFormat = fmt.Errorf("hnsw: %w: invalid index", indexfile.ErrCorrupt)

// Save writes the index to path atomically (see package indexfile). Adds
// and removals wait while it runs; searches do not.
func (x *Index) Save(fs vfs.FS, path string) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	sections, err := x.sections(false)
	if err != nil {
		return fmt.Errorf("hnsw: save %s: %w", path, err)
	}
	if err := indexfile.Write(fs, path, sections); err != nil {
		return fmt.Errorf("hnsw: save: %w", err)
	}
	return nil
}

// Frozen is a copy of an index's saved form taken at one instant. Writing it
// holds no lock on the index, so a database can checkpoint while adds go
// on: only the copy (a memcpy of the arrays that change: links, flags and
// parents, see writeOnce) makes them wait.
type Frozen struct {
	sections []indexfile.Section
	count    int
}

// Freeze copies what Save would write. It costs memory equal to the
// index's link arrays (and the arrays it shares stay allocated) until the
// Frozen value is dropped.
func (x *Index) Freeze() (*Frozen, error) {
	if err := x.acquire(); err != nil {
		return nil, err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	sections, err := x.sections(true)
	if err != nil {
		return nil, fmt.Errorf("hnsw: freeze: %w", err)
	}
	return &Frozen{sections: sections, count: x.Len()}, nil
}

// Len is the number of live ids in the frozen copy.
func (f *Frozen) Len() int { return f.count }

// Save writes the frozen copy to path atomically, in the same format as
// Index.Save; Load reads it back.
func (f *Frozen) Save(fs vfs.FS, path string) error {
	if err := indexfile.Write(fs, path, f.sections); err != nil {
		return fmt.Errorf("hnsw: save: %w", err)
	}
	return nil
}

// sections lays out the index file, pointing into the live arrays or, with
// copied, into copies of them. The caller holds writeMu.
func (x *Index) sections(copied bool) ([]indexfile.Section, error) {
	g := x.graph.Load()
	rngState, err := x.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	p := fileParams{
		Dim: uint32(x.cfg.Dim), M: uint32(x.cfg.M), EfConstruction: uint32(x.cfg.EfConstruction),
		Metric: uint8(x.cfg.Metric), Quantization: uint8(x.cfg.Quantization),
		Seed: x.cfg.Seed, Count: uint64(g.count), UpperUsed: uint64(g.upperUsed),
		Entry: g.entry.Load(), NextID: x.nextID, RaBitQBits: uint8(x.cfg.RaBitQBits),
	}
	if x.cfg.Rerank {
		p.Rerank = 1
	}
	if g.sq != nil {
		p.QuantStep, p.QuantLoNorm = g.sq.Step, g.sq.LoNorm
	}
	params, err := indexfile.EncodeFixed(&p)
	if err != nil {
		return nil, err
	}
	n, dim := g.count, g.dim
	sections := []indexfile.Section{
		{Tag: tagParams, Data: params},
		{Tag: tagRNG, Data: rngState},
	}
	switch {
	case x.codesOnly() && n == 0:
		// Empty: the vectors of its first Add are still to come. The
		// empty planes say the file is codes-only.
		sections = append(sections, indexfile.Section{Tag: tagRaBitQPlanes})
	case g.floats:
		sections = append(sections, indexfile.Section{Tag: tagVectors, Data: indexfile.BytesOf(g.vectors[:n*dim])})
	}
	if g.sq != nil {
		sections = append(sections,
			indexfile.Section{Tag: tagQuantLo, Data: indexfile.BytesOf(g.sq.Lo)},
			indexfile.Section{Tag: tagCodes, Data: indexfile.BytesOf(g.codes[:n*dim])},
			indexfile.Section{Tag: tagShares, Data: indexfile.BytesOf(g.shares[:n])})
	}
	sections = append(sections,
		indexfile.Section{Tag: tagLevel0, Data: indexfile.BytesOf(g.level0[:n*g.stride0])},
		indexfile.Section{Tag: tagUpper, Data: indexfile.BytesOf(g.upper[:g.upperUsed])},
		indexfile.Section{Tag: tagUpperStart, Data: indexfile.BytesOf(g.upperStart[:n])},
		indexfile.Section{Tag: tagLevels, Data: indexfile.BytesOf(g.levels[:n])},
		indexfile.Section{Tag: tagLabels, Data: indexfile.BytesOf(g.labels[:n])},
		indexfile.Section{Tag: tagFlags, Data: indexfile.BytesOf(g.flags[:n])},
	)
	if g.parent != nil { // a codes-only index keeps no tree (withoutFloats)
		sections = append(sections, indexfile.Section{Tag: tagParent, Data: indexfile.BytesOf(g.parent[:n])})
	}
	if g.rank != nil {
		sections = append(sections, indexfile.Section{Tag: tagRank, Data: indexfile.BytesOf(g.rank[:n])})
	}
	codes, err := x.rabitqSections(g)
	if err != nil {
		return nil, err
	}
	sections = append(sections, codes...)
	sections = append(sections, layoutSection(x.cfg.RaBitQLayout)...)
	if copied {
		for i := range sections {
			if x.file == nil && writeOnce(sections[i].Tag) {
				continue
			}
			sections[i].Data = append([]byte(nil), sections[i].Data...)
		}
	}
	return sections, nil
}

// writeOnce says whether a section holds per-node data written once,
// before the node counts (vectors, codes, ids, levels...): nothing changes
// a stored node's row afterwards, and growth, renumbering, compaction and
// training write new arrays rather than the old ones. Freeze then need not
// copy it (the frozen slice keeps its array alive), which was three
// quarters of a checkpoint's pause of writes at 128-d. Links, flags and
// parents change with every insertion and are copied. Vectors mapped from
// a file are copied too: Close unmaps them.
func writeOnce(tag uint32) bool {
	switch tag {
	case tagVectors, tagQuantLo, tagCodes, tagShares, tagUpperStart, tagLevels, tagLabels, tagRank,
		tagRaBitQParams, tagRaBitQCentroids, tagRaBitQRows, tagRaBitQEx, tagRaBitQExFactors, tagRaBitQPlanes, tagRaBitQExTerms:
		return true
	}
	return false
}

// LoadOptions says how Load maps a file.
type LoadOptions struct {
	// MmapVectors leaves the float vectors in the file, memory-mapped
	// read-only, instead of reading them into memory. The index must then
	// be closed (Close) to release the mapping.
	MmapVectors bool
	// Keys loads the index as Config.Keys: its ids are a collection's
	// internal keys, up to batch.MaxKey.
	Keys bool
	// DeferCRC maps the float vectors (MmapVectors or not) and the
	// arrays nothing writes after a load (links, ids, levels, ranks, SQ8
	// codes: mappedInPlace) and leaves their CRCs unchecked: Load then
	// reads and checks only the rest (flags, the tree, parameters, RaBitQ
	// codes), runs the bounds half of the structure check on the mapped
	// links (the rest is Verify's: deferredCheck, verify.go), and Verify
	// checks the mapped sections later (verify.go). Mapped links and
	// codes stay resident once Verify has read them; with MmapVectors the
	// ids, levels and ranks do not (searchedInPlace).
	// Without MmapVectors the mapped pages are kept once Verify has read
	// them (ram placement: resident after Verify, clean page cache that
	// the kernel may still reclaim under pressure). The index must be
	// closed to release the mapping.
	DeferCRC bool
}

// Load reads an index saved by Save. A damaged file fails with an error
// wrapping indexfile.ErrCorrupt that names the section and offset; a file
// whose checksums pass but whose contents are inconsistent fails with
// ErrFormat. Neither ever yields a partially loaded index.
func Load(fs vfs.FS, path string, opts LoadOptions) (_ *Index, err error) {
	var ro indexfile.ReadOptions
	if opts.MmapVectors {
		ro.MmapTags = []uint32{tagVectors}
	}
	if opts.DeferCRC {
		// The per-node arrays nothing writes once a graph is loaded (an
		// insertion grows the full loaded graph first, copying them;
		// renumbering and compaction write new arrays; removal writes
		// flags, which stay in memory) are mapped too, read-only, and
		// kept resident: only the vectors follow MmapVectors.
		ro.MmapTags = append([]uint32{tagVectors}, mappedInPlace...)
		ro.KeepTags = mappedInPlace
		if opts.MmapVectors {
			// mmap placement keeps resident only what a search reads for
			// every node it visits (issue 24's 0.35 of the float bytes):
			// ids, levels and ranks are read per result or by writers, and
			// fault back in from the page cache when they are.
			ro.KeepTags = searchedInPlace
		}
		ro.DeferCRC, ro.Resident = true, !opts.MmapVectors
	}
	f, err := indexfile.Read(fs, path, ro)
	if err != nil {
		return nil, fmt.Errorf("hnsw: load: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	x, err := fromFile(f, opts)
	if err != nil {
		return nil, fmt.Errorf("hnsw: load %s: %w", path, err)
	}
	if opts.DeferCRC || (opts.MmapVectors && x.graph.Load().floats) {
		x.file = f // holds the mappings until Close
		x.mmapVectors = opts.MmapVectors && x.graph.Load().floats
	} else {
		f.Close() // nothing mapped: the sections were copied into memory
	}
	return x, nil
}

// mappedInPlace are the sections LoadOptions.DeferCRC maps besides the
// vectors: links, ids, levels, ranks and SQ8 codes, used in place.
var mappedInPlace = []uint32{tagLevel0, tagUpper, tagUpperStart, tagLevels, tagLabels, tagRank, tagCodes, tagShares}

// searchedInPlace are the sections of mappedInPlace a search reads at
// every node it visits (links, SQ8 codes and shares): LoadOptions.DeferCRC
// with MmapVectors keeps only these resident once Verify has read them.
// The ids (LABL, 8 bytes a node) are read for the k results only, the
// levels and ranks by writers: Verify drops their pages (13 bytes a node,
// 1.3 MiB at 100k).
var searchedInPlace = []uint32{tagLevel0, tagUpper, tagUpperStart, tagCodes, tagShares}

// section fetches a required section as a []T of exactly want elements.
func section[T indexfile.Elem](f *indexfile.File, tag uint32, want int) ([]T, error) {
	b, ok := f.Section(tag)
	if !ok {
		return nil, fmt.Errorf("%w: missing section %q", ErrFormat, indexfile.TagName(tag))
	}
	v, err := indexfile.ViewAs[T](b)
	if err != nil {
		return nil, fmt.Errorf("%w: section %q: %v", ErrFormat, indexfile.TagName(tag), err)
	}
	if len(v) != want {
		return nil, fmt.Errorf("%w: section %q holds %d elements, want %d", ErrFormat, indexfile.TagName(tag), len(v), want)
	}
	return v, nil
}

func fromFile(f *indexfile.File, opts LoadOptions) (*Index, error) {
	raw, ok := f.Section(tagParams)
	if !ok {
		return nil, fmt.Errorf("%w: missing section %q", ErrFormat, indexfile.TagName(tagParams))
	}
	var p fileParams
	if err := indexfile.DecodeFixed(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: section %q: %v", ErrFormat, indexfile.TagName(tagParams), err)
	}
	var err error
	cfg := Config{
		Dim: int(p.Dim), Metric: metric.Metric(p.Metric), M: int(p.M), EfConstruction: int(p.EfConstruction),
		Seed: p.Seed, Quantization: Quantization(p.Quantization), Rerank: p.Rerank == 1, Keys: opts.Keys,
		RaBitQBits: int(p.RaBitQBits),
	}
	_, cfg.RaBitQCodesOnly = f.Section(tagRaBitQPlanes)
	if cfg.RaBitQLayout, err = fileLayout(f); err != nil {
		return nil, err
	}
	if p.Rerank > 1 || p.Dim == 0 || p.M == 0 || p.EfConstruction == 0 {
		return nil, fmt.Errorf("%w: parameters %+v", ErrFormat, p)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	x := newIndex(cfg)
	if rng, ok := f.Section(tagRNG); !ok || x.pcg.UnmarshalBinary(rng) != nil {
		return nil, fmt.Errorf("%w: section %q missing or invalid", ErrFormat, indexfile.TagName(tagRNG))
	}
	// Bound sizes by what the sections can hold before trusting them.
	if p.Count > 1<<32-1 || p.UpperUsed > 1<<40 {
		return nil, fmt.Errorf("%w: %d nodes, %d upper words", ErrFormat, p.Count, p.UpperUsed)
	}
	n, dim := int(p.Count), cfg.Dim
	if p.QuantStep != 0 && cfg.Quantization != QuantSQ8 {
		return nil, fmt.Errorf("%w: quantizer ranges on an unquantized index", ErrFormat)
	}
	var sq *sq8.Quantizer
	if cfg.Quantization == QuantSQ8 && (n > 0 || p.QuantStep != 0) {
		lo, err := section[float32](f, tagQuantLo, dim)
		if err != nil {
			return nil, err
		}
		sq = &sq8.Quantizer{Lo: lo, Step: p.QuantStep, LoNorm: p.QuantLoNorm}
		if err := sq.Validate(dim); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	// A codes-only index keeps float vectors only while it is empty (its
	// first Add builds on them); its file has none.
	g := newGraph(dim, cfg.M, sq, cfg.storesFloats() && !(cfg.RaBitQCodesOnly && n > 0))
	if _, ok := f.Section(tagVectors); ok && cfg.RaBitQCodesOnly {
		return nil, fmt.Errorf("%w: section %q in an index that keeps no float vectors", ErrFormat, indexfile.TagName(tagVectors))
	}
	if g.floats && !cfg.RaBitQCodesOnly {
		if g.vectors, err = section[float32](f, tagVectors, n*dim); err != nil {
			return nil, err
		}
	}
	if sq != nil {
		if g.codes, err = section[uint8](f, tagCodes, n*dim); err != nil {
			return nil, err
		}
		if g.shares, err = section[float32](f, tagShares, n); err != nil {
			return nil, err
		}
	}
	if g.level0, err = section[uint32](f, tagLevel0, n*g.stride0); err != nil {
		return nil, err
	}
	if g.upper, err = section[uint32](f, tagUpper, int(p.UpperUsed)); err != nil {
		return nil, err
	}
	if g.upperStart, err = section[uint32](f, tagUpperStart, n); err != nil {
		return nil, err
	}
	if g.levels, err = section[uint8](f, tagLevels, n); err != nil {
		return nil, err
	}
	if g.labels, err = section[uint64](f, tagLabels, n); err != nil {
		return nil, err
	}
	if g.flags, err = section[uint32](f, tagFlags, n); err != nil {
		return nil, err
	}
	if _, ok := f.Section(tagRank); ok {
		if g.rank, err = section[uint32](f, tagRank, n); err != nil {
			return nil, err
		}
		if err := checkPermutation(g.rank); err != nil {
			return nil, fmt.Errorf("%w: section %q: %v", ErrFormat, indexfile.TagName(tagRank), err)
		}
	}
	if !opts.MmapVectors && !opts.DeferCRC {
		adviseHugePages(g.vectors) // read into the heap: collapse into huge pages
	}
	if !opts.DeferCRC { // else mapped from the file
		adviseHugePages(g.codes)
		adviseHugePages(g.level0)
	}
	g.count, g.upperUsed = n, int(p.UpperUsed)
	g.entry.Store(p.Entry)
	g.computeSettled()
	// Under DeferCRC the links are mapped and unchecked: Load checks what
	// keeps searches and insertions in bounds and leaves the rest of the
	// structure check to Verify (deferredCheck, verify.go).
	check, checkTree := g.checkStructure, g.checkTree
	if opts.DeferCRC {
		check, checkTree = g.checkBounds, g.checkTreeBounds
	}
	if err := check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	_, hasTree := f.Section(tagParent)
	// Under DeferCRC the duplicate and self links are Verify's unless the
	// tree is built from the links here (they must be known first).
	linkSetsChecked := !opts.DeferCRC
	switch {
	case hasTree:
		if g.parent, err = section[uint32](f, tagParent, n); err != nil {
			return nil, err
		}
		if err := checkTree(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		if !g.floats && g.sq == nil {
			// A codes-only index written before it dropped its tree:
			// nothing will insert into it.
			g.parent = nil
		}
	case g.floats || g.sq != nil || n == 0:
		if opts.DeferCRC {
			if err := g.checkLinkSets(nil); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrFormat, err)
			}
			linkSetsChecked = true
		}
		g.buildTree() // saved before the tree was kept
	}
	if n > 0 {
		x.byID.reserve(slices.Max(g.labels), n)
	}
	x.deferred.pending.Store(!linkSetsChecked && n > 0)
	for node := 0; node < n; node++ {
		if g.flags[node]&^(flagReady|flagDeleted) != 0 || g.flags[node]&flagReady == 0 {
			return nil, fmt.Errorf("%w: node %d has flags %#x", ErrFormat, node, g.flags[node])
		}
		if !g.isReady(uint32(node)) {
			continue
		}
		id := g.labels[node]
		if _, dup := x.byID.get(id); dup || id > x.cfg.maxID() {
			return nil, fmt.Errorf("%w: live id %d at node %d is duplicated or out of range", ErrFormat, id, node)
		}
		x.byID.set(id, uint32(node))
	}
	x.nextID, x.published = p.NextID, n
	x.graph.Store(g)
	if err := x.loadRaBitQ(f, g); err != nil {
		return nil, err
	}
	if !g.floats && g.sq == nil && n > 0 && x.rabitq.Load() == nil {
		return nil, fmt.Errorf("%w: a codes-only index of %d nodes without its codes (section %q)", ErrFormat, n, indexfile.TagName(tagRaBitQParams))
	}
	// A file without current codes (one an index without RaBitQBits wrote
	// before the bits were set, or damaged into it) gets them now.
	if err := x.keepRaBitQ(false, nil); err != nil {
		return nil, err
	}
	return x, nil
}

// Close releases a memory-mapped file. Searches after Close fail; it is
// safe to call more than once and a no-op for indexes not loaded with
// MmapVectors.
func (x *Index) Close() error {
	x.closeMu.Lock()
	defer x.closeMu.Unlock()
	x.closed = true
	if x.file == nil {
		return nil
	}
	err := x.file.Close()
	x.file = nil
	return err
}

// Mapped reports whether the float vectors are left in their file,
// memory-mapped (LoadOptions.MmapVectors). Vectors mapped only for
// LoadOptions.DeferCRC are resident once verified, and do not count.
func (x *Index) Mapped() bool {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	return x.file != nil && x.mmapVectors
}

// VectorsInFile reports whether the float vectors the index searches are
// pages of its file's mapping rather than heap memory: with MmapVectors,
// and after a DeferCRC load of either placement (Mapped is false then).
// DropResident drops them from the resident set; a reader that sweeps
// them (a merge) reads them from the page cache.
func (x *Index) VectorsInFile() bool {
	if x.acquire() != nil {
		return false
	}
	defer x.closeMu.RUnlock()
	g := x.graph.Load()
	if x.file == nil || !g.floats || len(g.vectors) == 0 {
		return false
	}
	return x.file.Maps(indexfile.BytesOf(g.vectors[:1]))
}

// errClosed is returned by operations on a closed index. Its kind is
// errkind.Closed.
var errClosed = errkind.New(errkind.Closed, "hnsw: index is closed")
