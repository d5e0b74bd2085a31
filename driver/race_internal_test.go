//go:build race

package driver

// underRace is true under the race detector (raceEnabled of the external
// tests), which slows the corpus-wide loops about tenfold: they then run
// their -short lists.
const underRace = true
