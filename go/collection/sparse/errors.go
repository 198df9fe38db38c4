package sparse

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// ErrInvalid marks bad input: a malformed vector (lengths that
	// differ, a duplicate index, a value that is not finite, too many
	// non-zeros), a bad k, an unknown modifier. It wraps batch.ErrInvalid,
	// so the C ABI and the servers report it as an invalid argument.
	ErrInvalid = fmt.Errorf("sparse: %w", batch.ErrInvalid)
	// ErrCorrupt marks a snapshot file whose sections pass the container's
	// checks but do not describe an index (offsets out of order, indices
	// not increasing, a key twice), or an index whose invariants broke.
	ErrCorrupt = errkind.New(errkind.Corrupt, "sparse: corrupt index")
)
