package launch

import (
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// The demo passes only when the crawl matches the site's ground truth; the error names what failed.
func TestDemoVerdict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check web.CrawlCheck
		want  string // "" = pass
	}{
		{"clean", web.CrawlCheck{Reachable: 10, Twice: map[string]int{}}, ""},
		{"missing", web.CrawlCheck{Reachable: 10, Missing: []string{"http://a/1", "http://a/2"}}, "2 missing (http://a/1, http://a/2)"},
		{"twice", web.CrawlCheck{Reachable: 10, Twice: map[string]int{"http://a/1": 2}}, "1 fetched twice (http://a/1 ×2)"},
		{"robots", web.CrawlCheck{Reachable: 10, RobotsViolations: []string{"http://a/private"}}, "1 robots violations"},
		{"unserved", web.CrawlCheck{Reachable: 10, Unserved: []string{"http://a/3"}}, "1 never answered 2xx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := demoVerdict(tc.check)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("clean crawl failed: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("verdict = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
