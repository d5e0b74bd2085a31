//go:build race

package main

// raceEnabled is true under the race detector, which slows a corpus sweep
// about tenfold: such a test skips (skipUnderRace) and `make test` runs it
// again without -race.
const raceEnabled = true
