//go:build race

package waittest

const raceEnabled = true
