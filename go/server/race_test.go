//go:build race

package server

// raceEnabled skips the allocation counts: the race detector allocates.
const raceEnabled = true
