//go:build race

package emit_test

// raceEnabled is true under the race detector, which slows the corpus
// sweep about threefold (skipUnderRace).
const raceEnabled = true
