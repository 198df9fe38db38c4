package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// withBitPath runs f on every RaBitQ kernel path this build and CPU have.
func withBitPath(t testing.TB, f func(name string)) {
	saved, saved512 := useBitAVXFlag(), useBitAVX512Flag()
	defer func() { setBitAVX(saved); setBitAVX512(saved512) }()
	setBitAVX(false)
	setBitAVX512(false)
	f("generic")
	if saved {
		setBitAVX(true)
		f("avx2")
	}
	if saved512 {
		setBitAVX512(true)
		f("avx512")
	}
}

// TestBitDotU8RowsMatchesReference guards the assembly against any
// difference from the reference sum: odd word counts (the unpaired tail),
// ids in any order, extreme query bytes and bit patterns, and the output
// slots past len(ids) left untouched.
func TestBitDotU8RowsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for words := 1; words <= 33; words++ {
		const rows = 40
		stride := words + words%3 // codes with and without data between them
		codes := make([]uint64, rows*stride)
		for i := range codes {
			switch i % 7 {
			case 0:
				codes[i] = ^uint64(0)
			case 1:
				codes[i] = 0
			default:
				codes[i] = rng.Uint64()
			}
		}
		q := make([]uint8, 64*words)
		for i := range q {
			q[i] = uint8(rng.UintN(256))
			if i%5 == 0 {
				q[i] = 255
			}
		}
		ids := make([]uint32, 0, 2*rows)
		for i := range 2 * rows {
			ids = append(ids, uint32(rng.IntN(rows)))
			_ = i
		}
		want := make([]uint32, len(ids))
		for i, id := range ids {
			for j := range q {
				if codes[int(id)*stride+j/64]>>(j%64)&1 == 1 {
					want[i] += uint32(q[j])
				}
			}
		}
		withBitPath(t, func(path string) {
			for _, n := range []int{0, 1, 2, 3, len(ids)} {
				out := make([]uint32, n+2)
				out[n], out[n+1] = 0xdeadbeef, 0xdeadbeef
				BitDotU8Rows(q, codes, stride, ids[:n], out)
				for i := 0; i < n; i++ {
					if out[i] != want[i] {
						t.Fatalf("%s words=%d n=%d: out[%d] = %d, want %d", path, words, n, i, out[i], want[i])
					}
				}
				if out[n] != 0xdeadbeef || out[n+1] != 0xdeadbeef {
					t.Fatalf("%s words=%d n=%d: wrote past the ids", path, words, n)
				}
			}
			code := codes[3*stride : 3*stride+words]
			if got, w := BitDotU8(code, q), want[0]; ids[0] == 3 && got != w {
				t.Fatalf("%s words=%d: BitDotU8 = %d, want %d", path, words, got, w)
			}
		})
	}
}

// TestBitDotU8RowsRejectsBadArguments prevents the assembly from reading
// outside the code matrix when an id or the query length is wrong.
func TestBitDotU8RowsRejectsBadArguments(t *testing.T) {
	codes := make([]uint64, 4*3)
	cases := map[string]func(){
		"id past the codes":  func() { BitDotU8Rows(make([]uint8, 128), codes, 3, []uint32{4}, make([]uint32, 1)) },
		"last code cut":      func() { BitDotU8Rows(make([]uint8, 128), codes[:10], 3, []uint32{3}, make([]uint32, 1)) },
		"stride below words": func() { BitDotU8Rows(make([]uint8, 128), codes, 1, []uint32{0}, make([]uint32, 1)) },
		"short output":       func() { BitDotU8Rows(make([]uint8, 128), codes, 3, []uint32{0, 1}, make([]uint32, 1)) },
		"query not x64":      func() { BitDotU8Rows(make([]uint8, 100), codes, 3, []uint32{0}, make([]uint32, 1)) },
		"empty query":        func() { BitDotU8Rows(nil, codes, 3, []uint32{0}, make([]uint32, 1)) },
		"short query":        func() { BitDotU8(codes[:2], make([]uint8, 64)) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

// BenchmarkBitDotU8Rows reports codes/s of the 1-bit estimate's integer
// part over 32 scattered codes (one graph node's neighbours), codes in L2.
func BenchmarkBitDotU8Rows(b *testing.B) {
	for _, dim := range []int{128, 512, 1024} {
		words := dim / 64
		const rows = 4096
		rng := rand.New(rand.NewPCG(3, 4))
		codes := make([]uint64, rows*words)
		for i := range codes {
			codes[i] = rng.Uint64()
		}
		q := make([]uint8, dim)
		for i := range q {
			q[i] = uint8(rng.UintN(256))
		}
		ids := make([]uint32, 32)
		for i := range ids {
			ids[i] = uint32(rng.IntN(rows))
		}
		out := make([]uint32, len(ids))
		withBitPath(b, func(path string) {
			b.Run(fmt.Sprintf("%s/d=%d", path, dim), func(b *testing.B) {
				for b.Loop() {
					BitDotU8Rows(q, codes, words, ids, out)
				}
				b.ReportMetric(float64(b.N)*float64(len(ids))/b.Elapsed().Seconds(), "codes/s")
			})
		})
	}
}
