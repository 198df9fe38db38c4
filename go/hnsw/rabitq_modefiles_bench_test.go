package hnsw

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
)

// BenchmarkWriteRaBitQModeFiles writes, into $STRATA_MODE_FILES_DIR, one
// index file per storage mode of bench/bench_memory.py, all coded from
// the same float graph (the cached graph of $STRATA_RABITQ_SET, see
// rabitq_benchdata_test.go), so that the modes differ by their layout
// alone and cost one graph build instead of one each:
//
//	f32.strata           the float graph as built
//	rabitq.strata        Config.RaBitQBits 1 (the door's default: neighbour records)
//	rows.strata          RaBitQBits 1, LayoutRows
//	rabitq-codes.strata  RaBitQBits 3 (DefaultCodesOnlyBits), RaBitQCodesOnly
//
// Each is coded as the end of an Add codes a new index of that Config
// (keepRaBitQ, then dropFloats for the codes-only one). Then:
//
//	STRATA_RABITQ_INDEX=/tmp/pypi100k.strata STRATA_MODE_FILES_DIR=/tmp/modes \
//	  go test ./go/hnsw -run '^$' -bench WriteRaBitQModeFiles -benchtime 1x -timeout 1h
//	python bench/bench_memory.py --dataset pypi-use512-angular --index-file f32=/tmp/modes/f32.strata ...
func BenchmarkWriteRaBitQModeFiles(b *testing.B) {
	dir := os.Getenv("STRATA_MODE_FILES_DIR")
	if dir == "" {
		b.Skip("STRATA_MODE_FILES_DIR names no directory")
	}
	s := loadRaBitQBenchSet(b, 100000, 1000)
	if s.index == "" {
		b.Fatal("STRATA_RABITQ_INDEX names no graph cache: the files would not share a graph")
	}
	x, _ := s.graph(b)
	if err := x.Save(vfs.Default, filepath.Join(dir, "f32.strata")); err != nil {
		b.Fatal(err)
	}
	modes := []struct {
		file   string
		bits   int
		layout Layout
		codes  bool
	}{{"rabitq", 1, LayoutRecords, false}, {"rows", 1, LayoutRows, false}, {"rabitq-codes", DefaultCodesOnlyBits, LayoutRecords, true}}
	for _, mode := range modes {
		y, err := Load(vfs.Default, s.index, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		y.cfg.RaBitQBits, y.cfg.RaBitQLayout, y.cfg.RaBitQCodesOnly = mode.bits, mode.layout, mode.codes
		if err := y.cfg.validate(); err != nil {
			b.Fatal(err)
		}
		y.rabitqBlocks = newIndex(y.cfg).rabitqBlocks
		y.writeMu.Lock()
		err = y.keepRaBitQ(false, nil)
		if err == nil && mode.codes {
			err = y.dropFloats()
		}
		y.writeMu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, mode.file+".strata")
		if err := y.Save(vfs.Default, path); err != nil {
			b.Fatal(err)
		}
		mem := y.Memory()
		fmt.Fprintf(os.Stderr, "%s: %+v\n", path, mem)
	}
}
