//go:build !race

package waittest

const raceEnabled = false
