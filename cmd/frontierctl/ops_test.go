package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/standalone"
)

func writeStatus(t *testing.T, dir string, s crawlstatus.Status) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, standalone.StatusFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStatusDataDir(t *testing.T) {
	finished := crawlstatus.Status{Mode: "standalone", Time: time.Now(), Totals: crawlstatus.Totals{Crawled: 7}}
	finished.Judge()
	crawling := crawlstatus.Status{Mode: "standalone", Time: time.Now(), PagesPerSecond: 3,
		Totals: crawlstatus.Totals{Crawled: 7, Queued: 2}, Queue: []crawlstatus.Depth{{Partition: 0, Queued: 2}}}
	crawling.Judge()
	stale := crawling
	stale.Time = time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name string
		s    *crawlstatus.Status
		code int
		want string
	}{
		{"finished", &finished, 0, "verdict: finished"},
		{"crawling", &crawling, 3, "verdict: crawling"},
		{"stopped mid-crawl", &stale, 4, "not running"},
		{"no crawl", nil, 1, "is "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.s != nil {
				writeStatus(t, dir, *tc.s)
			}
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"status", "--data-dir", dir}, nil, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Fatalf("exit %d (want %d), output:\n%s%s", code, tc.code, stdout.String(), stderr.String())
			}
			if tc.s == nil {
				return
			}
			stdout.Reset()
			run(t.Context(), []string{"status", "--data-dir", dir, "--json"}, nil, &stdout, &stderr)
			var got crawlstatus.Status
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("--json printed %q: %v", stdout.String(), err)
			}
			if got.Totals.Crawled != 7 {
				t.Fatalf("--json totals %+v", got.Totals)
			}
		})
	}
}

func TestControlUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"block"}, "name at least one host"},
		{[]string{"block", "http://example.com/"}, "lower-case host name"},
		{[]string{"unblock", "example.com:80"}, "lower-case host name"},
		{[]string{"pause", "now"}, `unexpected argument "now"`},
		{[]string{"seeds"}, "seeds add FILE"},
		{[]string{"seeds", "add"}, "exactly one seed file"},
		{[]string{"seeds", "add", "--sitemap", "sitemap.xml"}, "not an absolute http(s) URL"},
		{[]string{"seeds", "add", "--sitemap", "http://a.test/sitemap.xml", "seeds.txt"}, "exactly one seed file or --sitemap"},
		{[]string{"status", "--watch", "x"}, "invalid value"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), tc.args, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
