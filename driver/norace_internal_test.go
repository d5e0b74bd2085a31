//go:build !race

package driver

const underRace = false
