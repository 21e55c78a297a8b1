package strategy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
	"github.com/frontiercrawl/frontier/strategy/strategytest"
)

// queueAll schedules every request it sees at score 0.5, as a minimal strategy.
type queueAll struct{}

func (queueAll) Seeds(c strategy.Context, rs []*frontier.Request) {
	queueAll{}.LinksExtracted(c, nil, rs)
}
func (queueAll) LinksExtracted(c strategy.Context, _ *frontier.Request, rs []*frontier.Request) {
	for _, r := range rs {
		if c.State(r) == frontier.NotCrawled && c.Schedule(r, 0.5) == nil {
			c.SetState(r, frontier.Queued)
		}
	}
}
func (queueAll) PageCrawled(strategy.Context, *frontier.Response)         {}
func (queueAll) RequestError(strategy.Context, *frontier.Request, string) {}

func reqs(urls ...string) []*frontier.Request {
	out := make([]*frontier.Request, len(urls))
	for i, u := range urls {
		out[i] = &frontier.Request{URL: u}
	}
	return out
}

func TestCommonOptions(t *testing.T) {
	reg := strategy.NewRegistry()
	reg.Register("all", func(opts map[string]any) (strategy.Strategy, error) {
		if len(opts) > 0 {
			return nil, fmt.Errorf("unexpected options %v", opts)
		}
		return queueAll{}, nil
	})
	links := reqs("http://a.com/1", "http://a.com/2", "http://a.com/3", "http://www.a.com/4", "http://blog.a.com/5",
		"http://b.com/1", "http://b.com/2", "http://c.co.uk/1", "http://x.c.co.uk/2", "http://d.com/1")
	for _, tc := range []struct {
		name string
		opts map[string]any
		want string // URL=score, in order
	}{
		{"none", nil, "[a.com/1=0.5 a.com/2=0.5 a.com/3=0.5 www.a.com/4=0.5 blog.a.com/5=0.5 b.com/1=0.5 b.com/2=0.5 c.co.uk/1=0.5 x.c.co.uk/2=0.5 d.com/1=0.5]"},
		{"host budget", map[string]any{"host_budget": 2},
			"[a.com/1=0.5 a.com/2=0.5 www.a.com/4=0.5 blog.a.com/5=0.5 b.com/1=0.5 b.com/2=0.5 c.co.uk/1=0.5 x.c.co.uk/2=0.5 d.com/1=0.5]"},
		{"host budget with an override", map[string]any{"host_budget": 1, "host_budgets": map[string]any{"a.com": 0, "b.com": 2}},
			"[a.com/1=0.5 a.com/2=0.5 a.com/3=0.5 www.a.com/4=0.5 blog.a.com/5=0.5 b.com/1=0.5 b.com/2=0.5 c.co.uk/1=0.5 x.c.co.uk/2=0.5 d.com/1=0.5]"},
		{"domain budget", map[string]any{"domain_budget": "4"},
			"[a.com/1=0.5 a.com/2=0.5 a.com/3=0.5 www.a.com/4=0.5 b.com/1=0.5 b.com/2=0.5 c.co.uk/1=0.5 x.c.co.uk/2=0.5 d.com/1=0.5]"},
		{"both budgets", map[string]any{"domain_budget": 1, "host_budget": 1},
			"[a.com/1=0.5 b.com/1=0.5 c.co.uk/1=0.5 d.com/1=0.5]"},
		{"priorities by host and by domain", map[string]any{"host_priority": map[string]any{"b.com": 1.5, "c.co.uk": 0.5, "x.c.co.uk": 4, "d.com": 0}},
			"[a.com/1=0.5 a.com/2=0.5 a.com/3=0.5 www.a.com/4=0.5 blog.a.com/5=0.5 b.com/1=0.75 b.com/2=0.75 c.co.uk/1=0.25 x.c.co.uk/2=1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := reg.New("all", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := strategytest.New(nil)
			ls := make([]*frontier.Request, len(links))
			for i, l := range links {
				ls[i] = &frontier.Request{URL: l.URL}
			}
			s.LinksExtracted(c, nil, ls)
			var got []string
			for _, x := range c.Scheduled {
				got = append(got, fmt.Sprintf("%s=%v", x.URL[len("http://"):], x.Score))
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("scheduled %v\nwant      %v", got, tc.want)
			}
			// Seen URLs cost nothing: scheduling them again is not counted.
			before := fmt.Sprint(c.Counters)
			s.LinksExtracted(c, nil, ls)
			if fmt.Sprint(c.Counters) != before {
				t.Errorf("counters moved on seen URLs: %v → %v", before, c.Counters)
			}
		})
	}
}

func TestSeedScores(t *testing.T) {
	seeds := func() []*frontier.Request {
		rs := reqs("http://a.com/", "http://b.com/", "http://c.com/")
		rs[0].SetMetaScore(0.9)
		rs[2].SetMetaScore(7) // invalid: the strategy's own score stands
		return rs
	}
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{nil, "[0.9 0.5 0.5]"},
		{map[string]any{"seed_scores": false}, "[0.5 0.5 0.5]"},
		{map[string]any{"seed_scores": true, "host_priority": map[string]any{"a.com": 0.5}}, "[0.45 0.5 0.5]"},
	} {
		reg := strategy.NewRegistry()
		reg.Register("all", func(map[string]any) (strategy.Strategy, error) { return queueAll{}, nil })
		s, err := reg.New("all", tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		c := strategytest.New(nil)
		s.Seeds(c, seeds())
		var got []float64
		for _, x := range c.Scheduled {
			got = append(got, x.Score)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%v: seed scores %v, want %v", tc.opts, got, tc.want)
		}
	}
}

func TestCommonOptionErrors(t *testing.T) {
	reg := strategy.NewRegistry()
	reg.Register("all", func(map[string]any) (strategy.Strategy, error) { return queueAll{}, nil })
	for _, opts := range []map[string]any{
		{"host_budget": -1},
		{"domain_budget": "lots"},
		{"host_budgets": map[string]any{"a.com": -2}},
		{"host_priority": map[string]any{"a.com": -1}},
		{"host_priority": "a.com"},
	} {
		if _, err := reg.New("all", opts); err == nil {
			t.Errorf("%v accepted", opts)
		}
	}
	s, _ := reg.New("all", map[string]any{"host_budget": 1})
	c := strategytest.New(nil)
	s.LinksExtracted(c, nil, reqs("http://a.com/1"))
	w := s.(interface{ Unwrap() strategy.Strategy })
	if _, ok := w.Unwrap().(queueAll); !ok {
		t.Errorf("Unwrap = %T", w.Unwrap())
	}
	if f, ok := s.(strategy.Finisher); !ok || f.Finished() {
		t.Error("a wrapped strategy that cannot finish reports finished")
	}
	var errs []error
	reg.Register("errs", func(map[string]any) (strategy.Strategy, error) { return errRecorder{&errs}, nil })
	s, _ = reg.New("errs", map[string]any{"host_budget": 1})
	s.LinksExtracted(strategytest.New(nil), nil, reqs("http://z.com/1", "http://z.com/2"))
	if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], strategy.ErrBudget) {
		t.Errorf("Schedule errors %v, want nil then ErrBudget", errs)
	}
}

// errRecorder schedules every link and records what Schedule returned.
type errRecorder struct{ errs *[]error }

func (e errRecorder) Seeds(strategy.Context, []*frontier.Request) {}
func (e errRecorder) LinksExtracted(c strategy.Context, _ *frontier.Request, rs []*frontier.Request) {
	for _, r := range rs {
		*e.errs = append(*e.errs, c.Schedule(r, 0.5))
	}
}
func (e errRecorder) PageCrawled(strategy.Context, *frontier.Response)         {}
func (e errRecorder) RequestError(strategy.Context, *frontier.Request, string) {}

func TestDomain(t *testing.T) {
	for in, want := range map[string]string{
		"www.example.co.uk": "example.co.uk", "a.b.example.com": "example.com", "example.com": "example.com",
		"host1.test": "host1.test", "www.host1.test": "host1.test", "127.0.0.2": "127.0.0.2", "co.uk": "co.uk",
		"WWW.Example.COM.": "example.com", "": "", "localhost": "localhost", "::1": "::1",
	} {
		if got := strategy.Domain(in); got != want {
			t.Errorf("Domain(%q) = %q, want %q", in, got, want)
		}
	}
}
