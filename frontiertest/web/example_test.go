package web_test

import (
	"fmt"
	"io"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// A crawl test in miniature: serve the site, fetch through its dialer, compare with the ground truth, and check
// politeness from what the server recorded. In a test, web.Start(t, cfg) replaces New and Stop.
func Example() {
	cfg := web.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 3, 4
	site, err := web.New(cfg)
	if err != nil {
		panic(err)
	}
	defer site.Stop()

	c := site.Client(10 * time.Second) // dials host1.test:80 to 127.0.0.2:<port>
	defer c.CloseIdleConnections()
	for _, u := range []string{"http://host1.test/robots.txt", "http://HOST1.test:80/d1/page1.html#x", "http://host1.test/r/chain/1"} {
		resp, err := c.Get(u)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, u)
	}

	p := site.Page("http://host1.test/r/chain/1")
	fmt.Println(p.Outcome, p.Location)
	want, _ := site.Reachable("http://host1.test/")
	fmt.Println(want["http://host1.test/private/secret.html"], want["http://host3.test/"], want["http://blackhole.test/"])

	// The requests were sequential, so at most one was in flight. MaxConns would say 2 here: http.Transport
	// keys its pool by the host as written, so HOST1.test:80 opened a connection of its own. A polite crawler
	// normalises URLs (web.Normalize shows the form) before fetching.
	h := site.Host("host1.test")
	fmt.Println(h.Addr.Addr(), h.MaxInFlight(), len(h.Requests()), site.Fetches()["http://host1.test/d1/page1.html"])
	// Output:
	// 200 http://host1.test/robots.txt
	// 200 http://HOST1.test:80/d1/page1.html#x
	// 301 http://host1.test/r/chain/1
	// redirect http://host1.test/r/chain/2
	// robots_disallowed robots_disallowed no_response
	// 127.0.0.2 1 3 1
}
