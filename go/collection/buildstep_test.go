package collection

import (
	"testing"
	"time"
)

// TestBuildStepFollowsTheBuildersRate: a step takes about buildStepTarget
// of the builder's measured rate, within [minBuildBatch, buildBatch], so a
// writer held by backpressure waits for one short step, not for 4,096
// rows of a slow (512-d, ef_construction 200) build.
func TestBuildStepFollowsTheBuildersRate(t *testing.T) {
	var f vectorField
	if got := f.stepRows(); got != minBuildBatch {
		t.Fatalf("before any step: %d rows, want %d", got, minBuildBatch)
	}
	f.noteStep(64, 64*time.Millisecond) // 1,000 rows/s
	if got, want := f.stepRows(), 100; got != want {
		t.Fatalf("at 1,000 rows/s: %d rows, want %d", got, want)
	}
	// A step slowed tenfold by the machine moves the rate part of the way.
	f.noteStep(100, time.Second)
	if got := f.stepRows(); got <= minBuildBatch || got >= 100 {
		t.Fatalf("after one slow step: %d rows, want between %d and 100", got, minBuildBatch)
	}
	// A fast builder (128-d) takes up to buildBatch rows a step.
	for range 20 {
		f.noteStep(4096, 10*time.Millisecond)
	}
	if got := f.stepRows(); got != buildBatch {
		t.Fatalf("at 400k rows/s: %d rows, want %d", got, buildBatch)
	}
	// A very slow one still moves minBuildBatch rows a step.
	for range 40 {
		f.noteStep(64, 10*time.Second)
	}
	if got := f.stepRows(); got != minBuildBatch {
		t.Fatalf("at 6 rows/s: %d rows, want %d", got, minBuildBatch)
	}
	// Steps of a few rows (the tail's last rows) do not count.
	before := f.buildRate
	f.noteStep(3, time.Nanosecond)
	if f.buildRate != before {
		t.Fatalf("a 3-row step moved the rate from %v to %v", before, f.buildRate)
	}
}
