package urlfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/urlfrontier"
	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// benchServer serves a fresh Store (synced writes, the standalone's default) on a loopback port.
func benchServer(b *testing.B) pb.URLFrontierClient {
	b.Helper()
	cfg := urlfrontier.DefaultStoreConfig()
	cfg.Dir = b.TempDir()
	st, err := urlfrontier.OpenStore(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	g := grpc.NewServer()
	urlfrontier.NewServer(urlfrontier.ServerDeps{Backend: st}).Register(g)
	go g.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn.Close()
		g.Stop()
		st.Close()
	})
	c := pb.NewURLFrontierClient(conn)
	if _, err := c.SetDelay(context.Background(), &pb.QueueDelayParams{DelayRequestable: 0}); err != nil {
		b.Fatal(err)
	}
	return c
}

// stream sends items on one PutURLs stream without waiting, and returns once every ack arrived.
func stream(ctx context.Context, c pb.URLFrontierClient, items []*pb.URLItem) error {
	st, err := c.PutURLs(ctx)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		n := 0
		for {
			a, err := st.Recv()
			if errors.Is(err, io.EOF) {
				if n != len(items) {
					err = fmt.Errorf("%d acks for %d items", n, len(items))
				} else {
					err = nil
				}
				errc <- err
				return
			}
			if err != nil {
				errc <- err
				return
			}
			if a.Status == pb.AckMessage_FAIL {
				errc <- fmt.Errorf("ack FAIL for %s", a.ID)
				return
			}
			n++
		}
	}()
	for _, it := range items {
		if err := st.Send(it); err != nil {
			return err
		}
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	return <-errc
}

func discoveredURL(i int) *pb.URLItem {
	return discovered(&pb.URLInfo{Url: fmt.Sprintf("https://host%d.example.com/path/page-%d.html", i%1000, i)})
}

// putInput returns the n discovered URLs of a put benchmark's run i and the known percent of them a frontier
// is given first, spread over the whole input, as duplicates among outlinks are.
func putInput(i, n, known int) (items, pre []*pb.URLItem) {
	items = make([]*pb.URLItem, n)
	for j := range items {
		items[j] = discoveredURL(i*n*10 + j)
		if j%100 < known {
			pre = append(pre, items[j])
		}
	}
	return items, pre
}

// putStreams puts items on 2 concurrent PutURLs streams, half on each, and returns the wall and CPU time
// (the process's) they took.
func putStreams(ctx context.Context, b *testing.B, c pb.URLFrontierClient, items []*pb.URLItem) (wall, cpu time.Duration) {
	t0, c0 := time.Now(), cputime.Process()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	n := len(items)
	for s := range 2 {
		wg.Go(func() { errs[s] = stream(ctx, c, items[s*n/2:(s+1)*n/2]) })
	}
	wg.Wait()
	wall, cpu = time.Since(t0), cputime.Process()-c0
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return wall, cpu
}

// BenchmarkPutURLs: 100,000 discovered URLs over 1,000 queues on 2 concurrent PutURLs streams, into an empty
// frontier or one that already knows 45% of them (those are acknowledged SKIPPED).
func BenchmarkPutURLs(b *testing.B) {
	const n = 100_000
	for _, known := range []int{0, 45} {
		b.Run(fmt.Sprintf("known=%d%%", known), func(b *testing.B) {
			var wall, cpu time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				c := benchServer(b)
				items, pre := putInput(i, n, known)
				if len(pre) > 0 {
					if err := stream(context.Background(), c, pre); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				dw, dc := putStreams(context.Background(), b, c, items)
				wall, cpu = wall+dw, cpu+dc
			}
			urls := float64(b.N * n)
			b.ReportMetric(urls/wall.Seconds(), "URLs/s")
			b.ReportMetric(cpu.Seconds()/(urls/1000), "cpu-s/1000URLs")
		})
	}
}

// ackDone sends a PutURLs known with refetchable_from_date 0 (done) for every URL of batch on acks and waits
// for as many acknowledgements: the acknowledging half of a crawl loop's cycle.
func ackDone(b testing.TB, acks pb.URLFrontier_PutURLsClient, batch []*pb.URLInfo) {
	b.Helper()
	for _, u := range batch {
		if err := acks.Send(known(u, 0)); err != nil {
			b.Fatal(err)
		}
	}
	for range batch {
		if _, err := acks.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetAck: a crawl loop over 1,000 queues of 200 URLs each: GetURLs (up to 10 URLs from each of up to
// 100 queues) and a PutURLs known (refetchable_from_date 0: done) for every URL received, on one client. One
// op is one cycle.
func BenchmarkGetAck(b *testing.B) {
	c := benchServer(b)
	ctx := context.Background()
	const queues, perQueue = 1000, 200
	items := make([]*pb.URLItem, 0, queues*perQueue)
	for j := range queues * perQueue {
		items = append(items, discoveredURL(j))
	}
	if err := stream(ctx, c, items); err != nil {
		b.Fatal(err)
	}
	acks, err := c.PutURLs(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var got int64
	var cpu time.Duration
	for b.Loop() {
		c0 := cputime.Process()
		batch := getURLs(b, c, &pb.GetParams{MaxQueues: 100, MaxUrlsPerQueue: 10, DelayRequestable: 60})
		if len(batch) == 0 {
			b.Fatal("the frontier ran dry: raise perQueue")
		}
		ackDone(b, acks, batch)
		got += int64(len(batch))
		cpu += cputime.Process() - c0
	}
	acks.CloseSend()
	b.ReportMetric(float64(got)/b.Elapsed().Seconds(), "URLs/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(cpu.Seconds()/(float64(got)/1000), "cpu-s/1000URLs")
}

// BenchmarkStandalonePut is BenchmarkPutURLs against `standalone --urlfrontier` (no seeds: the gateway over
// the standalone's pebblebus streams and Pebble stores, db_worker.flow.enabled false), a fresh one per put:
// 100,000 discovered URLs over 1,000 queues on 2 streams, each acknowledged once it is on the spider log, into
// a crawl that knows none of them or 45% (put a moment before, untimed: SKIPPED, as the gateway remembers
// them). The crawl's loop (strategy worker, DB worker, Pebble) works on the URLs in the same process meanwhile,
// and its CPU is counted. URLs/s and cpu-s/1000URLs are those of the put: from the first PutURLs message until
// the last acknowledgement, the process's CPU over that time. How much of the loop's work falls inside that
// window varies from run to run, so each op makes puts (standalonePuts, each into a fresh standalone) and
// reports the median of each figure, and beside it the drained cost: the CPU from the first message until the
// loop has brought every new URL round into the gateway's store (GetStats), per 1,000 URLs
// (drained-cpu-s/1000URLs, the whole cost of a URL put, and steadier; at 45% known it includes what the loop
// had left to do of the untimed put before). Beside those it reports, over the put,
// the bytes the process passed to write(2) per URL (written-B/URL: both Pebble databases' WAL, flushes and
// compactions, and the loopback gRPC traffic; Linux only) and the bytes the Go heap allocated per URL
// (alloc-B/URL, what drives the GC), medians too.
//
//	go test -run '^$' -bench StandalonePut -benchtime 1x -count 3 ./urlfrontier/
func BenchmarkStandalonePut(b *testing.B) {
	const n = 100_000
	for _, known := range []int{0, 45} {
		b.Run(fmt.Sprintf("known=%d%%", known), func(b *testing.B) {
			var rate, cpu, drained, wrote, alloc []float64
			for i := 0; b.Loop(); i++ {
				for k := range standalonePuts {
					b.StopTimer()
					addr := freePort(b)
					sa := startStandalone(b, b.TempDir(), addr, "db_worker.flow.enabled=false")
					c := dial(b, addr)
					ctx := context.Background()
					if _, err := c.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 0}); err != nil {
						b.Fatal(err)
					}
					items, pre := putInput(i*standalonePuts+k, n, known)
					if len(pre) > 0 {
						if err := stream(ctx, c, pre); err != nil {
							b.Fatal(err)
						}
					}
					w0, a0 := written(), allocated()
					b.StartTimer()
					c0 := cputime.Process()
					dw, dc := putStreams(ctx, b, c, items)
					b.StopTimer()
					rate, cpu = append(rate, n/dw.Seconds()), append(cpu, dc.Seconds()/(n/1000))
					wrote, alloc = append(wrote, float64(written()-w0)/n), append(alloc, float64(allocated()-a0)/n)
					waitHeld(ctx, b, c, n)
					drained = append(drained, (cputime.Process()-c0).Seconds()/(n/1000))
					sa.stop(b)
					b.StartTimer()
				}
			}
			b.ReportMetric(median(rate), "URLs/s")
			b.ReportMetric(median(cpu), "cpu-s/1000URLs")
			b.ReportMetric(median(drained), "drained-cpu-s/1000URLs")
			if median(wrote) > 0 {
				b.ReportMetric(median(wrote), "written-B/URL")
			}
			b.ReportMetric(median(alloc), "alloc-B/URL")
		})
	}
}

// standalonePuts is the number of puts of one BenchmarkStandalonePut op, of which it reports the medians.
const standalonePuts = 3

// waitHeld waits until the gateway's store holds n URLs not done (GetStats' size): the puts before went round
// the crawl's loop.
func waitHeld(ctx context.Context, b *testing.B, c pb.URLFrontierClient, n uint64) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := c.GetStats(ctx, &pb.QueueWithinCrawlParams{})
		if err != nil {
			b.Fatal(err)
		}
		if st.Size >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the gateway's store holds %d URLs of %d after 2 minutes", st.Size, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// median is the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// written is the bytes this process has passed to write(2) and the like (wchar of /proc/self/io), or 0
// where that is not available.
func written() uint64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "wchar:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// allocated is the bytes the Go heap has allocated so far.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}
