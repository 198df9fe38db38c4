package collection

import (
	"errors"
	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/internal/racetest"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
)

func TestUpsertQueryGet(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{})
	defer c.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := randomVectors(rng, 100)
	ids := make([]uint64, 100)
	docs := make([][]byte, 100)
	for i := range ids {
		ids[i] = uint64(1000 + i)
		docs[i] = randomDoc(rng)
	}
	if err := c.Upsert(IntIDs(ids), vecs, docsOf(t, docs)); err != nil {
		t.Fatal(err)
	}
	outIDs, outDists := make([]ID, 5), make([]float32, 5)
	if _, err := c.Query(vecs[7*testDim:8*testDim], 5, 0, nil, 1, outIDs, outDists); err != nil {
		t.Fatal(err)
	}
	if outIDs[0] != IntID(1007) || outDists[0] != 0 {
		t.Fatalf("nearest of vector 7 is %v at %g", outIDs[0], outDists[0])
	}
	f, err := meta.ParseFilter([]byte(`{"source": "news"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(vecs[:testDim], 5, 0, f, 1, outIDs, outDists); err != nil {
		t.Fatal(err)
	}
	for _, id := range outIDs {
		if id.IsNone() {
			continue
		}
		docs, err := c.Documents([]ID{id})
		if err != nil {
			t.Fatal(err)
		}
		doc := docs[0]
		d, _ := meta.ParseDocument(doc)
		if !f.Match(d) {
			t.Fatalf("filtered query returned %v with %s", id, doc)
		}
	}
	if n, err := c.Count(f); err != nil || n == 0 || n == 100 {
		t.Fatalf("Count(news) = %d, %v", n, err)
	}
}

func TestInvalidWritesChangeNothing(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	good := make([]float32, testDim)
	nan := make([]float32, testDim)
	nan[3] = float32(math.NaN())
	cases := map[string]func() error{
		"wrong dim":        func() error { return c.Upsert(IntIDs([]uint64{1}), make([]float32, testDim+1), nil) },
		"nan":              func() error { return c.Upsert(IntIDs([]uint64{1}), nan, nil) },
		"duplicate ids":    func() error { return c.Upsert(IntIDs([]uint64{1, 1}), append(good, good...), nil) },
		"id too large":     func() error { return c.Upsert(IntIDs([]uint64{1 << 63}), good, nil) },
		"docs count":       func() error { return c.Upsert(IntIDs([]uint64{1}), good, docsOf(t, [][]byte{nil, nil})) },
		"update missing":   func() error { _, err := c.UpdateMetadata(IntIDs([]uint64{5}), docsOf(t, [][]byte{nil})); return err },
		"delete too large": func() error { _, err := c.Delete(IntIDs([]uint64{1 << 63})); return err },
	}
	for name, fn := range cases {
		if err := fn(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !errors.Is(err, batch.ErrInvalid) && !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v is neither an input error nor ErrNotFound", name, err)
		}
	}
	if c.Len() != 0 || c.Info().Seq != 0 {
		t.Fatalf("invalid writes changed the collection: %d entries, seq %d", c.Len(), c.Info().Seq)
	}
}

// TestSeqCountsWritesAsInfoDoes: Seq (what the Qdrant door answers as a
// write's operation_id) moves with every applied write, as Info().Seq.
func TestSeqCountsWritesAsInfoDoes(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	v := make([]float32, testDim)
	for i := range 3 {
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), v, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := c.Seq(), c.Info().Seq; got != want || got != uint64(i+1) {
			t.Fatalf("after %d writes: Seq() = %d, Info().Seq = %d", i+1, got, want)
		}
	}
}

// runModel applies random operations to c and m alike.
func runModel(t *testing.T, c *Collection, m model, rng *rand.Rand, steps int) {
	t.Helper()
	for range steps {
		switch op := rng.IntN(10); {
		case op < 6:
			n := 1 + rng.IntN(8)
			ids := make([]uint64, 0, n)
			seen := map[uint64]bool{}
			for len(ids) < n {
				id := uint64(rng.IntN(60))
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			vecs := randomVectors(rng, n)
			docs := make([][]byte, n)
			for i := range docs {
				docs[i] = randomDoc(rng)
			}
			if err := c.Upsert(IntIDs(ids), vecs, docsOf(t, docs)); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				m[id] = entry{vec: vecs[i*testDim : (i+1)*testDim], doc: canonical(t, docs[i])}
			}
		case op < 8:
			ids := []uint64{uint64(rng.IntN(60)), uint64(rng.IntN(60))}
			want := 0
			for _, id := range ids {
				if _, ok := m[id]; ok {
					want++
					delete(m, id)
				}
			}
			if ids[0] == ids[1] && want == 2 {
				want = 1
			}
			got, err := c.Delete(IntIDs(ids))
			if err != nil || (ids[0] != ids[1] && got != want) {
				t.Fatalf("Delete(%v) = %d, %v; want %d", ids, got, err, want)
			}
		case op < 9:
			for id, e := range m {
				doc := randomDoc(rng)
				if _, err := c.UpdateMetadata(IntIDs([]uint64{id}), docsOf(t, [][]byte{doc})); err != nil {
					t.Fatal(err)
				}
				m[id] = entry{vec: e.vec, doc: canonical(t, doc)}
				break
			}
		default:
			f, _ := meta.ParseFilter([]byte(`{"source": "blog"}`))
			n, err := c.DeleteWhere(f)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for id, e := range m {
				d, _ := meta.ParseDocument([]byte(e.doc))
				if f.Match(d) {
					delete(m, id)
					want++
				}
			}
			if n != want {
				t.Fatalf("DeleteWhere removed %d, model %d", n, want)
			}
		}
	}
}

// TestModelAcrossReopenCrashAndCheckpoint runs random operations, and
// between rounds closes, abandons (a crash after acknowledgement: nothing
// unsynced is lost with FsyncAlways) or checkpoints, checking the model
// after every reopen.
func TestModelAcrossReopenCrashAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	m := model{}
	c := mustCreate(t, dir, Tuning{})
	for round := range 12 {
		runModel(t, c, m, rng, 30)
		checkModel(t, c, m)
		switch round % 3 {
		case 0:
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			runModel(t, c, m, rng, 5)
			c.abandon()
		case 1:
			c.abandon()
		case 2:
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		c = mustOpen(t, dir, Tuning{})
		checkModel(t, c, m)
	}
	c.Close()
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{})
	defer c.Close()
	if _, err := Open(dir, Tuning{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if err := Drop(nil, dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("Drop of an open collection: %v, want ErrLocked", err)
	}
}

func TestCreateOverExistingFails(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{})
	c.Close()
	if _, err := Create(dir, testOptions(), Tuning{}); !errors.Is(err, ErrExists) {
		t.Fatalf("got %v, want ErrExists", err)
	}
	if err := Drop(nil, dir); err != nil {
		t.Fatal(err)
	}
	if Exists(nil, dir) {
		t.Fatal("dropped collection still exists")
	}
	if _, err := Open(dir, Tuning{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open after Drop: %v, want fs.ErrNotExist", err)
	}
}

// TestGroupCommitSharesFsyncs: concurrent single upserts share fsyncs.
func TestGroupCommitSharesFsyncs(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{})
	defer c.Close()
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := range each {
				if err := c.Upsert(IntIDs([]uint64{uint64(w*1000 + i)}), randomVectors(rng, 1), nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	in := c.Info()
	if in.Count != writers*each || in.Records != writers*each {
		t.Fatalf("count %d, records %d", in.Count, in.Records)
	}
	if in.Syncs >= in.Records {
		t.Fatalf("%d fsyncs for %d concurrent writes: no group commit", in.Syncs, in.Records)
	}
	t.Logf("%d writes, %d groups, %d fsyncs", in.Records, in.Groups, in.Syncs)
}

// TestFailedFsyncRefusesWrites: after a failed fsync the collection must
// not acknowledge anything else, and reopening recovers every write that
// was acknowledged before the failure.
func TestFailedFsyncRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{})
	rng := rand.New(rand.NewPCG(1, 1))
	m := model{}
	vec := randomVectors(rng, 1)
	if err := c.Upsert(IntIDs([]uint64{1}), vec, nil); err != nil {
		t.Fatal(err)
	}
	m[1] = entry{vec: vec, doc: "{}"}
	c.Close()

	efs := errorfs.New(vfs.Default, errorfs.Rule{})
	c = mustOpen(t, dir, Tuning{FS: efs})
	efs.SetRule(errorfs.Rule{Op: errorfs.OpSync, N: efs.Count(errorfs.OpSync) + 1})
	if err := c.Upsert(IntIDs([]uint64{2}), randomVectors(rng, 1), nil); !errors.Is(err, ErrFailed) {
		t.Fatalf("write with a failing fsync: %v, want ErrFailed", err)
	}
	if err := c.Upsert(IntIDs([]uint64{3}), randomVectors(rng, 1), nil); !errors.Is(err, ErrFailed) {
		t.Fatalf("write after a failed fsync: %v, want ErrFailed", err)
	}
	c.abandon()
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	if _, ok := c.meta.Get(1); !ok {
		t.Fatal("acknowledged write lost")
	}
	if _, ok := c.meta.Get(3); ok {
		t.Fatal("a write refused after the failure is present")
	}
}

// TestOpenOnTornWALTail truncates the log at every byte of its last
// records: Open must succeed with exactly the records that are whole.
func TestOpenOnTornWALTail(t *testing.T) {
	racetest.AnswersOnly(t)
	base := t.TempDir()
	src := filepath.Join(base, "src")
	c := mustCreate(t, src, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(9, 9))
	var states []model
	m := model{}
	states = append(states, m.clone())
	for i := range 4 {
		vec := randomVectors(rng, 1)
		doc := randomDoc(rng)
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), vec, docsOf(t, [][]byte{doc})); err != nil {
			t.Fatal(err)
		}
		m[uint64(i)] = entry{vec: vec, doc: canonical(t, doc)}
		states = append(states, m.clone())
	}
	c.abandon()
	segs := walSegments(t, src)
	last := segs[len(segs)-1]
	data := trimWALSegment(t, last, 64)
	for cut := len(data); cut >= 0; cut-- {
		dst := filepath.Join(base, "cut")
		os.RemoveAll(dst)
		copyTree(t, src, dst)
		if err := os.Truncate(filepath.Join(dst, walDir, filepath.Base(last)), int64(cut)); err != nil {
			t.Fatal(err)
		}
		c, err := Open(dst, Tuning{})
		if cut < 16 {
			// The log creates a segment whole (temporary name, rename),
			// so a crash cannot leave its header short: this is a
			// segment emptied after the fact, and its records are lost.
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("cut at %d, inside the segment header: got %v, want ErrCorrupt", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		n := c.Len()
		checkModel(t, c, states[n])
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBitFlipInWALNeverYieldsWrongData flips bits across the log: Open
// either refuses with ErrCorrupt or yields a prefix of the writes.
func TestBitFlipInWALNeverYieldsWrongData(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	c := mustCreate(t, src, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(4, 4))
	var states []model
	m := model{}
	states = append(states, m.clone())
	for i := range 3 {
		vec := randomVectors(rng, 1)
		if err := c.Upsert(IntIDs([]uint64{uint64(i)}), vec, nil); err != nil {
			t.Fatal(err)
		}
		m[uint64(i)] = entry{vec: vec, doc: "{}"}
		states = append(states, m.clone())
	}
	c.abandon()
	segs := walSegments(t, src)
	last := segs[len(segs)-1]
	data := trimWALSegment(t, last, 64)
	for i := 0; i < len(data); i += 3 {
		dst := filepath.Join(base, "flip")
		os.RemoveAll(dst)
		copyTree(t, src, dst)
		flipped := append([]byte(nil), data...)
		flipped[i] ^= 0x10
		os.WriteFile(filepath.Join(dst, walDir, filepath.Base(last)), flipped, 0o644)
		c, err := Open(dst, Tuning{})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip at %d: %v is not ErrCorrupt", i, err)
			}
			continue
		}
		checkModel(t, c, states[c.Len()])
		c.Close()
	}
}

// TestCheckpointCrashAtEveryStep crashes a checkpoint at each of its
// filesystem operations: reopening must give back every acknowledged write.
func TestCheckpointCrashAtEveryStep(t *testing.T) {
	racetest.AnswersOnly(t)
	base := t.TempDir()
	src := filepath.Join(base, "src")
	c := mustCreate(t, src, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(5, 5))
	m := model{}
	runModel(t, c, m, rng, 20)
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	runModel(t, c, m, rng, 20)
	c.abandon()

	// Count the checkpoint's operations once, then crash at each.
	probe := filepath.Join(base, "probe")
	copyTree(t, src, probe)
	counter := errorfs.New(vfs.Default, errorfs.Rule{})
	c = mustOpen(t, probe, Tuning{FS: counter, CheckpointBytes: -1})
	before := counter.Count(errorfs.OpAny)
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	steps := counter.Count(errorfs.OpAny) - before
	c.abandon()
	if steps < 10 {
		t.Fatalf("checkpoint took only %d operations", steps)
	}
	for step := 1; step <= steps; step++ {
		dst := filepath.Join(base, "crash")
		os.RemoveAll(dst)
		copyTree(t, src, dst)
		efs := errorfs.New(vfs.Default, errorfs.Rule{})
		c := mustOpen(t, dst, Tuning{FS: efs, CheckpointBytes: -1})
		efs.SetRule(errorfs.Rule{Op: errorfs.OpAny, N: efs.Count(errorfs.OpAny) + step, Crash: true})
		err := c.Checkpoint()
		if err == nil && efs.Injected() {
			t.Fatalf("step %d: checkpoint hid an injected failure", step)
		}
		c.abandon()
		c = mustOpen(t, dst, Tuning{})
		checkModel(t, c, m)
		c.Close()
	}
}

// Create used to run with Tuning's zero fsync policy (always) whatever
// Options.Fsync said, until the collection was reopened.
func TestCreateHonoursTheFsyncPolicyOfItsOptions(t *testing.T) {
	opts := testOptions()
	opts.Fsync = FsyncNever
	c, err := Create(t.TempDir(), opts, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Upsert(IntIDs([]uint64{1}), make([]float32, testDim), nil); err != nil {
		t.Fatal(err)
	}
	if in := c.Info(); in.Fsync != "never" || in.Syncs != 0 {
		t.Fatalf("created with fsync=never: Info says fsync=%s after %d fsyncs", in.Fsync, in.Syncs)
	}
}

// A drop closed the collection with Close, which wrote a whole snapshot of
// a dirty collection only for it to be deleted: seconds for a large one,
// and a longer window for a kill.
func TestCloseForDropWritesNoSnapshotAndLosesNothing(t *testing.T) {
	dir := t.TempDir()
	c := mustCreate(t, dir, Tuning{CheckpointBytes: -1})
	rng := rand.New(rand.NewPCG(3, 4))
	ids := []uint64{1, 2, 3}
	if err := c.Upsert(IntIDs(ids), randomVectors(rng, len(ids)), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	if n := c.Info().Checkpoints; n != 0 {
		t.Fatalf("CloseForDrop checkpointed %d times", n)
	}
	if err := c.Upsert(IntIDs([]uint64{4}), randomVectors(rng, 1), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("upsert after CloseForDrop: %v", err)
	}
	c, err := Open(dir, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Len() != 3 || c.Info().Recovery.Replayed != 1 {
		t.Fatalf("reopened: %d points, %d records replayed; want 3 from the log", c.Len(), c.Info().Recovery.Replayed)
	}
}
