//go:build !race

package liveness_test

const raceEnabled = false
