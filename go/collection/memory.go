package collection

import (
	"fmt"
	"path/filepath"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/hnsw"
)

// Memory is where a vector field's sealed segments keep their float
// vectors (Qdrant's on_disk). It is a placement, never a change of
// answers: a field searches, scores and merges alike in either.
//
//   - MemoryRAM: the vectors are resident (the default). A segment loaded
//     by Open is mapped from its file (MAP_SHARED, read-only; its links,
//     ids and codes too) and its
//     pages become resident as the background verifier (verify.go) reads
//     them to check their CRC, which it does for every page: so "ram"
//     means resident once Info().Verification is "verified", not yet when
//     Open returns (queries before that fault pages in from the page
//     cache). They are clean file pages, which the kernel may still
//     reclaim under memory pressure, unlike the heap copy of before (and
//     of Tuning.VerifyOnOpen, which reads them into the heap as before).
//     A segment a checkpoint writes stays in the heap, as it was built.
//   - MemoryMmap: each sealed segment's float vectors stay in its file,
//     memory-mapped read-only (hnsw.LoadOptions.MmapVectors): on Open,
//     and for a segment a checkpoint has just written, once the file is
//     durable (Graphs.MapSealed). Their pages are clean page cache, so the
//     kernel reclaims them under memory pressure and reads them again on
//     the next access: a collection's floats may exceed RAM, at the cost
//     of disk reads on the queries that touch evicted pages. The graph
//     links, ids and SQ8 codes stay resident (for a segment Open loads:
//     mapped and kept, resident once verified, as MemoryRAM's vectors
//     are), and so do the mutable tail
//     and the active graph (both bounded).
//
// An SQ8 field (Qdrant's scalar quantization with its original vectors)
// keeps its float vectors beside the codes and places them so: the graph
// is searched on the resident codes, and every candidate of the ef-bounded
// list is re-scored with its float vector, which with MemoryMmap is read
// from the page cache (one float read per candidate is what the placement
// costs a query). Answers are float distances, as a float field's; ef is
// the oversampling (all ef candidates are re-scored). VectorField.CodesOnly
// ("rescore": false) keeps no floats and ranks by code distances, as every
// SQ8 field of the builds before rescoring does; for it the two placements
// hold the same memory.
//
// The values are part of the C ABI: do not change them.
type Memory uint8

const (
	MemoryRAM  Memory = 0
	MemoryMmap Memory = 1
)

var memoryNames = [...]string{"ram", "mmap"}

func (m Memory) String() string {
	if int(m) < len(memoryNames) {
		return memoryNames[m]
	}
	return fmt.Sprintf("Memory(%d)", m)
}

// ParseMemory parses "ram" (or "", the default) and "mmap".
func ParseMemory(s string) (Memory, error) {
	switch s {
	case "", "ram":
		return MemoryRAM, nil
	case "mmap":
		return MemoryMmap, nil
	}
	return 0, fmt.Errorf("%w: memory must be \"ram\" or \"mmap\", got %q", ErrInvalid, s)
}

// loadOptions is how the field's segment files are loaded.
func (f VectorField) loadOptions() hnsw.LoadOptions {
	return hnsw.LoadOptions{Keys: true, MmapVectors: f.Memory == MemoryMmap}
}

// mapSegments switches the sealed segments of the fields of mmap
// placement that checkpoints have written to their files' mappings
// (segment.Graphs.MapSealed); the checkpoint calls it once the snapshot
// naming them is durable. It reports whether any switched.
func (c *Collection) mapSegments(set *fieldSet) (bool, error) {
	segDir := filepath.Join(c.dir, snapshot.SegmentsDir)
	switched := false
	for _, f := range set.fields {
		if f.Memory != MemoryMmap {
			continue
		}
		opts := f.loadOptions()
		n, err := f.index.MapSealed(func(file string) (*hnsw.Index, error) {
			return hnsw.Load(c.fs, filepath.Join(segDir, file), opts)
		})
		switched = switched || n > 0
		if err != nil {
			return switched, fmt.Errorf("vector field %q: %w", f.Name, err)
		}
	}
	return switched, nil
}

// mergeSourceLoader loads a segment file of f with its float vectors
// mapped whatever f's placement: a merge reads its sources from their
// files (segment.Graphs.MapSources), and the segment it makes is placed as
// f says.
func (c *Collection) mergeSourceLoader(f *vectorField) func(file string) (*hnsw.Index, error) {
	segDir := filepath.Join(c.dir, snapshot.SegmentsDir)
	opts := f.loadOptions()
	opts.MmapVectors = true
	return func(file string) (*hnsw.Index, error) {
		return hnsw.Load(c.fs, filepath.Join(segDir, file), opts)
	}
}
