package server

import "github.com/strata-db/strata/go/internal/racetest"

// raceEnabled skips the allocation counts: the race detector allocates.
const raceEnabled = racetest.Enabled
