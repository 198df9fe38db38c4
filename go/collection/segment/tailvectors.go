package segment

// tailVectors are a tail's vectors in chunks of rows (Tail.vectors). The
// value is small and copied into every View: appending a chunk makes a new
// chunks array at most, and chunks are never written below the rows a
// view holds, so a view reads its rows without locks.
type tailVectors struct {
	chunks    [][]float32 // chunks[c] holds rows (first+c)·rows ... dim floats each
	first     int64       // the chunk number of chunks[0]
	rows, dim int64
}

// chunkBytes is the size of one chunk of a tail's vectors: large enough
// that a scan runs through long contiguous stretches, small enough that a
// tail of a few rows does not hold much.
const chunkBytes = 1 << 20

// chunkRowsFor is the rows of one chunk of dim floats.
func chunkRowsFor(dim int) int64 {
	return max(16, int64(chunkBytes/4/max(dim, 1)))
}

// row is the vector of absolute row r (valid while a view holds it).
func (v *tailVectors) row(r int64) []float32 {
	c := v.chunks[r/v.rows-v.first]
	at := (r % v.rows) * v.dim
	return c[at : at+v.dim : at+v.dim]
}

// grow returns the place of row r, the row after the last one, adding a
// chunk (a spare one if there is) when r starts one. Only the appender
// calls it, under the tail's mu.
func (t *Tail) grow(r int64) []float32 {
	if t.vectors.rows == 0 {
		t.vectors = tailVectors{rows: t.chunkRows, dim: int64(t.dim), first: r / t.chunkRows}
	}
	if c := r/t.chunkRows - t.vectors.first; c == int64(len(t.vectors.chunks)) {
		var chunk []float32
		if n := len(t.spare); n > 0 {
			chunk, t.spare[n-1] = t.spare[n-1], nil
			t.spare = t.spare[:n-1]
		} else {
			chunk = make([]float32, t.chunkRows*int64(t.dim))
		}
		t.vectors.chunks = append(t.vectors.chunks, chunk)
	}
	return t.vectors.row(r)
}
