package bustest

import (
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// SendFetchCommit is the benchmark the in-process buses share (BenchmarkSendFetchCommit of bus/membus and
// bus/pebblebus): it moves feed-sized messages (20-byte key, 200-byte value) through partition 0 of b's
// spider feed in batches of 512, Send, Fetch, Commit, and reports messages per wall second and per CPU second.
func SendFetchCommit(tb *testing.B, b bus.Bus) {
	const batch = 512
	ctx := tb.Context()
	p, err := b.Producer(ctx, bus.SpiderFeed, func([]byte, int) int { return 0 })
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	c, err := b.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	msgs := make([]bus.Message, batch)
	val := make([]byte, 200)
	for i := range msgs {
		msgs[i] = bus.Message{Key: []byte("host-000000.example."), Value: val}
	}
	tb.SetBytes(batch * 220)
	start, cpu0 := time.Now(), cputime.Process()
	for tb.Loop() {
		if err := p.Send(ctx, msgs...); err != nil {
			tb.Fatal(err)
		}
		for n := 0; n < batch; {
			got, err := c.Fetch(ctx, batch)
			if err != nil {
				tb.Fatal(err)
			}
			if err := c.Commit(ctx, got); err != nil {
				tb.Fatal(err)
			}
			n += len(got)
		}
	}
	tb.ReportMetric(float64(tb.N*batch)/time.Since(start).Seconds(), "msgs/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		tb.ReportMetric(float64(tb.N*batch)/cpu.Seconds(), "msgs/cpu-s")
	}
}
