package urlfrontier

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/google/go-cmp/cmp"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func openTest(t *testing.T, fs vfs.FS, c *clock) *Store {
	t.Helper()
	cfg := DefaultStoreConfig()
	cfg.Dir, cfg.FS, cfg.Now, cfg.Sync = "db", fs, c.now, false
	s, err := OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newTest(t *testing.T) (*Store, *clock) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s := openTest(t, vfs.NewMem(), c)
	t.Cleanup(func() { s.Close() })
	if err := s.SetDelay(context.Background(), "", "", 0); err != nil {
		t.Fatal(err)
	}
	return s, c
}

func put(t *testing.T, s *Store, puts ...Put) []Status {
	t.Helper()
	st, err := s.Put(context.Background(), puts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func disc(u string) Put { return Put{Info: URLInfo{URL: u}} }
func known(u string, refetch int64) Put {
	return Put{Info: URLInfo{URL: u}, Known: true, Refetch: refetch}
}

func get(t *testing.T, s *Store, p GetParams) []string {
	t.Helper()
	infos, err := s.Get(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range infos {
		out = append(out, i.URL)
	}
	return out
}

func TestDiscoveredOnlyIfUnknownKnownUpdates(t *testing.T) {
	s, _ := newTest(t)
	meta := map[string][]string{"depth": {"1"}, "src": {"a", "b"}}
	st := put(t, s, Put{Info: URLInfo{URL: "http://a.test/1", Metadata: meta}}, disc("http://a.test/1"), disc(""), disc("no-host"))
	if diff := cmp.Diff([]Status{OK, Skipped, Skipped, Skipped}, st); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
	infos, err := s.Get(context.Background(), GetParams{})
	if err != nil || len(infos) != 1 {
		t.Fatalf("Get = %v, %v", infos, err)
	}
	want := URLInfo{URL: "http://a.test/1", Key: "a.test", CrawlID: DefaultCrawl, Metadata: meta}
	if diff := cmp.Diff(want, infos[0]); diff != "" {
		t.Fatalf("metadata round trip (-want +got):\n%s", diff)
	}
	// A known item updates (here: done for good), and a discovered one for it is still skipped.
	if st := put(t, s, known("http://a.test/1", 0), disc("http://a.test/1")); !slices.Equal(st, []Status{OK, Skipped}) {
		t.Fatalf("statuses = %v", st)
	}
	us, err := s.URLStatus(context.Background(), "", "", "http://a.test/1")
	if err != nil || us.Refetch != 0 {
		t.Fatalf("URLStatus = %+v, %v; want refetch 0", us, err)
	}
	if _, err := s.URLStatus(context.Background(), "", "", "http://a.test/nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("URLStatus of an unknown URL: %v, want ErrNotFound", err)
	}
}

func TestLeaseAckAndExpiry(t *testing.T) {
	s, c := newTest(t)
	put(t, s, disc("http://a.test/1"), disc("http://a.test/2"))
	if got := get(t, s, GetParams{Lease: 10 * time.Second}); len(got) != 2 {
		t.Fatalf("first Get = %v", got)
	}
	if got := get(t, s, GetParams{}); len(got) != 0 {
		t.Fatalf("leased URLs handed out again: %v", got)
	}
	if st, _ := s.Stats(context.Background(), "", ""); st.InProcess != 2 || st.Size != 2 {
		t.Fatalf("stats = %+v", st)
	}
	put(t, s, known("http://a.test/1", 0)) // acknowledged: done
	c.advance(11 * time.Second)
	if got := get(t, s, GetParams{}); !slices.Equal(got, []string{"http://a.test/2"}) {
		t.Fatalf("after the lease ended, Get = %v, want only the unacknowledged URL", got)
	}
	st, _ := s.Stats(context.Background(), "", "")
	if st.Completed != 1 || st.Size != 1 || st.InProcess != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestRefetchOrdersQueue(t *testing.T) {
	s, c := newTest(t)
	now := c.t.Unix()
	put(t, s, known("http://a.test/late", now-10), known("http://a.test/early", now-100), known("http://a.test/future", now+100))
	if got := get(t, s, GetParams{}); !slices.Equal(got, []string{"http://a.test/early", "http://a.test/late"}) {
		t.Fatalf("Get = %v", got)
	}
	put(t, s, known("http://a.test/early", 0), known("http://a.test/late", 0))
	c.advance(101 * time.Second)
	if got := get(t, s, GetParams{}); !slices.Equal(got, []string{"http://a.test/future"}) {
		t.Fatalf("Get = %v", got)
	}
}

func TestMaxQueuesAndPerQueue(t *testing.T) {
	s, _ := newTest(t)
	for h := range 5 {
		for i := range 4 {
			put(t, s, disc(fmt.Sprintf("http://h%d.test/%d", h, i)))
		}
	}
	got, err := s.Get(context.Background(), GetParams{MaxQueues: 3, MaxURLsPerQueue: 2})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, g := range got {
		per[g.Key]++
	}
	if len(per) != 3 || len(got) != 6 {
		t.Fatalf("Get(max_queues 3, 2 a queue) = %v", per)
	}
	// The next call starts where this one stopped, so the other queues get their turn.
	got2, _ := s.Get(context.Background(), GetParams{MaxQueues: 2, MaxURLsPerQueue: 1})
	for _, g := range got2 {
		if per[g.Key] > 0 {
			t.Fatalf("queue %s served again before the others", g.Key)
		}
	}
	if k := get(t, s, GetParams{Key: "h4.test"}); len(k) == 0 || slices.ContainsFunc(k, func(u string) bool { return u[:14] != "http://h4.test" }) {
		t.Fatalf("Get(key h4.test) = %v", k)
	}
}

func TestDelayBlockLimit(t *testing.T) {
	s, c := newTest(t)
	ctx := context.Background()
	for i := range 6 {
		put(t, s, disc(fmt.Sprintf("http://a.test/%d", i)), disc(fmt.Sprintf("http://b.test/%d", i)))
	}
	if err := s.SetDelay(ctx, "", "a.test", 5); err != nil {
		t.Fatal(err)
	}
	one := GetParams{MaxURLsPerQueue: 1}
	if got := get(t, s, one); len(got) != 2 {
		t.Fatalf("Get = %v", got)
	}
	c.advance(time.Second)
	if got := get(t, s, one); !slices.Equal(got, []string{"http://b.test/1"}) {
		t.Fatalf("within a.test's delay, Get = %v", got)
	}
	c.advance(5 * time.Second)
	if got := get(t, s, GetParams{Key: "a.test", MaxURLsPerQueue: 1}); len(got) != 1 {
		t.Fatalf("after a.test's delay, Get = %v", got)
	}
	// The default delay applies to b.test.
	if err := s.SetDelay(ctx, "", "", 60); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, GetParams{Key: "b.test"}); len(got) != 0 {
		t.Fatalf("within the default delay, Get = %v", got)
	}
	s.SetDelay(ctx, "", "", 0)

	// A block holds the queue until its time; 0 lifts it.
	if err := s.BlockQueue(ctx, "", "b.test", c.t.Unix()+100); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, GetParams{Key: "b.test"}); len(got) != 0 {
		t.Fatalf("blocked queue sent %v", got)
	}
	if qs, _, _ := s.ListQueues(ctx, "", 0, 0, false); slices.Contains(qs, "b.test") {
		t.Fatalf("a blocked queue is listed as active: %v", qs)
	}
	s.BlockQueue(ctx, "", "b.test", 0)
	if got := get(t, s, GetParams{Key: "b.test", MaxURLsPerQueue: 1}); len(got) != 1 {
		t.Fatalf("unblocked queue sent %v", got)
	}

	// The crawl limit counts completed URLs.
	if err := s.SetCrawlLimit(ctx, "", "a.test", 2); err != nil {
		t.Fatal(err)
	}
	put(t, s, known("http://a.test/0", 0), known("http://a.test/1", 0))
	c.advance(time.Minute)
	if got := get(t, s, GetParams{Key: "a.test"}); len(got) != 0 {
		t.Fatalf("queue at its crawl limit sent %v", got)
	}
}

func TestCrawlIDsAreSeparate(t *testing.T) {
	s, _ := newTest(t)
	ctx := context.Background()
	p := disc("http://a.test/1")
	p.Info.CrawlID = "c2"
	if st := put(t, s, disc("http://a.test/1"), p); !slices.Equal(st, []Status{OK, OK}) {
		t.Fatalf("the same URL in two crawls: %v", st)
	}
	if cs, _ := s.ListCrawls(ctx); !slices.Equal(cs, []string{"DEFAULT", "c2"}) {
		t.Fatalf("ListCrawls = %v", cs)
	}
	if got, _ := s.Get(ctx, GetParams{CrawlID: "c2"}); len(got) != 1 || got[0].CrawlID != "c2" {
		t.Fatalf("Get(c2) = %v", got)
	}
	if got := get(t, s, GetParams{AnyCrawl: true}); len(got) != 1 {
		t.Fatalf("Get(any) = %v", got)
	}
	if n, err := s.DeleteCrawl(ctx, "c2"); n != 1 || err != nil {
		t.Fatalf("DeleteCrawl = %d, %v", n, err)
	}
	if cs, _ := s.ListCrawls(ctx); !slices.Equal(cs, []string{"DEFAULT"}) {
		t.Fatalf("ListCrawls = %v", cs)
	}
}

func TestListCountPurgeDelete(t *testing.T) {
	s, c := newTest(t)
	ctx := context.Background()
	put(t, s, disc("http://a.test/x1"), disc("http://a.test/Y2"), disc("http://b.test/x3"))
	c.advance(48 * time.Hour)
	put(t, s, disc("http://a.test/new"))
	var urls []string
	err := s.ListURLs(ctx, ListParams{Key: "a.test", Start: 1, Size: 2}, func(u URLStatus) error { urls = append(urls, u.Info.URL); return nil })
	if err != nil || !slices.Equal(urls, []string{"http://a.test/new", "http://a.test/x1"}) {
		t.Fatalf("ListURLs = %v, %v", urls, err)
	}
	for _, tc := range []struct {
		p    ListParams
		want uint64
	}{{ListParams{}, 4}, {ListParams{Key: "a.test"}, 3}, {ListParams{Filter: "x"}, 2}, {ListParams{Filter: "y", IgnoreCase: true}, 1}, {ListParams{Filter: "y"}, 0}} {
		if n, err := s.CountURLs(ctx, tc.p); n != tc.want || err != nil {
			t.Errorf("CountURLs(%+v) = %d, %v; want %d", tc.p, n, err, tc.want)
		}
	}
	if n, err := s.PurgeURLs(ctx, ListParams{Key: "a.test"}, c.t.Add(-24*time.Hour).Unix()); n != 2 || err != nil {
		t.Fatalf("PurgeURLs = %d, %v", n, err)
	}
	if n, err := s.DeleteQueue(ctx, "", "b.test"); n != 1 || err != nil {
		t.Fatalf("DeleteQueue = %d, %v", n, err)
	}
	st, _ := s.Stats(ctx, "", "")
	if st.Size != 1 || st.NumberOfQueues != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestRestartKeepsLeasesDelaysBlocksLimits(t *testing.T) {
	fs := vfs.NewMem()
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	ctx := context.Background()
	s := openTest(t, fs, c)
	s.SetDelay(ctx, "", "", 0)
	put(t, s, disc("http://a.test/1"), disc("http://b.test/1"), disc("http://c.test/1"), disc("http://d.test/1"))
	s.SetDelay(ctx, "", "a.test", 30)
	s.BlockQueue(ctx, "", "b.test", c.t.Unix()+60)
	s.SetCrawlLimit(ctx, "", "c.test", 1)
	put(t, s, Put{Info: URLInfo{URL: "http://c.test/0"}, Known: true}) // c.test: one completed, at its limit
	if got := get(t, s, GetParams{Lease: 20 * time.Second}); !slices.Equal(got, []string{"http://a.test/1", "http://d.test/1"}) {
		t.Fatalf("Get = %v", got)
	}
	s.SetActive(ctx, false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, fs, c)
	defer s.Close()
	if a, _ := s.Active(ctx); a {
		t.Fatal("SetActive(false) lost on restart")
	}
	s.SetActive(ctx, true)
	put(t, s, disc("http://a.test/2"))
	c.advance(21 * time.Second)
	// d.test's lease ended: it comes back; a.test's delay (30 s) still holds; b.test is blocked; c.test is at
	// its limit.
	if got := get(t, s, GetParams{}); !slices.Equal(got, []string{"http://d.test/1"}) {
		t.Fatalf("after the restart, Get = %v", got)
	}
	c.advance(10 * time.Second)
	// a.test/2 first: a.test/1's lease (its place in the queue) ended after a.test/2 was discovered.
	if got := get(t, s, GetParams{}); !slices.Equal(got, []string{"http://a.test/2", "http://a.test/1"}) {
		t.Fatalf("after a.test's delay, Get = %v", got)
	}
}

func TestCrawlDelayFromMetadata(t *testing.T) {
	s, c := newTest(t)
	put(t, s, disc("http://a.test/1"), disc("http://a.test/2"))
	get(t, s, GetParams{MaxURLsPerQueue: 1})
	put(t, s, Put{Info: URLInfo{URL: "http://a.test/1", Metadata: map[string][]string{"robots.crawl.delay": {"10"}}}, Known: true})
	c.advance(5 * time.Second)
	if got := get(t, s, GetParams{}); len(got) != 0 {
		t.Fatalf("within the reported Crawl-delay, Get = %v", got)
	}
	c.advance(5 * time.Second)
	if got := get(t, s, GetParams{}); len(got) != 1 {
		t.Fatalf("after the Crawl-delay, Get = %v", got)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add((&record{refetch: 1, sched: 2, created: 3, lease: 4, meta: map[string][]string{"k": {"v", "w"}}}).encode(nil))
	f.Add((&record{}).encode(nil))
	f.Add((&record{refetch: 1, sched: 2, src: []byte("request"), part: 3, off: 42}).encode(nil))
	f.Add([]byte{1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		r2, err := decodeRecord(r.encode(nil))
		if err != nil {
			t.Fatalf("re-decoding %+v: %v", r, err)
		}
		if diff := cmp.Diff(r, r2, cmp.AllowUnexported(record{})); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
		_, _ = decodeQueueRecord(b)
	})
}

// TestPutManyKeyOrder: a call of more than seekMin URLs reads its records in key order with one iterator; the
// statuses are still those of call order (a repeat in the call SKIPPED, a held URL SKIPPED, a known put of it
// written, a known put before a discovered one of the same URL in one call).
func TestPutManyKeyOrder(t *testing.T) {
	s, _ := newTest(t)
	var first []Put
	var want []Status
	for i := range 30 {
		u := fmt.Sprintf("http://h%d.test/%d", (i*3)%4, i) // not in key order
		first = append(first, disc(u))
		want = append(want, OK)
		if i%5 == 0 {
			first = append(first, disc(u))
			want = append(want, Skipped)
		}
	}
	if st := put(t, s, first...); !slices.Equal(st, want) {
		t.Fatalf("first call: %v, want %v", st, want)
	}
	var second []Put
	want = want[:0]
	for i := range 40 {
		u := fmt.Sprintf("http://h%d.test/%d", (i*3)%4, i)
		switch {
		case i < 30 && i%3 == 0:
			second = append(second, known(u, 0), disc(u))
			want = append(want, OK, Skipped)
		case i < 30:
			second = append(second, disc(u))
			want = append(want, Skipped)
		default:
			second = append(second, known(u, 0), disc(u))
			want = append(want, OK, Skipped)
		}
	}
	if st := put(t, s, second...); !slices.Equal(st, want) {
		t.Fatalf("second call: %v, want %v", st, want)
	}
	st, err := s.Stats(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != 20 || st.Completed != 20 {
		t.Errorf("Stats = %+v, want 20 queued (30 put, 10 done) and 20 done (10 of them never queued)", st)
	}
}

// BenchmarkStoreSeekAbsent: Store.seekEach of 2,048 URL keys over 1,000 hosts in key order that the store does not hold (the
// "held already?" of a discovered put), over a store on disk of 200,000 URL records of 300 bytes, flushed and
// compacted (in a small store every table sits in L6, whose Bloom filters Pebble skips unless asked), with the
// standalone gateway's 16 MiB block cache. Reports the process's CPU ns per key.
//
//	go test -run '^$' -bench StoreSeekAbsent -benchtime 20x ./urlfrontier/
func BenchmarkStoreSeekAbsent(b *testing.B) {
	cfg := DefaultStoreConfig()
	cfg.Dir, cfg.Sync, cfg.CacheBytes = b.TempDir(), false, 16<<20
	s, err := OpenStore(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 300) // incompressible, as the feed requests' encodings mostly are to snappy
	wb := s.db.NewBatch()
	for i := range 200_000 {
		for j := range val {
			val[j] = byte(rnd.Uint32())
		}
		if err := wb.Set(urlKey(DefaultCrawl, fmt.Sprintf("host%d.example.com", i%1000),
			fmt.Sprintf("https://host%d.example.com/path/page-%d.html", i%1000, i)), val, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := wb.Commit(nil); err != nil {
		b.Fatal(err)
	}
	if err := s.db.Compact(context.Background(), []byte{pURL}, []byte{pURL + 1}, false); err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, 2048)
	for j := range keys {
		i := 1_000_000 + j
		keys[j] = urlKey(DefaultCrawl, fmt.Sprintf("host%d.example.com", i%1000),
			fmt.Sprintf("https://host%d.example.com/path/page-%d.html", i%1000, i))
	}
	slices.SortFunc(keys, bytes.Compare)
	b.ResetTimer()
	var hits int
	c0 := cputime.Process()
	for b.Loop() {
		if err := s.seekEach(keys, func(_ int, _ []byte, ok bool) error {
			if ok {
				hits++
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if hits > 0 {
		b.Fatalf("%d absent keys found", hits)
	}
	b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N*len(keys)), "cpu-ns/key")
}

// BenchmarkStoreFeedPut: what the gateway's store costs to take the spider feed's requests of 100,000 new URLs
// over 1,000 hosts (Store.Put of feed puts, 512 per call as Gateway.take reads them), with the standalone
// gateway's 16 MiB block cache and unsynced writes, until its memtable is flushed and its compactions are done.
// The requests are encoded as a DB worker's feed carries them (fingerprint, domain, depth, score, state, job).
// Reports the process's CPU per 1,000 URLs (the flushes' and compactions' included) and the bytes compactions
// wrote per URL.
//
//	go test -run '^$' -bench StoreFeedPut -benchtime 3x ./urlfrontier/
func BenchmarkStoreFeedPut(b *testing.B) {
	const n, batch = 100_000, 512
	srcs := make([][]byte, n)
	urls := make([]string, n)
	for i := range n {
		urls[i] = fmt.Sprintf("https://host%d.example.com/path/page-%d.html", i%1000, i)
		fp := sha1.Sum([]byte(urls[i]))
		dfp := sha1.Sum([]byte(fmt.Sprintf("host%d.example.com", i%1000)))
		r := &frontier.Request{URL: urls[i], Method: "GET"}
		r.SetMetaFingerprint(fp[:])
		r.SetMetaDomain(frontier.MetaDomain{Name: fmt.Sprintf("host%d.example.com", i%1000), Fingerprint: hex.EncodeToString(dfp[:])})
		r.SetMetaDepth(1)
		r.SetMetaState(frontier.Queued)
		r.SetMetaScore(0.5)
		r.SetMetaJobID(0)
		src, err := codec.Msgpack{}.EncodeRequest(r)
		if err != nil {
			b.Fatal(err)
		}
		srcs[i] = src
	}
	var cpu time.Duration
	var compacted uint64
	for b.Loop() {
		b.StopTimer()
		cfg := DefaultStoreConfig()
		cfg.Dir, cfg.Sync, cfg.CacheBytes = b.TempDir(), false, 16<<20
		s, err := OpenStore(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cputime.Process()
		for lo := 0; lo < n; lo += batch {
			puts := make([]Put, 0, batch)
			for i := lo; i < min(lo+batch, n); i++ {
				puts = append(puts, Put{Info: URLInfo{URL: urls[i]}, feed: &feedEntry{src: srcs[i], off: int64(i) + 1}})
			}
			if _, err := s.Put(context.Background(), puts); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.db.Flush(); err != nil {
			b.Fatal(err)
		}
		for idle := 0; idle < 5; { // no compaction running over 5 checks 10 ms apart
			if idle++; s.db.Metrics().Compact.NumInProgress > 0 {
				idle = 0
			}
			time.Sleep(10 * time.Millisecond)
		}
		cpu += cputime.Process() - c0
		b.StopTimer()
		m := s.db.Metrics()
		for _, l := range m.Levels {
			compacted += l.TableBytesCompacted
		}
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N*n/1000), "cpu-s/1000URLs")
	b.ReportMetric(float64(compacted)/float64(b.N*n), "compacted-B/URL")
}
