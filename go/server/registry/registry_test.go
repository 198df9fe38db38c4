package registry

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

const data = "/data"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// noTicks never ticks: the tests trigger retries by hand (RetryDue).
var noTicks = make(chan time.Time)

func options(fsys vfs.FS) Options {
	return Options{FS: fsys, Logger: quiet, Ticks: noTicks,
		Tuning: collection.Tuning{CheckpointBytes: -1, VacuumRatio: -1}}
}

func open(t *testing.T, fsys vfs.FS) *Registry {
	t.Helper()
	r, err := Open(data, options(fsys))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

var small = collection.Options{Dim: 2, Metric: metric.L2, Seed: 1}

func mustCreate(t *testing.T, r *Registry, name string) *collection.Collection {
	t.Helper()
	c, err := r.Create(name, small)
	if err != nil {
		t.Fatalf("create %q: %v", name, err)
	}
	return c
}

func upsert(c *collection.Collection, id uint64) error {
	doc, _ := meta.ParseDocument([]byte(`{"n": 1}`))
	return c.Upsert([]collection.ID{collection.IntID(id)}, []float32{float32(id), 1}, []meta.Document{doc})
}

// entries lists the data directory.
func entries(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	names, err := fsys.ReadDir(data)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestCreateThatFailsLeavesNoDirectory(t *testing.T) {
	fsys := memfs.New()
	r := open(t, fsys)
	bad := small
	bad.TextFields = []string{"title", "title"} // refused after the directory was made
	if _, err := r.Create("docs", bad); !errors.Is(err, collection.ErrInvalid) {
		t.Fatalf("create with a text field listed twice: got %v, want ErrInvalid", err)
	}
	if got := entries(t, fsys); len(got) != 0 {
		t.Fatalf("the failed create left %v in the data dir", got)
	}
	if _, err := r.Get("docs"); !errors.Is(err, ErrUnknownCollection) {
		t.Fatalf("get after the failed create: %v", err)
	}
	mustCreate(t, r, "docs") // the name is free
}

// Every single failed operation of a create must leave either the whole
// collection (and a nil error) or nothing at all, and the name usable.
func TestCreateThatFailsAtAnyStepLeavesNoDirectory(t *testing.T) {
	racetest.AnswersOnly(t)
	counter := errorfs.New(memfs.New(), errorfs.Rule{})
	r := open(t, counter)
	before := counter.Count(errorfs.OpAny)
	mustCreate(t, r, "docs")
	steps := counter.Count(errorfs.OpAny) - before
	for n := 1; n <= steps; n++ {
		fsys := errorfs.New(memfs.New(), errorfs.Rule{})
		r := open(t, fsys)
		fsys.SetRule(errorfs.Rule{Op: errorfs.OpAny, N: fsys.Count(errorfs.OpAny) + n})
		_, err := r.Create("docs", small)
		got := entries(t, fsys)
		if err == nil {
			if !slices.Equal(got, []string{"docs"}) {
				t.Fatalf("step %d: create succeeded and left %v", n, got)
			}
			continue
		}
		if len(got) != 0 {
			t.Fatalf("step %d: create failed (%v) and left %v", n, err, got)
		}
		fsys.SetRule(errorfs.Rule{})
		mustCreate(t, r, "docs")
	}
}

// eachPowerLoss runs setup and then op on a fresh memfs, with the process
// dying (errorfs Crash) at each of op's filesystem operations in turn and
// also after op, and then the power failing with each prefix of the
// operations not yet synced kept; check gets a registry opened on each
// result, and acked: whether op had returned nil (the answer the client
// got, which must hold whatever the power loss kept).
func eachPowerLoss(t *testing.T, setup func(t *testing.T, r *Registry), op func(r *Registry) error,
	check func(t *testing.T, r *Registry, crashed *memfs.FS, acked bool, at string)) {
	t.Helper()
	run := func(n int) (*memfs.FS, int, bool) {
		mem := memfs.New()
		fsys := errorfs.New(mem, errorfs.Rule{})
		r, err := Open(data, options(fsys))
		if err != nil {
			t.Fatal(err)
		}
		setup(t, r)
		before := fsys.Count(errorfs.OpAny)
		if n > 0 {
			fsys.SetRule(errorfs.Rule{Op: errorfs.OpAny, N: before + n, Crash: true})
		}
		err = op(r)
		steps := fsys.Count(errorfs.OpAny) - before
		r.Close()
		return mem, steps, err == nil
	}
	_, steps, _ := run(0)
	for n := 1; n <= steps+1; n++ { // steps+1: op finished, then the power failed
		mem, _, acked := run(n)
		for k := 0; k <= len(mem.Pending()); k++ {
			crashed := mem.CrashClone(memfs.KeepPrefix(k))
			r, err := Open(data, options(crashed))
			at := fmt.Sprintf("died at step %d of %d, %d of %d pending operations kept", n, steps, k, len(mem.Pending()))
			if err != nil {
				t.Fatalf("%s: open: %v", at, err)
			}
			check(t, r, crashed, acked, at)
			r.Close()
		}
	}
}

func TestCreateSurvivesPowerLossAtEveryStep(t *testing.T) {
	racetest.AnswersOnly(t)
	eachPowerLoss(t, func(*testing.T, *Registry) {}, func(r *Registry) error {
		_, err := r.Create("docs", small)
		return err
	}, func(t *testing.T, r *Registry, crashed *memfs.FS, acked bool, at string) {
		got := entries(t, crashed)
		if len(got) == 0 {
			if acked {
				t.Fatalf("%s: the acknowledged create is gone", at)
			}
			mustCreate(t, r, "docs")
			return
		}
		if !slices.Equal(got, []string{"docs"}) {
			t.Fatalf("%s: data dir holds %v", at, got)
		}
		if _, err := r.Get("docs"); err != nil {
			t.Fatalf("%s: the collection is there but does not open: %v", at, err)
		}
	})
}

func TestDropSurvivesPowerLossAtEveryStep(t *testing.T) {
	eachPowerLoss(t, func(t *testing.T, r *Registry) {
		c := mustCreate(t, r, "docs")
		if err := upsert(c, 7); err != nil {
			t.Fatal(err)
		}
	}, func(r *Registry) error {
		return r.Drop("docs")
	}, func(t *testing.T, r *Registry, crashed *memfs.FS, acked bool, at string) {
		got := entries(t, crashed)
		if len(got) == 0 {
			mustCreate(t, r, "docs") // the name is usable
			return
		}
		if acked {
			t.Fatalf("%s: the acknowledged drop came undone: %v", at, got)
		}
		if !slices.Equal(got, []string{"docs"}) {
			t.Fatalf("%s: data dir holds %v", at, got)
		}
		c, err := r.Get("docs")
		if err != nil {
			t.Fatalf("%s: the drop did not happen, yet the collection does not open: %v", at, err)
		}
		if c.Len() != 1 {
			t.Fatalf("%s: the undropped collection holds %d points, want 1", at, c.Len())
		}
	})
}

func TestStartupFinishesAnInterruptedDrop(t *testing.T) {
	fsys := memfs.New()
	r, err := Open(data, options(fsys))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		mustCreate(t, r, name)
	}
	r.Close()
	// "a": the crash came after the rename to the tombstone name.
	if err := fsys.Rename(filepath.Join(data, "a"), filepath.Join(data, droppedPrefix+"a-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	// "b": an older drop (CURRENT removed first, then the files) killed
	// half-way through; this is what blocked a name for good.
	if err := fsys.Remove(filepath.Join(data, "b", "CURRENT")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.RemoveAll(filepath.Join(data, "b", "snapshots")); err != nil {
		t.Fatal(err)
	}
	// "c": a create killed before its rename.
	if err := fsys.Rename(filepath.Join(data, "c"), filepath.Join(data, creatingPrefix+"c-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	// "x": a directory strata did not write: it must be left alone.
	if err := fsys.MkdirAll(filepath.Join(data, "x", "photos")); err != nil {
		t.Fatal(err)
	}
	r = open(t, fsys)
	if got, want := entries(t, fsys), []string{"d", "x"}; !slices.Equal(got, want) {
		t.Fatalf("after start-up the data dir holds %v, want %v", got, want)
	}
	if got, want := r.Names(), []string{"d"}; !slices.Equal(got, want) {
		t.Fatalf("collections %v, want %v", got, want)
	}
	for _, name := range []string{"a", "b", "c"} {
		mustCreate(t, r, name)
	}
	if _, err := r.Create("x", small); !errors.Is(err, collection.ErrExists) || !strings.Contains(err.Error(), "not a collection") {
		t.Fatalf("create over a foreign directory: got %v, want ErrExists saying it is not a collection", err)
	}
}

func TestServerStartsWhenOneCollectionIsCorrupt(t *testing.T) {
	fsys := memfs.New()
	r, err := Open(data, options(fsys))
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, r, "bad")
	if err := upsert(mustCreate(t, r, "good"), 1); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Every snapshot damaged: the engine has nothing to fall back on.
	snapshots := filepath.Join(data, "bad", "snapshots")
	dirs, err := fsys.ReadDir(snapshots)
	if err != nil || len(dirs) == 0 {
		t.Fatalf("snapshots of bad: %v %v", dirs, err)
	}
	for _, d := range dirs {
		files, _ := fsys.ReadDir(filepath.Join(snapshots, d))
		for _, f := range files {
			if err := fsys.Truncate(filepath.Join(snapshots, d, f), 0); err != nil {
				t.Fatal(err)
			}
		}
	}

	r = open(t, fsys)
	if c, err := r.Get("good"); err != nil || c.Len() != 1 {
		t.Fatalf("the healthy collection: %v", err)
	}
	_, err = r.Get("bad")
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, collection.ErrFailed) {
		t.Fatalf("get of the corrupt collection: got %v, want ErrUnavailable", err)
	}
	st, err := r.Status("bad")
	if err != nil || st.State != StateFailed || st.Error == "" || st.Collection != nil {
		t.Fatalf("status of the corrupt collection: %+v, %v", st, err)
	}
	if got := r.Names(); !slices.Equal(got, []string{"bad", "good"}) {
		t.Fatalf("names %v", got)
	}
	// It can be dropped, which frees the name.
	if err := r.Drop("bad"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, r, "bad")
}

func TestFailedCollectionReopensAfterSpaceIsFreed(t *testing.T) {
	fsys := errorfs.New(memfs.New(), errorfs.Rule{})
	ticks := make(chan time.Time)
	opts := options(fsys)
	opts.Ticks = ticks
	r, err := Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := mustCreate(t, r, "docs")
	if err := upsert(c, 1); err != nil {
		t.Fatal(err)
	}
	full := errorfs.Rule{Op: errorfs.OpWrite, N: fsys.Count(errorfs.OpWrite) + 1, Persist: true, Err: syscall.ENOSPC}
	fsys.SetRule(full)
	if err := upsert(c, 2); !errors.Is(err, collection.ErrFailed) && !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("upsert on a full disk: got %v", err)
	}
	if err := upsert(c, 3); !errors.Is(err, collection.ErrFailed) {
		t.Fatalf("upsert after the failure: got %v, want ErrFailed", err)
	}
	if st, _ := r.Status("docs"); st.State != StateFailed {
		t.Fatalf("state after the failure: %+v", st)
	}
	// tick sends a tick and waits until the registry has acted on it: the
	// loop takes the next tick only once it is done with the last.
	at := time.Unix(1e9, 0)
	tick := func() {
		at = at.Add(time.Hour) // past any backoff
		ticks <- at
		ticks <- at
	}
	tick() // still full: not re-opened, so that reads go on
	if got := mustGet(t, r, "docs"); got != c {
		t.Fatal("re-opened while the disk was still full")
	}
	if found, _, _, err := c.Get(collection.IntIDs([]uint64{1}), false); err != nil || len(found) != 1 {
		t.Fatalf("a read while the disk is full: %v %v", found, err)
	}
	if got := entries(t, fsys); !slices.Equal(got, []string{"docs"}) {
		t.Fatalf("the probe left %v", got)
	}
	fsys.SetRule(errorfs.Rule{}) // space freed
	tick()
	c = mustGet(t, r, "docs")
	if err := upsert(c, 5); err != nil {
		t.Fatalf("upsert after space was freed and the collection re-opened: %v", err)
	}
	st, _ := r.Status("docs")
	if st.State != StateReady || st.Reopens < 1 {
		t.Fatalf("status after recovery: %+v", st)
	}
	if found, _, _, err := c.Get(collection.IntIDs([]uint64{1}), false); err != nil || len(found) != 1 {
		t.Fatalf("the write acknowledged before the failure is gone: %v %v", found, err)
	}
}

func mustGet(t *testing.T, r *Registry, name string) *collection.Collection {
	t.Helper()
	c, err := r.Get(name)
	if err != nil {
		t.Fatalf("get %q: %v", name, err)
	}
	return c
}

func TestLockedCollectionIsRetriedWithBackoff(t *testing.T) {
	fsys := memfs.New()
	r, err := Open(data, options(fsys))
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, r, "docs")
	r.Close()
	// Another process holds it.
	lock, err := collection.LockDir(fsys, filepath.Join(data, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1e9, 0)
	opts := options(fsys)
	opts.Now = func() time.Time { return t0 }
	r, err = Open(data, opts)
	if err != nil {
		t.Fatalf("a locked collection stopped the registry from opening: %v", err)
	}
	defer r.Close()
	st, _ := r.Status("docs")
	if st.State != StateFailed || !st.NextRetry.Equal(t0.Add(time.Second)) {
		t.Fatalf("status of the locked collection: %+v", st)
	}
	// Its drop must not delete what the other process has open.
	if err := r.Drop("docs"); !errors.Is(err, collection.ErrLocked) {
		t.Fatalf("drop of a collection locked elsewhere: got %v, want ErrLocked", err)
	}
	if !collection.Exists(fsys, filepath.Join(data, "docs")) {
		t.Fatal("the failed drop removed the collection")
	}
	at := t0.Add(time.Second)
	r.RetryDue(at.Add(-time.Millisecond)) // not due
	if st2, _ := r.Status("docs"); st2.Attempts != st.Attempts+1 {
		// The failed drop re-opened it once; an early tick must not.
		t.Fatalf("attempts %d after an early tick, want %d", st2.Attempts, st.Attempts+1)
	}
	st, _ = r.Status("docs")
	r.RetryDue(st.NextRetry) // due, and still locked: the wait doubles
	st2, _ := r.Status("docs")
	if got, want := st2.NextRetry.Sub(st.NextRetry), 2*st.NextRetry.Sub(t0); st2.State != StateFailed || st2.Attempts != st.Attempts+1 {
		t.Fatalf("after a failed retry: %+v (wait %v, want about %v)", st2, got, want)
	}
	if st2.NextRetry.Sub(st.NextRetry) <= time.Second {
		t.Fatalf("the backoff did not grow: retried at %v, next at %v", st.NextRetry, st2.NextRetry)
	}
	lock.Close()
	r.RetryDue(st2.NextRetry)
	if _, err := r.Get("docs"); err != nil {
		t.Fatalf("after the lock was released and the retry was due: %v", err)
	}
	// Healthy through its backoff: the attempts are forgotten.
	r.RetryDue(st2.NextRetry.Add(time.Hour))
	if st, _ := r.Status("docs"); st.State != StateReady || st.Attempts != 0 {
		t.Fatalf("after staying healthy: %+v", st)
	}
}

func TestReopenRecoversAFailedCollectionAtOnce(t *testing.T) {
	fsys := errorfs.New(memfs.New(), errorfs.Rule{})
	r := open(t, fsys)
	c := mustCreate(t, r, "docs")
	if err := upsert(c, 1); err != nil {
		t.Fatal(err)
	}
	fsys.SetRule(errorfs.Rule{Op: errorfs.OpSync, N: fsys.Count(errorfs.OpSync) + 1})
	if err := upsert(c, 2); err == nil {
		t.Fatal("upsert with a failed fsync succeeded")
	}
	if err := upsert(c, 3); !errors.Is(err, collection.ErrFailed) {
		t.Fatalf("upsert after a failed fsync: %v", err)
	}
	c, err := r.Reopen("docs")
	if err != nil {
		t.Fatal(err)
	}
	if err := upsert(c, 3); err != nil {
		t.Fatalf("upsert after Reopen: %v", err)
	}
	if _, err := r.Reopen("nope"); !errors.Is(err, ErrUnknownCollection) {
		t.Fatalf("reopen of an unknown name: %v", err)
	}
}

func TestDropForgetsTheNameAndFreesIt(t *testing.T) {
	fsys := memfs.New()
	var forgotten []string
	opts := options(fsys)
	opts.Forget = func(name string) { forgotten = append(forgotten, name) }
	r, err := Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := mustCreate(t, r, "docs")
	if err := r.Drop("docs"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forgotten, []string{"docs"}) {
		t.Fatalf("Forget called with %v", forgotten)
	}
	if err := upsert(c, 1); !errors.Is(err, collection.ErrClosed) {
		t.Fatalf("a request holding the dropped collection: %v", err)
	}
	if got := entries(t, fsys); len(got) != 0 {
		t.Fatalf("the drop left %v", got)
	}
	if err := r.Drop("docs"); !errors.Is(err, ErrUnknownCollection) {
		t.Fatalf("second drop: %v", err)
	}
	if err := r.Drop("../etc"); !errors.Is(err, ErrBadName) {
		t.Fatalf("drop of a bad name: %v", err)
	}
	mustCreate(t, r, "docs")
}

// A failed snapshot write left the collection refusing writes until a
// restart, though CURRENT was never touched and the log was intact.
func TestFailedCheckpointIsRecoveredByReopen(t *testing.T) {
	fsys := errorfs.New(memfs.New(), errorfs.Rule{})
	r := open(t, fsys)
	c := mustCreate(t, r, "docs")
	for id := range uint64(3) {
		if err := upsert(c, id); err != nil {
			t.Fatal(err)
		}
	}
	fsys.SetRule(errorfs.Rule{Op: errorfs.OpCreate, N: fsys.Count(errorfs.OpCreate) + 1})
	if err := c.Checkpoint(); err == nil {
		t.Fatal("checkpoint with a failed create succeeded")
	}
	if err := upsert(c, 3); !errors.Is(err, collection.ErrFailed) {
		t.Skipf("the engine no longer fails a collection on a failed checkpoint (%v): nothing to recover", err)
	}
	r.RetryDue(time.Now().Add(time.Hour))
	c = mustGet(t, r, "docs")
	if err := upsert(c, 3); err != nil {
		t.Fatalf("upsert after the re-open: %v", err)
	}
	if c.Len() != 4 {
		t.Fatalf("%d points after the re-open, want 4", c.Len())
	}
}

// Requests keep getting a collection, or a clean error, while it is
// re-opened, dropped and created again beside them (run with -race).
func TestRequestsDuringReopenAndDropGetACollectionOrAnError(t *testing.T) {
	r := open(t, memfs.New())
	mustCreate(t, r, "docs")
	stop := make(chan struct{})
	done := make(chan error)
	for range 2 {
		go func() {
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				c, err := r.Get("docs")
				if err != nil {
					if !errors.Is(err, ErrUnknownCollection) && !errors.Is(err, ErrUnavailable) {
						done <- err
						return
					}
					continue
				}
				if err := upsert(c, 1); err != nil && !errors.Is(err, collection.ErrClosed) {
					done <- err
					return
				}
				r.List()
			}
		}()
	}
	for range 20 {
		if _, err := r.Reopen("docs"); err != nil {
			t.Fatal(err)
		}
		r.RetryDue(time.Now())
		if err := r.Drop("docs"); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, r, "docs")
	}
	close(stop)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("a request beside the re-opens and drops: %v", err)
		}
	}
}
