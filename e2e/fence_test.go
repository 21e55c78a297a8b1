//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// TestDBWorkerPausedPastSession: two DB worker processes share the work of a crawl by the cluster's binaries;
// DB worker A is stopped with SIGSTOP past its session timeout, B takes its partitions over, and A is resumed
// with SIGCONT. A's writes for the partitions it lost are fenced (bus/kafkabus/fence.go): no process exits,
// the crawl completes with every URL accounted for, and a page is fetched twice only as the hand-over's
// at-least-once delivery re-delivers it. B sends again a batch A had sent and not yet acknowledged in the
// queue, and replays the scoring-log messages A had scheduled and not yet committed, whose rows it sends
// again. On the feed (its timestamps set to the broker's append time) such a page has a copy for each fetch,
// one of them appended after A stopped. A stale write of A's looks the same on the feed, so this test does not
// tell the two apart; kafkabus's TestFencedAfterPause and dbworker's TestFencedRolesWriteNothing check the
// fence exactly. It does not restart the servers, so it runs against the shared ones.
func TestDBWorkerPausedPastSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.UseIPs = 6, 40, true
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 300*time.Millisecond, 100*time.Millisecond, 1<<20
	rc := startRoleCluster(t, ctx, "fence", wcfg, cluster.ProcessConfig(500*time.Millisecond), false)
	site, reachable := rc.site, rc.reachable
	a, b := rc.Get("dbw-a"), rc.Get("dbw-b")
	defer rc.Stop()
	feed := rc.env.Kafka.SpiderFeed
	if err := kafkabus.EnsureTopics(ctx, rc.env.Kafka.Brokers, []kafkabus.TopicSpec{{Name: feed.Topic, Partitions: feed.Partitions,
		Configs: map[string]string{"message.timestamp.type": "LogAppendTime"}}}); err != nil {
		t.Fatal(err)
	}
	fetched := func() int { return len(site.Requests()) }
	cluster.WaitFor(t, ctx, "20% of the crawl", func() bool { return fetched() >= reachable/5 })

	ownedB := b.LogCount("owning partitions")
	if err := a.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	cluster.WaitFor(t, ctx, "DB worker B to take A's partitions over", func() bool { return b.LogCount("owning partitions") >= ownedB+3 })
	before := fetched()
	cluster.WaitFor(t, ctx, "B to feed the spiders alone", func() bool { return fetched() > before+5 || fetched() >= reachable })
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("DB worker A stopped for %s; B took over", time.Since(stoppedAt).Round(100*time.Millisecond))

	cluster.WaitIdle(t, ctx, rc.env.Bus(t, "check", nil, nil), rc.env.HBaseClient(t, nil, nil),
		cluster.Wait{Quiet: 3 * time.Second, Retry: true})
	rc.CheckAlive()
	t.Logf("DB worker A after SIGCONT: %d fenced writes refused; log tail:\n%s", a.LogCount("fenced:"), a.Tail(15))

	// A page fetched again after a final answer (not a 5xx, 408 or 429, which the strategy workers retry on
	// purpose) must be the hand-over's re-delivery: a copy on the feed for each fetch (the spider never
	// fetches one copy twice), one of them appended after A stopped.
	check := cluster.CheckCrawl(t, site, true)
	copies := feedCopies(t, ctx, rc.env)
	fetches := map[string]int{}
	for _, r := range site.Requests() {
		if u, ok := pageURL(site, r); ok {
			fetches[u]++
		}
	}
	var bad, redelivered []string
	for _, r := range refetches(site) {
		c := copies[r.URL]
		line := fmt.Sprintf("%s at %s (status %d; fetched %d times; on the feed at %s)", r.URL, r.Req.Start.Format("15:04:05.000"),
			r.Req.Status, fetches[r.URL], stamps(c))
		if fetches[r.URL] <= len(c) && len(c) > 0 && c[len(c)-1].After(stoppedAt) {
			redelivered = append(redelivered, line)
		} else {
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d pages fetched again after a final answer that the hand-over does not explain (A paused at %s):\n%s",
			len(bad), stoppedAt.Format("15:04:05.000"), strings.Join(bad, "\n"))
	}
	if len(redelivered) > 0 {
		t.Logf("%d pages fetched again as the hand-over re-delivered them (at least once; A paused at %s):\n%s",
			len(redelivered), stoppedAt.Format("15:04:05.000"), strings.Join(redelivered, "\n"))
	}
	t.Logf("crawl: %d reachable pages, %d requests, %d fetched again", check.Reachable, len(site.Requests()), len(bad)+len(redelivered))
}

// stamps formats times of day to the millisecond, comma-separated.
func stamps(ts []time.Time) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.Format("15:04:05.000")
	}
	return strings.Join(s, ", ")
}
