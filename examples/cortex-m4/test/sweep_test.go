package cortexm4_test

import "testing"

// skipUnderRace skips a sweep under the race detector: TestQEMU runs
// compilers and QEMU per model, which the detector cannot see into, and
// slows only the Go around them. `make test` runs it again without -race
// (SWEEPS in the Makefile; driver's TestSweepsListed keeps that list
// complete, this package's tests included).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a sweep: `make test` runs it without -race (SWEEPS in the Makefile)")
	}
}
