package errkind_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/collection/wal"
	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/flat"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// TestNoSentinelHasTwoKinds prevents the bug of collection.ErrClosed
// wrapping the invalid-argument sentinel: a sentinel that matched two
// kinds made every door's answer depend on the order of its cases.
func TestNoSentinelHasTwoKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want errkind.Kind
	}{
		{"batch.ErrInvalid", batch.ErrInvalid, errkind.Invalid},
		{"collection.ErrInvalid", collection.ErrInvalid, errkind.Invalid},
		{"collection.ErrNotFound", collection.ErrNotFound, errkind.NotFound},
		{"collection.ErrExists", collection.ErrExists, errkind.Exists},
		{"collection.ErrCorrupt", collection.ErrCorrupt, errkind.Corrupt},
		{"collection.ErrFailed", collection.ErrFailed, errkind.Failed},
		{"collection.ErrClosed", collection.ErrClosed, errkind.Closed},
		{"collection.ErrLocked", collection.ErrLocked, errkind.Locked},
		{"hnsw.ErrInvalidArgument", hnsw.ErrInvalidArgument, errkind.Invalid},
		{"hnsw.ErrNotFound", hnsw.ErrNotFound, errkind.NotFound},
		{"hnsw.ErrCorrupt", hnsw.ErrCorrupt, errkind.Corrupt},
		{"hnsw.ErrFormat", hnsw.ErrFormat, errkind.Corrupt},
		{"flat.ErrConfig", flat.ErrConfig, errkind.Invalid},
		{"flat.ErrFull", flat.ErrFull, errkind.Invalid},
		{"flat.ErrCorrupt", flat.ErrCorrupt, errkind.Corrupt},
		{"indexfile.ErrCorrupt", indexfile.ErrCorrupt, errkind.Corrupt},
		{"indexfile.ErrVersion", indexfile.ErrVersion, errkind.Corrupt},
		{"indexfile.ErrInvalid", indexfile.ErrInvalid, errkind.Invalid},
		{"wal.ErrCorrupt", wal.ErrCorrupt, errkind.Corrupt},
		{"wal.ErrVersion", wal.ErrVersion, errkind.Corrupt},
		{"wal.ErrPoisoned", wal.ErrPoisoned, errkind.Failed},
		{"wal.ErrClosed", wal.ErrClosed, errkind.Closed},
		{"wal.ErrInvalid", wal.ErrInvalid, errkind.Invalid},
		{"meta.ErrInvalidDocument", meta.ErrInvalidDocument, errkind.Invalid},
		{"meta.ErrInvalidFilter", meta.ErrInvalidFilter, errkind.Invalid},
		{"meta.ErrCorrupt", meta.ErrCorrupt, errkind.Corrupt},
		{"text.ErrInvalid", text.ErrInvalid, errkind.Invalid},
		{"snapshot.ErrCorrupt", snapshot.ErrCorrupt, errkind.Corrupt},
		{"vfs.ErrLocked", vfs.ErrLocked, errkind.Locked},
	} {
		if got := errkind.Of(c.err); got != c.want {
			t.Errorf("%s: kind %v, want %v", c.name, got, c.want)
		}
		for _, k := range errkind.All() {
			if k != c.want && errors.Is(c.err, k) {
				t.Errorf("%s (kind %v) also matches kind %v", c.name, c.want, k)
			}
		}
	}
}

// TestOfClassifiesTheOperatingSystemsAnswer prevents a full disk, the fd
// limit, a read-only or forbidden directory from being answered as a bug
// (HTTP 500), which is what every door did with them before.
func TestOfClassifiesTheOperatingSystemsAnswer(t *testing.T) {
	path := func(errno error) error {
		return fmt.Errorf("collection: create /data/x: %w", &fs.PathError{Op: "write", Path: "/data/x/wal/1", Err: errno})
	}
	for _, c := range []struct {
		err  error
		want errkind.Kind
	}{
		{path(syscall.ENOSPC), errkind.NoSpace},
		{path(syscall.EDQUOT), errkind.NoSpace},
		{path(syscall.EMFILE), errkind.Exhausted},
		{path(syscall.ENFILE), errkind.Exhausted},
		{path(syscall.EROFS), errkind.ReadOnly},
		{path(syscall.EACCES), errkind.Permission},
		{path(syscall.EPERM), errkind.Permission},
		{path(syscall.ENOENT), errkind.NoFile},
		{path(syscall.EEXIST), errkind.Exists},
		{path(syscall.EIO), errkind.IO},
		{path(errors.New("something else")), errkind.IO},
		{fmt.Errorf("x: %w", fs.ErrNotExist), errkind.NoFile},
		{errors.New("unexplained"), errkind.Internal},
		{nil, errkind.Internal},
		// A sentinel beats the cause it carries: a collection that failed
		// on ENOSPC is a failed collection (reopen), not a full disk.
		{fmt.Errorf("%w: %w", collection.ErrFailed, path(syscall.ENOSPC)), errkind.Failed},
		{fmt.Errorf("%w: index file: %w", collection.ErrClosed, batch.ErrInvalid), errkind.Closed},
	} {
		if got := errkind.Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestEveryKindHasAName(t *testing.T) {
	seen := map[string]errkind.Kind{}
	for _, k := range errkind.All() {
		name := k.String()
		if name == "" || name == "unknown kind" {
			t.Errorf("kind %d has no name", k)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d are both %q", prev, k, name)
		}
		seen[name] = k
		if got := errkind.Of(errkind.New(k, "x")); got != k {
			t.Errorf("Of(New(%v)) = %v", k, got)
		}
	}
}
