package configs

import (
	"testing"
	"time"
)

// TestGlobalsFillRoles: shutdown_timeout and stats_interval reach every role, in a cluster process and in the
// standalone, unless a role's own key (strategy_worker.shutdown_timeout, db_worker.shutdown_timeout) says
// otherwise; the scope section is the strategy workers' scope. The cluster's strategy worker and DB worker
// used to keep their own 30 s whatever shutdown_timeout said.
func TestGlobalsFillRoles(t *testing.T) {
	type want struct{ spider, sw, dbw, stats time.Duration }
	for _, tc := range []struct {
		name string
		role string
		sets []string
		want want
	}{
		{"defaults", "strategyworker", nil, want{30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"global", "strategyworker", []string{"shutdown_timeout=7s", "stats_interval=5s"}, want{7 * time.Second, 7 * time.Second, 7 * time.Second, 5 * time.Second}},
		{"global, dbworker", "dbworker", []string{"shutdown_timeout=7s"}, want{7 * time.Second, 7 * time.Second, 7 * time.Second, 30 * time.Second}},
		{"global, spider", "spider", []string{"shutdown_timeout=7s"}, want{7 * time.Second, 7 * time.Second, 7 * time.Second, 30 * time.Second}},
		{"role key wins", "dbworker", []string{"shutdown_timeout=7s", "db_worker.shutdown_timeout=3s"}, want{7 * time.Second, 7 * time.Second, 3 * time.Second, 30 * time.Second}},
		{"role key alone", "strategyworker", []string{"strategy_worker.shutdown_timeout=45s"}, want{30 * time.Second, 45 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"standalone", "standalone", []string{"shutdown_timeout=9s", "stats_interval=2s"}, want{9 * time.Second, 9 * time.Second, 9 * time.Second, 2 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(Options{Role: tc.role, Sets: tc.sets})
			if err != nil {
				t.Fatal(err)
			}
			got := want{cfg.Spider.ShutdownTimeout, cfg.StrategyWorker.ShutdownTimeout, cfg.DBWorker.ShutdownTimeout, cfg.StatsInterval}
			if got != tc.want {
				t.Errorf("shutdown spider/strategy worker/DB worker, stats = %v, want %v", got, tc.want)
			}
			for name, d := range map[string]time.Duration{"spider": cfg.Spider.StatsInterval, "strategy worker": cfg.StrategyWorker.StatsInterval,
				"DB worker": cfg.DBWorker.StatsInterval, "standalone": cfg.Standalone.StatsInterval} {
				if d != tc.want.stats {
					t.Errorf("%s stats interval = %v, want %v", name, d, tc.want.stats)
				}
			}
			// The standalone runs the same role sections.
			sa := cfg.Standalone
			if sa.Spider.ShutdownTimeout != tc.want.spider || sa.StrategyWorker.ShutdownTimeout != tc.want.sw || sa.DBWorker.ShutdownTimeout != tc.want.dbw {
				t.Errorf("standalone shutdown timeouts %v %v %v, want %v", sa.Spider.ShutdownTimeout, sa.StrategyWorker.ShutdownTimeout,
					sa.DBWorker.ShutdownTimeout, tc.want)
			}
		})
	}
}

// TestStandaloneSectionFilled: the standalone section (standalone.Config) carries the sections it shares with the
// cluster, filled in one place.
func TestStandaloneSectionFilled(t *testing.T) {
	cfg, err := Load(Options{Role: "standalone", Sets: []string{"codec=json", "identity.fingerprint=md5", "scope.max_depth=4",
		"spider.delay=250ms", "db_worker.per_host=9", "standalone.spiders=3"}})
	if err != nil {
		t.Fatal(err)
	}
	sa := cfg.Standalone
	if sa.Codec != "json" || sa.Fingerprint != "md5" || sa.Canonicalization != cfg.Identity.Canonicalization || sa.Spiders != 3 {
		t.Errorf("standalone = codec %q, fingerprint %q, canonicalization %q, spiders %d", sa.Codec, sa.Fingerprint, sa.Canonicalization, sa.Spiders)
	}
	if sa.StrategyWorker.Scope.MaxDepth != 4 || cfg.StrategyWorker.Scope.MaxDepth != 4 || sa.Spider.Delay != 250*time.Millisecond || sa.DBWorker.PerHost != 9 {
		t.Errorf("standalone roles: scope max_depth %d (cluster %d), spider delay %v, per_host %d", sa.StrategyWorker.Scope.MaxDepth,
			cfg.StrategyWorker.Scope.MaxDepth, sa.Spider.Delay, sa.DBWorker.PerHost)
	}
	if d := DefaultConfig(); d.Standalone.Spiders != 2 || d.Standalone.Pebble.Bloom.Expected != 10_000_000 || d.StrategyWorker.ShutdownTimeout != 30*time.Second {
		t.Errorf("DefaultConfig: standalone %+v, strategy worker shutdown %v", d.Standalone, d.StrategyWorker.ShutdownTimeout)
	}
}
