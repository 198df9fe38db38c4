package collection

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/wal"
	"github.com/strata-db/strata/go/vfs"
)

// lossyCollection writes 2 points, checkpoints, writes 10 more and stops
// as a crash would: 2 points in the snapshot, 10 acknowledged in the log.
func lossyCollection(t *testing.T) (string, model) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1, VacuumRatio: -1})
	rng := rand.New(rand.NewPCG(4, 20))
	m := model{}
	for i := range 12 {
		vec := randomVectors(rng, 1)
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), vec, nil); err != nil {
			t.Fatal(err)
		}
		m[uint64(i)] = entry{vec: vec, doc: "{}"}
		if i == 1 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.abandon()
	return dir, m
}

func refusedAsCorrupt(t *testing.T, dir, what string) {
	t.Helper()
	c, err := Open(dir, Tuning{})
	if err == nil {
		n := c.Len()
		c.Close()
		t.Fatalf("opened with %d of 12 acknowledged points", n)
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), what) {
		t.Fatalf("got %v, want ErrCorrupt naming %q", err, what)
	}
}

// TestOpenRefusesAMissingSegment: deleting the segment of the 10 logged
// points opened the collection with the 2 of the snapshot, silently.
func TestOpenRefusesAMissingSegment(t *testing.T) {
	dir, _ := lossyCollection(t)
	segs := walSegments(t, dir)
	last := segs[len(segs)-1]
	if err := os.Remove(last); err != nil {
		t.Fatal(err)
	}
	refusedAsCorrupt(t, dir, filepath.Base(last))
}

// TestOpenRefusesAnEmptiedSegment: the same segment truncated to 0 bytes
// was taken for one a crash left half-created.
func TestOpenRefusesAnEmptiedSegment(t *testing.T) {
	dir, _ := lossyCollection(t)
	segs := walSegments(t, dir)
	if err := os.Truncate(segs[len(segs)-1], 0); err != nil {
		t.Fatal(err)
	}
	refusedAsCorrupt(t, dir, "emptied")
}

// TestOpenRefusesARemovedLog: wal/ removed entirely read as an empty log.
func TestOpenRefusesARemovedLog(t *testing.T) {
	dir, _ := lossyCollection(t)
	if err := os.RemoveAll(filepath.Join(dir, walDir)); err != nil {
		t.Fatal(err)
	}
	refusedAsCorrupt(t, dir, "no HEAD")
}

// TestRepairSalvagesPointsBehindADamagedRecord: a flipped bit in one
// record cost every record behind it; now only that one is lost, the
// damaged segment is kept as .broken, the loss is reported by seq, and the
// repaired collection reopens cleanly.
func TestRepairSalvagesPointsBehindADamagedRecord(t *testing.T) {
	dir, m := lossyCollection(t)
	segs := walSegments(t, dir)
	seg := segs[len(segs)-1]
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// The segment holds seqs 3..12 (points 2..11); damage the first.
	data[16+16+2] ^= 0x40
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Tuning{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a damaged log: %v", err)
	}
	c := mustOpen(t, dir, Tuning{Repair: true})
	r := c.Info().Recovery
	if !slices.Equal(r.Lost, []wal.SeqRange{{From: 3, Through: 3}}) || r.Salvaged != 9 || r.Corruption == "" ||
		len(r.Broken) != 1 || r.Broken[0] != seg+".broken" {
		t.Fatalf("recovery %+v", r)
	}
	if got, err := os.ReadFile(r.Broken[0]); err != nil || string(got) != string(data) {
		t.Fatalf("the .broken copy is not the damaged segment: %v", err)
	}
	delete(m, 2) // seq 3 upserted point 2
	checkModel(t, c, m)
	d := c.Describe()["recovery"].(map[string]any)["repaired"].(map[string]any)
	if lost := d["lost_seqs"].([]any); len(lost) != 1 {
		t.Fatalf("describe shows lost %v", lost)
	}
	c.abandon() // the repair's checkpoint made the salvage durable
	again := mustOpen(t, dir, Tuning{})
	checkModel(t, again, m)
	again.Close()
}

// TestOpenReadsACollectionInFormat1 opens testdata/format1, written by the
// code before HEAD and manifest version 2 (snapshot 3, log records 4..6).
func TestOpenReadsACollectionInFormat1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "format1")
	copyTree(t, filepath.Join("testdata", "format1"), dir)
	c := mustOpen(t, dir, Tuning{})
	if c.Len() != 6 || c.Info().Recovery.SnapshotSeq != 3 || c.Info().Recovery.Replayed != 3 {
		t.Fatalf("len %d, recovery %+v", c.Len(), c.Info().Recovery)
	}
	found, docs, vecs, err := c.Get(IntIDs([]uint64{6}), true)
	if err != nil || len(found) != 1 || string(docs[0]) != `{"n":6}` || vecs[0] != 6 {
		t.Fatalf("point 6: %v %s %v %v", found, docs, vecs, err)
	}
	if err := c.Close(); err != nil { // checkpoints in format 5: the index becomes a segment, meta.idx a state run
		t.Fatal(err)
	}
	m, err := snapshot.ReadManifest(vfs.Default, snapshotPath(dir, c.lastCheckpoint.Load()))
	if err != nil || m.Format != 5 || len(m.Vectors) != 1 || len(m.Vectors[0].Segments) != 1 || m.Vectors[0].Segments[0].Live != 6 ||
		len(m.State) != 1 || m.State[0].Entries != 6 {
		t.Fatalf("converted manifest %+v, %v; want format 5, one segment and one state run of the 6 points (the old snapshot and the log replayed into it)", m, err)
	}
	c = mustOpen(t, dir, Tuning{})
	if c.Len() != 6 {
		t.Fatalf("after a checkpoint in the new format: len %d", c.Len())
	}
	if n := c.Info().Segments; n != 1 {
		t.Fatalf("%d segments after the conversion, want 1", n)
	}
	c.Close()
}
