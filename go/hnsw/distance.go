package hnsw

import "github.com/strata-db/strata/go/metric"

// distance is the kernel a graph compares vectors with, chosen once from
// its metric and passed down the search loops as a small value.
type distance uint8

const (
	distDot distance = iota // 1 - <a, b> (ip, cosine on normalised vectors)
	distL2                  // squared Euclidean distance
	distL1                  // Manhattan distance
)

func distanceOf(m metric.Metric) distance {
	switch m {
	case metric.L2:
		return distL2
	case metric.Manhattan:
		return distL1
	}
	return distDot
}
