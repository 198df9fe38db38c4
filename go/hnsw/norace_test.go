//go:build !race

package hnsw

const raceEnabled = false

const raceShrink = 1

const raceHalve = 1
