package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/flat"
	"github.com/strata-db/strata/go/limits"
)

// The compiler checks each strata.h prototype against its //export, but not
// that every export is declared, or every declaration exported.
func TestHeaderDeclaresExactlyTheExports(t *testing.T) {
	header, err := os.ReadFile("strata.h")
	if err != nil {
		t.Fatal(err)
	}
	declared := regexp.MustCompile(`(?m)^(?:int|void) (strata_\w+)\(`).FindAllStringSubmatch(string(header), -1)
	var names []string
	for _, d := range declared {
		names = append(names, d[1])
	}
	var exported []string
	files, _ := os.ReadDir(".")
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^//export (\w+)$`).FindAllStringSubmatch(string(src), -1) {
			exported = append(exported, m[1])
		}
	}
	slices.Sort(names)
	slices.Sort(exported)
	if len(names) == 0 || !slices.Equal(names, exported) {
		t.Fatalf("strata.h declares %v\nbut capi exports %v", names, exported)
	}
}

func TestStaleHandleIsAnErrorNotAPanic(t *testing.T) {
	x, err := flat.New(flat.Config{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandle(x)
	if got, err := lookup(h); err != nil || got != x {
		t.Fatalf("lookup(live handle) = %v, %v", got, err)
	}
	if err := freeHandle(h); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		err  error
	}{
		{"freed lookup", second(lookup(h))},
		{"double free", freeHandle(h)},
		{"zero handle", second(lookup(0))},
		{"forged handle", second(lookup(1 << 40))},
	} {
		if !errors.Is(bad.err, errBadHandle) {
			t.Errorf("%s: got %v, want errBadHandle", bad.name, bad.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestTruncateKeepsWholeRunesAndRoomForNUL(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4, 5, 6, 64} {
		dst := make([]byte, size)
		n := truncate(dst, "héllo wörld")
		if n > size-1 || !utf8.Valid(dst[:n]) || !strings.HasPrefix("héllo wörld", string(dst[:n])) {
			t.Errorf("size %d: wrote %q", size, dst[:n])
		}
	}
}

func TestClassify(t *testing.T) {
	_, flatErr := flat.New(flat.Config{Dim: 0})
	for _, c := range []struct {
		err  error
		want int
	}{
		{errBadHandle, 4},
		{invalidf("k must be positive"), 1},
		{flatErr, 1},
		{errors.Join(errCorrupt, errors.New("self link")), 5},
		{errors.New("something unexpected"), 6},
		{fmt.Errorf("collection: create: %w", &fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}), 12},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EMFILE}, 13},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}, 14},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, 15},
		{collection.ErrClosed, 4},
	} {
		if got := int(classify(c.err)); got != c.want {
			t.Errorf("classify(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestEveryKindHasOneStatus prevents a kind added to errkind from falling
// through to STRATA_ERR_INTERNAL, and two kinds other than Invalid and
// TooLarge (one C status for both) from sharing a status.
func TestEveryKindHasOneStatus(t *testing.T) {
	const internal = 6 // STRATA_ERR_INTERNAL (a test cannot use cgo)
	seen := map[int]errkind.Kind{}
	for _, k := range errkind.All() {
		got := int(classify(errkind.New(k, "test")))
		if got == internal && k != errkind.Internal {
			t.Errorf("kind %v maps to STRATA_ERR_INTERNAL", k)
		}
		if prev, dup := seen[got]; dup && !(prev == errkind.Invalid && k == errkind.TooLarge) {
			t.Errorf("kinds %v and %v both map to status %d", prev, k, got)
		}
		seen[got] = k
	}
}

// TestHeaderMaxKIsTheEngines prevents the one limit the header exports
// from drifting from package limits, which owns it.
func TestHeaderMaxKIsTheEngines(t *testing.T) {
	header, err := os.ReadFile("strata.h")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`STRATA_MAX_K = (\d+)`).FindSubmatch(header)
	if m == nil || string(m[1]) != fmt.Sprint(limits.MaxK) {
		t.Fatalf("strata.h: STRATA_MAX_K = %s, limits.MaxK = %d", m, limits.MaxK)
	}
}
