package collection

import "github.com/strata-db/strata/go/internal/racetest"

// raceEnabled: the race detector makes sync.Pool drop items at random,
// so allocation counts mean nothing under it.
const raceEnabled = racetest.Enabled
