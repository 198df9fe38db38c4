package segment

import (
	"testing"

	"github.com/strata-db/strata/go/metric"
)

// TestTailRowsSurviveChunkReuse prevents a tail's chunked vectors from
// serving a row from the wrong place: rows are appended in batches that
// straddle chunk boundaries, overwritten and removed, built in batches
// that end mid-chunk, so that dropped chunks come back as spares and are
// written again; every view must read back exactly the rows written.
func TestTailRowsSurviveChunkReuse(t *testing.T) {
	const dim = 1 << 14 // 16 rows per chunk
	tail := NewTail(dim, metric.L2)
	if tail.chunkRows != 16 {
		t.Fatalf("chunkRows = %d, want 16 for dim %d", tail.chunkRows, dim)
	}
	want := map[uint64]float32{} // key -> the value of every float of its live row
	type put struct {
		row int64
		v   float32
	}
	history := map[uint64][]put{} // key -> its puts, in row order
	row := func(v float32) []float32 {
		r := make([]float32, dim)
		for i := range r {
			r[i] = v + float32(i%7)
		}
		return r
	}
	check := func(step int) {
		t.Helper()
		v := tail.Read()
		defer v.Close()
		seen := 0
		v.Rows(func(key uint64, vec []float32) {
			seen++
			w, ok := want[key]
			if !ok {
				t.Fatalf("step %d: key %d in the tail, not written (or removed)", step, key)
			}
			for _, i := range []int{0, 5, dim - 1} {
				if x := vec[i]; x != w+float32(i%7) {
					t.Fatalf("step %d: key %d float %d = %v, want %v", step, key, i, x, w+float32(i%7))
				}
			}
		})
		for key, w := range want {
			vec, found := v.Lookup(key)
			if !found {
				continue // built: the graph's now
			}
			if vec == nil || vec[3] != w+3 {
				t.Fatalf("step %d: Lookup(%d) = %v..., want %v", step, key, vec[:min(4, len(vec))], w+3)
			}
		}
		if hits := v.Scan(row(0), 1, nil, nil, nil); seen > 0 && len(hits) != 1 {
			t.Fatalf("step %d: scan of %d live rows found %d", step, seen, len(hits))
		}
	}
	next := uint64(0)
	for step := range 60 {
		n := 1 + step%23
		keys := make([]uint64, n)
		vecs := make([]float32, 0, n*dim)
		for i := range keys {
			if step%5 == 4 && i == 0 && next > 3 {
				keys[i] = next - 3 // an overwrite of a recent key
			} else {
				keys[i] = next
				next++
			}
			v := float32(step*100 + i)
			want[keys[i]] = v
			history[keys[i]] = append(history[keys[i]], put{tail.Appended() + int64(i), v})
			vecs = append(vecs, row(v)...)
		}
		tail.Append(keys, vecs, nil)
		if step%7 == 6 {
			gone := []uint64{next - 1}
			tail.Remove(gone, nil)
			delete(want, gone[0])
		}
		check(step)
		if step%3 == 2 {
			b := tail.Next(11 + step%9)
			// The builder's copy of the rows is what the graph will hold:
			// each key's last put below b.To.
			for j, k := range b.Keys {
				var w float32
				for _, p := range history[k] {
					if p.row < b.To {
						w = p.v
					}
				}
				if b.Vectors[j*dim+5] != w+5 {
					t.Fatalf("step %d: batch row of key %d = %v, want %v", step, k, b.Vectors[j*dim+5], w+5)
				}
			}
			tail.Advance(b)
			for _, k := range b.Keys {
				if held, _ := tail.Holds(k); !held {
					delete(want, k)
				}
			}
			check(step)
		}
	}
	if tail.vectors.first == 0 {
		t.Fatalf("no chunk was ever dropped: the test did not reach reuse")
	}
}

// TestTailCountsTheVersionItsBuilderLeftStale: a key new to the graph gets
// two rows, and the builder builds only the first: the graph now holds a
// version the tail hides, so the views ask the graph for one more result;
// once the newer row is a removal built too, they ask for none.
func TestTailCountsTheVersionItsBuilderLeftStale(t *testing.T) {
	tail := NewTail(2, metric.L2)
	inGraph := map[uint64]bool{}
	held := func(k uint64) bool { return inGraph[k] }
	tail.Append([]uint64{5}, []float32{1, 1}, held)
	tail.Append([]uint64{5}, []float32{2, 2}, held)
	tail.Remove([]uint64{5}, held)
	if v := tail.Read(); v.Extra() != 0 {
		t.Fatalf("Extra %d before any build, want 0 (the graph does not hold key 5)", v.Extra())
	} else {
		v.Close()
	}
	b := tail.Next(1)
	if b.From != 0 || b.To != 1 || len(b.Keys) != 1 {
		t.Fatalf("first batch %d..%d with keys %v, want row 0 of key 5", b.From, b.To, b.Keys)
	}
	inGraph[5] = true
	tail.Advance(b)
	v := tail.Read()
	if v.Extra() != 1 || !v.Hides(5) {
		t.Fatalf("after building the first of key 5's rows: Extra %d, Hides %v; want 1, true", v.Extra(), v.Hides(5))
	}
	v.Close()
	b = tail.Next(2)
	if b.To != 3 || len(b.Removed) != 1 {
		t.Fatalf("second batch %d..%d removing %v, want rows 1-2 ending in key 5's removal", b.From, b.To, b.Removed)
	}
	delete(inGraph, 5)
	tail.Advance(b)
	if v := tail.Read(); v.Extra() != 0 || v.Len() != 0 {
		t.Fatalf("after building every row: Extra %d, Len %d; want 0, 0", v.Extra(), v.Len())
	} else {
		v.Close()
	}
	// A value built below a removal still in the tail: the graph holds
	// it, and the tail hides it.
	tail.Append([]uint64{7}, []float32{3, 3}, held)
	tail.Remove([]uint64{7}, held)
	b = tail.Next(1)
	inGraph[7] = true
	tail.Advance(b)
	if v := tail.Read(); v.Extra() != 1 || !v.Hides(7) {
		t.Fatalf("value of key 7 built below its removal: Extra %d, Hides %v; want 1, true", v.Extra(), v.Hides(7))
	} else {
		v.Close()
	}
}
