package flat

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// ErrConfig reports an unusable Config.
	ErrConfig = fmt.Errorf("flat: %w: bad config", batch.ErrInvalid)
	// ErrFull reports that the index cannot hold more vectors or hand out
	// more sequential ids.
	ErrFull = fmt.Errorf("flat: %w: index full", batch.ErrInvalid)
	// ErrCorrupt reports a broken internal invariant found by CheckIntegrity.
	ErrCorrupt = errkind.New(errkind.Corrupt, "flat: corrupt index")
)
