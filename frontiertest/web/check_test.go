package web

import (
	"io"
	"testing"
	"time"
)

func TestCheckCrawlFindsBadCrawls(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 2, 3
	site := Start(t, cfg)
	seed := site.Seeds()[0]

	c, err := site.CheckCrawl(seed)
	if err != nil {
		t.Fatal(err)
	}
	if c.OK() || len(c.Missing) != c.Reachable || c.Reachable == 0 {
		t.Fatalf("no crawl at all: %+v", c)
	}

	client := site.Client(5 * time.Second)
	get := func(u string) {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get(seed)
	get(seed)
	get(site.Hosts()[0].Origin + "/private/secret.html")
	c, err = site.CheckCrawl(seed)
	if err != nil {
		t.Fatal(err)
	}
	if c.Twice[seed] != 2 {
		t.Errorf("Twice = %v, want %s twice", c.Twice, seed)
	}
	if len(c.RobotsViolations) != 1 {
		t.Errorf("RobotsViolations = %v, want the private page", c.RobotsViolations)
	}
	if len(c.Missing) != c.Reachable-1 {
		t.Errorf("%d missing of %d reachable, want all but the seed", len(c.Missing), c.Reachable)
	}
}
