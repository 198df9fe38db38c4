package collection

import (
	"testing"

	"github.com/strata-db/strata/go/vfs/memfs"
)

// TestCreatedCollectionSurvivesPowerLoss: Create made the collection's
// directory without fsyncing its parent, so a power loss right after
// acknowledged writes could take the whole directory, CURRENT and log
// included, away.
func TestCreatedCollectionSurvivesPowerLoss(t *testing.T) {
	fs := memfs.New()
	c := mustCreate(t, "/data/cols/a", Tuning{FS: fs})
	vec := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	if err := c.Upsert(IntIDs([]uint64{42}), vec, nil); err != nil {
		t.Fatal(err)
	}
	fs.Crash(nil)
	c = mustOpen(t, "/data/cols/a", Tuning{FS: fs})
	defer c.Close()
	checkModel(t, c, model{42: {vec: vec, doc: "{}"}})
}
