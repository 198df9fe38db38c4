package text

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
)

// ErrInvalid marks bad input (an unknown analyzer, a query out of bounds,
// bad BM25 parameters or fusion). It wraps batch.ErrInvalid, so the C ABI
// and the server report it as an invalid argument.
var ErrInvalid = fmt.Errorf("text: %w", batch.ErrInvalid)
