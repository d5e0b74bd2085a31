//go:build race

package order_test

// raceEnabled is true under the race detector, which slows these tests
// about tenfold; long property loops then run their -short counts.
const raceEnabled = true
