package identity

import (
	"bytes"
	"net/url"
	"reflect"
	"sync/atomic"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// TestDomainCache checks that every URL gets the DomainMeta SetMetaDomain makes of its Domain, whether
// computed, cached or found without a parse, and which URLs share one computation.
func TestDomainCache(t *testing.T) {
	id, err := New("sha1", CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	c := NewDomainCache(func(u *url.URL) frontier.MetaDomain { calls.Add(1); return id.Domain(u) }, 0)
	tests := []struct {
		url      string
		computed bool // the domain function runs for it (a miss, or not cacheable)
		bad      bool // GetURL refuses it
	}{
		{url: "http://example.com/a", computed: true},
		{url: "http://example.com/b?q=1#f"},
		{url: "http://example.com"},
		{url: "https://example.com/a", computed: true}, // another scheme
		{url: "http://example.com:8080/a", computed: true},
		{url: "http://example.com:8080/b"},
		{url: "http://www.example.com/a", computed: true},
		{url: "http://127.0.0.4:40123/d1/page1.html", computed: true},
		{url: "http://127.0.0.4:40123/d1/page2.html"},
		{url: "http://Example.COM/a", computed: true}, // Host as written: a key of its own
		{url: "http://Example.COM/b"},
		{url: "http://[::1]:80/a", computed: true},
		{url: "http://[::1]:80/b"},
		{url: "http://user@example.com/a", computed: true}, // user info: never cached
		{url: "http://user@example.com/a", computed: true},
		{url: "http://example.com/%zz", bad: true},
		{url: "http://example.com/a b"},
		{url: "http://exa mple.com/", bad: true},
		{url: "http://example.com:8x/", bad: true},
		{url: "http://example.com/\x01", bad: true},
		{url: "mailto:a@example.com", computed: true},
		{url: "mailto:a@example.com", computed: true}, // opaque: never cached
	}
	for _, tt := range tests {
		before := calls.Load()
		got, ok := c.GetURL(tt.url)
		u, err := url.Parse(tt.url)
		if tt.bad != (err != nil) || ok == tt.bad {
			t.Errorf("%q: GetURL ok %v, url.Parse error %v, want bad %v", tt.url, ok, err, tt.bad)
			continue
		}
		if tt.bad {
			continue
		}
		if n := calls.Load() - before; (n == 1) != tt.computed {
			t.Errorf("%q: domain computed %d times, want computed %v", tt.url, n, tt.computed)
		}
		d := id.Domain(u)
		var r frontier.Request
		r.SetMetaDomain(d)
		want, _ := r.Meta.Get(frontier.MetaKeyDomain)
		if !reflect.DeepEqual(want, got.Value) {
			t.Errorf("%q: domain meta %v, want %v", tt.url, got.Value, want)
		}
		if got.Fingerprint != d.Fingerprint || !bytes.Equal(got.Key, []byte(d.Fingerprint)) {
			t.Errorf("%q: fingerprint %q key %q, want %q", tt.url, got.Fingerprint, got.Key, d.Fingerprint)
		}
		if g := c.Get(u); g.Fingerprint != got.Fingerprint || !reflect.DeepEqual(g.Value, got.Value) {
			t.Errorf("%q: Get %+v, GetURL %+v", tt.url, g, got)
		}
	}
}

// TestDomainCacheMax checks the bound: past max hosts the cache starts again empty.
func TestDomainCacheMax(t *testing.T) {
	var calls int
	c := NewDomainCache(func(u *url.URL) frontier.MetaDomain {
		calls++
		return frontier.MetaDomain{Netloc: u.Host, Name: u.Hostname(), Scheme: u.Scheme, Fingerprint: u.Hostname()}
	}, 2)
	for _, s := range []string{"http://a/", "http://b/", "http://a/x", "http://c/", "http://a/"} {
		c.GetURL(s)
	}
	if calls != 4 { // a, b, (a cached), c (clears), a again
		t.Errorf("%d computations, want 4", calls)
	}
}

// FuzzSplitPlain holds splitPlain to url.Parse: whenever it answers, url.Parse succeeds with the same scheme
// and host, no user info and no opaque part.
func FuzzSplitPlain(f *testing.F) {
	for _, s := range []string{"http://example.com/a", "https://a.b:8080?q#f", "http://a:/", "http://a%41/",
		"http://a/%4", "http://a/b#%zz", "http://a@b/", "http://a/?x@y/z", "HTTP://a/", "http://:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := splitPlain(s)
		if !ok {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("splitPlain(%q) = %+v, url.Parse: %v", s, k, err)
		}
		if u.Scheme != k.scheme || u.Host != k.host || u.User != nil || u.Opaque != "" {
			t.Fatalf("splitPlain(%q) = %+v, url.Parse: scheme %q host %q user %v opaque %q", s, k, u.Scheme, u.Host, u.User, u.Opaque)
		}
	})
}
