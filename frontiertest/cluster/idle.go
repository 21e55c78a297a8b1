package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/queue"
)

// Idle reports whether every committing consumer group of the declared topology (bus.LagGroups) has
// committed everything on its stream, and the queue holds nothing for any spider-feed partition.
func Idle(ctx context.Context, b *kafkabus.Bus, q queue.Queue) (bool, error) {
	for _, sg := range bus.LagGroups() {
		lags, err := b.Lag(ctx, sg.Stream, sg.Group)
		if err != nil {
			return false, err
		}
		for _, l := range lags {
			if l != 0 {
				return false, nil
			}
		}
	}
	for p := range b.Partitions(bus.SpiderFeed) {
		n, err := q.Count(ctx, p)
		if err != nil || n != 0 {
			return false, err
		}
	}
	return true, nil
}

// Wait says how WaitIdle decides that a crawl is over.
type Wait struct {
	// Quiet is how long Idle must hold.
	Quiet time.Duration
	// AfterBusy counts the quiet time only once the cluster was seen busy (a crawl that has not begun is idle).
	AfterBusy bool
	// Retry counts an error (a server that is restarting) as busy; otherwise an error fails the test.
	Retry bool
}

// WaitIdle polls Idle (on hb's queue) every 100 ms until the crawl is over as w says; it fails the test when
// ctx ends first. Once the crawl is over it checks the end-of-crawl accounting invariant on hb's tables
// (frontiertest.RequireAccounted): every cluster crawl that ends here is checked for stranded URLs, and none
// can forget to. Every stream is committed and the queue is empty at that point, so no request is in flight.
func WaitIdle(tb testing.TB, ctx context.Context, b *kafkabus.Bus, hb *hbase.Client, w Wait) {
	tb.Helper()
	waitIdle(tb, ctx, b, hb.Queue(), w)
	frontiertest.RequireAccounted(tb, frontiertest.AccountingStores{States: hb.States(), Queue: hb.Queue(), Pages: hb.Pages()})
}

func waitIdle(tb testing.TB, ctx context.Context, b *kafkabus.Bus, q queue.Queue, w Wait) {
	tb.Helper()
	var quiet time.Time
	busy := !w.AfterBusy
	for {
		idle, err := Idle(ctx, b, q)
		switch {
		case err != nil && ctx.Err() == nil && !w.Retry:
			tb.Fatalf("waiting for the crawl to end: %v", err)
		case err != nil || !idle:
			busy, quiet = true, time.Time{}
		case busy && quiet.IsZero():
			quiet = time.Now()
		}
		if busy && !quiet.IsZero() && time.Since(quiet) >= w.Quiet {
			return
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("the crawl did not finish in time (%v)", context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
