// Package crawlstatus is the shape of a crawl's status report (what `frontierctl status` prints and the
// standalone writes to its data directory) and the rule that turns the figures into a verdict: crawling, idle
// with work queued (and why), or finished.
//
// The figures are gathered elsewhere, cheaply: totals from counters the DB worker keeps in the store (cluster)
// or from the standalone's own counters, lags from the bus, queue depths from the queue's count. This package
// only holds them and judges; it imports the standard library only, so the standalone and the command-line
// tool share one format and one rule.
package crawlstatus

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The verdicts.
const (
	Crawling = "crawling" // pages were fetched in the last minute
	Idle     = "idle"     // work is left, but nothing was fetched in the last minute (Verdict.Reasons says why)
	Finished = "finished" // nothing queued, nothing in flight, every log consumed
)

// Exit codes of `frontierctl status` for scripts (1 and 2 are errors and usage errors).
const (
	ExitFinished = 0
	ExitCrawling = 3
	ExitIdle     = 4
)

// Status is one snapshot of a crawl. Zero values mean zero, except where noted.
type Status struct {
	Mode string    `json:"mode"` // "cluster" or "standalone"
	Time time.Time `json:"time"`
	// Totals are crawl-wide counts.
	Totals Totals `json:"totals"`
	// PagesPerSecond is the rate of fetched pages (page_crawled outcomes) over the last minute.
	PagesPerSecond float64 `json:"pages_per_second"`
	// Lags lists, per stream, consumer group and partition, the messages not yet committed.
	Lags []Lag `json:"lags"`
	// Queue lists the queued URLs of each spider-feed partition.
	Queue []Depth `json:"queue"`
	// TopQueued are the hosts with the most queued URLs among the best-ranked rows of each partition (the
	// rows the next batches come from), most first; TopErrors the hosts with the most request errors.
	TopQueued []HostCount `json:"top_queued"`
	TopErrors []HostCount `json:"top_errors"`
	// Control is the run-time control state (pause, blocked hosts) as the control stream says.
	Control Control `json:"control"`
	Verdict Verdict `json:"verdict"`
	// Stale is set by a reader of a standalone's status file whose process no longer updates it.
	Stale bool `json:"stale,omitempty"`
}

// Totals are the crawl's counts by URL state.
type Totals struct {
	Queued   int64 `json:"queued"`    // in the queue, not yet dispatched
	InFlight int64 `json:"in_flight"` // dispatched on the spider feed, not yet reported by a spider
	Crawled  int64 `json:"crawled"`   // page_crawled outcomes (any HTTP status)
	Errors   int64 `json:"errors"`    // request_error outcomes
	Links    int64 `json:"links,omitempty"`
}

// Lag is one partition's backlog in one consumer group.
type Lag struct {
	Stream    string `json:"stream"`
	Group     string `json:"group"`
	Partition int    `json:"partition"`
	Lag       int64  `json:"lag"`
}

// Depth is the queue depth of one spider-feed partition.
type Depth struct {
	Partition int   `json:"partition"`
	Queued    int64 `json:"queued"`
}

// HostCount is a host and a count.
type HostCount struct {
	Host  string `json:"host"`
	Count int64  `json:"count"`
}

// Control is the run-time control state.
type Control struct {
	Paused  bool     `json:"paused"`
	Blocked []string `json:"blocked,omitempty"`
}

// Verdict is the judgement of a Status.
type Verdict struct {
	State   string   `json:"state"`
	Reasons []string `json:"reasons,omitempty"`
}

// ExitCode maps the verdict to the exit code of `frontierctl status`.
func (v Verdict) ExitCode() int {
	switch v.State {
	case Finished:
		return ExitFinished
	case Crawling:
		return ExitCrawling
	}
	return ExitIdle
}

// Judge computes s.Verdict from the figures:
//   - finished: nothing queued, nothing in flight, and every lag zero;
//   - crawling: not finished, and pages were fetched in the last minute;
//   - idle: not finished and nothing fetched, with the reasons it can see: dispatch paused, a spider-feed
//     partition holding requests no spider takes, a log partition no consumer reads, queued partitions that
//     get no batch (every queued host blocked, or every queued URL not yet due).
func (s *Status) Judge() {
	s.Verdict = judge(s)
}

func judge(s *Status) Verdict {
	var lag int64
	for _, l := range s.Lags {
		lag += l.Lag
	}
	var queued int64
	for _, d := range s.Queue {
		queued += d.Queued
	}
	if queued == 0 && s.Totals.Queued == 0 && s.Totals.InFlight == 0 && lag == 0 {
		return Verdict{State: Finished}
	}
	if s.PagesPerSecond > 0 {
		return Verdict{State: Crawling}
	}
	var why []string
	if s.Control.Paused {
		why = append(why, "dispatch is paused (frontierctl resume)")
	}
	feedLag := map[int]int64{}
	for _, l := range s.Lags {
		if l.Lag == 0 {
			continue
		}
		if l.Stream == "spider-feed" {
			feedLag[l.Partition] = l.Lag
			why = append(why, fmt.Sprintf("no spider is consuming spider-feed partition %d (%d requests waiting)", l.Partition, l.Lag))
			continue
		}
		why = append(why, fmt.Sprintf("no %s consumer is reading %s partition %d (%d messages behind)", l.Group, l.Stream, l.Partition, l.Lag))
	}
	if !s.Control.Paused {
		for _, d := range s.Queue {
			if d.Queued == 0 || feedLag[d.Partition] > 0 {
				continue
			}
			reason := "every queued host is blocked or waiting on politeness or a revisit time, or no DB worker runs the batches role"
			if len(s.Control.Blocked) > 0 && allBlocked(s.TopQueued, s.Control.Blocked) {
				reason = "every queued host is blocked (frontierctl unblock)"
			}
			why = append(why, fmt.Sprintf("spider-feed partition %d has %d queued URLs but gets no batch: %s", d.Partition, d.Queued, reason))
		}
	}
	if len(why) == 0 {
		why = append(why, "work is left but nothing was fetched in the last minute")
	}
	return Verdict{State: Idle, Reasons: why}
}

// allBlocked reports whether every host of top is blocked (a host is blocked by its own name or a parent
// domain's).
func allBlocked(top []HostCount, blocked []string) bool {
	if len(top) == 0 {
		return false
	}
	for _, h := range top {
		if !Blocked(h.Host, blocked) {
			return false
		}
	}
	return true
}

// Blocked reports whether host is one of blocked or a subdomain of one of them.
func Blocked(host string, blocked []string) bool {
	return slices.ContainsFunc(blocked, func(b string) bool { return host == b || strings.HasSuffix(host, "."+b) })
}

// Top returns the n hosts with the highest counts, highest first, ties by name.
func Top(counts map[string]int64, n int) []HostCount {
	out := make([]HostCount, 0, len(counts))
	for h, c := range counts {
		if c > 0 {
			out = append(out, HostCount{Host: h, Count: c})
		}
	}
	slices.SortFunc(out, func(a, b HostCount) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Host, b.Host)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Write prints s for people.
func (s *Status) Write(w io.Writer) {
	stale := ""
	if s.Stale {
		stale = " (stale: the process no longer updates its status)"
	}
	fmt.Fprintf(w, "%s crawl at %s%s\n", s.Mode, s.Time.UTC().Format(time.RFC3339), stale)
	t := s.Totals
	fmt.Fprintf(w, "  queued %d  in flight %d  crawled %d  errors %d  pages/s %.2f (last minute)\n",
		t.Queued, t.InFlight, t.Crawled, t.Errors, s.PagesPerSecond)
	if len(s.Queue) > 0 {
		fmt.Fprint(w, "  queue by partition:")
		for _, d := range s.Queue {
			fmt.Fprintf(w, " %d=%d", d.Partition, d.Queued)
		}
		fmt.Fprintln(w)
	}
	if len(s.Lags) > 0 {
		fmt.Fprintln(w, "  lag (stream / group: partition=lag):")
		var cur string
		for _, l := range s.Lags {
			k := l.Stream + " / " + l.Group
			if k != cur {
				if cur != "" {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "    %s:", k)
				cur = k
			}
			fmt.Fprintf(w, " %d=%d", l.Partition, l.Lag)
		}
		fmt.Fprintln(w)
	}
	hosts := func(title string, hs []HostCount) {
		if len(hs) == 0 {
			return
		}
		fmt.Fprintf(w, "  %s:", title)
		for _, h := range hs {
			fmt.Fprintf(w, " %s=%d", h.Host, h.Count)
		}
		fmt.Fprintln(w)
	}
	hosts("top hosts by queued", s.TopQueued)
	hosts("top hosts by errors", s.TopErrors)
	if s.Control.Paused || len(s.Control.Blocked) > 0 {
		fmt.Fprintf(w, "  control: paused=%v blocked=%s\n", s.Control.Paused, strings.Join(s.Control.Blocked, ","))
	}
	fmt.Fprintf(w, "verdict: %s\n", s.Verdict.State)
	for _, r := range s.Verdict.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
}

// Rate is a rolling count of events over a window (the last minute for pages/s). Not safe for concurrent use.
type Rate struct {
	Window  time.Duration
	samples []sample
}

type sample struct {
	t time.Time
	n int64
}

// Observe records that the cumulative count was n at t.
func (r *Rate) Observe(t time.Time, n int64) {
	r.samples = append(r.samples, sample{t, n})
	w := r.window()
	i := 0
	for i < len(r.samples)-1 && t.Sub(r.samples[i+1].t) >= w {
		i++
	}
	r.samples = r.samples[i:]
}

func (r *Rate) window() time.Duration {
	if r.Window <= 0 {
		return time.Minute
	}
	return r.Window
}

// PerSecond is the count's increase per second over the window (or over the samples held, if shorter).
func (r *Rate) PerSecond() float64 {
	if len(r.samples) < 2 {
		return 0
	}
	a, b := r.samples[0], r.samples[len(r.samples)-1]
	d := b.t.Sub(a.t)
	if d <= 0 {
		return 0
	}
	return float64(b.n-a.n) / d.Seconds()
}
