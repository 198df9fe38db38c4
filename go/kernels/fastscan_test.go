package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// fastScanFixture returns 32 random 1-bit codes of words words (with the
// extreme patterns all-ones and all-zeros among them), their packed block
// and a LUT of random bytes (any byte, not only the sums of 6-bit values,
// so that the kernel's 16-bit lanes are driven to their limit).
func fastScanFixture(rng *rand.Rand, words int) ([][]uint64, []uint8, []uint8) {
	codes := make([][]uint64, 32)
	block := make([]uint8, FastScanBlockBytes(64*words))
	for j := range codes {
		codes[j] = make([]uint64, words)
		for w := range codes[j] {
			switch j % 5 {
			case 0:
				codes[j][w] = ^uint64(0)
			case 1:
				codes[j][w] = 0
			default:
				codes[j][w] = rng.Uint64()
			}
		}
		FastScanPack(block, j, codes[j])
	}
	lut := make([]uint8, 16*16*words)
	for i := range lut {
		lut[i] = uint8(rng.UintN(256))
		if i%3 == 0 {
			lut[i] = 255
		}
	}
	return codes, block, lut
}

// TestFastScan32MatchesReference guards the packing and both kernel paths
// against any difference from the sum computed straight from the codes:
// every dimension count from 64 to 4,096 dimensions (several 16-bit passes
// past 1,024), a LUT of bytes up to 255 (the 16-bit lanes' worst case), and
// the bytes around the block and the LUT left alone.
func TestFastScan32MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, words := range []int{1, 2, 3, 4, 8, 13, 15, 16, 17, 32, 64} {
		codes, block, lut := fastScanFixture(rng, words)
		var want [32]uint32
		for j, code := range codes {
			for g := 0; g < 16*words; g++ {
				want[j] += uint32(lut[16*g+int(code[g/16]>>(4*(g%16))&15)])
			}
		}
		// Guard bytes past the block: the kernel must not depend on them.
		guarded := append(append([]uint8(nil), block...), 0xff, 0xff, 0xff, 0xff)
		withBitPath(t, func(path string) {
			var out [32]uint32
			for i := range out {
				out[i] = 0xdeadbeef // FastScan32 sets, not adds
			}
			FastScan32(lut, guarded[:len(block)], &out)
			if out != want {
				t.Fatalf("%s words=%d: got %v, want %v", path, words, out, want)
			}
		})
	}
}

// TestFastScan32OddPairs covers tables of an odd number of pairs of groups
// (dimensions not a multiple of 64, and passes of 128 pairs plus an odd
// rest), which the AVX-512 body, four groups a step, leaves to the AVX2 one.
func TestFastScan32OddPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, pairs := range []int{1, 2, 3, 5, 127, 129, 130, 131, 257} {
		lut := make([]uint8, 32*pairs)
		block := make([]uint8, 32*pairs)
		for i := range lut {
			lut[i], block[i] = uint8(rng.UintN(256)), uint8(rng.UintN(256))
		}
		var want [32]uint32
		for g := 0; g < 2*pairs; g++ {
			row := block[32*(g/2)+16*(g%2):][:16]
			for j := 0; j < 16; j++ {
				want[j] += uint32(lut[16*g+int(row[j]&15)])
				want[j+16] += uint32(lut[16*g+int(row[j]>>4)])
			}
		}
		withBitPath(t, func(path string) {
			var out [32]uint32
			FastScan32(lut, block, &out)
			if out != want {
				t.Fatalf("%s pairs=%d: got %v, want %v", path, pairs, out, want)
			}
		})
	}
}

// TestFastScanPackReplacesTheSlot prevents a repacked slot (a neighbour
// list rewritten in place) from keeping bits of its old code or touching
// its neighbours' slots.
func TestFastScanPackReplacesTheSlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	codes, block, lut := fastScanFixture(rng, 8)
	var before [32]uint32
	FastScan32(lut, block, &before)
	for _, slot := range []int{0, 7, 15, 16, 31} {
		FastScanPack(block, slot, make([]uint64, 8)) // zero, then back
		var zeroed [32]uint32
		FastScan32(lut, block, &zeroed)
		for j := range zeroed {
			if j != slot && zeroed[j] != before[j] {
				t.Fatalf("repacking slot %d changed slot %d", slot, j)
			}
		}
		var base uint32
		for g := 0; g < 16*8; g++ {
			base += uint32(lut[16*g])
		}
		if zeroed[slot] != base {
			t.Fatalf("slot %d after packing zeros: %d, want %d", slot, zeroed[slot], base)
		}
		FastScanPack(block, slot, codes[slot])
	}
	var after [32]uint32
	FastScan32(lut, block, &after)
	if after != before {
		t.Fatal("packing the codes back did not restore the block")
	}
}

// TestFastScanPackBlockIsPackOfEverySlot prevents the block-at-once packer
// (the one BuildRaBitQ uses) from laying out bytes differently from
// FastScanPack, which the kernels are tested against, with empty slots
// packed as zeros.
func TestFastScanPackBlockIsPackOfEverySlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, words := range []int{1, 2, 8, 16} {
		codes, want, _ := fastScanFixture(rng, words)
		var slots [32][]uint64
		for j := range slots {
			if j%9 != 4 {
				slots[j] = codes[j]
			} else {
				FastScanPack(want, j, make([]uint64, words))
			}
		}
		got := make([]uint8, len(want))
		for i := range got {
			got[i] = 0xa5 // every byte is written
		}
		FastScanPackBlock(got, words, &slots)
		if !slices.Equal(got, want) {
			t.Fatalf("words=%d: FastScanPackBlock differs from FastScanPack", words)
		}
	}
}

// TestFastScanLUTIsTheSumOfTheQueryBytes checks the tables against their
// definition and that a query value the tables cannot hold is refused.
func TestFastScanLUTIsTheSumOfTheQueryBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{8, 64, 520, 1024} {
		q := make([]uint8, n)
		for i := range q {
			q[i] = uint8(rng.UintN(64))
		}
		q[5], q[n-1], q[n-2], q[n-3], q[n-4] = 63, 63, 63, 63, 63 // the largest sums, 252
		lut := make([]uint8, 4*len(q))
		FastScanLUT(q, lut)
		for g := 0; g < len(q)/4; g++ {
			for m := 0; m < 16; m++ {
				var want uint8
				for b := 0; b < 4; b++ {
					if m>>b&1 == 1 {
						want += q[4*g+b]
					}
				}
				if lut[16*g+m] != want {
					t.Fatalf("n=%d: lut[%d][%d] = %d, want %d", n, g, m, lut[16*g+m], want)
				}
			}
		}
		for _, bad := range []uint8{64, 128, 255} {
			q[n/2] = bad
			func() {
				defer func() {
					if recover() == nil {
						t.Fatalf("n=%d: FastScanLUT took a query value of %d", n, bad)
					}
				}()
				FastScanLUT(q, lut)
			}()
		}
	}
}

// BenchmarkFastScan32 reports codes estimated per second (and the bytes
// of packed codes read per second) for one block in L1, per path, in the
// calling thread's CPU time (cpu-ns/op too); d=832 is 784-d data padded
// to a multiple of 64, d=1024 the same data padded to a power of two.
func BenchmarkFastScan32(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dims := range []int{128, 512, 832, 1024} {
		_, block, lut := fastScanFixture(rng, dims/64)
		withBitPath(b, func(path string) {
			b.Run(fmt.Sprintf("%s/d=%d", path, dims), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var out [32]uint32
				cpu0 := threadCPUSeconds()
				for b.Loop() {
					FastScan32(lut, block, &out)
				}
				sec := threadCPUSeconds() - cpu0
				b.ReportMetric(sec*1e9/float64(b.N), "cpu-ns/op")
				b.ReportMetric(32*float64(b.N)/sec, "codes/s")
				b.ReportMetric(float64(len(block))*float64(b.N)/sec/1e9, "GB/s")
			})
		})
	}
}
