package indexfile

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRCCombine checks crcCombine against the CRC of the concatenation,
// at random split points, empty halves included.
func TestCRCCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 300 {
		b := make([]byte, rng.IntN(5000))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		at := 0
		if len(b) > 0 {
			at = rng.IntN(len(b) + 1)
		}
		want := crc32.Checksum(b, castagnoli)
		got := crcCombine(crc32.Checksum(b[:at], castagnoli), crc32.Checksum(b[at:], castagnoli), uint64(len(b)-at))
		if got != want {
			t.Fatalf("%d bytes split at %d: combined %#08x, want %#08x", len(b), at, got, want)
		}
	}
}
