//go:build integration

package hbase

import (
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

// TestIntegrationAccountingReads covers the two reads of the end-of-crawl check on HBase: States.Each over
// more than one scan page, Queue.Has after Schedule and Ack, and frontiertest.CheckAccounting on top.
func TestIntegrationAccountingReads(t *testing.T) {
	c := openTest(t, testConfig(t))
	ctx := t.Context()
	const n = 5003 // past one scan page of Each
	fps := make([]frontier.Fingerprint, n)
	entries := make([]state.Entry, n)
	for i := range fps {
		fps[i] = fpOf(fmt.Sprint("url", i))
		entries[i] = state.Entry{State: frontier.Crawled}
	}
	queued, acked, lost := fps[0], fps[1], fps[2]
	entries[0].State, entries[1].State, entries[2].State = frontier.Queued, frontier.Queued, frontier.Queued
	entries[3] = state.Entry{State: frontier.Error}
	if err := c.States().Put(ctx, fps, entries); err != nil {
		t.Fatal(err)
	}
	seen := map[string]frontier.State{}
	if err := c.States().Each(ctx, func(fp frontier.Fingerprint, e state.Entry) error {
		seen[string(fp)] = e.State
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n || seen[string(queued)] != frontier.Queued || seen[string(fps[4])] != frontier.Crawled {
		t.Fatalf("Each saw %d states (want %d), queued %v", len(seen), n, seen[string(queued)])
	}

	q := c.Queue()
	items := []queue.Item{
		{Partition: 0, Host: "a.test", Fingerprint: queued, Score: 0.5, Request: []byte("r0")},
		{Partition: 0, Host: "a.test", Fingerprint: acked, Score: 0.5, Request: []byte("r1")},
		{Partition: 1, Host: "b.test", Fingerprint: lost, Score: 0.5, NotBefore: 1 << 40, Request: []byte("r2")},
	}
	if err := q.Schedule(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := q.Ack(ctx, items[1:]); err != nil {
		t.Fatal(err)
	}
	has, err := q.Has(ctx, []frontier.Fingerprint{queued, acked, lost, fps[5]})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(has) != "[true false false false]" {
		t.Fatalf("Has = %v, want [true false false false]", has)
	}

	if err := c.Pages().Put(ctx, []metadata.Page{
		{Fingerprint: fps[3], URL: "http://a.test/dns", FirstSeen: 1, Error: "DNSLookupError"},
		{Fingerprint: acked, URL: "http://a.test/acked", FirstSeen: 1},
	}); err != nil {
		t.Fatal(err)
	}
	a, err := frontiertest.CheckAccounting(ctx, frontiertest.AccountingStores{States: c.States(), Queue: q, Pages: c.Pages()})
	if err != nil {
		t.Fatal(err)
	}
	if a.Queued != 1 || a.Errors != 1 || len(a.Stranded) != 2 || a.Stranded[1].URL != "http://a.test/acked" {
		t.Fatalf("accounting %s, stranded %v; want 1 queued, 1 error, 2 stranded (one http://a.test/acked)", a, a.Stranded)
	}
}
