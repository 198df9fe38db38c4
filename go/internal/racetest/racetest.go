// Package racetest lets a test say that it checks answers only, so that
// the race detector's pass of make go-test skips it.
//
// Under -race the build and search loops run 5-20 times slower, and the
// tests that check answers (recall against exact search, crash and
// power-loss sweeps over every step, save/load round trips, model tests)
// took most of CI's race pass while finding nothing the detector looks
// for: their goroutines are only those every test of the package starts
// (a parallel build, a collection's committer and builder), which the
// tests made for concurrency exercise under -race as well (searches beside
// adds and merges, checkpoints beside writes, killed workloads). make
// go-test runs the packages that use AnswersOnly a second time without
// -race (on the pure-Go kernels, which go/kernels' tests show give the
// assembly's results bit for bit), and make crash-ci runs the crash
// harness's package without it.
package racetest

import "testing"

// AnswersOnly skips t under the race detector (see the package doc).
func AnswersOnly(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("checks answers only: make go-test runs it without -race")
	}
}
