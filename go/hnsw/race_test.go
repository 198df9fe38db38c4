//go:build race

package hnsw

// raceEnabled shrinks test data under the race detector, which slows the
// build loop by an order of magnitude.
const raceEnabled = true
