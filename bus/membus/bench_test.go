package membus

import (
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
)

// BenchmarkSendFetchCommit moves feed-sized messages (20-byte key, 200-byte value) through one membus partition
// in batches of 512: Send, Fetch, Commit.
func BenchmarkSendFetchCommit(b *testing.B) {
	const batch = 512
	bb, err := New(DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	ctx := b.Context()
	p, _ := bb.Producer(ctx, bus.SpiderFeed, func([]byte, int) int { return 0 })
	c, _ := bb.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
	msgs := make([]bus.Message, batch)
	val := make([]byte, 200)
	for i := range msgs {
		msgs[i] = bus.Message{Key: []byte("host-000000.example."), Value: val}
	}
	b.SetBytes(batch * 220)
	start := time.Now()
	for b.Loop() {
		if err := p.Send(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
		for n := 0; n < batch; {
			got, err := c.Fetch(ctx, batch)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Commit(ctx, got); err != nil {
				b.Fatal(err)
			}
			n += len(got)
		}
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "msgs/s")
}
