package hnsw

import (
	"math/rand/v2"
	"testing"
)

// TestInsertQGPlacesAsTheScanFromTheEnd checks insertQG's halving search
// against the scan from the end it replaced, on buffers full of ties (a
// search's estimates repeat: the same node estimated from two rows): the
// position, and so the buffer, must be the same after every insertion.
func TestInsertQGPlacesAsTheScanFromTheEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		ef := 1 + rng.IntN(300)
		var sc rabitqScratch
		var want []qgEntry
		for i := range 3 * ef {
			c := qgEntry{dist: float32(rng.IntN(50)), node: uint32(i)}
			pos := sc.insertQG(c, ef)
			// The scan from the end: after every entry of distance <= c's.
			wantPos := len(want)
			for wantPos > 0 && want[wantPos-1].dist > c.dist {
				wantPos--
			}
			switch {
			case wantPos == ef:
				wantPos = len(want)
			case len(want) < ef:
				want = append(want, qgEntry{})
				copy(want[wantPos+1:], want[wantPos:len(want)-1])
				want[wantPos] = c
			default:
				copy(want[wantPos+1:], want[wantPos:len(want)-1])
				want[wantPos] = c
			}
			if pos != wantPos || len(sc.qbuf) != len(want) {
				t.Fatalf("trial %d, insertion %d (ef %d): position %d, want %d", trial, i, ef, pos, wantPos)
			}
			for j := range want {
				if sc.qbuf[j] != want[j] {
					t.Fatalf("trial %d, insertion %d: buffer[%d] = %v, want %v", trial, i, j, sc.qbuf[j], want[j])
				}
			}
		}
	}
}
