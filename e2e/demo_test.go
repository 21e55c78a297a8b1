//go:build integration

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemo runs the README's first command, `standalone --demo` (built as `go install` builds it, in an empty
// directory), as part of the test command: the demo crawls its synthetic site and checks the crawl against the
// site's ground truth, and exits non-zero when that check fails (a page missing or fetched twice, a robots.txt
// violation). About 20 s.
func TestDemo(t *testing.T) {
	bin := buildStandalone(t)
	dir := t.TempDir()
	p := startCrawl(t, bin, dir, "--demo", "--set", "metrics.addr=")
	select {
	case <-p.Done():
		if err := p.Err(); err != nil {
			t.Fatalf("the demo failed (%v):\n%s", err, tail(p.Log(), 30))
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("the demo did not finish in 3 minutes:\n%s", tail(p.Log(), 30))
	}
	out := p.Log()
	for _, want := range []string{"checked against the demo site's ground truth", "missing 0", "fetched twice      0", "robots violations  0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's report lacks %q:\n%s", want, tail(out, 15))
		}
	}
	// The demo's data directory: the default standalone.data_dir, with "-demo" (launch/standalone.go).
	requireAccounted(t, filepath.Join(dir, "data", "standalone-demo"))
	t.Log(grepLines(out, "crawl finished", "pages fetched", "reachable URLs", "fetched twice", "robots violations", "WARC"))
}
