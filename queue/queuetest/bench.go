package queuetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/queue"
)

// Items returns n due items of partition p spread over hosts hosts, with random scores (deterministic).
func Items(p, n, hosts int, seed uint64) []queue.Item {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]queue.Item, n)
	for i := range out {
		h := rng.IntN(hosts)
		out[i] = queue.Item{
			Partition:   p,
			Host:        fmt.Sprintf("host%05d.example.com", h),
			Fingerprint: FP(fmt.Sprintf("%d/%d/%d", seed, p, i)),
			Score:       rng.Float64(),
			Request:     fmt.Appendf(nil, "\x94\xd9\x2ehttp://host%05d.example.com/page/%d/item\xa3GET\x80\x80", h, i),
		}
	}
	return out
}

// Load schedules items in batches of 4,096.
func Load(tb testing.TB, q queue.Queue, items []queue.Item) {
	tb.Helper()
	for lo := 0; lo < len(items); lo += 4096 {
		if err := q.Schedule(context.Background(), items[lo:min(lo+4096, len(items))]); err != nil {
			tb.Fatalf("queuetest: load: %v", err)
		}
	}
}

// BenchSchedule measures Schedule of new URLs in batches of batch items over 10,000 hosts and 8 partitions;
// it reports URLs/s and URLs/cpu-s (time inside Schedule only: the benchmark makes fresh fingerprints
// between calls).
func BenchSchedule(b *testing.B, q queue.Queue, batch int) {
	const pool = 64
	batches := make([][]queue.Item, pool)
	for i := range batches {
		batches[i] = Items(i%8, batch, 10_000, uint64(i)+100)
	}
	ctx := context.Background()
	n := 0
	var spent, cpu time.Duration
	for b.Loop() {
		items := batches[n%pool]
		if n >= pool { // new fingerprints every round, so each op schedules new rows
			for i := range items {
				items[i].Fingerprint = FP(fmt.Sprintf("r%d/%d", n, i))
			}
		}
		start, c0 := time.Now(), cputime.Process()
		if err := q.Schedule(ctx, items); err != nil {
			b.Fatal(err)
		}
		spent += time.Since(start)
		cpu += cputime.Process() - c0
		n++
	}
	b.ReportMetric(float64(n*batch)/spent.Seconds(), "URLs/s")
	if cpu > 0 {
		b.ReportMetric(float64(n*batch)/cpu.Seconds(), "URLs/cpu-s")
	}
}

// NextLimits is the batch shape of the Next benchmark: 1,024 requests, at most 128 per host, at least 24
// hosts (Frontera's BC_MAX_REQUESTS_PER_HOST and BC_MIN_HOSTS).
var NextLimits = queue.Limits{Max: 1024, PerHost: 128, MinHosts: 24}

// BenchNext measures Next(NextLimits) on a queue holding rows due items of partition 0 over hosts hosts (it
// loads them). With ack, every op also acknowledges its batch (the queue drains as a crawl's would); without,
// every op reads the same best rows. It reports ms/batch (wall, Next only), cpu-ms/batch, items/batch and,
// with ack, ack-ms/batch and ack-cpu-ms/batch (process CPU: Pebble's compactions of the deletions included).
func BenchNext(b *testing.B, q queue.Queue, rows, hosts int, ack bool) {
	Load(b, q, Items(0, rows, hosts, 1))
	ctx := context.Background()
	var n, items int
	var spent, cpu, acking, ackCPU time.Duration
	for b.Loop() {
		start, c0 := time.Now(), cputime.Process()
		got, err := q.Next(ctx, 0, time.Now().Unix(), NextLimits)
		spent += time.Since(start)
		cpu += cputime.Process() - c0
		if err != nil {
			b.Fatal(err)
		}
		if ack {
			start, c0 := time.Now(), cputime.Process()
			if err := q.Ack(ctx, got); err != nil {
				b.Fatal(err)
			}
			acking += time.Since(start)
			ackCPU += cputime.Process() - c0
		}
		n++
		items += len(got)
	}
	b.ReportMetric(float64(spent.Microseconds())/1000/float64(n), "ms/batch")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/batch")
	b.ReportMetric(float64(items)/float64(n), "items/batch")
	if ack {
		b.ReportMetric(float64(acking.Microseconds())/1000/float64(n), "ack-ms/batch")
		b.ReportMetric(float64(ackCPU.Microseconds())/1000/float64(n), "ack-cpu-ms/batch")
	}
}

// BenchNextFlow measures Next the way the DB worker's flow calls it on the fast web: hosts hosts of perHost due
// rows each, all of one score (the basic strategy's), and a HostCap that gives 16 requests to one host in
// every roomEvery and 0 to the others (their spider queues are full), so most hosts are passed over. Peek
// mode (no ack): every op reads the same rows. It reports cpu-us/batch, items/batch and skipped-hosts/batch
// (hosts the cap left out: what the queue must seek past; Pebble seeks once per such host).
func BenchNextFlow(b *testing.B, q queue.Queue, hosts, perHost, roomEvery int) {
	items := make([]queue.Item, 0, hosts*perHost)
	for h := range hosts {
		for i := range perHost {
			items = append(items, queue.Item{
				Host:        fmt.Sprintf("h%d.test", h),
				Fingerprint: FP(fmt.Sprintf("flow/%d/%d", h, i)),
				Score:       1,
				Request:     fmt.Appendf(nil, "\x94\xd9\x1ahttp://h%d.test/p%d\xa3GET\x80\x80", h, i),
			})
		}
	}
	Load(b, q, items)
	room := make(map[string]int, hosts)
	for h := 0; h < hosts; h += roomEvery {
		room[fmt.Sprintf("h%d.test", h)] = 16
	}
	ctx := context.Background()
	var n, got, skipped int
	var cpu time.Duration
	for b.Loop() {
		lim := queue.Limits{Max: 1024, HostCap: func(host string) int {
			c := room[host]
			if c == 0 {
				skipped++
			}
			return c
		}}
		c0 := cputime.Process()
		its, err := q.Next(ctx, 0, time.Now().Unix(), lim)
		cpu += cputime.Process() - c0
		if err != nil {
			b.Fatal(err)
		}
		n++
		got += len(its)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/batch")
	b.ReportMetric(float64(got)/float64(n), "items/batch")
	b.ReportMetric(float64(skipped)/float64(n), "skipped-hosts/batch")
}
