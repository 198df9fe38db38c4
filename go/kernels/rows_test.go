package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRowsKernelsMatchOneRowKernelsBitForBit guards the promise that lets
// the index mix the two: on every path, every dimension and every group
// remainder (1..9 ids), DotRows and L2SquaredRows return exactly the bits
// of Dot and L2Squared, and write nothing past len(ids).
func TestRowsKernelsMatchOneRowKernelsBitForBit(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, d := range testDims() {
			const nRows = 13
			// Rows start at odd offsets (rows[1:]) so no row is 64-byte aligned,
			// and NaN guards surround them: a lane read outside a row shows.
			buf := make([]float32, 1+nRows*d+guardPad)
			for i := range buf {
				buf[i] = float32(math.NaN())
			}
			rows := buf[1 : 1+nRows*d : 1+nRows*d]
			q := make([]float32, d)
			for i := range rows {
				rows[i] = float32(rng.NormFloat64())
			}
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			for n := 1; n <= 9; n++ {
				ids := make([]uint32, n)
				for i := range ids {
					ids[i] = uint32(rng.IntN(nRows))
				}
				out := make([]float32, n+1)
				out[n] = -7
				for _, k := range []struct {
					name string
					rows func(q, rows []float32, ids []uint32, out []float32)
					one  func(a, b []float32) float32
				}{{"DotRows", DotRows, Dot}, {"L2SquaredRows", L2SquaredRows, L2Squared}} {
					k.rows(q, rows, ids, out)
					for i, id := range ids {
						want := k.one(q, rows[int(id)*d:])
						if math.Float32bits(out[i]) != math.Float32bits(want) {
							t.Fatalf("%s d=%d n=%d row %d: %v, one-row kernel %v", k.name, d, n, i, out[i], want)
						}
					}
					if out[n] != -7 {
						t.Fatalf("%s d=%d n=%d wrote past len(ids)", k.name, d, n)
					}
				}
			}
		}
	})
}

// TestRowsKernelsRejectIdsOutsideRows guards the assembly against reading
// outside rows: a bad id panics before any row is read.
func TestRowsKernelsRejectIdsOutsideRows(t *testing.T) {
	q, rows := make([]float32, 8), make([]float32, 8*4+7) // 4 whole rows
	for _, c := range []struct {
		ids  []uint32
		out  int
		want string
	}{{[]uint32{0, 4}, 2, "outside rows"}, {[]uint32{1, 2}, 1, "output shorter"}} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, c.want) {
					t.Errorf("ids %v out %d: panic %q, want %q", c.ids, c.out, r, c.want)
				}
			}()
			L2SquaredRows(q, rows, c.ids, make([]float32, c.out))
		}()
	}
}
