//go:build !race

package state_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
