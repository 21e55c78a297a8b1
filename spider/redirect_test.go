package spider

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/identity"
)

func chainReq(url string, chain ...string) *frontier.Request {
	r := &frontier.Request{URL: url, Meta: frontier.Map{}}
	if len(chain) > 0 {
		vs := make([]frontier.Value, len(chain))
		for i, c := range chain {
			vs[i] = c
		}
		r.Meta.Set(MetaKeyRedirectURLs, vs)
		r.Meta.Set(MetaKeyRedirectTimes, int64(len(chain)))
	}
	return r
}

// TestCheckRedirect: a redirect back into its own chain is a RedirectLoop, one past max_redirects is
// TooManyRedirects, anything else goes on to the frontier.
func TestCheckRedirect(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxRedirects = 3
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Spider{cfg: cfg, id: id}
	for _, tc := range []struct {
		name     string
		req      *frontier.Request
		location string
		want     string
	}{
		{"first hop", chainReq("http://a.test/1"), "http://a.test/2", ""},
		{"to itself", chainReq("http://a.test/1"), "http://a.test/1", ErrNameRedirectLoop},
		{"back into the chain", chainReq("http://a.test/2", "http://a.test/1"), "http://a.test/1", ErrNameRedirectLoop},
		{"back, other spelling", chainReq("http://a.test/2", "http://a.test/1?b=2&a=1"), "http://A.test/1?a=1&b=2", ErrNameRedirectLoop},
		{"cross-host chain", chainReq("http://b.test/x", "http://a.test/1"), "http://c.test/y", ""},
		{"last allowed hop", chainReq("http://a.test/3", "http://a.test/1", "http://a.test/2"), "http://a.test/4", ""},
		{"one too many", chainReq("http://a.test/4", "http://a.test/1", "http://a.test/2", "http://a.test/3"), "http://a.test/5", ErrNameTooManyRedirects},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.checkRedirect(tc.req, &Fetched{Location: tc.location, Status: 301})
			got := ""
			if err != nil {
				got = ClassifyError(err)
			}
			if got != tc.want {
				t.Errorf("checkRedirect = %v (%q), want %q", err, got, tc.want)
			}
		})
	}
}

// TestRedirectTarget: the target carries the chain so far (Scrapy's and Frontera's keys), the redirecting
// request's depth and score, and its method only for 307/308.
func TestRedirectTarget(t *testing.T) {
	s := &Spider{cfg: DefaultConfig(), id: SimpleIdentity{}}
	req := chainReq("http://a.test/2", "http://a.test/1")
	req.Meta.Set(MetaKeyRedirectReasons, []frontier.Value{int64(302)})
	req.SetMetaDepth(3)
	req.SetMetaScore(0.25)
	req.Method = "POST"
	for _, tc := range []struct {
		status int
		method string
	}{{301, "GET"}, {303, "GET"}, {307, "POST"}, {308, "POST"}} {
		tgt := s.redirectTarget(req, &Fetched{Location: "http://b.test/3", Status: tc.status})
		if tgt.Method != tc.method {
			t.Errorf("%d: method %s, want %s", tc.status, tgt.Method, tc.method)
		}
		chain, _ := tgt.Meta.Get(MetaKeyRedirectURLs)
		times, _ := tgt.Meta.Get(MetaKeyRedirectTimes)
		reasons, _ := tgt.Meta.Get(MetaKeyRedirectReasons)
		fps, _ := tgt.Meta.Get(MetaKeyRedirectFingerprints)
		if diff := cmp.Diff([]frontier.Value{"http://a.test/1", "http://a.test/2"}, chain); diff != "" {
			t.Errorf("%d: chain (-want +got):\n%s", tc.status, diff)
		}
		if times != int64(2) || !cmp.Equal(reasons, []frontier.Value{int64(302), int64(tc.status)}) {
			t.Errorf("%d: redirect_times %v, reasons %v", tc.status, times, reasons)
		}
		if l, _ := fps.([]frontier.Value); len(l) != 0 {
			t.Errorf("%d: fingerprints %v without the earlier ones", tc.status, fps)
		}
		if d, _ := tgt.MetaDepth(); d != 3 {
			t.Errorf("%d: depth %d, want 3 (a redirect does not add depth)", tc.status, d)
		}
		if sc, _ := tgt.MetaScore(); sc != 0.25 {
			t.Errorf("%d: score %v, want 0.25", tc.status, sc)
		}
		if d, err := tgt.MetaDomain(); err != nil || d.Name != "b.test" {
			t.Errorf("%d: domain %+v, %v", tc.status, d, err)
		}
	}
}
