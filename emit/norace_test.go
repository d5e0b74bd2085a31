//go:build !race

package emit_test

const raceEnabled = false
