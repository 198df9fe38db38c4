package main

import "testing"

// TestChooseProcsLeavesLimitsAlone guards the spare thread's conditions: it
// must never override what a user set, nor exceed a container's CPU quota
// (extra threads there only reach the quota sooner and get throttled).
func TestChooseProcsLeavesLimitsAlone(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		flag                      int
		env                       bool
		runtimeProcs, cpus, wantN int
	}{
		{"flag wins", 5, true, 2, 8, 5},
		{"environment variable", 0, true, 6, 8, 6},
		{"cgroup limit", 0, false, 2, 8, 2},
		{"machine of two cores", 0, false, 2, 2, 3},
		{"single core", 0, false, 1, 1, 2},
	} {
		if n, why := chooseProcs(tc.flag, tc.env, tc.runtimeProcs, tc.cpus); n != tc.wantN || why == "" {
			t.Errorf("%s: got %d (%q), want %d", tc.name, n, why, tc.wantN)
		}
	}
}
