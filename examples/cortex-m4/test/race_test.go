//go:build race

package cortexm4_test

// raceEnabled is true under the race detector.
const raceEnabled = true
