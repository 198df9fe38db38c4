//go:build amd64 && !noasm

//lint:file-ignore U1000 the path bodies are called only from the dispatch stubs in rows_amd64.s

package kernels

// Multi-row float32 kernels in rows_amd64.s (written by gen_amd64.py).
// Every function reads exactly len(q) elements of q and of each row
// rows[ids[i]·len(q):]; callers guarantee the rows lie within rows and
// len(out) >= len(ids).

// l2Rows jumps to l2RowsAVX512 when useAVX512 is set, else to l2RowsLoop
// (the one-row kernel per id, which is the AVX2 or generic path).
//
//go:noescape
func l2Rows(q, rows []float32, ids []uint32, out []float32)

// dotRows jumps to dotRowsAVX512 or dotRowsLoop like l2Rows.
//
//go:noescape
func dotRows(q, rows []float32, ids []uint32, out []float32)

// l2RowsAVX512 computes l2RowsLoop four rows at a time, each row with the
// instructions of l2AVX512, so results are bit-identical to it.
//
//go:noescape
func l2RowsAVX512(q, rows []float32, ids []uint32, out []float32)

// dotRowsAVX512 computes dotRowsLoop four rows at a time, each row with the
// instructions of dotAVX512.
//
//go:noescape
func dotRowsAVX512(q, rows []float32, ids []uint32, out []float32)
