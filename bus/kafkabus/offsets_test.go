package kafkabus

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/frontiercrawl/frontier/bus"
)

// TestLagOutlivesACutListOffsets: kafka-go sends ListOffsets as one request per partition and offset, and
// reports a partition whose request failed on the wire, while others succeeded, with error -1 (Unknown) rather
// than the transport error. Lag and the log start read must wait that out like any outage (a DB worker resumed
// after SIGSTOP exited on it); before, both returned "[-1] Unknown".
func TestLagOutlivesACutListOffsets(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := openTestBus(t, c.ListenAddrs(), map[bus.Stream]int{bus.SpiderFeed: 2})
	for _, read := range []struct {
		name string
		call func() error
	}{
		{"Lag", func() error { _, err := b.Lag(t.Context(), bus.SpiderFeed, "g"); return err }},
		{"Losses", func() error { _, err := b.Losses(t.Context(), bus.SpiderFeed, "g"); return err }},
	} {
		t.Run(read.name, func(t *testing.T) {
			// The second ListOffsets request (the first succeeds, so the answer is partial) has its
			// connection closed; the others are answered. A control function that does not handle a request
			// stays; the one that cuts is dropped.
			var n, cut atomic.Int32
			c.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
				if n.Add(1) == 2 {
					cut.Add(1)
					return nil, errors.New("connection cut by the test"), true
				}
				return nil, nil, false
			})
			if err := read.call(); err != nil {
				t.Fatalf("%s with one ListOffsets request cut: %v", read.name, err)
			}
			if cut.Load() != 1 {
				t.Fatalf("%d ListOffsets requests seen, %d cut: the test cut nothing", n.Load(), cut.Load())
			}
		})
	}
}
