package hnsw

import (
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// FuzzLoadValidSections damages one section of a small saved index and
// rewrites the file with correct checksums, so the damage reaches the
// index's own validation rather than the container's CRCs. Load must then
// either fail or return an index that searches and checks without
// panicking. The RaBitQ sections, the neighbour blocks (RBQN) among them,
// are fuzzed like the others; file 2 holds a quantized graph of 130
// dimensions coded to D = 192 (the FHT-Kac rotation), so a damaged RBQP
// Padded reaches rabitq.NewRotationPadded.
func FuzzLoadValidSections(f *testing.F) {
	dir := f.TempDir()
	src := filepath.Join(dir, "src.idx")
	for i, cfg := range []Config{
		{Dim: 4, Metric: metric.L2, M: 4},
		{Dim: 4, Metric: metric.IP, M: 4, Quantization: QuantSQ8, Rerank: true},
		{Dim: 130, Metric: metric.L2, M: 4, RaBitQBits: 1, RaBitQLayout: LayoutQG},
	} {
		x, err := New(cfg)
		if err != nil {
			f.Fatal(err)
		}
		if err := x.Add(synth.Clustered(60, cfg.Dim, 5, 0.3, 1), nil, nil, 1); err != nil {
			f.Fatal(err)
		}
		if _, err := x.Remove([]uint64{3, 9}, false); err != nil {
			f.Fatal(err)
		}
		if i == 0 {
			if err := x.BuildRaBitQBlocks(4); err != nil { // its sections (RBQN too) are fuzzed
				f.Fatal(err)
			}
		}
		p := filepath.Join(dir, []string{"a.idx", "b.idx", "c.idx"}[i])
		if err := x.Save(vfs.Default, p); err != nil {
			f.Fatal(err)
		}
		if i == 0 {
			src = p
		}
	}
	f.Add(uint8(0), uint8(0), uint32(0), uint8(1), uint32(0))
	f.Add(uint8(0), uint8(9), uint32(4), uint8(200), uint32(0))
	f.Add(uint8(1), uint8(5), uint32(12), uint8(0), uint32(7))
	// Section 15 of a.idx is RBQN, the neighbour blocks (D = 64, 4 bits: a
	// head of 32 words, then a block of 256; node 0's slot ids from byte
	// 1024, its slots' Add from byte 384).
	f.Add(uint8(0), uint8(15), uint32(1024), uint8(1), uint32(0))
	f.Add(uint8(0), uint8(15), uint32(387), uint8(0x7f), uint32(0))
	f.Add(uint8(0), uint8(15), uint32(0), uint8(0xff), uint32(4))
	// Section 10 of c.idx is RBQP; Padded (192) is its third word: 192^64
	// = 128 and 192 + 256 are not padded dimensions of 130.
	f.Add(uint8(2), uint8(10), uint32(8), uint8(0x40), uint32(0))
	f.Add(uint8(2), uint8(10), uint32(9), uint8(0x01), uint32(0))
	f.Add(uint8(2), uint8(13), uint32(9), uint8(0x01), uint32(0))
	f.Fuzz(func(t *testing.T, which uint8, section uint8, off uint32, val uint8, cut uint32) {
		path := src
		switch which % 3 {
		case 1:
			path = filepath.Join(dir, "b.idx")
		case 2:
			path = filepath.Join(dir, "c.idx")
		}
		file, err := indexfile.Read(vfs.Default, path, indexfile.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tags := file.Tags()
		var sections []indexfile.Section
		for i, tag := range tags {
			b, _ := file.Section(tag)
			b = append([]byte(nil), b...)
			if i == int(section)%len(tags) && len(b) > 0 {
				b[int(off)%len(b)] ^= val
				if cut > 0 {
					b = b[:len(b)-int(cut)%len(b)]
				}
			}
			sections = append(sections, indexfile.Section{Tag: tag, Data: b})
		}
		bad := filepath.Join(t.TempDir(), "bad.idx")
		if err := indexfile.Write(vfs.Default, bad, sections); err != nil {
			t.Fatal(err)
		}
		// Half the runs map the vectors with their CRC deferred, as a
		// collection's Open does: the index is searched before Verify.
		x, err := Load(vfs.Default, bad, LoadOptions{DeferCRC: off%2 == 1})
		if err != nil {
			return
		}
		defer x.Close()
		ids := make([]int64, 5)
		dists := make([]float32, 5)
		q := make([]float32, x.Config().Dim)
		for i := range q {
			q[i] = 0.1 * float32(i+1)
		}
		_ = x.Search(q, 5, 16, 1, ids, dists)
		x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph // the graph (and RaBitQ) search, not a scan
		_ = x.Search(q, 5, 16, 1, ids, dists)
		_ = x.CheckIntegrity()
		_ = x.Add(q, nil, nil, 1)
	})
}
