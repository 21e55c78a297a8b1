package spider

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// statsLoop logs the stats line every StatsInterval until ctx ends.
func (s *Spider) statsLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.StatsInterval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.logStats(now.Sub(last))
			last = now
		}
	}
}

// logStats logs one stats line covering the counts since the previous line, over interval (0: the final
// line, with totals).
func (s *Spider) logStats(interval time.Duration) {
	pages, bytes, errs, lnks := s.nPages.Swap(0), s.nBytes.Swap(0), s.nErrors.Swap(0), s.nLinks.Swap(0)
	s.errMu.Lock()
	byName := make([]any, 0, 2*len(s.errByName))
	names := make([]string, 0, len(s.errByName))
	for k := range s.errByName {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		byName = append(byName, slog.Int64(k, s.errByName[k]))
	}
	clear(s.errByName)
	s.errMu.Unlock()

	type hq struct {
		name string
		n    int
	}
	var queues []hq
	s.hostsMu.Lock()
	hosts := len(s.hosts)
	queued := 0
	for _, h := range s.hosts {
		queued += len(h.queue)
		if len(h.queue) > 0 {
			queues = append(queues, hq{h.name, len(h.queue)})
		}
	}
	s.hostsMu.Unlock()
	slices.SortFunc(queues, func(a, b hq) int { return b.n - a.n })
	top := make([]any, 0, 5)
	for _, q := range queues[:min(5, len(queues))] {
		top = append(top, slog.Int(q.name, q.n))
	}
	secs := interval.Seconds()
	rate := func(n int64, per float64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs * per
	}
	s.log.Info("spider stats",
		"feed_partition", s.deps.Partition,
		"interval", interval.Round(time.Millisecond),
		"pages", pages, "pages_per_min", int64(rate(pages, 60)),
		"bytes_per_s", int64(rate(bytes, 1)),
		"links", lnks, "errors", errs, slog.Group("errors_by_class", byName...),
		"in_flight", len(s.inflight), "pending", s.tracker.len(), "uncommitted", s.tracker.tracked(), "queued", queued, "hosts", hosts,
		"body_mb_in_memory", s.fetcher.budget.inUse()>>20, "body_spills", s.fetcher.budget.spills.Load(),
		"duplicates", s.nDuplicates.Load(),
		slog.Group("largest_host_queues", top...))
}
