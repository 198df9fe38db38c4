package collection

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
)

// TestCreateRefusesEfConstructionTheFileCannotHold prevents issue 20 item
// 1: ef_construction 2^32 was accepted, stored as 0 in index.hnsw, and the
// snapshot refused as corrupt on the next open, so a server holding it
// could no longer start.
func TestCreateRefusesEfConstructionTheFileCannotHold(t *testing.T) {
	for _, efc := range []int{1 << 32, 1<<32 + 200, limits.MaxEfConstruction + 1, -1} {
		dir := filepath.Join(t.TempDir(), "c")
		opts := testOptions()
		opts.EfConstruction = efc
		c, err := Create(dir, opts, Tuning{})
		if err == nil {
			c.Close()
			t.Fatalf("ef_construction %d: created", efc)
		}
		if errkind.Of(err) != errkind.Invalid || !strings.Contains(err.Error(), "ef_construction") {
			t.Errorf("ef_construction %d: %v (kind %v), want an invalid argument naming ef_construction", efc, err, errkind.Of(err))
		}
		if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("ef_construction %d: refused create left %s behind", efc, dir)
		}
	}
	// The largest accepted value survives a reopen whole.
	dir := filepath.Join(t.TempDir(), "c")
	opts := testOptions()
	opts.EfConstruction = limits.MaxEfConstruction
	c, err := Create(dir, opts, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Upsert(IntIDs([]uint64{1}), make([]float32, testDim), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	if got := c.Options().EfConstruction; got != limits.MaxEfConstruction {
		t.Fatalf("reopened with ef_construction %d, want %d", got, limits.MaxEfConstruction)
	}
}

// TestCreateRefusesParametersOutOfRangeBeforeTouchingTheDisk prevents a
// door from having to re-check a bound: the engine refuses every one with
// an invalid argument that names it, and leaves no directory.
func TestCreateRefusesParametersOutOfRangeBeforeTouchingTheDisk(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Options)
	}{
		{"dim", func(o *Options) { o.Dim = 0 }},
		{"dim", func(o *Options) { o.Dim = limits.MaxDim + 1 }},
		{"M", func(o *Options) { o.M = 1 }},
		{"M", func(o *Options) { o.M = limits.MaxM + 1 }},
		{"M", func(o *Options) { o.M = 1 << 16 }},
		{"analyzer", func(o *Options) { o.TextAnalyzer = "klingon" }},
		{"text field", func(o *Options) { o.TextFields = []string{""} }},
		{"fsync", func(o *Options) { o.Fsync = 7 }},
	} {
		dir := filepath.Join(t.TempDir(), "c")
		opts := testOptions()
		c.edit(&opts)
		col, err := Create(dir, opts, Tuning{})
		if err == nil {
			col.Close()
			t.Errorf("%s: %+v created", c.name, opts)
			continue
		}
		if errkind.Of(err) != errkind.Invalid || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: %v (kind %v), want an invalid argument naming %s", c.name, err, errkind.Of(err), c.name)
		}
		if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("%s: refused create left %s behind", c.name, dir)
		}
	}
}

// TestQueriesRefuseEfAndKOutOfRange prevents the doors' disagreement on
// ef (Python allowed 2^24, the server 2^16, the Qdrant door anything):
// the engine bounds both.
func TestQueriesRefuseEfAndKOutOfRange(t *testing.T) {
	c := mustCreate(t, filepath.Join(t.TempDir(), "c"), Tuning{})
	defer c.Close()
	q := make([]float32, testDim)
	for _, bad := range []struct{ k, ef int }{{0, 0}, {limits.MaxK + 1, 0}, {10, limits.MaxEf + 1}} {
		ids, dists := make([]ID, max(bad.k, 0)), make([]float32, max(bad.k, 0))
		_, err := c.Query(q, bad.k, bad.ef, nil, 1, ids, dists)
		if errkind.Of(err) != errkind.Invalid {
			t.Errorf("Query k=%d ef=%d: %v, want an invalid argument", bad.k, bad.ef, err)
		}
	}
	if _, err := c.QueryText(nil, TextQuery{Text: "x"}, limits.MaxK+1, 0, nil, 1, text.Fusion{}); errkind.Of(err) != errkind.Invalid {
		t.Errorf("QueryText k=2^20+1: %v, want an invalid argument", err)
	}
	if _, err := c.ScanIDs(nil, ID{}, false, limits.MaxScan+1); errkind.Of(err) != errkind.Invalid {
		t.Errorf("ScanIDs limit=2^30+1: %v, want an invalid argument", err)
	}
}

// TestCallsAfterCloseFailWithClosed prevents Query, Get, Count (and the
// rest) from answering from a closed collection, as they did: only the
// Python layer refused them, the server and the C ABI did not.
func TestCallsAfterCloseFailWithClosed(t *testing.T) {
	opts := testOptions()
	opts.TextFields = []string{"title"}
	c, err := Create(filepath.Join(t.TempDir(), "c"), opts, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	vec := make([]float32, testDim)
	if err := c.Upsert(IntIDs([]uint64{1}), vec, []meta.Document{mustDoc(t, []byte(`{"title": "a b"}`))}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := meta.ParseFilter([]byte(`{"title": "a b"}`))
	if err != nil {
		t.Fatal(err)
	}
	ids, dists := make([]ID, 1), make([]float32, 1)
	for name, call := range map[string]func() error{
		"Upsert":         func() error { return c.Upsert(IntIDs([]uint64{2}), vec, nil) },
		"Upsert(empty)":  func() error { return c.Upsert(nil, nil, nil) },
		"UpdateMetadata": func() error { _, err := c.UpdateMetadata(IntIDs([]uint64{1}), []meta.Document{{}}); return err },
		"Delete":         func() error { _, err := c.Delete(IntIDs([]uint64{1})); return err },
		"DeleteWhere":    func() error { _, err := c.DeleteWhere(f); return err },
		"Query":          func() error { _, err := c.Query(vec, 1, 0, nil, 1, ids, dists); return err },
		"QueryAmong":     func() error { _, err := c.QueryAmong(vec, 1, 0, nil, IntIDs([]uint64{1}), 1, ids, dists); return err },
		"QueryText": func() error {
			_, err := c.QueryText(nil, TextQuery{Text: "a"}, 1, 0, nil, 1, text.Fusion{})
			return err
		},
		"Get":            func() error { _, _, _, err := c.Get(IntIDs([]uint64{1}), true); return err },
		"Count":          func() error { _, err := c.Count(nil); return err },
		"Count(filter)":  func() error { _, err := c.Count(f); return err },
		"ScanIDs":        func() error { _, err := c.ScanIDs(nil, ID{}, false, 10); return err },
		"Documents":      func() error { _, err := c.Documents(IntIDs([]uint64{1})); return err },
		"CheckIntegrity": c.CheckIntegrity,
		"Checkpoint":     c.Checkpoint,
		"CreateTextIndex": func() error {
			return c.CreateTextIndex("body", "")
		},
	} {
		err := call()
		if !errors.Is(err, ErrClosed) || errkind.Of(err) != errkind.Closed {
			t.Errorf("%s after Close: %v (kind %v), want ErrClosed", name, err, errkind.Of(err))
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCreateOnAnUnwritableDiskNamesTheCause prevents issue 20 item 7: a
// create on a full disk, at the fd limit or on a read-only or forbidden
// directory was an unclassified error, answered 500 (a bug) by the server.
func TestCreateOnAnUnwritableDiskNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		op    errorfs.Op
		errno syscall.Errno
		want  errkind.Kind
	}{
		{errorfs.OpWrite, syscall.ENOSPC, errkind.NoSpace},
		{errorfs.OpSync, syscall.EDQUOT, errkind.NoSpace},
		{errorfs.OpCreate, syscall.EMFILE, errkind.Exhausted},
		{errorfs.OpMkdir, syscall.EROFS, errkind.ReadOnly},
		{errorfs.OpMkdir, syscall.EACCES, errkind.Permission},
	} {
		fsys := errorfs.New(vfs.Default, errorfs.Rule{Op: c.op, N: 1, Err: c.errno})
		dir := filepath.Join(t.TempDir(), "c")
		col, err := Create(dir, testOptions(), Tuning{FS: fsys})
		if err == nil {
			col.Close()
			t.Fatalf("%v on %v: created", c.errno, c.op)
		}
		if got := errkind.Of(err); got != c.want || !strings.Contains(err.Error(), c.errno.Error()) {
			t.Errorf("%v on %v: %v (kind %v), want kind %v naming %q", c.errno, c.op, err, got, c.want, c.errno.Error())
		}
	}
}
