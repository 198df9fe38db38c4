package collection

import (
	"math/rand/v2"
	"testing"
)

// TestBackgroundCheckpointsKeepTheLogBounded: background checkpoints start
// every CheckpointBytes of log, so the log recovery replays stays near that
// size. Before the fix the threshold grew by the log's size at each
// checkpoint (the removed segments were not subtracted): by the 12th
// checkpoint the log reached about 4x it. Writes made while a checkpoint runs
// (slow under -race) add up to about one threshold more.
func TestBackgroundCheckpointsKeepTheLogBounded(t *testing.T) {
	const threshold = 256 << 10
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: threshold, Fsync: FsyncNever, HasFsync: true, VacuumRatio: -1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	var most int64
	for id := uint64(0); c.Info().Checkpoints < 12; id += 100 {
		ids := make([]uint64, 100)
		for i := range ids {
			ids[i] = id + uint64(i)
		}
		if err := c.Upsert(IntIDs(ids), randomVectors(rng, len(ids)), nil); err != nil {
			t.Fatal(err)
		}
		most = max(most, c.Info().WALBytes)
		if id > 2_000_000 {
			t.Fatalf("only %d checkpoints after %d writes", c.Info().Checkpoints, id)
		}
	}
	if most > 3*threshold {
		t.Fatalf("the log reached %d bytes with checkpoints every %d", most, threshold)
	}
}
