//go:build integration

package hbase

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

// cutProxy is a TCP proxy between the client and the Thrift gateway that the test cuts and heals: cut closes
// every connection and refuses new ones until heal; cutAtAnswer(k) forwards the server's answers until the
// k-th one (counted in frames of the framed transport), and cuts instead of forwarding it, so the k-th call
// reached HBase and was applied, but its answer is lost. The shared servers are not touched.
type cutProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	down    bool
	conns   map[net.Conn]bool
	answers int           // answers forwarded since cutAtAnswer
	cutAt   int           // cut before answer cutAt (0: never)
	downAt  int           // deliver answer downAt, with every upstream connection closed first (0: never)
	cutNow  chan struct{} // closed when the armed cut happened
	refused chan struct{} // closed at the first connection refused while down (the client is retrying)
	wg      sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		if down && p.refused != nil {
			close(p.refused)
			p.refused = nil
		}
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); io.Copy(up, c); up.Close(); c.Close() }()
		go func() { defer p.wg.Done(); p.answer(c, up); up.Close(); c.Close() }()
	}
}

// answer forwards the server's frames to the client, counting them, and cuts at the armed one.
func (p *cutProxy) answer(c, up net.Conn) {
	hdr := make([]byte, 4)
	for {
		if _, err := io.ReadFull(up, hdr); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr))
		if _, err := io.ReadFull(up, body); err != nil {
			return
		}
		p.mu.Lock()
		p.answers++
		if p.downAt > 0 && p.answers == p.downAt {
			// Nothing the client sends after this answer reaches the server: the upstream connections close
			// before the answer is delivered, and new ones are refused until heal.
			p.down, p.downAt = true, 0
			if p.refused == nil {
				p.refused = make(chan struct{})
			}
			for conn := range p.conns {
				if conn != c {
					conn.Close()
				}
			}
			clear(p.conns)
			close(p.cutNow)
			p.mu.Unlock()
			_, _ = c.Write(append(hdr, body...))
			return
		}
		if p.cutAt > 0 && p.answers == p.cutAt {
			p.cutLocked()
			close(p.cutNow)
			p.cutAt = 0
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		if _, err := c.Write(append(hdr, body...)); err != nil {
			return
		}
	}
}

// cut closes every connection and refuses new ones; the returned channel is closed when the client tries to
// connect again.
func (p *cutProxy) cut() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
	return p.refused
}

func (p *cutProxy) cutLocked() {
	p.down = true
	if p.refused == nil {
		p.refused = make(chan struct{})
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// cutAtAnswer arms a cut before the k-th answer from now; the returned channels are closed when the cut
// happened and when the client then tried to connect again.
func (p *cutProxy) cutAtAnswer(k int) (cutNow <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers, p.cutAt, p.cutNow = 0, k, make(chan struct{})
	return p.cutNow
}

// downAfterAnswer arms a cut after the k-th answer from now: that answer reaches the client, the client's next
// request does not reach the server. The returned channel is closed when the cut happened.
func (p *cutProxy) downAfterAnswer(k int) (cutNow <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers, p.downAt, p.cutNow = 0, k, make(chan struct{})
	return p.cutNow
}

func (p *cutProxy) retrying() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused == nil {
		p.refused = make(chan struct{})
	}
	return p.refused
}

func (p *cutProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// TestIntegrationCutConnection walks every write path (states, queue, metadata, domain metadata, the DB
// worker's crawl counters, the strategy worker's budgets) through a connection cut before the call and through
// one cut after HBase applied a write but before its answer came back, and checks that no error reaches the
// caller, that the call completes once the connection heals, and that counters are exact (a retried write that
// reached the server is not counted twice).
func TestIntegrationCutConnection(t *testing.T) {
	cfg := testConfig(t)
	if cfg.Transport != "framed" {
		t.Skipf("the proxy counts answers in frames: the gateway's transport is %q", cfg.Transport)
	}
	p := newCutProxy(t, cfg.Addr)
	cfg.Addr = p.addr()
	cfg.RetryBackoff, cfg.MaxRetryBackoff = 5*time.Millisecond, 50*time.Millisecond
	cfg.PoolSize = 2
	c := openTest(t, cfg)
	st, q, pages, doms := c.States(), c.Queue(), c.Pages(), c.Domains()
	item := func(i int) queue.Item {
		return queue.Item{Partition: 3, Host: "cut.example", Fingerprint: fpOf(string(rune('a' + i))), Score: 0.5, Request: []byte{byte(i)}}
	}
	var counts = map[string]int64{} // what each counter must hold
	var lastCrawled int64           // the Seq of the last crawl-counter write
	tally := func(row, src string, seq int64) []metadata.Tally {
		return []metadata.Tally{{Domain: row, Delta: 1, Source: src, Seq: seq}}
	}
	type path struct {
		name    string
		answers int // RPCs the call makes: the mid-call cut loses the answer of the last (a write)
		call    func(ctx context.Context, round int) error
		check   func(ctx context.Context, round int) error
		setup   func(ctx context.Context) error // if set, runs before the cut
	}
	paths := []path{
		{"states put", 1, func(ctx context.Context, r int) error {
			return st.Put(ctx, []frontier.Fingerprint{fpOf("s")}, []state.Entry{{State: frontier.Crawled, RevisitAt: int64(r)}})
		}, func(ctx context.Context, r int) error {
			out, found := make([]state.Entry, 1), make([]bool, 1)
			if err := st.Get(ctx, []frontier.Fingerprint{fpOf("s")}, out, found); err != nil {
				return err
			}
			if !found[0] || out[0].RevisitAt != int64(r) {
				return errors.New("state not written")
			}
			return nil
		}, nil},
		{"queue schedule", 2, func(ctx context.Context, r int) error { return q.Schedule(ctx, []queue.Item{item(0)}) },
			func(ctx context.Context, r int) error {
				if n, err := q.Count(ctx, 3); err != nil || n != 1 {
					return errors.New("queue count is not 1 after schedule")
				}
				return nil
			}, nil},
		{"queue ack", 2, func(ctx context.Context, r int) error { return q.Ack(ctx, []queue.Item{item(0)}) }, // get, delete
			func(ctx context.Context, r int) error {
				if n, err := q.Count(ctx, 3); err != nil || n != 0 {
					return errors.New("queue count is not 0 after ack")
				}
				return nil
			}, func(ctx context.Context) error { return q.Schedule(ctx, []queue.Item{item(0)}) }},
		{"metadata put", 2, func(ctx context.Context, r int) error {
			return pages.Put(ctx, []metadata.Page{{Fingerprint: fpOf("m"), URL: "http://cut.example/", FirstSeen: 1, Status: 200 + r}})
		}, func(ctx context.Context, r int) error {
			pg, ok, err := pages.Get(ctx, fpOf("m"))
			if err != nil || !ok || pg.Status != 200+r || pg.FirstSeen != 1 {
				return errors.New("page not written")
			}
			return nil
		}, nil},
		// The counter paths below write a row the previous round wrote too, so the row is in the Domains' row
		// cache and the write (a check-and-put) is the call's only RPC; "counter, first write to a row" walks the
		// get-then-check-and-put path.
		{"counter, first write to a row", 2, func(ctx context.Context, r int) error {
			_, err := doms.AddOnce(ctx, "fresh", tally(fmt.Sprintf("row%d", r), "dbw-spider-log/0", 1))
			return err
		}, func(ctx context.Context, r int) error {
			return wantCounter(ctx, doms, "fresh", fmt.Sprintf("row%d", r), 1)
		}, nil},
		{"domain metadata add", 1, func(ctx context.Context, r int) error {
			counts["plain"]++
			_, err := doms.Add(ctx, "plain", []string{"cut.example"}, []int64{1})
			return err
		}, func(ctx context.Context, r int) error {
			return wantCounter(ctx, doms, "plain", "cut.example", counts["plain"])
		}, nil},
		{"crawl counters (DB worker, one tally per event)", 1, func(ctx context.Context, r int) error {
			counts["crawled"]++
			lastCrawled = int64(r)
			_, err := doms.AddOnce(ctx, "crawled", tally("#crawl", "dbw-spider-log/0", int64(r)))
			return err
		}, func(ctx context.Context, r int) error {
			return wantCounter(ctx, doms, "crawled", "#crawl", counts["crawled"])
		}, nil},
		{"budget (strategy worker, one Seq per batch)", 1, func(ctx context.Context, r int) error {
			counts["budget"]++
			_, err := doms.AddOnce(ctx, "host_scheduled", tally("cut.example", "sw-spider-log/0", int64(r)))
			return err
		}, func(ctx context.Context, r int) error {
			return wantCounter(ctx, doms, "host_scheduled", "cut.example", counts["budget"])
		}, nil},
	}
	ctx := t.Context()
	round := 0
	for _, pa := range paths {
		for _, mode := range []string{"cut before the call", "answer lost after the write"} {
			t.Run(pa.name+"/"+mode, func(t *testing.T) {
				round++
				if pa.setup != nil {
					if err := pa.setup(ctx); err != nil {
						t.Fatal(err)
					}
				}
				var retrying <-chan struct{}
				if mode == "cut before the call" {
					retrying = p.cut()
				} else {
					cutNow := p.cutAtAnswer(pa.answers)
					retrying = p.retrying()
					defer func() {
						select {
						case <-cutNow:
						default:
							t.Error("the armed cut did not happen")
						}
					}()
				}
				done := make(chan error, 1)
				go func() { done <- pa.call(ctx, round) }()
				select { // the client sees the cut and retries; then the connection heals
				case <-retrying:
				case err := <-done:
					t.Fatalf("the call returned during the cut: %v", err)
				case <-ctx.Done():
					t.Fatal(ctx.Err())
				}
				p.heal()
				if err := <-done; err != nil {
					t.Fatalf("an error reached the caller: %v", err)
				}
				if err := pa.check(ctx, round); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	// A replay of the DB worker's last batch with one new event: only the new event counts.
	got, err := doms.AddOnce(ctx, "crawled", slices.Concat(tally("#crawl", "dbw-spider-log/0", lastCrawled), tally("#crawl", "dbw-spider-log/0", lastCrawled+1)))
	if err != nil || got[0] != counts["crawled"]+1 {
		t.Fatalf("replay with one new event = %v, %v, want %d", got, err, counts["crawled"]+1)
	}
}

func wantCounter(ctx context.Context, d *Domains, name, row string, want int64) error {
	got, err := d.Get(ctx, name, []string{row})
	if err != nil {
		return err
	}
	if got[0] != want {
		return fmt.Errorf("counter %s of %s = %d, want %d (a retried write counted twice, or a write lost)", name, row, got[0], want)
	}
	return nil
}
