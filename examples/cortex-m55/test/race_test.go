//go:build race

package cortexm55_test

// raceEnabled is true under the race detector.
const raceEnabled = true
