//go:build !race

package hnsw

const raceShrink = 1

const raceHalve = 1
