package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestShippedConfigsLoad(t *testing.T) {
	for _, role := range Roles {
		t.Run(role, func(t *testing.T) {
			cfg, err := Load(Options{Files: FilesFor(role + ".yaml")})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Streams.SpiderFeed.Topic != "frontier-todo" {
				t.Errorf("spider feed topic = %q", cfg.Streams.SpiderFeed.Topic)
			}
		})
	}
}

func TestGoodConfigs(t *testing.T) {
	cfg, err := Load(Options{Files: []string{"testdata/good.full.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Streams.SpiderLog.Partitions != 8 || cfg.Log.Format != "json" || cfg.StatsInterval != time.Minute {
		t.Errorf("full config decoded as %+v", cfg)
	}
	if cfg.Spider.ConnsPerHost != 2 || cfg.Spider.Delay != 250*time.Millisecond || cfg.Spider.MaxRedirects != 20 {
		t.Errorf("spider section = %+v (max_redirects must keep its default)", cfg.Spider)
	}
	if cfg.Scope.Follow != "hosts" || cfg.Scope.MaxDepth != 5 || cfg.Scope.HostBudget != 500 || len(cfg.Scope.Exclude) != 1 || cfg.Scope.MaxURLBytes != 2048 {
		t.Errorf("scope section = %+v", cfg.Scope)
	}
	if cfg.StrategyWorker.Strategy != "dfs" || cfg.StrategyWorker.Options["max_depth"] != 3 || cfg.StrategyWorker.Cache.MaxEntries != 1000 {
		t.Errorf("strategy_worker section = %+v", cfg.StrategyWorker)
	}
	if len(cfg.DBWorker.Roles) != 2 || cfg.Standalone.Spiders != 4 || cfg.Standalone.StopWhenDone || cfg.WARC.Dir == "" {
		t.Errorf("db_worker/standalone/warc = %+v %+v %+v", cfg.DBWorker, cfg.Standalone, cfg.WARC)
	}
	if got := cfg.Kafka.Brokers; len(got) != 2 {
		t.Errorf("brokers = %v", got)
	}
	cfg, err = Load(Options{Files: []string{"testdata/good.minimal.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Codec != "json" || cfg.Streams.SpiderLog.Partitions != DefaultConfig().Streams.SpiderLog.Partitions {
		t.Errorf("minimal config did not keep defaults: %+v", cfg)
	}
}

func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // every substring must appear
	}{
		{"bad.unknown-key.yaml", []string{"bad.unknown-key.yaml", `unknown key "streams.spider_log.partitons"`}},
		{"bad.unknown-section.yaml", []string{`unknown key "kafak.brokers"`}},
		{"bad.type.yaml", []string{"bad.type.yaml", "streams.spider_feed.partitions"}},
		{"bad.values.yaml", []string{"scope: follow = \"everywhere\"", "scope: include[0]", "log: level \"loud\"", "log: format \"xml\"", "codec: \"protobuf\"",
			"streams.spider_log: partitions = 0", "kafka.brokers: \"nohostport\"", "stats_interval: -1s"}},
		{"bad.duration.yaml", []string{"shutdown_timeout"}},
		{"bad.sections.yaml", []string{`unknown key "spider.user_agnt"`}},
		{"bad.section-values.yaml", []string{"spider: delay: -1s", `db_worker: roles: "batchs"`, "standalone: spiders = 0", "standalone: memory_limit = -1"}},
		{"bad.syntax.yaml", []string{"bad.syntax.yaml"}},
		{"does-not-exist.yaml", []string{"does-not-exist.yaml"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Load(Options{Files: []string{filepath.Join("testdata", tc.file)}})
			if err == nil {
				t.Fatal("loaded without error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("common.yaml", "codec: json\nstreams: {spider_feed: {partitions: 3}}\nlog: {level: warn}\n")
	role := write("spider.yaml", "streams: {spider_feed: {partitions: 5}}\n")
	files := FilesFor(role)
	if len(files) != 2 {
		t.Fatalf("FilesFor = %v, want common.yaml and spider.yaml", files)
	}
	cfg, err := Load(Options{
		Files: files,
		Env: []string{"FRONTIER_STREAMS_SPIDER_FEED_PARTITIONS=7", "FRONTIER_KAFKA_BROKERS=a:1,b:2",
			"FRONTIER_TEST_KAFKA=ignored:9092", "PATH=/bin", "FRONTIER_SPIDER_DELAY=3s", "FRONTIER_DB_WORKER_ROLES=links"},
		Sets: []string{"log.level=debug"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Codec != "json" {
		t.Errorf("codec = %q, want json from common.yaml", cfg.Codec)
	}
	if cfg.Streams.SpiderFeed.Partitions != 7 {
		t.Errorf("spider_feed.partitions = %d, want 7 from the environment", cfg.Streams.SpiderFeed.Partitions)
	}
	if cfg.Streams.SpiderFeed.Topic != "frontier-todo" {
		t.Errorf("spider_feed.topic = %q, want the default kept beside an overridden sibling", cfg.Streams.SpiderFeed.Topic)
	}
	if got := strings.Join(cfg.Kafka.Brokers, " "); got != "a:1 b:2" {
		t.Errorf("brokers = %q, want a:1 b:2 from the environment", got)
	}
	if cfg.Spider.Delay != 3*time.Second || len(cfg.DBWorker.Roles) != 1 || cfg.DBWorker.Roles[0] != "links" {
		t.Errorf("nested env overrides: spider.delay = %v, db_worker.roles = %v", cfg.Spider.Delay, cfg.DBWorker.Roles)
	}
	if cfg.Log.Level != "debug" {
		t.Errorf("log.level = %q, want debug from --set", cfg.Log.Level)
	}
}

func TestUnknownOverrides(t *testing.T) {
	_, err := Load(Options{Env: []string{"FRONTIER_STREAMS_SPIDERLOG_TOPIC=x"}, Sets: []string{"kafka.brokerz=a:1", "noequals"}})
	if err == nil {
		t.Fatal("unknown overrides accepted")
	}
	for _, w := range []string{"FRONTIER_STREAMS_SPIDERLOG_TOPIC", `unknown key "kafka.brokerz"`, `"noequals" is not key=value`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"good.full.yaml", "bad.values.yaml", "bad.type.yaml", "bad.syntax.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "fuzz.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(Options{Files: []string{p}})
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("Load returned a config that does not validate: %v", verr)
			}
		}
	})
}

// TestBuiltinMatchesFiles: the compiled-in defaults are the files of this directory, so loading a role with no
// file gives what loading its shipped files gives, and the files may be given with --config on top.
func TestBuiltinMatchesFiles(t *testing.T) {
	for _, role := range Roles {
		t.Run(role, func(t *testing.T) {
			for _, name := range []string{"common.yaml", role + ".yaml"} {
				disk, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				b, err := Builtin(name)
				if err != nil || string(b) != string(disk) {
					t.Fatalf("built-in %s differs from the file (err %v)", name, err)
				}
			}
			fromBuiltin, err := Load(Options{Role: role})
			if err != nil {
				t.Fatal(err)
			}
			fromFiles, err := Load(Options{Files: FilesFor(role + ".yaml")})
			if err != nil {
				t.Fatal(err)
			}
			both, err := Load(Options{Role: role, Files: FilesFor(role + ".yaml")})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%+v", fromBuiltin) != fmt.Sprintf("%+v", fromFiles) || fmt.Sprintf("%+v", both) != fmt.Sprintf("%+v", fromFiles) {
				t.Errorf("role %s: built-in config %+v, files %+v", role, fromBuiltin, fromFiles)
			}
		})
	}
	if _, err := Load(Options{Role: "nosuchrole"}); err == nil || !strings.Contains(err.Error(), "nosuchrole.yaml") {
		t.Errorf("Load of an unknown role = %v, want an error naming nosuchrole.yaml", err)
	}
}

// TestErrorsReadAsOneSentence: decode and validation errors name the key once, without mapstructure's
// preamble or a repeated package prefix.
func TestErrorsReadAsOneSentence(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"spider.delay=abc"}, "configs: spider.delay: time: invalid duration"},
		{[]string{"identity.fingerprint=crc"}, `identity: fingerprint: unknown fingerprint "crc"`},
		{[]string{"identity.canonicalization=x"}, `identity: canonicalization: unknown canonicalisation mode "x"`},
	} {
		_, err := Load(Options{Role: "standalone", Sets: tc.sets})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "decoding failed") ||
			strings.Count(err.Error(), "identity:") > 1 {
			t.Errorf("Load with %v = %v, want an error containing %q once", tc.sets, err, tc.want)
		}
	}
}
