package collection

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
)

// TestBackgroundLoopRenumbersAGrowingGraph guards the renumbering of a
// graph grown by small upserts (which hnsw.Index.Add never renumbers
// after): the once-a-second look renumbers it once it is large enough,
// not again until it has grown by renumberGrowth, and every answer and
// stored point stays what the model says.
func TestBackgroundLoopRenumbersAGrowingGraph(t *testing.T) {
	racetest.AnswersOnly(t)
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1, Threads: 2})
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	m := model{}
	ids := idRange(17000) // past hnsw's 16,384-node minimum
	for at := 0; at < len(ids); at += 500 {
		upsertRandom(t, c, rng, m, ids[at:min(at+500, len(ids))])
	}
	// The checkpoint loop's look (driven here rather than waited for)
	// renumbers a graph grown this much.
	c.lookAndWait()
	if n := c.Info().Renumbers; n != 1 {
		t.Fatalf("%d renumberings of a graph grown from empty to %d nodes, want 1", n, len(ids))
	}
	checkModel(t, c, m)
	// A little growth is not enough for another copy of the graph.
	upsertRandom(t, c, rng, m, []uint64{20000, 20001})
	c.lookAndWait()
	if n := c.Info().Renumbers; n != 1 {
		t.Fatalf("%d renumberings after growing by 2 nodes, want 1", n)
	}
	more := make([]uint64, 9000) // 17,002 -> 26,002 nodes: past 1.5x
	for i := range more {
		more[i] = uint64(30000 + i)
	}
	for at := 0; at < len(more); at += 500 {
		upsertRandom(t, c, rng, m, more[at:at+500])
	}
	c.lookAndWait()
	if n := c.Info().Renumbers; n != 2 {
		t.Fatalf("%d renumberings after growing past %v times, want 2", n, renumberGrowth)
	}
	checkModel(t, c, m)
}
