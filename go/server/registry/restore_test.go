package registry

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/vfs/errorfs"
	"github.com/strata-db/strata/go/vfs/memfs"
)

// archiveOf is an archive of a collection holding the points ids.
func archiveOf(t *testing.T, ids ...uint64) []byte {
	t.Helper()
	r := open(t, memfs.New())
	c := mustCreate(t, r, "src")
	for _, id := range ids {
		if err := upsert(c, id); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := c.Export(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// holds checks that collection docs is served, holding the points of
// the old collection (7) or of the restored one (1 and 2), and which.
func holds(t *testing.T, r *Registry, at string) (restored bool) {
	t.Helper()
	c, err := r.Get("docs")
	if err != nil {
		t.Fatalf("%s: the collection is gone: %v", at, err)
	}
	switch c.Len() {
	case 1:
		return false
	case 2:
		return true
	}
	t.Fatalf("%s: the collection holds %d points, want the old 1 or the restored 2", at, c.Len())
	return false
}

// TestRestoreOverACollectionSurvivesPowerLossAtEveryStep prevents the
// window where a restore over a collection had dropped the old one and
// not yet placed the new: after a power loss at any step there is the old
// collection or the restored one (the restored one once acknowledged),
// and no leftover.
func TestRestoreOverACollectionSurvivesPowerLossAtEveryStep(t *testing.T) {
	racetest.AnswersOnly(t)
	archive := archiveOf(t, 1, 2)
	eachPowerLoss(t, func(t *testing.T, r *Registry) {
		if err := upsert(mustCreate(t, r, "docs"), 7); err != nil {
			t.Fatal(err)
		}
	}, func(r *Registry) error {
		_, err := r.Restore("docs", bytes.NewReader(archive), true)
		return err
	}, func(t *testing.T, r *Registry, crashed *memfs.FS, acked bool, at string) {
		if got := entries(t, crashed); !slices.Equal(got, []string{"docs"}) {
			t.Fatalf("%s: data dir holds %v", at, got)
		}
		if restored := holds(t, r, at); acked && !restored {
			t.Fatalf("%s: the acknowledged restore came undone", at)
		}
	})
}

// TestRestoreOverACollectionFailingAtAnyStepKeepsOne: a restore over a
// collection that fails at any single filesystem operation leaves the
// old collection served (or, if it answered nil, the new one), nothing
// else in the data dir, and the name restorable again.
func TestRestoreOverACollectionFailingAtAnyStepKeepsOne(t *testing.T) {
	racetest.AnswersOnly(t)
	archive := archiveOf(t, 1, 2)
	setup := func(t *testing.T) (*Registry, *errorfs.FS) {
		fsys := errorfs.New(memfs.New(), errorfs.Rule{})
		r := open(t, fsys)
		if err := upsert(mustCreate(t, r, "docs"), 7); err != nil {
			t.Fatal(err)
		}
		return r, fsys
	}
	r, counter := setup(t)
	before := counter.Count(errorfs.OpAny)
	if _, err := r.Restore("docs", bytes.NewReader(archive), true); err != nil {
		t.Fatal(err)
	}
	steps := counter.Count(errorfs.OpAny) - before
	for n := 1; n <= steps; n++ {
		r, fsys := setup(t)
		fsys.SetRule(errorfs.Rule{Op: errorfs.OpAny, N: fsys.Count(errorfs.OpAny) + n})
		_, err := r.Restore("docs", bytes.NewReader(archive), true)
		fsys.SetRule(errorfs.Rule{})
		at := fmt.Sprintf("failed at step %d", n)
		got := entries(t, fsys)
		if err == nil {
			// The set-aside copy's removal failed: the next start-up
			// removes it (TestStartupSettlesAnInterruptedRestore).
			got = slices.DeleteFunc(got, func(e string) bool { return strings.HasPrefix(e, replacedPrefix) })
		}
		if !slices.Equal(got, []string{"docs"}) {
			t.Fatalf("step %d (%v): data dir holds %v", n, err, got)
		}
		if restored := holds(t, r, at); restored != (err == nil) {
			t.Fatalf("step %d: restore answered %v, and the collection restored is %v", n, err, restored)
		}
		if _, err := r.Restore("docs", bytes.NewReader(archive), true); err != nil {
			t.Fatalf("step %d: restoring again: %v", n, err)
		}
	}
}

// TestRestoreHoldsTheNameWhileItSwitches guards the hold that closes the
// window of a create between a restore's drop of the old collection and
// its rename of the new one (which then failed, the old one gone): while
// the restored collection takes the old one's place the name stays taken,
// so a create of it fails.
func TestRestoreHoldsTheNameWhileItSwitches(t *testing.T) {
	archive := archiveOf(t, 1, 2)
	var r *Registry
	var during error
	opts := options(memfs.New())
	opts.Forget = func(name string) { _, during = r.Create(name, small) }
	r, err := Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := upsert(mustCreate(t, r, "docs"), 7); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore("docs", bytes.NewReader(archive), true); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(during, collection.ErrExists) {
		t.Fatalf("a create during the switch: %v, want ErrExists", during)
	}
	if !holds(t, r, "after the restore") {
		t.Fatal("the restore did not take the old collection's place")
	}
}

// TestStartupSettlesAnInterruptedRestore: a collection set aside by a
// restore that a crash interrupted is renamed back when its name is
// free, and removed when the restored collection took the name.
func TestStartupSettlesAnInterruptedRestore(t *testing.T) {
	fsys := memfs.New()
	r := open(t, fsys)
	for _, name := range []string{"a", "b"} {
		if err := upsert(mustCreate(t, r, name), 7); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	// "a": set aside, the restored one not yet renamed into place.
	if err := fsys.Rename(data+"/a", data+"/"+replacedPrefix+"a-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	// "b": set aside and replaced (here by a copy of itself: "c").
	r = open(t, fsys)
	mustCreate(t, r, "c")
	r.Close()
	if err := fsys.Rename(data+"/b", data+"/"+replacedPrefix+"b-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(data+"/c", data+"/b"); err != nil {
		t.Fatal(err)
	}
	r = open(t, fsys)
	if got, want := entries(t, fsys), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("after start-up the data dir holds %v, want %v", got, want)
	}
	if c, err := r.Get("a"); err != nil || c.Len() != 1 {
		t.Fatalf("the set-aside collection a: %v", err)
	}
	if c, err := r.Get("b"); err != nil || c.Len() != 0 {
		t.Fatalf("the replacing collection b: %v", err)
	}
}
