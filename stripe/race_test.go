//go:build race

package stripe

// raceEnabled is true under the race detector.
const raceEnabled = true
