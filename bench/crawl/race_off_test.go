//go:build !race

package crawl

// raceEnabled: see race_on_test.go.
const raceEnabled = false
