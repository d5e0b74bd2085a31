//go:build race

package tflite

// raceEnabled is true when the race detector, which slows load about
// tenfold, is on; long loops then run their -short counts.
const raceEnabled = true
