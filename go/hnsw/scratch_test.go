package hnsw

import "testing"

// TestScratchFloatsAreZeroedAndWritable checks both sizes scratchFloats
// serves (heap below 1 MiB, a mapping above): every element starts at 0
// and takes a write, and release gives a mapping back without a fault.
func TestScratchFloatsAreZeroedAndWritable(t *testing.T) {
	for _, n := range []int{1000, 3 << 20} {
		s, release := scratchFloats(n)
		if len(s) != n {
			t.Fatalf("n %d: got %d floats", n, len(s))
		}
		for i := range s {
			if s[i] != 0 {
				t.Fatalf("n %d: element %d is %v, want 0", n, i, s[i])
			}
			s[i] = float32(i)
		}
		if s[n-1] != float32(n-1) {
			t.Fatalf("n %d: last element did not keep its write", n)
		}
		release()
	}
}
