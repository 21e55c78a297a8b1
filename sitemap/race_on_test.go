//go:build race

package sitemap

// raceEnabled: these tests run under the race detector (go test -race). deploy/test.sh runs every package that
// has this file once more without it, so a test that skips or shrinks its work under the detector still runs
// whole there (see race_off_test.go).
const raceEnabled = true
