package hbase

import (
	"context"
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
)

// deepQueue schedules rows of hosts deep in the queue, as a gateway's partition holds them: perHost rows of
// each of hosts hosts in one bucket, and returns the Queue.
func deepQueue(tb testing.TB, f *fakeHBase, cfg Config, hosts, perHost int) *Queue {
	tb.Helper()
	q := newFakeClient(f, cfg).Queue()
	var items []queue.Item
	for i := range hosts * perHost {
		items = append(items, queuetest.Item(0, fmt.Sprintf("h%03d.example", i%hosts), i, 0.5))
	}
	if err := q.Schedule(context.Background(), items); err != nil {
		tb.Fatal(err)
	}
	return q
}

// drain takes batches with lim and acknowledges them until the partition is empty; it returns the batches'
// items, checking each batch against the caps.
func drain(tb testing.TB, q *Queue, lim queue.Limits) (batches, items int) {
	tb.Helper()
	ctx := context.Background()
	for {
		got, err := q.Next(ctx, 0, 0, lim)
		if err != nil {
			tb.Fatal(err)
		}
		if len(got) == 0 {
			return batches, items
		}
		per := map[string]int{}
		for _, it := range got {
			if per[it.Host]++; per[it.Host] > lim.PerHost {
				tb.Fatalf("batch %d: %d items of %s, cap %d", batches, per[it.Host], it.Host, lim.PerHost)
			}
		}
		if err := q.Ack(ctx, got); err != nil {
			tb.Fatal(err)
		}
		batches++
		items += len(got)
	}
}

// deepLimits are the DB worker's default limits (4 per host, 8,192 a batch) and the limits for a gateway's
// partitions (64 per host, 32,768 a batch).
var deepLimits = []struct {
	name string
	lim  queue.Limits
}{
	{"perhost=4", queue.Limits{Max: 8192, PerHost: 4, MinHosts: 24}},
	{"perhost=64", queue.Limits{Max: 32768, PerHost: 64, MinHosts: 24}},
}

// A partition of deep hosts (every host holds more rows than its cap) is read once per batch up to the batch's
// end: with the cap at 4, every batch reads every row left, so the rows read per item taken grow with the
// hosts' depth; with a larger cap fewer batches read it.
func TestPickDeepHostsRowsRead(t *testing.T) {
	for _, c := range []struct {
		lim              queue.Limits
		batches, maxRead int
	}{
		{deepLimits[0].lim, 20, 80 * 81 / 2 * 30}, // every row left, in each of the 20 batches
		{deepLimits[1].lim, 2, (80 + 16) * 30},    // 30 hosts × 64, then the 16 left of each
	} {
		q := deepQueue(t, newFakeHBase(), DefaultConfig(), 30, 80)
		batches, items := drain(t, q, c.lim)
		if batches != c.batches || items != 30*80 {
			t.Errorf("%+v: %d batches of %d items, want %d of 2,400", c.lim, batches, items, c.batches)
		}
		if rows := q.stats.rows.Load(); rows > int64(c.maxRead) {
			t.Errorf("%+v: read %d rows, want at most %d", c.lim, rows, c.maxRead)
		}
	}
}

// BenchmarkFakePickDeep drains a partition of 100 hosts × 60 rows (a gateway's partition's shape) and reports
// the rows and scan calls per item taken (the fake's time is not HBase's; BenchmarkIntegrationPickDeep has it).
func BenchmarkFakePickDeep(b *testing.B) {
	for _, c := range deepLimits {
		b.Run(c.name, func(b *testing.B) {
			var rows, scans, items, batches int64
			for b.Loop() {
				b.StopTimer()
				q := deepQueue(b, newFakeHBase(), DefaultConfig(), 100, 60)
				b.StartTimer()
				nb, n := drain(b, q, c.lim)
				items += int64(n)
				batches += int64(nb)
				rows += q.stats.rows.Load()
				scans += q.stats.scans.Load()
			}
			b.ReportMetric(float64(rows)/float64(items), "rows/item")
			b.ReportMetric(float64(scans)/float64(items)*1000, "scans/1000items")
			b.ReportMetric(float64(batches)/float64(b.N), "batches")
		})
	}
}
