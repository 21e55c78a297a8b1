//go:build race

package crawl

// raceEnabled: these tests run under the race detector (go test -race). deploy/test.sh runs every package that
// has this file once more without it, so a test that skips or shrinks its work under the detector still runs
// whole there (see race_off_test.go).
const raceEnabled = true

// Under the race detector the default webs of the two crawl-sized tests are smaller: the same crawls, checked
// the same way (every page fetched once, no robots.txt violation), in seconds rather than minutes; the
// defaults of crawl_test.go and timing_test.go run in deploy/test.sh's pass without -race. A flag given on
// the command line still wins (flags are parsed after init).
func init() {
	*flagSim = "40x25"                          // TestStandaloneSim: 1,000 pages instead of 10,000
	*flagTimingWebs = "delay0:6x10,delay1s:8x2" // TestTimingWeb: 76 pages a crawler instead of 330
	*flagTimingLarge = 2 << 20                  // and a 2 MiB large page on each host instead of 15 MiB
}
