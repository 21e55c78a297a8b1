//go:build integration

package hbase

import (
	"context"
	"crypto/sha1"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/metadata/metadatatest"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"

	"github.com/frontiercrawl/frontier/frontiertest"
)

// testConfig returns the config of the HBase the deploy scripts started (FRONTIER_TEST_HBASE and friends, see
// deploy/env), with a table prefix of its own, so runs and tests do not see each other's rows. Unset: skip, or
// fail when CI=true.
func testConfig(t testing.TB) Config {
	t.Helper()
	addr := frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	cfg := DefaultConfig()
	cfg.Addr = addr
	if v := os.Getenv("FRONTIER_TEST_HBASE_TRANSPORT"); v != "" {
		cfg.Transport = v
	}
	if v := os.Getenv("FRONTIER_TEST_HBASE_PROTOCOL"); v != "" {
		cfg.Protocol = v
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name())
	cfg.TablePrefix = fmt.Sprintf("t%d_%s_", time.Now().UnixNano()%1_000_000_000, name)
	return cfg
}

// openTest creates the tables (all if none are named) under cfg's prefix and drops them when the test ends.
func openTest(t testing.TB, cfg Config, tables ...string) *Client {
	t.Helper()
	ctx := context.Background()
	c, err := New(ctx, cfg, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ensureTables(ctx, tables...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("FRONTIER_TEST_KEEP_TABLES") == "" {
			if err := c.DropTables(context.Background()); err != nil {
				t.Log(err)
			}
		}
		c.Close()
	})
	return c
}

func fpOf(s string) frontier.Fingerprint {
	h := sha1.Sum([]byte(s))
	return h[:]
}

func TestIntegrationSmoke(t *testing.T) {
	cfg := testConfig(t)
	if err := EnsureSchema(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	c := openTest(t, cfg) // EnsureSchema again: idempotent
	ctx := t.Context()
	st := c.States()
	fps := []frontier.Fingerprint{fpOf("a"), fpOf("b")}
	if err := st.Put(ctx, fps[:1], []state.Entry{{State: frontier.Crawled, RevisitAt: 42}}); err != nil {
		t.Fatal(err)
	}
	out := make([]state.Entry, 2)
	found := make([]bool, 2)
	if err := st.Get(ctx, fps, out, found); err != nil {
		t.Fatal(err)
	}
	if !found[0] || found[1] || out[0].State != frontier.Crawled || out[0].RevisitAt != 42 {
		t.Fatalf("got %v %v", out, found)
	}
	q := c.Queue()
	items := []queue.Item{
		{Partition: 1, Host: "a.com", Fingerprint: fpOf("1"), Score: 0.5, Request: []byte("r1")},
		{Partition: 1, Host: "b.com", Fingerprint: fpOf("2"), Score: 0.9, Request: []byte("r2")},
	}
	if err := q.Schedule(ctx, items); err != nil {
		t.Fatal(err)
	}
	got, err := q.Next(ctx, 1, time.Now().Unix(), queue.Limits{Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Host != "b.com" {
		t.Fatalf("next: %+v", got)
	}
	if n, err := q.Count(ctx, 1); err != nil || n != 2 {
		t.Fatalf("count = %d, %v", n, err)
	}
	if err := q.Ack(ctx, got[:1]); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Count(ctx, 1); err != nil || n != 1 {
		t.Fatalf("count after ack = %d, %v", n, err)
	}
	d := c.Domains()
	v, err := d.Add(ctx, "queued", []string{"x.com", "y.com", "x.com"}, []int64{1, 2, 3})
	if err != nil || v[0] != 1 || v[1] != 2 || v[2] != 4 {
		t.Fatalf("add = %v, %v", v, err)
	}
}

// reopen returns a new Client on the same tables, as a restarted process would have.
func reopen(t testing.TB, c *Client) *Client {
	t.Helper()
	c.Close()
	n, err := New(context.Background(), c.cfg, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestIntegrationConformance(t *testing.T) {
	t.Run("queue", func(t *testing.T) {
		queuetest.Run(t, func(t *testing.T) queue.Queue { return openTest(t, testConfig(t), queueTable).Queue() },
			queuetest.WithReopen(func(t *testing.T, q queue.Queue) queue.Queue { return reopen(t, q.(*Queue).c).Queue() }))
	})
	t.Run("state", func(t *testing.T) {
		statetest.Run(t, func(t *testing.T) state.Store { return openTest(t, testConfig(t), statesTable).States() },
			statetest.WithReopen(func(t *testing.T, s state.Store) state.Store { return reopen(t, s.(*States).c).States() }))
	})
	t.Run("metadata", func(t *testing.T) {
		metadatatest.Run(t, func(t *testing.T) metadata.Store { return openTest(t, testConfig(t), metadataTable).Pages() },
			func(t *testing.T, p metadata.Store) metadata.Store { return reopen(t, p.(*Pages).c).Pages() })
	})
	t.Run("domains", func(t *testing.T) {
		metadatatest.RunDomains(t, func(t *testing.T) metadata.Domains { return openTest(t, testConfig(t), domainsTable).Domains() },
			func(t *testing.T, d metadata.Domains) metadata.Domains { return reopen(t, d.(*Domains).c).Domains() })
	})
}
