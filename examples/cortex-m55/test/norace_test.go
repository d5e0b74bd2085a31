//go:build !race

package cortexm55_test

const raceEnabled = false
