//go:build race

package hnsw

// raceShrink divides the sizes of tests whose assertions do not depend on
// size (a constant, so sizes stay untyped constants).
const raceShrink = 3

// raceHalve divides the sizes of tests that need a few thousand nodes to
// mean what they check (RaBitQ's recall against the float graph's, over
// more than one centroid).
const raceHalve = 2
