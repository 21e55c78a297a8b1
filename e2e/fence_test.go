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
// with SIGCONT. A must not write for the partitions it lost (its writes are fenced, see bus/kafkabus/fence.go):
// no page is fetched twice, no process exits, and the crawl completes. One re-fetch is allowed, the one
// delivery at least once implies: a batch A put on the feed before it stopped, and had not yet acknowledged
// in the queue, is sent again by B. The feed's append times (LogAppendTime) tell that re-send from a stale
// write of A's. It does not restart the servers, so it runs against the shared ones.
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

	// No page fetched twice: a final answer (not a 5xx, 408 or 429, which the strategy workers retry on
	// purpose) served twice would be a batch sent by both A and B, unless A had sent it before it stopped.
	// B owns nothing of A's before A's session (10 s) ends, and a request A had in flight lands well within
	// inFlight of the stop.
	const inFlight = 2 * time.Second
	check := cluster.CheckCrawl(t, site, true)
	copies := feedCopies(t, ctx, rc.env)
	var twice, resent []string
	again := refetches(site)
	times := map[string]int{} // refetches per URL: the re-send explains one
	for _, r := range again {
		times[r.URL]++
	}
	for _, r := range again {
		line := fmt.Sprintf("%s at %s (status %d; on the feed at %s)", r.URL, r.Req.Start.Format("15:04:05.000"), r.Req.Status, stamps(copies[r.URL]))
		if times[r.URL] == 1 && sentBeforeAndAfter(copies[r.URL], stoppedAt.Add(inFlight)) {
			resent = append(resent, line)
		} else {
			twice = append(twice, line)
		}
	}
	if len(twice) > 0 {
		t.Errorf("%d pages fetched again after a final answer (A paused at %s):\n%s", len(twice), stoppedAt.Format("15:04:05.000"), strings.Join(twice, "\n"))
	}
	if len(resent) > 0 {
		t.Logf("%d pages fetched again as B re-sent a batch A had sent and not acknowledged when it stopped (at least once):\n%s", len(resent), strings.Join(resent, "\n"))
	}
	t.Logf("crawl: %d reachable pages, %d requests, %d fetched twice", check.Reachable, len(site.Requests()), len(twice)+len(resent))
}

// sentBeforeAndAfter reports whether a URL's feed copies (append times in offset order) hold one appended
// before at and the next one after it: a batch sent by the stopped worker and again by the one that took over.
func sentBeforeAndAfter(copies []time.Time, at time.Time) bool {
	for i := 1; i < len(copies); i++ {
		if copies[i-1].Before(at) && !copies[i].Before(at) {
			return true
		}
	}
	return false
}

func stamps(ts []time.Time) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.Format("15:04:05.000")
	}
	return strings.Join(s, ", ")
}
