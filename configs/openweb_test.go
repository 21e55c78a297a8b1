package configs

import (
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/spider"
)

// TestOpenWebKeys: the keys of the open web's features load with their documented defaults, take --set, and
// a bad value names its key.
func TestOpenWebKeys(t *testing.T) {
	cfg, err := Load(Options{Role: "standalone"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Seeds.Sitemaps || cfg.Spider.Sitemaps || cfg.Spider.Politeness != spider.PolitenessIP ||
		cfg.Scope.TemplateBudget != scope.DefaultTemplateBudget {
		t.Errorf("defaults: seeds.sitemaps %v, spider.sitemaps %v, spider.politeness %q, scope.template_budget %d",
			cfg.Seeds.Sitemaps, cfg.Spider.Sitemaps, cfg.Spider.Politeness, cfg.Scope.TemplateBudget)
	}
	cfg, err = Load(Options{Role: "spider", Sets: []string{"seeds.sitemaps=true", "spider.politeness=host", "scope.template_budget=0"}})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Seeds.Sitemaps || cfg.Spider.Politeness != spider.PolitenessHost || cfg.Scope.TemplateBudget != 0 {
		t.Errorf("--set: %+v %q %d", cfg.Seeds, cfg.Spider.Politeness, cfg.Scope.TemplateBudget)
	}
	for set, key := range map[string]string{"spider.politeness=server": "politeness", "scope.template_budget=-1": "template_budget",
		"spider.robots_ttl=48h": "robots_ttl"} {
		if _, err := Load(Options{Role: "spider", Sets: []string{set}}); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("--set %s: %v, want an error naming %s", set, err, key)
		}
	}
}
