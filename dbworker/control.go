package dbworker

import (
	"context"
	"fmt"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
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

// position is where a spider-log event was read: its partition and offset.
type position struct {
	partition int
	offset    int64
}

// count adds one spider-log batch's outcomes to the counters: the totals, this minute's pages and, per host,
// the request errors (counter CounterErrors of the host's row). at[i], when known, is where events[i] was read:
// each event is then a metadata.Tally of its partition (the source) at its offset (the Seq), so a write retried
// through an outage or a batch replayed after a crash before its commit counts each event once, however the
// replay cuts the batches. The minute rows are keyed by the time of counting, so an event replayed in a later
// minute counts in that minute too (the rows give a rate, not a total).
func (w *Worker) count(ctx context.Context, events []frontier.Message, at []position) error {
	c := w.deps.Counters
	if c == nil {
		return nil
	}
	if len(at) != len(events) {
		at = nil // positions unknown: counted with Add (at least once)
	}
	minute := MinuteRow(w.deps.Now().Unix() / 60)
	var crawled, errs, pages []metadata.Tally
	var hosts []metadata.Tally
	for i, e := range events {
		t := metadata.Tally{Delta: 1}
		if at != nil {
			t.Source, t.Seq = fmt.Sprintf("%s/%d", bus.GroupDBWorkerSpiderLog, at[i].partition), at[i].offset
		}
		switch e := e.(type) {
		case *frontier.PageCrawled:
			t.Domain = CounterRow
			crawled = append(crawled, t)
			t.Domain = minute
			pages = append(pages, t)
		case *frontier.RequestError:
			t.Domain = CounterRow
			errs = append(errs, t)
			if h := e.Request.Hostname(); h != "" {
				t.Domain = h
				hosts = append(hosts, t)
			}
		}
	}
	for _, n := range []struct {
		name    string
		tallies []metadata.Tally
	}{{CounterCrawled, crawled}, {CounterErrors, errs}, {CounterPages, pages}, {CounterErrors, hosts}} {
		if len(n.tallies) == 0 {
			continue
		}
		var err error
		if at != nil {
			_, err = metadata.AddOnce(ctx, c, n.name, n.tallies)
		} else {
			_, err = metadata.AddOnce(ctx, plainAdd{c}, n.name, n.tallies)
		}
		if err != nil {
			return fmt.Errorf("dbworker: count %s: %w", n.name, err)
		}
	}
	return nil
}

// plainAdd hides AddOnce, so metadata.AddOnce writes with Add.
type plainAdd struct{ metadata.Domains }

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
