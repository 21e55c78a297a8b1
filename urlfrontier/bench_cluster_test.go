//go:build integration

package urlfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/partition"
	"github.com/frontiercrawl/frontier/urlfrontier"
	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// BenchmarkClusterGateway measures the cluster gateway on the real servers, with the strategy workers and the
// DB worker of the run in this process (their CPU is counted; the Kafka and HBase servers' is not):
//
//   - put: PutURLs of 100,000 new discovered URLs over 1,000 queues on 2 streams, each acknowledged once it is
//     on the spider log;
//   - put45: another 100,000 on 2 streams, 45% of them put a moment ago (SKIPPED), 55,000 new;
//   - loop (flow=off only): until every URL put (155,000) came round the loop (strategy workers, DB worker,
//     spider feed) into the gateway's store;
//   - getack: one client's GetURLs (up to 10 URLs from each of up to 1,000 queues, 60 s leases) and a known
//     put (done) for every URL, until every URL was acknowledged or 4 minutes passed. With flow=on the loop
//     brings the URLs meanwhile, as the DB worker's flow control releases them.
//
// flow=on is the DB worker's default (its per-host flow control sizes a host's batches by how fast its outcomes
// come back, as for spiders); flow=off (db_worker.flow.enabled false) sends each batch with the fixed per_host
// cap as soon as the gateway's partition has room, which the gateway's feed lag and MaxHeld bound.
//
// alone is the gateway's getack without the loop (benchGatewayAlone), for when the loop is too slow to wait for.
//
// Run it once: go test -tags integration -run '^$' -bench ClusterGateway -benchtime 1x ./urlfrontier/
func BenchmarkClusterGateway(b *testing.B) {
	for _, flow := range []bool{true, false} {
		b.Run(fmt.Sprintf("flow=%s", map[bool]string{true: "on", false: "off"}[flow]), func(b *testing.B) { benchClusterGateway(b, flow) })
	}
	b.Run("alone", benchGatewayAlone)
}

func benchClusterGateway(b *testing.B, flow bool) {
	for b.Loop() {
		env := cluster.New(b, "ufb", cluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})
		roles := cluster.FastRoles()
		roles.NoSpiders = true
		roles.DBWorker.Flow.Enabled = flow
		// Every feed partition is the gateway's, so the DB worker is configured for gateways: a batch takes up
		// to 64 URLs of a host and 32,768 in all (a spider's defaults are 4 and 8,192). The gateway's clients
		// keep each queue's politeness and the gateway holds what it is sent, so the cap only shares a batch
		// among hosts; with 4, every batch of a partition whose hosts hold more than 4 URLs each reads the
		// partition's whole queue (hbase.BenchmarkIntegrationPickDeep). FRONTIER_BENCH_PER_HOST and
		// FRONTIER_BENCH_FEED_BATCH set others.
		roles.DBWorker.PerHost, roles.DBWorker.FeedBatch = gatewayPerHost, gatewayFeedBatch
		if v := os.Getenv("FRONTIER_BENCH_PER_HOST"); v != "" {
			fmt.Sscan(v, &roles.DBWorker.PerHost)
		}
		if v := os.Getenv("FRONTIER_BENCH_FEED_BATCH"); v != "" {
			fmt.Sscan(v, &roles.DBWorker.FeedBatch)
		}
		c := cluster.Start(b, context.Background(), env, roles)
		addr := freePort(b)
		// The loop phase waits for all 155,000 URLs put to be held at once: above the default MaxHeld (100,000),
		// at which the gateway stops reading its feed.
		gw := startGateway(b, c, b.TempDir(), addr, []int{0, 1}, func(cfg *urlfrontier.GatewayConfig) { cfg.MaxHeld = 200_000 })
		benchGateway(b, addr, !flow)
		gw.stop(b)
	}
}

// The DB worker's per_host and feed_batch for a cluster whose feed partitions are all gateways'.
const gatewayPerHost, gatewayFeedBatch = 64, 32768

// BenchmarkStandaloneGateway is BenchmarkClusterGateway's flow=off against `standalone --urlfrontier` (no
// seeds: the gateway over the standalone's own streams and stores, db_worker.flow.enabled false). It needs no
// server, but sits beside the cluster's under the integration tag: it takes minutes.
//
// Run it once: go test -tags integration -run '^$' -bench StandaloneGateway -benchtime 1x ./urlfrontier/
func BenchmarkStandaloneGateway(b *testing.B) {
	for b.Loop() {
		addr := freePort(b)
		sa := startStandalone(b, b.TempDir(), addr, "db_worker.flow.enabled=false")
		benchGateway(b, addr, true)
		sa.stop(b)
	}
}

// benchGateway runs the phases against the gateway at addr; arrive waits for every URL to come round the loop
// before GetURLs + ack.
func benchGateway(b *testing.B, addr string, arrive bool) {
	const n = 100_000
	{
		cl := dial(b, addr)
		ctx := context.Background()
		if _, err := cl.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 0}); err != nil {
			b.Fatal(err)
		}
		items := make([]*pb.URLItem, n)
		for j := range items {
			items[j] = discoveredURL(j)
		}

		report := phaseReport(b)
		put := func(phase string, items []*pb.URLItem) {
			t0, c0 := time.Now(), cputime.Process()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for s := range 2 {
				wg.Go(func() { errs[s] = stream(ctx, cl, items[s*len(items)/2:(s+1)*len(items)/2]) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				b.Fatal(err)
			}
			report(phase, float64(len(items)), time.Since(t0), cputime.Process()-c0)
		}
		put("put", items)
		// put45: another 100,000 on 2 streams, 45% of them put a moment ago (the last 22,500 of each stream:
		// what the gateway remembers having published, SKIPPED) among 55,000 new ones.
		const dups, fresh = 45_000, 55_000
		again := make([]*pb.URLItem, 0, dups+fresh)
		for s := range 2 {
			d := items[(s+1)*n/2-dups/2 : (s+1)*n/2]
			for j := range fresh / 2 {
				again = append(again, discoveredURL(n+s*fresh/2+j))
				if j < len(d) && j%11 < 9 { // 9 of every 11: 22,500 of 27,500
					again = append(again, d[0])
					d = d[1:]
				}
			}
			again = append(again, d...)
		}
		put("put45", again)
		total := uint64(n + fresh)

		if arrive {
			// Without the flow the loop brings every URL to the gateway without waiting for outcomes: the
			// loop's own rate (strategy workers, DB worker, HBase, Kafka), then GetURLs + ack on the gateway
			// alone.
			t0, c0 := time.Now(), cputime.Process()
			arrivedWithin(b, cl, "", total, 8*time.Minute)
			report("loop", float64(total), time.Since(t0), cputime.Process()-c0)
		}
		getAck(b, cl, n, report)
	}
}

// getAck is the getack phase: one client's GetURLs (up to 10 URLs from each of up to 1,000 queues, 60 s leases)
// and a known put (done) for every URL, until n were acknowledged or 4 minutes passed.
func getAck(b *testing.B, cl pb.URLFrontierClient, n int, report func(string, float64, time.Duration, time.Duration)) {
	ctx := context.Background()
	acks, err := cl.PutURLs(ctx)
	if err != nil {
		b.Fatal(err)
	}
	t0, c0 := time.Now(), cputime.Process()
	deadline := t0.Add(4 * time.Minute)
	got := 0
	for got < n && time.Now().Before(deadline) {
		batch := getURLs(b, cl, &pb.GetParams{MaxQueues: 1000, MaxUrlsPerQueue: 10, DelayRequestable: 60})
		if len(batch) == 0 {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-b.Context().Done():
				return
			}
			continue
		}
		ackDone(b, acks, batch)
		got += len(batch)
	}
	acks.CloseSend()
	b.ReportMetric(float64(got), "getack-URLs")
	report("getack", float64(got), time.Since(t0), cputime.Process()-c0)
}

// phaseReport reports a phase's rate and CPU per 1,000 URLs, and prints them as the phase ends, so a run that
// fails or is stopped later still shows them.
func phaseReport(b *testing.B) func(phase string, urls float64, wall, cpu time.Duration) {
	return func(phase string, urls float64, wall, cpu time.Duration) {
		b.ReportMetric(urls/wall.Seconds(), phase+"-URLs/s")
		b.ReportMetric(cpu.Seconds()/(urls/1000), phase+"-cpu-s/1000URLs")
		// On stderr at once: a benchmark's log is printed only when it ends.
		fmt.Fprintf(os.Stderr, "%s %s: %.0f URLs in %v: %.0f URLs/s, %.1f ms CPU per 1,000\n", b.Name(), phase, urls,
			wall.Round(time.Millisecond), urls/wall.Seconds(), cpu.Seconds()/(urls/1000)*1000)
	}
}

// benchGatewayAlone is the getack phase of the gateway alone on the real Kafka: no strategy worker or DB worker
// runs; the benchmark writes 100,000 requests over 1,000 hosts on the 2-partition spider feed itself, as the
// DB worker would (feed: until the gateway holds them all), then GetURLs + a known put per URL, whose
// page_crawled messages nobody reads. So getack is the gateway's own rate, whatever the crawl's loop costs.
func benchGatewayAlone(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		env := cluster.Topics(b, "ufa", cluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})
		if v := os.Getenv("GWPUT_BATCH"); v != "" {
			fmt.Sscan(v, &env.Kafka.Producer.BatchSize)
		}
		c := &cluster.Cluster{Env: env, Bus: env.Bus(b, "main", nil, nil), Identity: cluster.Identity(b)}
		addr := freePort(b)
		gw := startGateway(b, c, b.TempDir(), addr, []int{0, 1})
		cl := dial(b, addr)
		ctx := context.Background()
		if _, err := cl.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 0}); err != nil {
			b.Fatal(err)
		}
		out, err := bus.OpenProducer(ctx, c.Bus, bus.SpiderFeed)
		if err != nil {
			b.Fatal(err)
		}
		report := phaseReport(b)
		t0, c0 := time.Now(), cputime.Process()
		msgs := make([]bus.Message, 0, 4096)
		for i := range n {
			u := fmt.Sprintf("https://host%d.example.com/path/page-%d.html", i%1000, i)
			pu, _ := url.Parse(u)
			fp, err := c.Identity.Fingerprint(u)
			if err != nil {
				b.Fatal(err)
			}
			r := &frontier.Request{URL: u, Method: "GET"}
			r.SetMetaFingerprint(fp)
			r.SetMetaDomain(c.Identity.Domain(pu))
			v, err := c.Codec.EncodeRequest(r)
			if err != nil {
				b.Fatal(err)
			}
			host := []byte(pu.Hostname())
			msgs = append(msgs, bus.Message{Key: host, Value: v, Partition: partition.Crc32Name(host, 2)})
			if len(msgs) == cap(msgs) || i == n-1 {
				if err := out.Send(ctx, msgs...); err != nil {
					b.Fatal(err)
				}
				msgs = msgs[:0]
			}
		}
		out.Close()
		arrivedWithin(b, cl, "", n, 4*time.Minute)
		report("feed", n, time.Since(t0), cputime.Process()-c0)
		getAck(b, cl, n, report)
		gw.stop(b)
	}
}
