package main

// #include "strata.h"
import "C"

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// errBadHandle has kind Closed: a freed handle is the common case.
	errBadHandle = errkind.New(errkind.Closed, "strata: invalid handle (index closed or never created)")
	errCorrupt   = errkind.New(errkind.Corrupt, "strata: integrity check failed")
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

// classify maps an error to its status code: one case per errkind.Kind
// (see package errkind for the rules that give an error its kind). The
// table test in capi_test.go checks that every kind has a case here.
func classify(err error) C.int {
	switch errkind.Of(err) {
	case errkind.Invalid, errkind.TooLarge:
		return C.STRATA_ERR_INVALID
	case errkind.Type:
		return C.STRATA_ERR_TYPE
	case errkind.NotFound:
		return C.STRATA_ERR_NOT_FOUND
	case errkind.Closed:
		return C.STRATA_ERR_HANDLE
	case errkind.Corrupt:
		return C.STRATA_ERR_CORRUPT
	case errkind.IO:
		return C.STRATA_ERR_IO
	case errkind.NoFile:
		return C.STRATA_ERR_NO_FILE
	case errkind.Locked:
		return C.STRATA_ERR_LOCKED
	case errkind.Failed:
		return C.STRATA_ERR_FAILED
	case errkind.Exists:
		return C.STRATA_ERR_EXISTS
	case errkind.NoSpace:
		return C.STRATA_ERR_NO_SPACE
	case errkind.Exhausted:
		return C.STRATA_ERR_EXHAUSTED
	case errkind.ReadOnly:
		return C.STRATA_ERR_READ_ONLY
	case errkind.Permission:
		return C.STRATA_ERR_PERMISSION
	case errkind.Internal:
		return C.STRATA_ERR_INTERNAL
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
