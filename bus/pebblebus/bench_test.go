package pebblebus

import (
	"flag"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/bus"
)

var benchSync = flag.Bool("bench.sync", false, "benchmarks: fsync every Send and Commit")

// BenchmarkSendFetchCommit moves feed-sized messages (20-byte key, 200-byte value) through one partition in
// batches of 512, Send, Fetch, Commit, on a real directory (the same shape as membus's benchmark).
func BenchmarkSendFetchCommit(b *testing.B) {
	benchSendFetchCommit(b, openDB(b, vfs.Default, b.TempDir()))
}

// BenchmarkSendFetchCommitMemFS is BenchmarkSendFetchCommit on Pebble's in-memory filesystem: what the unit
// tests' bus (membus) would cost if pebblebus on vfs.NewMem replaced it.
func BenchmarkSendFetchCommitMemFS(b *testing.B) {
	benchSendFetchCommit(b, openDB(b, vfs.NewMem(), ""))
}

func benchSendFetchCommit(b *testing.B, db *pebble.DB) {
	const batch = 512
	defer db.Close()
	cfg := DefaultConfig()
	cfg.Sync = *benchSync
	bb, err := Open(db, cfg, nil)
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
	start, cpu0 := time.Now(), cpuTime()
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
	b.ReportMetric(float64(b.N*batch)/(cpuTime()-cpu0).Seconds(), "msgs/cpu-s")
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
