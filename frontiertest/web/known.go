package web

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// OK reports whether the request got a complete 2xx answer (one that Host.Down did not cut short): the only
// answer from which a crawler learns the page's links.
func (r Request) OK() bool { return r.Status >= 200 && r.Status < 300 && !r.End.IsZero() }

// Known returns the pages a crawler of the site could know of now: the seeds and the links of every page that
// got a complete 2xx answer so far, on any host. A page that only pages never served link to is not among them:
// a crawl that never learns of it has lost nothing.
func (s *Site) Known() map[string]bool {
	known := map[string]bool{}
	for _, u := range s.Seeds() {
		known[u] = true
	}
	for _, h := range slices.Concat(s.content, s.special) {
		for _, r := range h.Requests() {
			if r.OK() {
				for _, u := range s.Links(h.URL(r.Target)) {
					known[u] = true
				}
			}
		}
	}
	return known
}

// Unasked returns, sorted, the pages of h among Known that h was never asked for (a request in flight counts as
// asked). When it is empty, all a crawler has left to ask h for are the retries of its failed pages, and the
// pages that only those link to.
func (s *Site) Unasked(h *Host) []string {
	return s.knownWithout(h, func(Request) bool { return true })
}

// NeverServed returns, sorted, the pages of h among Known that got no complete 2xx answer: after h went down for
// good, the pages a crawl must end in error.
func (s *Site) NeverServed(h *Host) []string {
	return s.knownWithout(h, Request.OK)
}

// knownWithout returns, sorted, the pages of h among Known for which h's log holds no request that counts
// (counts reports true).
func (s *Site) knownWithout(h *Host, counts func(Request) bool) []string {
	had := map[string]bool{}
	for _, r := range h.Requests() {
		if counts(r) {
			had[h.URL(r.Target)] = true
		}
	}
	var out []string
	for u := range s.Known() {
		if strings.HasPrefix(u, h.Origin+"/") && !had[u] {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// DownWatch takes a host down once it has only retries left; see Site.DownWhenOnlyRetriesLeft.
type DownWatch struct {
	once    sync.Once
	stop    chan struct{}
	done    chan struct{}
	at      time.Duration
	pending []string
}

// DownWhenOnlyRetriesLeft watches h (every 5 ms) and takes it down (Host.Down) as soon as Unasked(h) is empty
// and none of its requests is in flight: every page of it the crawl could know of was asked for and answered,
// so all it has left are the retries of its failed pages (an answer still in flight could yet be a 2xx whose
// links are new pages of h). Stop ends the watch.
func (s *Site) DownWhenOnlyRetriesLeft(h *Host) *DownWatch {
	w := &DownWatch{stop: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			reqs := h.Requests()
			if slices.ContainsFunc(reqs, func(r Request) bool { return r.End.IsZero() }) || len(s.Unasked(h)) > 0 {
				continue
			}
			answers := map[string][]int{} // URL → statuses of its requests
			for _, r := range reqs {
				answers[h.URL(r.Target)] = append(answers[h.URL(r.Target)], r.Status)
			}
			h.Down()
			w.at = time.Since(start)
			for u, st := range answers {
				if s.Page(u) != nil && !slices.ContainsFunc(st, func(s int) bool { return s < 400 }) {
					w.pending = append(w.pending, u)
				}
			}
			slices.Sort(w.pending)
			return
		}
	}()
	return w
}

// Stop ends the watch and returns how long after the watch began the host went down (0 if it did not) and the
// pages whose every answer was a failure at that moment: the retries it had left. It may be called
// more than once.
func (w *DownWatch) Stop() (at time.Duration, pending []string) {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return w.at, w.pending
}
