//go:build !race

package order_test

const raceEnabled = false
