//go:build race

package dsa

// raceEnabled is true when the race detector, which slows the search about
// tenfold, is on; long tests then do less.
const raceEnabled = true
