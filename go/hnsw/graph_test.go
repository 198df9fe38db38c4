package hnsw

import (
	"runtime"
	"testing"
)

// TestGrowCopyCopiesLargeArraysWhole guards the split copy of a growth
// (inParts): every element of a large array lands in place, whatever the
// number of parts, and the new tail stays zero.
func TestGrowCopyCopiesLargeArraysWhole(t *testing.T) {
	for _, procs := range []int{1, 2, 3} {
		saved := runtime.GOMAXPROCS(procs)
		n := 3*parallelCopyMin + 7 // splits unevenly
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i)*2654435761 + 1
		}
		for name, dst := range map[string][]uint32{
			"growCopy": growCopy(src, n+100), "growCopyAtomic": growCopyAtomic(src, n+100)} {
			for i, v := range dst {
				want := uint32(0)
				if i < n {
					want = src[i]
				}
				if v != want {
					t.Fatalf("GOMAXPROCS=%d %s: element %d is %d, want %d", procs, name, i, v, want)
				}
			}
		}
		runtime.GOMAXPROCS(saved)
	}
}

// TestGrowthReservesTheUpperLevelsOfItsNodes: a growth for more nodes
// leaves room for the upper levels they draw on average, so that upper
// levels alone do not force another growth (which copies every array)
// soon after; 100k insertions in batches of 1,000 did three such growths.
func TestGrowthReservesTheUpperLevelsOfItsNodes(t *testing.T) {
	for _, m := range []int{2, 16, 48} {
		g := newGraph(8, m, nil, true).grown(10_000, 0)
		// A node reaches level l with probability m^-l: strideUp/(m-1) words.
		expected := g.capacity() * g.strideUp / (m - 1)
		if len(g.upper) < expected {
			t.Errorf("M=%d: %d upper words for %d nodes, they draw %d on average", m, len(g.upper), g.capacity(), expected)
		}
	}
}
