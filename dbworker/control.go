package dbworker

import (
	"context"
	"fmt"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
)

// Control is the run-time control state the batch generator obeys (control.State implements it; see package
// control): while Paused, no batch is generated; the queued URLs of a Blocked host stay in the queue, are not
// dispatched, and are taken by the first batch after the host is unblocked.
type Control interface {
	Paused() bool
	Blocked(host string) bool
}

// paused reports whether dispatch is paused.
func (w *Worker) paused() bool {
	return w.deps.Control != nil && w.deps.Control.Paused()
}

// unblocked drops the items of blocked hosts from a batch. They are not acknowledged, so they stay queued. A
// blocked host takes at most Config.PerHost rows of each batch that Next returns.
func (w *Worker) unblocked(items []queue.Item) []queue.Item {
	if w.deps.Control == nil {
		return items
	}
	out := items[:0]
	for _, it := range items {
		if w.deps.Control.Blocked(it.Host) {
			w.m.held.Inc()
			continue
		}
		out = append(out, it)
	}
	return out
}

// Crawl-wide counters the links role keeps in Deps.Counters (the domain-metadata store), so that
// `frontierctl status` reads totals with a few gets instead of scanning the states. Their rows start with '#',
// which no host name does.
const (
	// CounterRow holds CounterCrawled and CounterErrors, the totals of page_crawled and request_error.
	CounterRow     = "#crawl"
	CounterCrawled = "crawled"
	CounterErrors  = "errors"
	// CounterPages counts page_crawled per minute in row MinuteRow(unix minute), for pages/s over the last minute.
	CounterPages = "pages"
)

// MinuteRow is the counter row of the pages fetched in the minute starting at unix second 60*m.
func MinuteRow(m int64) string { return fmt.Sprintf("#minute:%d", m) }

// count adds one spider-log batch's outcomes to the counters: the totals, this minute's pages and, per host,
// the request errors (counter CounterErrors of the host's row). Counts are at least once: a batch replayed
// after a crash between the increment and the commit is counted twice.
func (w *Worker) count(ctx context.Context, events []frontier.Message) error {
	c := w.deps.Counters
	if c == nil {
		return nil
	}
	var crawled, errs int64
	var hosts []string
	for _, e := range events {
		switch e := e.(type) {
		case *frontier.PageCrawled:
			crawled++
		case *frontier.RequestError:
			errs++
			if h := e.Request.Hostname(); h != "" {
				hosts = append(hosts, h)
			}
		}
	}
	if crawled == 0 && errs == 0 {
		return nil
	}
	if err := add(ctx, c, CounterCrawled, CounterRow, crawled); err != nil {
		return err
	}
	if err := add(ctx, c, CounterErrors, CounterRow, errs); err != nil {
		return err
	}
	if err := add(ctx, c, CounterPages, MinuteRow(w.deps.Now().Unix()/60), crawled); err != nil {
		return err
	}
	if len(hosts) > 0 {
		ones := make([]int64, len(hosts))
		for i := range ones {
			ones[i] = 1
		}
		if _, err := c.Add(ctx, CounterErrors, hosts, ones); err != nil {
			return fmt.Errorf("dbworker: count errors by host: %w", err)
		}
	}
	return nil
}

func add(ctx context.Context, c metadata.Domains, name, row string, n int64) error {
	if n == 0 {
		return nil
	}
	if _, err := c.Add(ctx, name, []string{row}, []int64{n}); err != nil {
		return fmt.Errorf("dbworker: count %s: %w", name, err)
	}
	return nil
}

// PagesPerSecond computes the pages/s of the last minute from the per-minute counters: the full previous
// minute weighted by the part of it still inside the window, plus the current minute so far.
func PagesPerSecond(ctx context.Context, c metadata.Domains, now time.Time) (float64, error) {
	m := now.Unix() / 60
	v, err := c.Get(ctx, CounterPages, []string{MinuteRow(m - 1), MinuteRow(m)})
	if err != nil {
		return 0, err
	}
	into := float64(now.Unix()%60) / 60
	return (float64(v[0])*(1-into) + float64(v[1])) / 60, nil
}
