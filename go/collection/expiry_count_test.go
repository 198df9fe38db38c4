package collection

import (
	"testing"
	"time"
)

// TestDeletingAnExpiredPointCountsItAsGone: a point expired and not yet
// reaped is absent for every read, so deleting it deletes nothing that
// was there, as for a missing id (it counted as deleted).
func TestDeletingAnExpiredPointCountsItAsGone(t *testing.T) {
	c, clock := expiringCollection(t, t.TempDir())
	const n = 6
	upsertExpiring(t, c, n, 10) // the odd ones expire after 10 s
	clock.advance(10 * time.Second)
	// 1 and 3 expired (one listed twice), 2 live, 99 missing.
	got, err := c.Delete(IntIDs([]uint64{1, 3, 1, 2, 99}))
	if err != nil {
		t.Fatal(err)
	}
	if got != 1 {
		t.Fatalf("Delete of two expired points, a live one and a missing one returned %d, want 1", got)
	}
	if got, _ := c.Count(nil); got != 2 {
		t.Fatalf("Count(nil) = %d after the delete, want 2 (0 and 4)", got)
	}
	// The expired points deleted are gone from memory too, as the reaper
	// would have made them; 5 waits for the reaper.
	if got := c.meta.Len(); got != n-3 {
		t.Fatalf("%d documents in memory, want %d", got, n-3)
	}
}

// TestCountWhileTheReaperDeletes: Count(nil) and Len read at the moment
// the reaper's delete has removed an expired point's document but not
// yet its expiry (they subtracted the expired keys from a count that had
// already lost one: off by one while the reaper ran).
func TestCountWhileTheReaperDeletes(t *testing.T) {
	c, clock := expiringCollection(t, t.TempDir())
	const n = 10
	upsertExpiring(t, c, n, 10)
	clock.advance(10 * time.Second)
	var counts, lens []int
	c.hooks.docsDeleted = func() {
		got, err := c.Count(nil)
		if err != nil {
			t.Error(err)
		}
		counts, lens = append(counts, got), append(lens, c.Len())
	}
	if err := c.Reap(); err != nil {
		t.Fatal(err)
	}
	c.hooks.docsDeleted = nil
	if len(counts) == 0 {
		t.Fatal("the reaper deleted nothing")
	}
	for i := range counts {
		if counts[i] != n/2 || lens[i] != n/2 {
			t.Fatalf("mid-reap Count(nil) = %d, Len = %d, want %d", counts[i], lens[i], n/2)
		}
	}
	if got, _ := c.Count(nil); got != n/2 {
		t.Fatalf("Count(nil) after the reap = %d, want %d", got, n/2)
	}
}
