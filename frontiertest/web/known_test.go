package web

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestKnownAndUnasked(t *testing.T) {
	cfg := smallConfig()
	cfg.Plain = true
	s := Start(t, cfg)
	c := s.Client(time.Second)
	defer c.CloseIdleConnections()
	h := s.Hosts()[0]
	onHost := func(us []string) []string {
		return slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(us), func(u string) bool { return !strings.HasPrefix(u, h.Origin+"/") })))
	}
	seeds := s.Seeds()
	if got := slices.Sorted(maps.Keys(s.Known())); !slices.Equal(got, slices.Sorted(slices.Values(seeds))) {
		t.Fatalf("Known before any request = %v, want the seeds %v", got, seeds)
	}
	if got, want := s.Unasked(h), onHost(seeds); !slices.Equal(got, want) {
		t.Fatalf("Unasked before any request = %v, want %s's seeds %v", got, h.Name, want)
	}

	// The home page's 2xx makes its links known.
	home := onHost(seeds)[0]
	if resp := get(t, c, home); resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", home, resp.StatusCode)
	} else {
		readAll(t, resp)
	}
	links := onHost(s.Links(home))
	if len(links) == 0 {
		t.Fatalf("%s links to no page of %s", home, h.Name)
	}
	known := s.Known()
	for _, u := range s.Links(home) {
		if !known[u] {
			t.Errorf("%s, a link of %s, is not known", u, home)
		}
	}
	want := slices.DeleteFunc(links, func(u string) bool { return u == home })
	if got := s.Unasked(h); !slices.Equal(got, want) {
		t.Errorf("Unasked after the home page = %v, want its links %v", got, want)
	}
	// Asking for one of them takes it off the list, whatever the answer.
	readAll(t, get(t, c, want[0]))
	if got := s.Unasked(h); slices.Contains(got, want[0]) {
		t.Errorf("Unasked still lists %s after a request for it: %v", want[0], got)
	}
}

// A crawl by hand of one host of a web whose pages fail once: the host goes down once every page the crawl knew
// of was asked for, and the watch reports the pages whose only answers were failures.
func TestDownWhenOnlyRetriesLeft(t *testing.T) {
	cfg := smallConfig()
	cfg.Plain, cfg.Hosts = true, 2
	cfg.Hostile = Hostile{Failing: 0.4}
	s := Start(t, cfg)
	c := s.Client(time.Second)
	defer c.CloseIdleConnections()
	h := s.Hosts()[0]
	if got := s.NeverServed(h); len(got) == 0 {
		t.Fatalf("NeverServed before any request is empty, want %s's seeds", h.Name)
	}
	w := s.DownWhenOnlyRetriesLeft(h)
	failed := map[string]bool{}
	for range 100 {
		todo := s.Unasked(h)
		if len(todo) == 0 {
			break
		}
		for _, u := range todo {
			resp, err := c.Get(u)
			if err != nil {
				continue // the host went down meanwhile
			}
			readAll(t, resp)
			if resp.StatusCode >= 400 {
				failed[u] = true
			}
		}
	}
	// The watch looks every 5 ms: wait until the host refuses.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(h.URL("/robots.txt"))
		if err != nil {
			break
		}
		readAll(t, resp)
		if time.Now().After(deadline) {
			t.Fatalf("%s did not go down although every page of it the crawl knew of was asked for", h.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if at, _ := w.Stop(); at == 0 {
		t.Fatalf("Stop says %s did not go down", h.Name)
	}
	_, pending := w.Stop() // a second Stop returns the same
	want := slices.Sorted(maps.Keys(failed))
	if !slices.Equal(pending, want) {
		t.Errorf("pending = %v, want the pages that failed %v", pending, want)
	}
	if len(want) == 0 {
		t.Errorf("no page of %s failed: the web should fail 40%% of them once", h.Name)
	}
	if got := s.NeverServed(h); !slices.Equal(got, want) {
		t.Errorf("NeverServed = %v, want the pages that failed %v", got, want)
	}
}
