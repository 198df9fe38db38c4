package meta

import (
	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// ErrInvalidDocument marks a metadata document that is not valid JSON or
	// breaks the document rules in the package comment. The message names
	// the offending key path or byte offset. It wraps batch.ErrInvalid.
	ErrInvalidDocument error = &invalidError{"meta: invalid document"}
	// ErrInvalidFilter marks a filter that is not valid JSON or uses the
	// filter language wrongly. The message names the offending field or
	// operator. It wraps batch.ErrInvalid.
	ErrInvalidFilter error = &invalidError{"meta: invalid filter"}
	// ErrCorrupt marks snapshot input given to Import that does not describe
	// a valid index; the message names the entry.
	ErrCorrupt = errkind.New(errkind.Corrupt, "meta: corrupt metadata")
)

// invalidError lets the two caller-error sentinels keep their own message
// ("meta: invalid document") while still matching batch.ErrInvalid, which is
// what the C ABI and the server turn into an invalid-argument status.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return batch.ErrInvalid }
