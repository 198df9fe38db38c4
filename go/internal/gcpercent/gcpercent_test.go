package gcpercent

import (
	"os"
	"runtime/debug"
	"testing"
)

// current reads GOGC (SetGCPercent is its only reader: it sets and
// returns the setting before).
func current() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestLowerRestoresWhatItFound: holders of several percents get the
// lowest while they hold it, and the last restores the setting found; a
// second call of one restore counts once.
func TestLowerRestoresWhatItFound(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: Lower leaves it alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	open := Lower(25)
	if p := current(); p != 25 {
		t.Fatalf("GOGC %d with a holder of 25, want 25", p)
	}
	merge := Lower(10)
	other := Lower(25)
	if p := current(); p != 10 {
		t.Fatalf("GOGC %d with holders of 25 and 10, want 10", p)
	}
	merge()
	merge()
	if p := current(); p != 25 {
		t.Fatalf("GOGC %d once the 10 is released, want 25", p)
	}
	open()
	if p := current(); p != 25 {
		t.Fatalf("GOGC %d with one holder of 25 left, want 25", p)
	}
	other()
	if p := current(); p != 100 {
		t.Fatalf("GOGC %d with no holder, want the 100 found", p)
	}
}

// TestLowerLeavesALowerSettingAlone: a setting already below the percent
// asked for, or the collector off, stays as it is, and after.
func TestLowerLeavesALowerSettingAlone(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: Lower leaves it alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, found := range []int{5, -1} {
		debug.SetGCPercent(found)
		restore := Lower(10)
		if p := current(); p != found {
			t.Fatalf("GOGC %d while held, want the %d found left alone", p, found)
		}
		restore()
		if p := current(); p != found {
			t.Fatalf("GOGC %d after, want %d", p, found)
		}
	}
}
