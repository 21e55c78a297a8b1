package strategyworker

import (
	"context"
	"slices"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/state"
)

// scopeWorker builds a worker over shared stores, for handle() calls.
func scopeWorker(t *testing.T, b bus.Bus, states state.Store, domains metadata.Domains, partition int, sc scope.Config) *Worker {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Scope = sc
	w, err := New(cfg, Deps{Bus: b, Codec: codec.Msgpack{}, States: states, Domains: domains, Partition: partition,
		Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// handled runs one batch on w and returns the URLs it scheduled.
func handled(t *testing.T, w *Worker, b bus.Bus, events ...frontier.Message) []string {
	t.Helper()
	out := &recorder{}
	if err := w.handle(t.Context(), events, out); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, m := range out.msgs {
		msg, err := codec.Msgpack{}.DecodeMessage(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, msg.(*frontier.UpdateScore).Request.URL)
	}
	return urls
}

type recorder struct{ msgs []bus.Message }

func (r *recorder) Send(_ context.Context, msgs ...bus.Message) error {
	r.msgs = append(r.msgs, msgs...)
	return nil
}
func (r *recorder) Close() error { return nil }

func links(page *frontier.Request, urls ...string) *frontier.LinksExtracted {
	le := &frontier.LinksExtracted{Request: page}
	for _, u := range urls {
		le.Links = append(le.Links, req(u, -1))
	}
	return le
}

// TestScope: links outside the seeds' registered domains, of denied extensions, trap-shaped, too deep, over a
// host's budget or a path's query variants are dropped and counted by reason; the seeds' domains recorded by
// one worker are in scope for another (shared store), and a redirect target is checked too.
func TestScope(t *testing.T) {
	b, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	states, domains := state.NewMemory(), metadata.NewMemoryDomains()
	sc := scope.DefaultConfig()
	sc.MaxDepth, sc.HostBudget, sc.MaxQueryVariants = 3, 6, 2
	w0 := scopeWorker(t, b, states, domains, 0, sc)

	got := handled(t, w0, b, &frontier.AddSeeds{Seeds: []*frontier.Request{req("http://www.a.test/", -1)}},
		links(req("http://www.a.test/", 0),
			"http://blog.a.test/1",         // the seed's registered domain: in scope
			"http://b.test/1",              // another domain
			"http://www.a.test/logo.png",   // extension
			"http://www.a.test/s/x/x/x/x/", // repeated segments
			"http://www.a.test/cal?m=1",    // query variants 1 and 2 of /cal
			"http://www.a.test/cal?m=2",
			"http://www.a.test/cal?m=3", // third: dropped
			"http://www.a.test/2",
			"http://www.a.test/3",
			"http://www.a.test/4",
			"http://www.a.test/5", // 6 new URLs of www.a.test (seeds do not count): the budget is spent
			"http://www.a.test/6",
		),
		links(req("http://www.a.test/deep", 3), "http://blog.a.test/too-deep"))
	want := []string{"http://www.a.test/", "http://blog.a.test/1", "http://www.a.test/cal?m=1", "http://www.a.test/cal?m=2",
		"http://www.a.test/2", "http://www.a.test/3", "http://www.a.test/4", "http://www.a.test/5"}
	if !slices.Equal(got, want) {
		t.Errorf("scheduled\n %v\nwant\n %v", got, want)
	}
	wantDropped := map[string]int64{scope.ReasonOutOfScope: 1, scope.ReasonExtension: 1, scope.ReasonRepeatedSegments: 1,
		scope.ReasonQueryVariants: 1, scope.ReasonHostBudget: 1, scope.ReasonDepth: 1}
	for i, r := range scope.Reasons {
		if n := w0.scope.dropped[i].Load(); n != wantDropped[r] {
			t.Errorf("dropped %s: %d, want %d", r, n, wantDropped[r])
		}
	}

	// Another worker (another partition, same stores) knows a.test from the store, not b.test; a redirect
	// target out of scope is dropped like a link.
	w1 := scopeWorker(t, b, states, domains, 1, sc)
	redirect := req("http://c.test/moved", 1)
	redirect.Meta.Set(metaRedirectTimes, int64(1))
	got = handled(t, w1, b, links(req("http://blog.a.test/1", 1), "http://blog.a.test/2", "http://b.test/2"),
		&frontier.LinksExtracted{Request: req("http://blog.a.test/r", 1), Links: []*frontier.Request{redirect}})
	if !slices.Equal(got, []string{"http://blog.a.test/2"}) {
		t.Errorf("second worker scheduled %v, want [http://blog.a.test/2]", got)
	}
	if n := w1.scope.dropped[slices.Index(scope.Reasons, scope.ReasonOutOfScope)].Load(); n != 2 {
		t.Errorf("second worker dropped %d out of scope, want 2", n)
	}

	// The host budget is persisted: a third worker (a restart) still refuses www.a.test.
	w2 := scopeWorker(t, b, states, domains, 0, sc)
	if got := handled(t, w2, b, links(req("http://www.a.test/2", 1), "http://www.a.test/7")); len(got) != 0 {
		t.Errorf("after a restart: scheduled %v past the host budget", got)
	}
}

// TestTemplateBudget: a host gets TemplateBudget URLs of one template (numbers and dates collapsed), while
// pages of distinct paths are each their own template; the counts are kept in the domain store, so a second
// batch and a restarted worker still refuse the spent template, and another host has its own budget.
func TestTemplateBudget(t *testing.T) {
	b, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	states, domains := state.NewMemory(), metadata.NewMemoryDomains()
	sc := scope.DefaultConfig()
	sc.Follow, sc.TemplateBudget = scope.FollowAny, 3
	w0 := scopeWorker(t, b, states, domains, 0, sc)
	got := handled(t, w0, b, links(req("http://a.test/", 0),
		"http://a.test/cal/1", "http://a.test/cal/2", "http://a.test/cal/3", "http://a.test/cal/4",
		"http://a.test/ev?date=2026-11-25", "http://a.test/ev?date=2026-11-26",
		"http://a.test/articles/apple", "http://a.test/articles/plum", "http://a.test/articles/pear",
		"http://a.test/articles/fig", "http://b.test/cal/1"))
	want := []string{"http://a.test/cal/1", "http://a.test/cal/2", "http://a.test/cal/3",
		"http://a.test/ev?date=2026-11-25", "http://a.test/ev?date=2026-11-26",
		"http://a.test/articles/apple", "http://a.test/articles/plum", "http://a.test/articles/pear",
		"http://a.test/articles/fig", "http://b.test/cal/1"}
	if !slices.Equal(got, want) {
		t.Errorf("scheduled\n %v\nwant\n %v", got, want)
	}
	got = handled(t, w0, b, links(req("http://a.test/ev?date=2026-11-26", 1), "http://a.test/ev?date=2026-11-27",
		"http://a.test/ev?date=2026-11-28"))
	if !slices.Equal(got, []string{"http://a.test/ev?date=2026-11-27"}) {
		t.Errorf("second batch scheduled %v, want only the third date", got)
	}
	w1 := scopeWorker(t, b, states, domains, 0, sc) // a restart
	if got := handled(t, w1, b, links(req("http://a.test/cal/3", 1), "http://a.test/cal/9")); len(got) != 0 {
		t.Errorf("after a restart: scheduled %v past the template budget", got)
	}
	if n := w0.scope.dropped[slices.Index(scope.Reasons, scope.ReasonTemplateBudget)].Load(); n != 2 {
		t.Errorf("dropped %d for the template budget, want 2", n)
	}
	if n := w1.scope.dropped[slices.Index(scope.Reasons, scope.ReasonTemplateBudget)].Load(); n != 1 {
		t.Errorf("restarted worker dropped %d for the template budget, want 1", n)
	}
}

// TestScopeSitemapExtension: a sitemap (meta frontier_sitemap) is followed whatever its extension; the same
// URL as a plain link is not.
func TestScopeSitemapExtension(t *testing.T) {
	b, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sc := scope.DefaultConfig()
	sc.Follow = scope.FollowAny
	w := scopeWorker(t, b, state.NewMemory(), metadata.NewMemoryDomains(), 0, sc)
	sm := req("http://a.test/sitemap-1.xml.gz", -1)
	sm.Meta.Set(metaSitemap, int64(2))
	le := links(req("http://a.test/sitemap_index.xml", 0), "http://a.test/other.xml.gz")
	le.Links = append(le.Links, sm)
	if got := handled(t, w, b, le); !slices.Equal(got, []string{"http://a.test/sitemap-1.xml.gz"}) {
		t.Errorf("scheduled %v, want only the sitemap", got)
	}
}
