package segment

import (
	"testing"

	"github.com/strata-db/strata/go/metric"
)

// TestTailSteadyStateAllocations prevents the tail's write, scan and
// build cycle from allocating again once warm: a steady ingest appends
// rows, queries scan them and the builder takes and drops them, and each
// of those reuses the memory of the rows before (chunks kept as spares,
// arrays moved down in place, the builder's batch reused), so that
// writes and queries leave nothing for the collector to find (issue 24:
// a 30 % overwrite's peak RSS was its garbage).
func TestTailSteadyStateAllocations(t *testing.T) {
	const dim, rows = 128, 256
	tail := NewTail(dim, metric.L2)
	keys := make([]uint64, rows)
	vectors := make([]float32, rows*dim)
	for i := range vectors {
		vectors[i] = float32(i % 97)
	}
	query := vectors[:dim]
	hits := make([]Hit, 0, 10)
	next := uint64(0)
	// write appends a batch of rows, half of them overwrites of keys of
	// the batch before (the tail already holds them) and half new keys.
	write := func() {
		for i := range keys {
			if i%2 == 0 && next >= rows {
				keys[i] = next - rows + uint64(i)
			} else {
				keys[i] = next + uint64(i)
			}
		}
		next += rows
		tail.Append(keys, vectors, nil)
	}
	scan := func() {
		v := tail.Read()
		hits = v.Scan(query, 10, nil, nil, hits)
		v.Close()
	}
	build := func() {
		b := tail.Next(4096)
		tail.Advance(b)
	}
	// Warm up: let the arrays, the spare chunks and the maps reach the
	// size a steady tail of a few batches needs.
	for range 64 {
		write()
		write()
		scan()
		build()
	}
	if a := testing.AllocsPerRun(100, scan); a != 0 {
		t.Errorf("View.Scan: %.2f allocations per query, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() { write(); build() }); a != 0 {
		t.Errorf("Append + Next + Advance: %.2f allocations per batch of %d rows, want 0", a, rows)
	}
}
