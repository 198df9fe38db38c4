package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// persistConfigs covers every section layout: float, SQ8 with and without
// float vectors.
var persistConfigs = map[string]Config{
	"float":  {Dim: 16, Metric: metric.Cosine, M: 8, Seed: 1},
	"rerank": {Dim: 16, Metric: metric.IP, M: 8, Seed: 1, Quantization: QuantSQ8, Rerank: true},
	"codes":  {Dim: 16, Metric: metric.L2, M: 8, Seed: 1, Quantization: QuantSQ8},
}

func builtIndex(t *testing.T, cfg Config, setup ...func(*Index)) (*Index, []float32) {
	t.Helper()
	const n = 1500 / raceShrink
	data := synth.Clustered(n, cfg.Dim, 20, 0.2, 77)
	x := mustNew(t, cfg)
	for _, f := range setup {
		f(x)
	}
	if err := x.Add(data, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	var gone []uint64
	for id := uint64(0); id < n; id += 7 {
		gone = append(gone, id)
	}
	if _, err := x.Remove(gone, false); err != nil {
		t.Fatal(err)
	}
	return x, data
}

// loadModes are the ways Load reads a file: into memory, vectors mapped,
// and each with the vectors' CRC deferred to Verify.
var loadModes = []LoadOptions{{}, {MmapVectors: true}, {DeferCRC: true}, {MmapVectors: true, DeferCRC: true}}

func TestSaveLoadSaveIsByteIdentical(t *testing.T) {
	racetest.AnswersOnly(t)
	for name, cfg := range persistConfigs {
		t.Run(name, func(t *testing.T) {
			x, data := builtIndex(t, cfg)
			dir := t.TempDir()
			p1, p2 := filepath.Join(dir, "a.idx"), filepath.Join(dir, "b.idx")
			if err := x.Save(vfs.Default, p1); err != nil {
				t.Fatal(err)
			}
			for _, lo := range loadModes {
				mmap := lo
				y, err := Load(vfs.Default, p1, lo)
				if err != nil {
					t.Fatal(err)
				}
				if err := y.Verify(nil); err != nil {
					t.Fatalf("%+v: Verify of an intact file: %v", lo, err)
				}
				if y.Unverified() != 0 {
					t.Fatalf("%+v: %d bytes unverified after Verify", lo, y.Unverified())
				}
				if err := y.Save(vfs.Default, p2); err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(p1)
				b, _ := os.ReadFile(p2)
				if !bytes.Equal(a, b) {
					t.Fatalf("mmap=%v: save -> load -> save changed the file (%d vs %d bytes)", mmap, len(a), len(b))
				}
				// Same answers, same ids, same integrity.
				q := data[:50*cfg.Dim]
				wantIDs, wantD := search(t, x, q, 10, 64, 1)
				gotIDs, gotD := search(t, y, q, 10, 64, 1)
				if !slices.Equal(wantIDs, gotIDs) || !slices.Equal(wantD, gotD) {
					t.Fatalf("mmap=%v: loaded index answers differently", mmap)
				}
				if err := y.CheckIntegrity(); err != nil {
					t.Fatal(err)
				}
				if y.Len() != x.Len() {
					t.Fatalf("Len %d after load, want %d", y.Len(), x.Len())
				}
				// The loaded index keeps working: add, upsert, compact.
				if err := y.Add(data[:2*cfg.Dim], []uint64{0, 5000}, nil, 1); err != nil {
					t.Fatal(err)
				}
				if err := y.Compact(1); err != nil {
					t.Fatal(err)
				}
				if err := y.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := y.IDs(); !errors.Is(err, errClosed) {
					t.Fatalf("IDs after Close: %v", err)
				}
			}
		})
	}
}

// TestLoadRejectsDamagedFiles truncates the file at every section boundary
// and a spread of other offsets, and flips bytes across it: every load must
// fail with ErrCorrupt, none may panic or return an index.
func TestLoadRejectsDamagedFiles(t *testing.T) {
	racetest.AnswersOnly(t)
	for name, cfg := range persistConfigs {
		t.Run(name, func(t *testing.T) {
			x, _ := builtIndex(t, cfg)
			dir := t.TempDir()
			good := filepath.Join(dir, "good.idx")
			if err := x.Save(vfs.Default, good); err != nil {
				t.Fatal(err)
			}
			orig, _ := os.ReadFile(good)
			bad := filepath.Join(dir, "bad.idx")
			try := func(what string, b []byte) {
				t.Helper()
				if err := os.WriteFile(bad, b, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, lo := range loadModes {
					y, err := Load(vfs.Default, bad, lo)
					if err == nil {
						// A deferred CRC is Verify's to find.
						if lo.DeferCRC {
							err = y.Verify(nil)
						}
						y.Close()
						if err == nil {
							t.Fatalf("%s %+v: damaged file loaded", what, lo)
						}
					}
					if !errors.Is(err, indexfile.ErrCorrupt) {
						t.Fatalf("%s: error %v does not wrap ErrCorrupt", what, err)
					}
				}
			}
			// Section boundaries (each payload's start and end, read from the
			// table as package indexfile documents it), every byte of the
			// header and table, and a spread of offsets inside payloads.
			count := int(binary.LittleEndian.Uint32(orig[20:]))
			var cuts []int
			for i := 0; i < count; i++ {
				e := orig[32+32*i:]
				off := int(binary.LittleEndian.Uint64(e[8:]))
				cuts = append(cuts, off, off+int(binary.LittleEndian.Uint64(e[16:])))
			}
			for i := 0; i < 32+32*count; i += 3 {
				cuts = append(cuts, i)
			}
			for off := 0; off < len(orig); off += max(1, len(orig)/50) {
				cuts = append(cuts, off)
			}
			cuts = append(cuts, len(orig)-1)
			for _, c := range cuts {
				if c < len(orig) {
					try("truncated", orig[:c])
				}
			}
			step := max(1, len(orig)/200)
			for off := 0; off < len(orig); off += step {
				b := slices.Clone(orig)
				b[off] ^= 0x5a
				try("flipped", b)
			}
		})
	}
}

// TestLoadsFilesWithoutTree loads a file written before the level-0 tree
// was saved (an INDG section of in-degrees, no PRNT): the tree is rebuilt
// from the links, and the index checks, answers and grows as before.
func TestLoadsFilesWithoutTree(t *testing.T) {
	racetest.AnswersOnly(t)
	x, data := builtIndex(t, persistConfigs["float"])
	dir := t.TempDir()
	cur, old := filepath.Join(dir, "cur.idx"), filepath.Join(dir, "old.idx")
	if err := x.Save(vfs.Default, cur); err != nil {
		t.Fatal(err)
	}
	f, err := indexfile.Read(vfs.Default, cur, indexfile.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sections []indexfile.Section
	for _, tag := range f.Tags() {
		b, _ := f.Section(tag)
		if tag == tagParent {
			tag, b = indexfile.FourCC("INDG"), make([]byte, len(b))
		}
		sections = append(sections, indexfile.Section{Tag: tag, Data: append([]byte(nil), b...)})
	}
	f.Close()
	if err := indexfile.Write(vfs.Default, old, sections); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.Default, old, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := y.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	q := data[:50*16]
	wantIDs, _ := search(t, x, q, 10, 64, 1)
	gotIDs, _ := search(t, y, q, 10, 64, 1)
	if !slices.Equal(wantIDs, gotIDs) {
		t.Fatal("a file without the tree answers differently")
	}
	if err := y.Add(data[:300*16], nil, nil, 2); err != nil {
		t.Fatal(err)
	}
	if err := y.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

// TestFrozenIsTheIndexAtFreeze guards Freeze's sharing of the write-once
// arrays: whatever the index does after Freeze (adds that fit and adds
// that grow it, upserts, removals, compaction, renumbering, Close of a
// memory-mapped index), the frozen copy saves byte for byte what Save gave
// at that instant. A shared array written in place would show up here.
func TestFrozenIsTheIndexAtFreeze(t *testing.T) {
	racetest.AnswersOnly(t)
	reorderAtThousand := func(x *Index) { reorderAt(x, 1000) }
	for name, cfg := range persistConfigs {
		for _, mapped := range []bool{false, true} {
			x, data := builtIndex(t, cfg, reorderAtThousand)
			dir := t.TempDir()
			if mapped {
				path := filepath.Join(dir, "m.idx")
				if err := x.Save(vfs.Default, path); err != nil {
					t.Fatal(err)
				}
				var err error
				if x, err = Load(vfs.Default, path, LoadOptions{MmapVectors: true}); err != nil {
					t.Fatal(err)
				}
				reorderAtThousand(x)
			}
			// Room to grow in place: the writes after Freeze go into the
			// very arrays it shares.
			more := synth.Clustered(3000/raceShrink, cfg.Dim, 20, 0.2, 78)
			if err := x.Add(more[:10*cfg.Dim], nil, nil, 1); err != nil {
				t.Fatal(err)
			}
			if g := x.graph.Load(); g.capacity() < g.count+100 {
				t.Fatalf("capacity %d for %d nodes: no room to write in place", g.capacity(), g.count)
			}
			want := filepath.Join(dir, "want.idx")
			if err := x.Save(vfs.Default, want); err != nil {
				t.Fatal(err)
			}
			frozen, err := x.Freeze()
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Add(more[10*cfg.Dim:20*cfg.Dim], nil, nil, 1); err != nil { // fits
				t.Fatal(err)
			}
			if err := x.Add(data[:20*cfg.Dim], idRangeFrom(0, 20), nil, 1); err != nil { // upserts
				t.Fatal(err)
			}
			gone := slices.DeleteFunc(idRangeFrom(100, 50), func(id uint64) bool { return id%7 == 0 }) // builtIndex removed those
			if _, err := x.Remove(gone, false); err != nil {
				t.Fatal(err)
			}
			if err := x.Add(more, nil, nil, 2); err != nil { // grows
				t.Fatal(err)
			}
			if _, err := x.Renumber(0); err != nil {
				t.Fatal(err)
			}
			if err := x.Compact(2); err != nil {
				t.Fatal(err)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			got := filepath.Join(dir, "got.idx")
			if err := frozen.Save(vfs.Default, got); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(want)
			b, _ := os.ReadFile(got)
			if !bytes.Equal(a, b) {
				t.Fatalf("%s mapped=%v: the frozen copy changed after Freeze", name, mapped)
			}
		}
	}
}

// idRangeFrom is the n ids first, first+1, ...
func idRangeFrom(first, n uint64) []uint64 {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = first + uint64(i)
	}
	return ids
}
