package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
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

// TestSettled: a snapshot that shows no lag counts only if no stream's end offset moved across it; one taken
// while messages were produced is taken again, and a crawl that keeps moving is reported crawling rather than
// finished. A snapshot with lag is returned at once.
func TestSettled(t *testing.T) {
	lag := []crawlstatus.Lag{{Stream: string(bus.SpiderFeed), Lag: 0}, {Stream: string(bus.SpiderLog), Lag: 0}}
	finished := crawlstatus.Status{Lags: lag, Verdict: crawlstatus.Verdict{State: crawlstatus.Finished}}
	held := crawlstatus.Status{Lags: lag, Verdict: crawlstatus.Verdict{State: crawlstatus.Idle}} // all queued, none sent
	busy := crawlstatus.Status{Lags: []crawlstatus.Lag{{Stream: string(bus.SpiderFeed), Lag: 3}}, Verdict: crawlstatus.Verdict{State: crawlstatus.Crawling}}
	for _, tc := range []struct {
		name      string
		snapshots []crawlstatus.Status
		ends      []int64 // the spider feed's end offset at each read: two per quiet snapshot, one per busy one
		want      string
		calls     int
	}{
		{"finished, nothing produced", []crawlstatus.Status{finished}, []int64{5, 5}, crawlstatus.Finished, 1},
		{"lag: no confirmation needed", []crawlstatus.Status{busy}, []int64{5}, crawlstatus.Crawling, 1},
		{"a batch sent during the first snapshot", []crawlstatus.Status{finished, busy}, []int64{5, 6, 6}, crawlstatus.Crawling, 2},
		{"moved once, then quiet", []crawlstatus.Status{finished, finished}, []int64{5, 6, 6, 6}, crawlstatus.Finished, 2},
		{"keeps moving", []crawlstatus.Status{finished, finished, finished}, []int64{1, 2, 2, 3, 3, 4}, crawlstatus.Crawling, statusTries},
		{"held, then quiet", []crawlstatus.Status{held, held}, []int64{1, 2, 2, 2}, crawlstatus.Idle, 2},
		{"held, keeps moving", []crawlstatus.Status{held, held, held}, []int64{1, 2, 2, 3, 3, 4}, crawlstatus.Idle, statusTries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, reads := 0, 0
			collect := func(context.Context) (crawlstatus.Status, error) {
				calls++
				return tc.snapshots[calls-1], nil
			}
			ends := func(context.Context) (map[bus.Stream]map[int]int64, error) {
				reads++
				return map[bus.Stream]map[int]int64{bus.SpiderFeed: {0: tc.ends[reads-1]}, bus.SpiderLog: {0: 9}}, nil
			}
			s, err := settled(t.Context(), collect, ends)
			if err != nil {
				t.Fatal(err)
			}
			if s.Verdict.State != tc.want || calls != tc.calls || reads != len(tc.ends) {
				t.Errorf("verdict %s after %d snapshots and %d offset reads, want %s after %d and %d (%v)",
					s.Verdict.State, calls, reads, tc.want, tc.calls, len(tc.ends), s.Verdict.Reasons)
			}
		})
	}
	boom := errors.New("kafka down")
	_, err := settled(t.Context(), func(context.Context) (crawlstatus.Status, error) { return finished, nil },
		func(context.Context) (map[bus.Stream]map[int]int64, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Errorf("end offsets failing: err %v, want %v", err, boom)
	}
}
