// Package gcpercent lowers the Go collector's GOGC for as long as some
// part of the process asks for it, and restores the setting it found.
//
// GOGC's default of 100 lets the heap grow to twice its live memory
// before a collection, and the runtime keeps most of the freed pages
// resident until its scavenger returns them: a process whose live heap is
// a collection's graphs and vectors so reaches about twice the memory the
// collection holds while writes and merges make garbage. Those arrays hold
// no pointers, so a collection marks only the few objects that do, and a
// lower GOGC costs collections that are many but cheap.
//
// Holders ask for a percent each; the setting is the lowest asked for.
// The first holder records the setting it found, the last restores it. A
// setting already at or below the lowest asked for, the collector off, or
// a GOGC environment variable (the operator's choice) is left alone. A
// debug.SetGCPercent by someone else while holders remain is overwritten
// by the next change.
package gcpercent

import (
	"os"
	"runtime/debug"
	"sync"
)

var state struct {
	mu      sync.Mutex
	held    map[int]int // percent -> holders
	before  int         // the setting found by the first holder
	applied int         // the setting in force, as this package last set it
}

// Lower asks for GOGC at most percent (> 0) until the returned function
// is called; calling it more than once counts once.
func Lower(percent int) (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set || percent <= 0 {
		return func() {}
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(state.held) == 0 {
		state.held = map[int]int{}
		state.before = debug.SetGCPercent(percent)
		state.applied = percent
	}
	state.held[percent]++
	apply()
	return sync.OnceFunc(func() {
		state.mu.Lock()
		defer state.mu.Unlock()
		if state.held[percent]--; state.held[percent] == 0 {
			delete(state.held, percent)
		}
		apply()
	})
}

// apply sets GOGC to the lowest percent held, or back to the setting of
// before once none is. The caller holds state.mu.
func apply() {
	want := state.before
	for p := range state.held {
		want = min(want, p)
	}
	if state.before < 0 { // the collector was off: leave it so
		want = state.before
	}
	if want != state.applied {
		debug.SetGCPercent(want)
		state.applied = want
	}
}
