//go:build race

package randmodel_test

// raceEnabled is true under the race detector, which slows these tests
// about tenfold; long loops then run their -short counts.
const raceEnabled = true
