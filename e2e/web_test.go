//go:build integration

package e2e

import (
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// startWeb serves the synthetic web wcfg describes and returns it, a seed file of its home pages and how many
// URLs a crawl from them reaches.
func startWeb(t *testing.T, wcfg web.Config) (*web.Site, string, int) {
	t.Helper()
	site := web.Start(t, wcfg)
	return site, cluster.SeedFile(t, site.Seeds()), cluster.Reachable(t, site)
}
