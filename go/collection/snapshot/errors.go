package snapshot

import (
	"errors"

	"github.com/strata-db/strata/go/indexfile"
)

// ErrCorrupt marks a CURRENT, MANIFEST or metadata file that fails its
// checks. It wraps indexfile.ErrCorrupt, so one errors.Is test catches
// damage anywhere in a snapshot.
var ErrCorrupt = errors.Join(errors.New("snapshot: corrupt"), indexfile.ErrCorrupt)
