package collection

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/racetest"
)

// TestBackgroundCheckpointsKeepTheLogBounded: background checkpoints start
// every CheckpointBytes of log, so the log recovery replays stays near that
// size. Before the fix the threshold grew by the log's size at each
// checkpoint (the removed segments were not subtracted): by the 12th
// checkpoint the log reached about 4x it. How far writers get while a
// checkpoint runs depends on the machine's speed (under -race on a loaded
// machine, more than a threshold), so once a checkpoint is due the writer
// waits for one to catch up: the bound then depends only on checkpoints
// starting at the threshold and removing the log before the previous
// snapshot (which the fallback keeps: about two thresholds in all), and a
// checkpoint that never comes fails the wait.
func TestBackgroundCheckpointsKeepTheLogBounded(t *testing.T) {
	racetest.AnswersOnly(t)
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
		waitForCheckpointsToCatchUp(t, c)
		if id > 2_000_000 {
			t.Fatalf("only %d checkpoints after %d writes", c.Info().Checkpoints, id)
		}
	}
	if most > 3*threshold {
		t.Fatalf("the log reached %d bytes with checkpoints every %d", most, threshold)
	}
}

// waitForCheckpointsToCatchUp waits while the log since c's last snapshot
// is at least Tuning.CheckpointBytes (a checkpoint is due or running),
// failing the test after a minute.
func waitForCheckpointsToCatchUp(t *testing.T, c *Collection) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for c.log.Bytes()-c.walAtSnapshot.Load() >= c.tuning.CheckpointBytes {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint within a minute with %d bytes of log since the last (threshold %d)",
				c.log.Bytes()-c.walAtSnapshot.Load(), c.tuning.CheckpointBytes)
		}
		time.Sleep(time.Millisecond)
	}
}
