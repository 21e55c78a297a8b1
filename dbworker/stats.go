package dbworker

import (
	"context"
	"sync/atomic"
	"time"
)

// stats are the running totals of the stats line (the metrics hold the same counts for Prometheus).
type stats struct {
	scheduled, batches, sent, pages atomic.Int64
	lag                             atomic.Int64 // feed lag over every partition at the last check
	// scans of the queue (Next calls), those that came back empty, and those the flow skipped (flowDue, idle)
	scans, emptyScans, skippedScans atomic.Int64
}

func sumLag(lags map[int]int64) int64 {
	var n int64
	for _, l := range lags {
		n += l
	}
	return n
}

// statsLoop logs the stats line every StatsInterval until ctx ends: running totals, and rates over the last
// interval, so an operator reading the log sees the worker alive and moving (or alive and idle).
func (w *Worker) statsLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.StatsInterval)
	defer t.Stop()
	last := time.Now()
	var prevScheduled, prevSent, prevPages int64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			secs := now.Sub(last).Seconds()
			last = now
			sc, se, pg := w.stats.scheduled.Load(), w.stats.sent.Load(), w.stats.pages.Load()
			w.log.Info("dbworker stats",
				"roles", w.cfg.Roles,
				"scheduled", sc, "scheduled_per_s", rate(sc-prevScheduled, secs),
				"batches", w.stats.batches.Load(),
				"dispatched", se, "dispatched_per_s", rate(se-prevSent, secs),
				"pages_recorded", pg, "pages_recorded_per_s", rate(pg-prevPages, secs),
				"feed_lag", w.stats.lag.Load(),
				"scans", w.stats.scans.Load(), "empty_scans", w.stats.emptyScans.Load(), "skipped_scans", w.stats.skippedScans.Load())
			prevScheduled, prevSent, prevPages = sc, se, pg
		}
	}
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(int64(float64(n)/secs*10)) / 10
}
