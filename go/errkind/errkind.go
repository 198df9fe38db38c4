// Package errkind is strata's one error taxonomy: every error the engine
// returns has exactly one Kind, and every door (the C ABI, the native REST
// server, the Qdrant door, and through them Python and Ray) turns a Kind
// into its own status with one plain switch. No door inspects the engine's
// sentinels itself.
//
// # Kinds
//
//	Kind        meaning                                         C status               HTTP  Python
//	Internal    a bug: an error no rule below explains          STRATA_ERR_INTERNAL    500   RuntimeError
//	Invalid     bad input; nothing was written                  STRATA_ERR_INVALID     422*  ValueError
//	Type        an argument of the wrong kind (a flat index     STRATA_ERR_TYPE        422*  TypeError
//	            handle where an HNSW one is needed)
//	NotFound    an id that does not exist                       STRATA_ERR_NOT_FOUND   404   KeyError
//	NoFile      a file or directory that does not exist         STRATA_ERR_NO_FILE     404   FileNotFoundError
//	Exists      a collection (or file) that already exists      STRATA_ERR_EXISTS      409   FileExistsError
//	Closed      a call on a closed collection, index or handle  STRATA_ERR_HANDLE      404   ValueError
//	Locked      a collection open in this or another process    STRATA_ERR_LOCKED      409   LockedError
//	Failed      a collection that refuses writes after a        STRATA_ERR_FAILED      503   CollectionFailedError
//	            failed write, fsync or checkpoint
//	Corrupt     a damaged file or broken invariant              STRATA_ERR_CORRUPT     500   IntegrityError
//	TooLarge    a request over a size limit                     STRATA_ERR_INVALID     413   ValueError
//	NoSpace     ENOSPC, EDQUOT: the disk or quota is full       STRATA_ERR_NO_SPACE    507   OSError(ENOSPC)
//	Exhausted   EMFILE, ENFILE, ENOMEM: out of file             STRATA_ERR_EXHAUSTED   503   OSError(EMFILE)
//	            descriptors or memory
//	ReadOnly    EROFS: the file system is read-only             STRATA_ERR_READ_ONLY   503   OSError(EROFS)
//	Permission  EACCES, EPERM: the OS refused access            STRATA_ERR_PERMISSION  503   PermissionError
//	IO          any other error of the operating system         STRATA_ERR_IO          500   OSError
//
// (* the Qdrant door answers 400 where the native door answers 422, as
// Qdrant does.) The four resource kinds (NoSpace .. Permission) are the
// server's environment, not the caller's mistake and not a bug: an
// operator can fix them, so HTTP answers 507/503 with the OS's message.
//
// # How an error gets its kind
//
// A package declares its sentinels with New (or wraps a sentinel declared
// so, with fmt.Errorf("pkg: %w", ...), keeping its kind); no sentinel
// wraps a sentinel of another kind. Of walks the error's chain in the
// order of errors.As (depth first, first wrapped error first) and returns
// the kind of the first sentinel it meets; so an error that joins a
// sentinel with its cause, as fmt.Errorf("%w: %w", collection.ErrFailed,
// ioErr) does, has the sentinel's kind. An error with no sentinel in its
// chain is classified by the operating system's answer inside it
// (syscall.Errno, then fs.ErrNotExist / fs.ErrExist / fs.ErrPermission,
// then any *fs.PathError as IO), and otherwise is Internal.
//
// errors.Is(err, k) reports whether Of(err) would meet a sentinel of kind
// k: a Kind is an error value too.
package errkind

import (
	"errors"
	"io/fs"
	"syscall"
)

// Kind classifies an error. The zero Kind is Internal.
type Kind uint8

// The kinds; see the package doc for what each means and how each door
// answers it. The values are not part of any ABI.
const (
	Internal Kind = iota
	Invalid
	Type
	NotFound
	NoFile
	Exists
	Closed
	Locked
	Failed
	Corrupt
	TooLarge
	NoSpace
	Exhausted
	ReadOnly
	Permission
	IO
	numKinds
)

var names = [numKinds]string{
	Internal:   "internal error",
	Invalid:    "invalid argument",
	Type:       "wrong type",
	NotFound:   "not found",
	NoFile:     "no such file",
	Exists:     "already exists",
	Closed:     "closed",
	Locked:     "locked",
	Failed:     "failed",
	Corrupt:    "corrupt",
	TooLarge:   "too large",
	NoSpace:    "out of disk space",
	Exhausted:  "out of resources",
	ReadOnly:   "read-only file system",
	Permission: "permission denied",
	IO:         "I/O error",
}

// All lists every kind, for tests that check a door maps each one.
func All() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// String names the kind ("invalid argument", "out of disk space").
func (k Kind) String() string {
	if k < numKinds {
		return names[k]
	}
	return "unknown kind"
}

// Error makes a Kind usable as an errors.Is target.
func (k Kind) Error() string { return k.String() }

// sentinel is an error with a kind: what New returns.
type sentinel struct {
	kind Kind
	text string
}

func (s *sentinel) Error() string { return s.text }

// Is makes errors.Is(err, kind) true for a sentinel of that kind.
func (s *sentinel) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == s.kind
}

// New returns a sentinel error of kind k with the given text. Declare
// sentinels with it once, at package level; wrap them with context at the
// call site.
func New(k Kind, text string) error { return &sentinel{kind: k, text: text} }

// Of returns the kind of err; see the package doc for the rules. Of(nil)
// is Internal: callers classify errors, not successes.
func Of(err error) Kind {
	if err == nil {
		return Internal
	}
	if s, ok := errors.AsType[*sentinel](err); ok {
		return s.kind
	}
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		if k, ok := errnoKind(errno); ok {
			return k
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NoFile
	case errors.Is(err, fs.ErrExist):
		return Exists
	case errors.Is(err, fs.ErrPermission):
		return Permission
	}
	if _, ok := errors.AsType[*fs.PathError](err); ok {
		return IO
	}
	if _, ok := errors.AsType[syscall.Errno](err); ok {
		return IO
	}
	return Internal
}
