//go:build !race

package hnsw

const raceEnabled = false

const raceShrink = 1
