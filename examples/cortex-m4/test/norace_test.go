//go:build !race

package cortexm4_test

const raceEnabled = false
