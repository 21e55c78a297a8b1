//go:build integration

package hbase

import (
	"bytes"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/queue"
)

// TestIntegrationAckKeepsARetryScheduledMeanwhile: a DB worker acknowledges a batch it sent (Ack reads the
// rows, then deletes those that still hold the request sent), and the delete is held back by an outage after
// the read; meanwhile another DB worker, with a client of its own, schedules the same URL again (a retry: the
// first attempt was fetched and failed meanwhile). When the outage ends the acknowledgement must not delete
// the retry's row, or the URL stays QUEUED with no queue row, never fetched (hbase/queue.go, ackDelete).
func TestIntegrationAckKeepsARetryScheduledMeanwhile(t *testing.T) {
	cfg := testConfig(t)
	if cfg.Transport != "framed" {
		t.Skipf("the proxy counts answers in frames: the gateway's transport is %q", cfg.Transport)
	}
	other := openTest(t, cfg) // the other DB worker, straight to the gateway
	p := newCutProxy(t, cfg.Addr)
	pcfg := cfg
	pcfg.Addr = p.addr()
	pcfg.RetryBackoff, pcfg.MaxRetryBackoff = 5*time.Millisecond, 50*time.Millisecond
	c := openTest(t, pcfg)
	ctx := t.Context()
	item := func(req byte) queue.Item {
		return queue.Item{Partition: 1, Host: "ack.example", Fingerprint: fpOf("ack"), Score: 0.5, Request: []byte{req}}
	}
	if err := other.Queue().Schedule(ctx, []queue.Item{item(1)}); err != nil {
		t.Fatal(err)
	}
	taken, err := c.Queue().Next(ctx, 1, time.Now().Unix(), queue.Limits{Max: 10})
	if err != nil || len(taken) != 1 {
		t.Fatalf("Next = %v, %v; want the item scheduled", taken, err)
	}
	refused := p.retrying()
	cutNow := p.downAfterAnswer(1) // Ack's read (one getMultiple) is answered; its delete waits for heal
	done := make(chan error, 1)
	go func() { done <- c.Queue().Ack(ctx, taken) }()
	for _, ch := range []<-chan struct{}{cutNow, refused} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("the acknowledgement was not held back between its read and its delete")
		}
	}
	if err := other.Queue().Schedule(ctx, []queue.Item{item(2)}); err != nil {
		t.Fatal(err)
	}
	p.heal()
	if err := <-done; err != nil {
		t.Fatalf("Ack after the outage: %v", err)
	}
	left, err := other.Queue().Next(ctx, 1, time.Now().Unix(), queue.Limits{Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || !bytes.Equal(left[0].Request, []byte{2}) {
		t.Errorf("after the held-back Ack the queue holds %v, want the retry scheduled meanwhile (request [2])", left)
	}
}
