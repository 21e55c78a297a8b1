//go:build !race

package sitemap

// raceEnabled: see race_on_test.go.
const raceEnabled = false
