//go:build !race

package randmodel_test

const raceEnabled = false
