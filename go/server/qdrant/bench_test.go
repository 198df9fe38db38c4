package qdrant

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/collection"
)

// BenchmarkMinShould compares min_should (24 conditions over 20,000
// payloads) evaluated as meta's at-least-k node with the previous
// translation: a $or of every k-subset (k = 2: 276 $ands) or, beyond 256
// subsets, id sets counted in a map.
func BenchmarkMinShould(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	payloads := make([]string, 20000)
	for i := range payloads {
		payloads[i] = fmt.Sprintf(`{"a": %d, "b": "s%d", "c": [%d, %d]}`, r.IntN(100), r.IntN(50), r.IntN(20), r.IntN(20))
	}
	c := testCollection(b, payloads)
	var conds []string
	for i := range 12 {
		conds = append(conds, fmt.Sprintf(`{"key": "a", "range": {"lt": %d}}`, 10+i*5), fmt.Sprintf(`{"key":"c","match":{"value":%d}}`, i))
	}
	for _, k := range []int{2, 6} {
		raw := json.RawMessage(fmt.Sprintf(`{"min_should": {"conditions": [%s], "min_count": %d}}`, join(conds), k))
		b.Run(fmt.Sprintf("k=%d/tree", k), func(b *testing.B) {
			for b.Loop() {
				f, err := compileFilter(raw)
				if err != nil {
					b.Fatal(err)
				}
				c.ScanIDs(f, collection.ID{}, false, 0)
			}
		})
		b.Run(fmt.Sprintf("k=%d/legacy", k), func(b *testing.B) {
			for b.Loop() {
				p, err := legacyCompileFilter(raw)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.ids(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
