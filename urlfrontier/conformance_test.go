package urlfrontier_test

// The conformance suite: black-box over gRPC, against the real standalone (launch.Run("standalone",
// "--urlfrontier", …) on a loopback port), with the client generated from urlfrontierpb/urlfrontier.proto, which
// is wire-identical to the published API. Each rule of the API the package doc lists has a subtest; the
// standalone is restarted in the middle (leases, delays, blocks and limits must survive), and two concurrent
// clients must never hold the same URL at once.
//
// FRONTIER_URLFRONTIER_ADDR=host:port runs the suite against a server that is already running (e.g. the
// reference service) instead; the restart subtest is then skipped.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/frontiercrawl/frontier/launch"
	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// standalone is one run of the standalone process's role in this test process.
type standalone struct {
	cancel context.CancelFunc
	done   chan error
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func startStandalone(t testing.TB, dir, addr string, sets ...string) *standalone {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &standalone{cancel: cancel, done: make(chan error, 1)}
	args := []string{"--config", "../configs/standalone.yaml", "--set", "metrics.addr=127.0.0.1:0",
		"--set", "standalone.data_dir=" + dir, "--set", "log.level=warn", "--urlfrontier", addr}
	for _, kv := range sets {
		args = append(args, "--set", kv)
	}
	go func() { s.done <- launch.Run(ctx, "standalone", args) }()
	return s
}

func (s *standalone) stop(t testing.TB) {
	t.Helper()
	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("standalone: %v", err)
	}
}

func dial(t testing.TB, addr string) pb.URLFrontierClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := pb.NewURLFrontierClient(conn)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := c.GetActive(ctx, &pb.Local{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("the service at %s does not answer: %v", addr, err)
	}
	return c
}

func info(crawl, key, url string) *pb.URLInfo {
	return &pb.URLInfo{Url: url, Key: key, CrawlID: crawl}
}

func discovered(i *pb.URLInfo) *pb.URLItem {
	return &pb.URLItem{Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: i}}}
}

func known(i *pb.URLInfo, refetch int64) *pb.URLItem {
	return &pb.URLItem{Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: i, RefetchableFromDate: uint64(refetch)}}}
}

// putURLs sends items on one PutURLs stream and returns the acks, checking there is one per item.
func putURLs(t *testing.T, c pb.URLFrontierClient, items ...*pb.URLItem) []*pb.AckMessage {
	t.Helper()
	st, err := c.PutURLs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var acks []*pb.AckMessage
	recvDone := make(chan error, 1)
	go func() {
		for {
			a, err := st.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				recvDone <- err
				return
			}
			acks = append(acks, a)
		}
	}()
	for _, it := range items {
		if err := st.Send(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := <-recvDone; err != nil {
		t.Fatal(err)
	}
	if len(acks) != len(items) {
		t.Fatalf("%d acks for %d items", len(acks), len(items))
	}
	return acks
}

func statuses(acks []*pb.AckMessage) []pb.AckMessage_Status {
	var out []pb.AckMessage_Status
	for _, a := range acks {
		out = append(out, a.Status)
	}
	return out
}

func getURLs(t testing.TB, c pb.URLFrontierClient, p *pb.GetParams) []*pb.URLInfo {
	t.Helper()
	st, err := c.GetURLs(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out []*pb.URLInfo
	for {
		u, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
}

func urls(infos []*pb.URLInfo) []string {
	var out []string
	for _, i := range infos {
		out = append(out, i.GetUrl())
	}
	return out
}

func sorted(s []string) []string { slices.Sort(s); return s }

func crawlParams(crawl string) *pb.GetParams {
	return &pb.GetParams{Item: &pb.GetParams_CrawlID{CrawlID: crawl}}
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// wait blocks for d (the suite's only waits: leases, delays and blocks are whole seconds on the wire).
func wait(t testing.TB, d time.Duration) {
	select {
	case <-time.After(d):
	case <-t.Context().Done():
	}
}

// arrived waits until crawl holds n URLs (CountURLs), within a minute. A standalone holds what was put at
// once; the cluster gateway holds a discovered URL once the loop brought it back (the spider log, the strategy
// worker, the scoring log, the DB worker's queue and the spider feed).
func arrived(t testing.TB, c pb.URLFrontierClient, crawl string, n uint64) {
	t.Helper()
	arrivedWithin(t, c, crawl, n, time.Minute)
}

func arrivedWithin(t testing.TB, c pb.URLFrontierClient, crawl string, n uint64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := must[*pb.Long](t)(c.CountURLs(t.Context(), &pb.CountUrlParams{CrawlID: crawl}))
		if got.Value >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("crawl %q holds %d URLs after %v, want %d", crawl, got.Value, d, n)
		}
		wait(t, 50*time.Millisecond)
	}
}

func TestConformance(t *testing.T) {
	addr := os.Getenv("FRONTIER_URLFRONTIER_ADDR")
	var sa *standalone
	dir := t.TempDir()
	var restart func(t *testing.T)
	if addr == "" {
		addr = freePort(t)
		sa = startStandalone(t, dir, addr)
		defer func() {
			if sa != nil {
				sa.stop(t)
			}
		}()
		restart = func(t *testing.T) {
			sa.stop(t)
			sa = startStandalone(t, dir, addr)
		}
	}
	conformance(t, target{addr: addr, restart: restart, loop: addr != os.Getenv("FRONTIER_URLFRONTIER_ADDR")})
}

// target is the service the suite runs against.
type target struct {
	addr string
	// restart restarts the service on the same address and data; nil skips the restart subtest.
	restart func(t *testing.T)
	// loop: the service is a gateway (Frontier's standalone or cluster), whose URLs come round the crawl's
	// loop. The concurrent clients then acknowledge every URL they get, not half: the DB worker sends a host's
	// next URLs as the outcomes of its earlier ones come back (its flow control), so URLs held for ten minutes
	// unacknowledged would hold the rest of their hosts back for as long.
	loop bool
}

// conformance runs the suite against the service tg names.
func conformance(t *testing.T, tg target) {
	addr, restart := tg.addr, tg.restart
	c := dial(t, addr)
	ctx := t.Context()
	// Most rules are easier to see without the default 1 s between two sends of a queue.
	must[*pb.Empty](t)(c.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 0}))
	now := time.Now().Unix()

	t.Run("ListNodes/GetActive/SetLogLevel", func(t *testing.T) {
		if n := must[*pb.StringList](t)(c.ListNodes(ctx, &pb.Empty{})); len(n.Values) == 0 {
			t.Error("ListNodes names no node")
		}
		if a := must[*pb.Boolean](t)(c.GetActive(ctx, &pb.Local{})); !a.State {
			t.Error("a new frontier is not active")
		}
		must[*pb.Empty](t)(c.SetLogLevel(ctx, &pb.LogLevelParams{Package: "urlfrontier", Level: pb.LogLevelParams_WARN}))
	})

	t.Run("PutURLs: discovered only if unknown, known updates, one ack per item", func(t *testing.T) {
		cr := "put"
		it := discovered(info(cr, "", "http://a.test/1"))
		it.ID = "my-id"
		acks := putURLs(t, c, it, discovered(info(cr, "", "http://a.test/1")), discovered(info(cr, "", "not a url")),
			known(info(cr, "", "http://a.test/2"), now+3600))
		arrived(t, c, cr, 2)
		want := []pb.AckMessage_Status{pb.AckMessage_OK, pb.AckMessage_SKIPPED, pb.AckMessage_SKIPPED, pb.AckMessage_OK}
		if got := statuses(acks); !slices.Equal(got, want) {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
		if acks[0].ID != "my-id" || acks[1].ID != "http://a.test/1" {
			t.Errorf("ack IDs = %q, %q: the client's ID, else the URL", acks[0].ID, acks[1].ID)
		}
		// The known URL is due in an hour: only a.test/1 is handed out.
		if got := urls(getURLs(t, c, crawlParams(cr))); !slices.Equal(got, []string{"http://a.test/1"}) {
			t.Fatalf("GetURLs = %v", got)
		}
		st := must[*pb.URLItem](t)(c.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "http://a.test/2", CrawlID: cr}))
		if st.GetKnown().GetRefetchableFromDate() != uint64(now+3600) || st.GetKnown().GetInfo().GetKey() != "a.test" || st.CreationDate == 0 {
			t.Errorf("GetURLStatus = %v", st)
		}
		_, err := c.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "http://a.test/none", CrawlID: cr})
		if status.Code(err) != codes.NotFound {
			t.Errorf("GetURLStatus of an unknown URL: %v, want NotFound", err)
		}
	})

	t.Run("PutDiscovered: one ack per batch, a status per URL in order", func(t *testing.T) {
		st, err := c.PutDiscovered(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b1 := &pb.DiscoveredBatch{ID: "b1", Items: []*pb.URLInfo{info("pd", "", "http://p.test/1"), info("pd", "", "http://p.test/2")}}
		b2 := &pb.DiscoveredBatch{ID: "b2", Items: []*pb.URLInfo{info("pd", "", "http://p.test/2"), info("pd", "", "http://p.test/3")}}
		for _, b := range []*pb.DiscoveredBatch{b1, b2} {
			if err := st.Send(b); err != nil {
				t.Fatal(err)
			}
		}
		st.CloseSend()
		var got []string
		for {
			a, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprint(a.ID, a.Statuses))
		}
		want := []string{"b1[OK OK]", "b2[SKIPPED OK]"}
		if !slices.Equal(got, want) {
			t.Fatalf("BatchAcks = %v, want %v", got, want)
		}
	})

	t.Run("a queue per key, the host when none; ListQueues", func(t *testing.T) {
		cr := "queues"
		putURLs(t, c, discovered(info(cr, "", "http://Host1.test/a")), discovered(info(cr, "", "http://host2.test/a")),
			discovered(info(cr, "custom", "http://host3.test/a")), discovered(info(cr, "custom", "http://host4.test/a")),
			known(info(cr, "done", "http://host5.test/a"), 0))
		arrived(t, c, cr, 5)
		q := must[*pb.QueueList](t)(c.ListQueues(ctx, &pb.Pagination{CrawlID: cr}))
		if want := []string{"custom", "host1.test", "host2.test"}; !slices.Equal(q.Values, want) {
			t.Errorf("ListQueues = %v, want %v (the done queue is inactive)", q.Values, want)
		}
		q = must[*pb.QueueList](t)(c.ListQueues(ctx, &pb.Pagination{CrawlID: cr, IncludeInactive: true, Start: 1, Size: 2}))
		if want := []string{"done", "host1.test"}; !slices.Equal(q.Values, want) || q.Start != 1 || q.Size != 2 {
			t.Errorf("ListQueues(inactive, start 1, size 2) = %v", q)
		}
		st := must[*pb.Stats](t)(c.GetStats(ctx, &pb.QueueWithinCrawlParams{CrawlID: cr}))
		if st.Size != 4 || st.NumberOfQueues != 4 || st.Counts["completed"] != 1 || st.Counts["active_queues"] != 3 || st.CrawlID != cr {
			t.Errorf("GetStats = %v", st)
		}
		st = must[*pb.Stats](t)(c.GetStats(ctx, &pb.QueueWithinCrawlParams{CrawlID: cr, Key: "custom"}))
		if st.Size != 2 {
			t.Errorf("GetStats(custom) = %v", st)
		}
	})

	t.Run("GetURLs honours max_queues, max_urls_per_queue, key; metadata round-trips", func(t *testing.T) {
		cr := "get"
		var items []*pb.URLItem
		for h := range 4 {
			for i := range 3 {
				items = append(items, discovered(info(cr, "", fmt.Sprintf("http://h%d.test/%d", h, i))))
			}
		}
		meta := &pb.URLInfo{Url: "http://m.test/", CrawlID: cr, Metadata: map[string]*pb.StringList{"depth": {Values: []string{"3"}}, "src": {Values: []string{"a", "b"}}}}
		items = append(items, discovered(meta))
		putURLs(t, c, items...)
		arrived(t, c, cr, 13)
		// m.test's one URL first, by key, so that the limits below meet only the four queues of 3: which
		// queues a GetURLs visits first is the order the feed brought them in on the cluster, which timing
		// decides, and m.test among them would leave it leased here.
		got := getURLs(t, c, &pb.GetParams{Key: "m.test", Item: &pb.GetParams_CrawlID{CrawlID: cr}})
		if len(got) != 1 || got[0].Url != "http://m.test/" || got[0].CrawlID != cr || !slices.Equal(got[0].Metadata["src"].GetValues(), []string{"a", "b"}) ||
			!slices.Equal(got[0].Metadata["depth"].GetValues(), []string{"3"}) {
			t.Fatalf("GetURLs(key m.test) = %v", got)
		}
		// Two queues, 2 URLs from each; m.test, all leased, is not one of them (a queue counts when it serves).
		got = getURLs(t, c, &pb.GetParams{MaxQueues: 2, MaxUrlsPerQueue: 2, Item: &pb.GetParams_CrawlID{CrawlID: cr}})
		per := map[string]int{}
		for _, u := range got {
			per[u.Key]++
		}
		if len(got) != 4 || len(per) != 2 || per["m.test"] != 0 {
			t.Fatalf("GetURLs(max_queues 2, max_urls_per_queue 2) = %v", urls(got))
		}
		if got := getURLs(t, c, &pb.GetParams{Key: "nope.test", Item: &pb.GetParams_CrawlID{CrawlID: cr}}); len(got) != 0 {
			t.Fatalf("GetURLs of an unknown queue = %v", got)
		}
		// Unlimited: everything left (12 - 4 leased).
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 8 {
			t.Fatalf("GetURLs(no limits) = %d URLs, want 8", len(got))
		}
	})

	t.Run("leases: not handed out again until acknowledged or the lease ends", func(t *testing.T) {
		cr := "lease"
		putURLs(t, c, discovered(info(cr, "", "http://l.test/1")), discovered(info(cr, "", "http://l.test/2")))
		arrived(t, c, cr, 2)
		p := &pb.GetParams{DelayRequestable: 2, Item: &pb.GetParams_CrawlID{CrawlID: cr}}
		leasedAt := time.Now()
		if got := getURLs(t, c, p); len(got) != 2 {
			t.Fatalf("GetURLs = %v", urls(got))
		}
		// (A machine so loaded that the lease ended already proves nothing either way.)
		if got := getURLs(t, c, p); len(got) != 0 && time.Since(leasedAt) < 2*time.Second {
			t.Fatalf("leased URLs handed out again: %v", urls(got))
		}
		if st := must[*pb.Stats](t)(c.GetStats(ctx, &pb.QueueWithinCrawlParams{CrawlID: cr})); st.InProcess != 2 {
			t.Errorf("inProcess = %d, want 2", st.InProcess)
		}
		putURLs(t, c, known(info(cr, "", "http://l.test/1"), 0))
		wait(t, time.Until(leasedAt.Add(2100*time.Millisecond)))
		if got := urls(getURLs(t, c, p)); !slices.Equal(got, []string{"http://l.test/2"}) {
			t.Fatalf("after the lease ended, GetURLs = %v, want the unacknowledged URL only", got)
		}
	})

	t.Run("refetchable_from_date orders a queue; 0 = done for good", func(t *testing.T) {
		cr := "refetch"
		putURLs(t, c, known(info(cr, "", "http://r.test/b"), now-10), known(info(cr, "", "http://r.test/a"), now-20),
			known(info(cr, "", "http://r.test/c"), now-30), known(info(cr, "", "http://r.test/done"), 0))
		if got := urls(getURLs(t, c, crawlParams(cr))); !slices.Equal(got, []string{"http://r.test/c", "http://r.test/a", "http://r.test/b"}) {
			t.Fatalf("GetURLs = %v", got)
		}
	})

	t.Run("SetDelay per queue and default", func(t *testing.T) {
		cr := "delay"
		putURLs(t, c, discovered(info(cr, "", "http://d1.test/1")), discovered(info(cr, "", "http://d1.test/2")),
			discovered(info(cr, "", "http://d2.test/1")), discovered(info(cr, "", "http://d2.test/2")))
		arrived(t, c, cr, 4)
		must[*pb.Empty](t)(c.SetDelay(ctx, &pb.QueueDelayParams{CrawlID: cr, Key: "d1.test", DelayRequestable: 3600}))
		one := &pb.GetParams{MaxUrlsPerQueue: 1, Item: &pb.GetParams_CrawlID{CrawlID: cr}}
		if got := getURLs(t, c, one); len(got) != 2 {
			t.Fatalf("GetURLs = %v", urls(got))
		}
		if got := urls(getURLs(t, c, one)); !slices.Equal(got, []string{"http://d2.test/2"}) {
			t.Fatalf("within d1.test's delay, GetURLs = %v", got)
		}
		putURLs(t, c, discovered(info(cr, "", "http://d2.test/3")))
		arrived(t, c, cr, 5)
		must[*pb.Empty](t)(c.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 3600}))
		got := getURLs(t, c, one)
		must[*pb.Empty](t)(c.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 0}))
		if len(got) != 0 {
			t.Fatalf("within the default delay, GetURLs = %v", urls(got))
		}
		if got := urls(getURLs(t, c, one)); !slices.Equal(got, []string{"http://d2.test/3"}) {
			t.Fatalf("after the default delay was lifted, GetURLs = %v", got)
		}
	})

	t.Run("BlockQueueUntil", func(t *testing.T) {
		cr := "block"
		putURLs(t, c, discovered(info(cr, "", "http://b.test/1")), discovered(info(cr, "", "http://b.test/2")))
		arrived(t, c, cr, 2)
		must[*pb.Empty](t)(c.BlockQueueUntil(ctx, &pb.BlockQueueParams{CrawlID: cr, Key: "b.test", Time: uint64(time.Now().Unix() + 3600)}))
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 0 {
			t.Fatalf("a blocked queue sent %v", urls(got))
		}
		must[*pb.Empty](t)(c.BlockQueueUntil(ctx, &pb.BlockQueueParams{CrawlID: cr, Key: "b.test", Time: 0}))
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 2 {
			t.Fatalf("after unblocking, GetURLs = %v", urls(got))
		}
		// A block ends by itself at its time.
		putURLs(t, c, discovered(info(cr, "", "http://b.test/3")))
		arrived(t, c, cr, 3)
		until := time.Now().Unix() + 2
		must[*pb.Empty](t)(c.BlockQueueUntil(ctx, &pb.BlockQueueParams{CrawlID: cr, Key: "b.test", Time: uint64(until)}))
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 0 && time.Now().Unix() < until {
			t.Fatalf("a blocked queue sent %v", urls(got))
		}
		wait(t, time.Until(time.Unix(until, 100e6)))
		if got := urls(getURLs(t, c, crawlParams(cr))); !slices.Equal(got, []string{"http://b.test/3"}) {
			t.Fatalf("after the block's time, GetURLs = %v", got)
		}
	})

	t.Run("SetCrawlLimit counts completed URLs", func(t *testing.T) {
		cr := "limit"
		putURLs(t, c, discovered(info(cr, "", "http://x.test/1")), discovered(info(cr, "", "http://x.test/2")), discovered(info(cr, "", "http://x.test/3")))
		arrived(t, c, cr, 3)
		must[*pb.Empty](t)(c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{CrawlID: cr, Key: "x.test", Limit: 1}))
		got := getURLs(t, c, &pb.GetParams{MaxUrlsPerQueue: 1, DelayRequestable: 1, Item: &pb.GetParams_CrawlID{CrawlID: cr}})
		if len(got) != 1 {
			t.Fatalf("under the limit, GetURLs = %v", urls(got))
		}
		putURLs(t, c, known(got[0], 0))
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 0 {
			t.Fatalf("at the limit, GetURLs = %v", urls(got))
		}
		must[*pb.Empty](t)(c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{CrawlID: cr, Key: "x.test", Limit: 2}))
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 2 {
			t.Fatalf("under the raised limit, GetURLs = %v", urls(got))
		}
	})

	t.Run("crawl IDs are separate frontiers; ListCrawls, DeleteCrawl, anyCrawlID", func(t *testing.T) {
		putURLs(t, c, discovered(info("sep1", "", "http://s.test/1")), discovered(info("sep2", "", "http://s.test/1")))
		arrived(t, c, "sep1", 1)
		arrived(t, c, "sep2", 1)
		if got := getURLs(t, c, crawlParams("sep1")); len(got) != 1 || got[0].CrawlID != "sep1" {
			t.Fatalf("GetURLs(sep1) = %v", got)
		}
		crawls := must[*pb.StringList](t)(c.ListCrawls(ctx, &pb.Local{}))
		if !slices.Contains(crawls.Values, "sep1") || !slices.Contains(crawls.Values, "sep2") {
			t.Fatalf("ListCrawls = %v", crawls.Values)
		}
		any := getURLs(t, c, &pb.GetParams{Key: "s.test", Item: &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}})
		if len(any) != 1 || any[0].CrawlID != "sep2" {
			t.Fatalf("GetURLs(anyCrawlID) = %v", any)
		}
		if n := must[*pb.Long](t)(c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{Value: "sep2"})); n.Value != 1 {
			t.Errorf("DeleteCrawl = %d, want 1", n.Value)
		}
		crawls = must[*pb.StringList](t)(c.ListCrawls(ctx, &pb.Local{}))
		if slices.Contains(crawls.Values, "sep2") {
			t.Errorf("ListCrawls after DeleteCrawl = %v", crawls.Values)
		}
		// The default crawl: an empty crawl ID.
		putURLs(t, c, discovered(info("", "", "http://default.test/1")))
		arrived(t, c, "", 1)
		if got := getURLs(t, c, &pb.GetParams{Key: "default.test"}); len(got) != 1 || got[0].CrawlID != "DEFAULT" {
			t.Fatalf("GetURLs(default crawl) = %v", got)
		}
	})

	t.Run("ListURLs, CountURLs, PurgeURLs, DeleteQueue", func(t *testing.T) {
		cr := "list"
		putURLs(t, c, discovered(info(cr, "", "http://k.test/Alpha")), discovered(info(cr, "", "http://k.test/beta")),
			discovered(info(cr, "", "http://k.test/gamma")), discovered(info(cr, "", "http://other.test/alpha")))
		arrived(t, c, cr, 4)
		ls, err := c.ListURLs(ctx, &pb.ListUrlParams{CrawlID: cr, Key: "k.test", Start: 1, Size: 2})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			it, err := ls.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, it.GetKnown().GetInfo().GetUrl())
		}
		if want := []string{"http://k.test/beta", "http://k.test/gamma"}; !slices.Equal(got, want) {
			t.Errorf("ListURLs(start 1, size 2) = %v, want %v", got, want)
		}
		f, yes := "alpha", true
		for _, tc := range []struct {
			p    *pb.CountUrlParams
			want uint64
		}{
			{&pb.CountUrlParams{CrawlID: cr}, 4},
			{&pb.CountUrlParams{CrawlID: cr, Key: "k.test"}, 3},
			{&pb.CountUrlParams{CrawlID: cr, Filter: &f}, 1},
			{&pb.CountUrlParams{CrawlID: cr, Filter: &f, IgnoreCase: &yes}, 2},
		} {
			if n := must[*pb.Long](t)(c.CountURLs(ctx, tc.p)); n.Value != tc.want {
				t.Errorf("CountURLs(%v) = %d, want %d", tc.p, n.Value, tc.want)
			}
		}
		// Everything was created within the last day: a purge of older than 1 day removes nothing, of 0 days
		// everything created before now.
		if n := must[*pb.Long](t)(c.PurgeURLs(ctx, &pb.PurgeUrlParams{CrawlID: cr, Days: 1})); n.Value != 0 {
			t.Errorf("PurgeURLs(1 day) = %d, want 0", n.Value)
		}
		wait(t, 1100*time.Millisecond)
		if n := must[*pb.Long](t)(c.PurgeURLs(ctx, &pb.PurgeUrlParams{CrawlID: cr, Key: "other.test", Days: 0})); n.Value != 1 {
			t.Errorf("PurgeURLs(other.test, 0 days) = %d, want 1", n.Value)
		}
		if n := must[*pb.Long](t)(c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{CrawlID: cr, Key: "k.test"})); n.Value != 3 {
			t.Errorf("DeleteQueue = %d, want 3", n.Value)
		}
		if n := must[*pb.Long](t)(c.CountURLs(ctx, &pb.CountUrlParams{CrawlID: cr})); n.Value != 0 {
			t.Errorf("CountURLs after purge and delete = %d", n.Value)
		}
		if tg.loop {
			// On Frontier's gateway the deletes reach the gateway's store, not the crawl's states; GetURLStatus
			// still answers for a deleted URL from the crawl (frontier.state QUEUED: no fetcher reported it).
			crawlKnows(t, c, cr, "http://k.test/beta", "QUEUED")
		}
	})

	t.Run("SetActive false stops GetURLs, not PutURLs", func(t *testing.T) {
		cr := "active"
		must[*pb.Empty](t)(c.SetActive(ctx, &pb.Active{State: false}))
		if a := must[*pb.Boolean](t)(c.GetActive(ctx, &pb.Local{})); a.State {
			t.Error("GetActive = true after SetActive(false)")
		}
		if acks := putURLs(t, c, discovered(info(cr, "", "http://act.test/1"))); acks[0].Status != pb.AckMessage_OK {
			t.Errorf("PutURLs while inactive: %v", acks[0])
		}
		arrived(t, c, cr, 1)
		got := getURLs(t, c, crawlParams(cr))
		must[*pb.Empty](t)(c.SetActive(ctx, &pb.Active{State: true}))
		if len(got) != 0 {
			t.Fatalf("GetURLs while inactive = %v", urls(got))
		}
		if got := getURLs(t, c, crawlParams(cr)); len(got) != 1 {
			t.Fatalf("GetURLs once active again = %v", urls(got))
		}
	})

	t.Run("two concurrent clients never hold the same URL", func(t *testing.T) {
		cr := "concurrent"
		const n = 2000
		var items []*pb.URLItem
		for i := range n {
			items = append(items, discovered(info(cr, "", fmt.Sprintf("http://c%d.test/%d", i%50, i))))
		}
		putURLs(t, c, items...)
		c2 := dial(t, addr)
		var mu sync.Mutex
		held := map[string]int{}
		var dups []string
		var wg sync.WaitGroup
		// Until every URL was handed out: at once on a standalone; on the cluster the loop brings them as the
		// DB worker's flow control lets it (a host's next URLs follow the outcomes of its earlier ones).
		deadline := time.Now().Add(2 * time.Minute)
		for w, cl := range []pb.URLFrontierClient{c, c2} {
			wg.Go(func() {
				for {
					got := getURLs(t, cl, &pb.GetParams{MaxQueues: 10, MaxUrlsPerQueue: 5, DelayRequestable: 600, Item: &pb.GetParams_CrawlID{CrawlID: cr}})
					if len(got) == 0 {
						mu.Lock()
						all := len(held) == n
						mu.Unlock()
						if all || time.Now().After(deadline) {
							return
						}
						wait(t, 50*time.Millisecond)
						continue
					}
					mu.Lock()
					for _, u := range got {
						if held[u.Url] != 0 {
							dups = append(dups, u.Url)
						}
						held[u.Url] = w + 1
					}
					mu.Unlock()
					// Acknowledge half of them (done); the others stay leased for 10 minutes.
					var acks []*pb.URLItem
					for i, u := range got {
						if i%2 == 0 || tg.loop {
							acks = append(acks, known(u, 0))
						}
					}
					putURLs(t, cl, acks...)
				}
			})
		}
		wg.Wait()
		if len(dups) > 0 {
			t.Fatalf("%d URLs handed out twice, e.g. %v", len(dups), dups[:min(5, len(dups))])
		}
		if len(held) != n {
			t.Fatalf("%d URLs handed out, want %d", len(held), n)
		}
	})

	t.Run("a restart keeps leases, delays, blocks and limits", func(t *testing.T) {
		if restart == nil {
			t.Skip("FRONTIER_URLFRONTIER_ADDR: the server is not this test's to restart")
		}
		cr := "restart"
		putURLs(t, c, discovered(info(cr, "", "http://leased.test/1")), discovered(info(cr, "", "http://delayed.test/1")),
			discovered(info(cr, "", "http://delayed.test/2")), discovered(info(cr, "", "http://blocked.test/1")),
			discovered(info(cr, "", "http://limited.test/1")), known(info(cr, "", "http://limited.test/0"), 0))
		arrived(t, c, cr, 6)
		must[*pb.Empty](t)(c.SetDelay(ctx, &pb.QueueDelayParams{CrawlID: cr, Key: "delayed.test", DelayRequestable: 3600}))
		must[*pb.Empty](t)(c.BlockQueueUntil(ctx, &pb.BlockQueueParams{CrawlID: cr, Key: "blocked.test", Time: uint64(time.Now().Unix() + 3600)}))
		must[*pb.Empty](t)(c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{CrawlID: cr, Key: "limited.test", Limit: 1}))
		const lease = 4 * time.Second
		leasedAt := time.Now()
		got := sorted(urls(getURLs(t, c, &pb.GetParams{MaxUrlsPerQueue: 1, DelayRequestable: uint32(lease / time.Second), Item: &pb.GetParams_CrawlID{CrawlID: cr}})))
		if want := []string{"http://delayed.test/1", "http://leased.test/1"}; !slices.Equal(got, want) {
			t.Fatalf("GetURLs = %v, want %v", got, want)
		}
		restart(t)
		c = dial(t, addr)
		ctx = t.Context()
		got = urls(getURLs(t, c, crawlParams(cr)))
		// Nothing, unless the restart took longer than the lease: then only the URL whose lease ended.
		if len(got) != 0 && (time.Since(leasedAt) < lease || !slices.Equal(got, []string{"http://leased.test/1"})) {
			t.Fatalf("after the restart, GetURLs = %v: a lease, delay, block or limit was lost", got)
		}
		if len(got) == 0 {
			wait(t, time.Until(leasedAt.Add(lease+100*time.Millisecond)))
			got = urls(getURLs(t, c, crawlParams(cr)))
		}
		if !slices.Equal(got, []string{"http://leased.test/1"}) {
			t.Fatalf("after the lease ended, GetURLs = %v, want only the URL whose lease ended", got)
		}
		// The URLs put before the restart are all there.
		if n := must[*pb.Long](t)(c.CountURLs(ctx, &pb.CountUrlParams{CrawlID: cr})); n.Value != 6 {
			t.Errorf("CountURLs after the restart = %d, want 6", n.Value)
		}
		keys := must[*pb.QueueList](t)(c.ListQueues(ctx, &pb.Pagination{CrawlID: cr, IncludeInactive: true})).Values
		sort.Strings(keys)
		if want := []string{"blocked.test", "delayed.test", "leased.test", "limited.test"}; !slices.Equal(keys, want) {
			t.Errorf("ListQueues after the restart = %v", keys)
		}
	})
}

// crawlKnows waits (up to a minute: the strategy workers write their states back in batches) until
// GetURLStatus answers for u from the crawl's states with frontier.state want.
func crawlKnows(t *testing.T, c pb.URLFrontierClient, crawl, u, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		it, err := c.GetURLStatus(t.Context(), &pb.URLStatusRequest{Url: u, CrawlID: crawl})
		if err != nil && status.Code(err) != codes.NotFound {
			t.Fatal(err)
		}
		if err == nil {
			if got := it.GetKnown().GetInfo().GetMetadata()["frontier.state"].GetValues(); !slices.Equal(got, []string{want}) {
				t.Fatalf("GetURLStatus(%s) in crawl %q from the crawl's states: frontier.state %v, want %s (%v)", u, crawl, got, want, it)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetURLStatus(%s) in crawl %q: NOT_FOUND after a minute, want the crawl's state %s", u, crawl, want)
		}
		wait(t, 100*time.Millisecond)
	}
}
