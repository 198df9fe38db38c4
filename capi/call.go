package main

// #include "strata.h"
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"unicode/utf8"
	"unsafe"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/flat"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/indexfile"
)

var (
	errBadHandle = errors.New("strata: invalid handle (index closed or never created)")
	errCorrupt   = errors.New("strata: integrity check failed")
	errInvalid   = fmt.Errorf("strata: %w", batch.ErrInvalid)
)

// call runs fn for the export named op and converts its outcome to a status:
// STRATA_OK, the class of the returned error, or STRATA_ERR_INTERNAL for a
// panic. Messages go to the caller's err buffer. Every export goes through
// here so that no panic ever unwinds into C.
func call(op string, errBuf *C.char, errLen C.size_t, fn func() error) (status C.int) {
	defer func() {
		if r := recover(); r != nil {
			status = C.STRATA_ERR_INTERNAL
			writeString(errBuf, errLen, fmt.Sprintf("%s: internal error (please report): %v", op, r))
		}
	}()
	if err := fn(); err != nil {
		writeString(errBuf, errLen, err.Error())
		return classify(err)
	}
	return C.STRATA_OK
}

// classify maps an error to a status code. Engines mark bad input by
// wrapping batch.ErrInvalid; an error matching no sentinel below is
// unexpected and reported as internal.
func classify(err error) C.int {
	switch {
	case errors.Is(err, collection.ErrLocked):
		return C.STRATA_ERR_LOCKED
	case errors.Is(err, collection.ErrFailed):
		return C.STRATA_ERR_FAILED
	case errors.Is(err, collection.ErrExists):
		return C.STRATA_ERR_EXISTS
	case errors.Is(err, collection.ErrNotFound):
		return C.STRATA_ERR_NOT_FOUND
	case errors.Is(err, indexfile.ErrCorrupt):
		return C.STRATA_ERR_CORRUPT
	case errors.Is(err, errBadHandle):
		return C.STRATA_ERR_HANDLE
	case errors.Is(err, errCorrupt), errors.Is(err, errDamaged):
		return C.STRATA_ERR_CORRUPT
	case errors.Is(err, batch.ErrInvalid):
		return C.STRATA_ERR_INVALID
	case errors.Is(err, hnsw.ErrNotFound):
		return C.STRATA_ERR_NOT_FOUND
	case errors.Is(err, hnsw.ErrCorrupt), errors.Is(err, flat.ErrCorrupt):
		return C.STRATA_ERR_CORRUPT
	case errors.Is(err, errNotHNSW):
		return C.STRATA_ERR_TYPE
	case errors.Is(err, fs.ErrNotExist):
		return C.STRATA_ERR_NO_FILE
	}
	if _, ok := errors.AsType[*fs.PathError](err); ok {
		return C.STRATA_ERR_IO
	}
	return C.STRATA_ERR_INTERNAL
}

// writeString copies s, NUL-terminated and cut at a rune boundary if it does
// not fit, into the caller's buffer of n bytes.
func writeString(buf *C.char, n C.size_t, s string) {
	if buf == nil || n == 0 {
		return
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	dst[truncate(dst, s)] = 0
}

// truncate copies the longest prefix of s that is whole runes and leaves a
// byte for the terminator, returning its length.
func truncate(dst []byte, s string) int {
	if len(s) > len(dst)-1 {
		cut := len(dst) - 1
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return copy(dst, s)
}

// invalidf returns an error that classify classifies as STRATA_ERR_INVALID.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errInvalid}, args...)...)
}
