//go:build integration

package hbase

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/queue"
)

// BenchmarkIntegrationPickDeep drains a partition of hosts deep in the queue, as a gateway's partition holds
// them (FRONTIER_BENCH_HOSTS hosts, default 250, × FRONTIER_BENCH_DEPTH rows, default 80, 200-byte requests, one
// bucket), in batches (Next, then Ack) of the DB worker's default limits (8,192, 4 per host, 24 hosts) and of
// a gateway's (32,768, 64 per host), and reports per 1,000 items: this process's CPU, the HBase servers' CPU
// (FRONTIER_BENCH_SERVER_PIDS: the comma-separated pids of the HBase and Thrift servers, read from /proc; the
// shared servers' CPU includes whatever else uses them), the wall time (of Next alone and in all), the scan
// calls and the rows read. FRONTIER_BENCH_LIMITS=perhost=4 (or 64) runs one.
//
// go test -tags integration -run '^$' -bench IntegrationPickDeep -benchtime 1x ./hbase/
func BenchmarkIntegrationPickDeep(b *testing.B) {
	hosts, depth := envInt("FRONTIER_BENCH_HOSTS", 250), envInt("FRONTIER_BENCH_DEPTH", 80)
	for _, c := range deepLimits {
		if v := os.Getenv("FRONTIER_BENCH_LIMITS"); v != "" && v != c.name {
			continue
		}
		lim := c.lim
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c := openTest(b, testConfig(b), queueTable)
				q := c.Queue()
				ctx := context.Background()
				items := make([]queue.Item, 0, 8192)
				for i := range hosts * depth {
					items = append(items, queue.Item{Host: fmt.Sprintf("host%05d.example.com", i%hosts),
						Fingerprint: benchFP(i), Score: 0.5, Request: make([]byte, 200)})
					if len(items) == cap(items) || i == hosts*depth-1 {
						if err := q.Schedule(ctx, items); err != nil {
							b.Fatal(err)
						}
						items = items[:0]
					}
				}
				t0, c0, s0 := time.Now(), cputime.Process(), serverCPU()
				batches, n := 0, 0
				var inNext time.Duration
				for {
					t1 := time.Now()
					got, err := q.Next(ctx, 0, time.Now().Unix(), lim)
					inNext += time.Since(t1)
					if err != nil {
						b.Fatal(err)
					}
					if len(got) == 0 {
						break
					}
					if err := q.Ack(ctx, got); err != nil {
						b.Fatal(err)
					}
					batches++
					n += len(got)
				}
				wall, cpu, srv := time.Since(t0), cputime.Process()-c0, serverCPU()-s0
				if n != hosts*depth {
					b.Fatalf("drained %d of %d", n, hosts*depth)
				}
				k := float64(n) / 1000
				b.ReportMetric(wall.Seconds()*1000/k, "wall-ms/1000items")
				b.ReportMetric(inNext.Seconds()*1000/k, "next-wall-ms/1000items")
				b.ReportMetric(cpu.Seconds()*1000/k, "cpu-ms/1000items")
				b.ReportMetric(srv.Seconds()*1000/k, "server-cpu-ms/1000items")
				b.ReportMetric(float64(q.stats.scans.Load())/k, "scans/1000items")
				b.ReportMetric(float64(q.stats.rows.Load())/float64(n), "rows/item")
				b.ReportMetric(float64(batches), "batches")
			}
		})
	}
}

// serverCPU sums the user and system CPU of the processes FRONTIER_BENCH_SERVER_PIDS names (0 without it).
func serverCPU() time.Duration {
	var total time.Duration
	for _, p := range strings.Split(os.Getenv("FRONTIER_BENCH_SERVER_PIDS"), ",") {
		st, err := os.ReadFile("/proc/" + strings.TrimSpace(p) + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+s) * 10 * time.Millisecond // USER_HZ 100
	}
	return total
}
