package configs

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/bus"
)

// fronteraDefaults are the values of frontera 0.8.1's frontera/settings/default_settings.py that Frontier has
// an equivalent for, recorded from the installed package. TestFronteraDefaultsRecorded reads them again from
// the package in the oracle venv (oracle/setup.sh), so a different Frontera cannot slip by.
var fronteraDefaults = map[string]any{
	"SPIDER_LOG_TOPIC":                "frontier-done",
	"SPIDER_FEED_TOPIC":               "frontier-todo",
	"SCORING_LOG_TOPIC":               "frontier-score",
	"SPIDER_LOG_PARTITIONS":           1,
	"SPIDER_FEED_PARTITIONS":          1,
	"SPIDER_LOG_SW_GROUP":             "sw-spider-log",
	"SPIDER_LOG_DBW_GROUP":            "dbw-spider-log",
	"SCORING_LOG_DBW_GROUP":           "dbw-scoring-log",
	"SPIDER_FEED_GROUP":               "fetchers-spider-feed",
	"MESSAGE_BUS_CODEC":               "frontera.contrib.backends.remote.codecs.msgpack",
	"URL_FINGERPRINT_FUNCTION":        "frontera.utils.fingerprint.sha1",
	"MAX_NEXT_REQUESTS":               64,
	"BC_MAX_REQUESTS_PER_HOST":        128,
	"BC_MIN_HOSTS":                    24,
	"SPIDER_LOG_CONSUMER_BATCH_SIZE":  512,
	"SCORING_LOG_CONSUMER_BATCH_SIZE": 512,
	"HBASE_THRIFT_HOST":               "localhost",
	"HBASE_THRIFT_PORT":               9090,
	"STRATEGY":                        "frontera.strategy.basic.BasicCrawlingStrategy",
}

// TestFronteraCompatConfig loads configs/frontera-compat.yaml (over common.yaml, as the workers do) and checks
// every value that has a Frontera setting against Frontera's default.
func TestFronteraCompatConfig(t *testing.T) {
	cfg, err := Load(Options{Files: FilesFor("frontera-compat.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	d := fronteraDefaults
	last := func(dotted any) string { s := dotted.(string); return s[strings.LastIndex(s, ".")+1:] }
	group := func(s bus.Stream, reader string) string { g, _ := bus.GroupOf(s, reader); return g }
	for _, c := range []struct {
		key, setting string
		got, want    any
	}{
		{"streams.spider_log.topic", "SPIDER_LOG_TOPIC", cfg.Streams.SpiderLog.Topic, d["SPIDER_LOG_TOPIC"]},
		{"streams.spider_feed.topic", "SPIDER_FEED_TOPIC", cfg.Streams.SpiderFeed.Topic, d["SPIDER_FEED_TOPIC"]},
		{"streams.scoring_log.topic", "SCORING_LOG_TOPIC", cfg.Streams.ScoringLog.Topic, d["SCORING_LOG_TOPIC"]},
		{"streams.spider_log.partitions", "SPIDER_LOG_PARTITIONS", cfg.Streams.SpiderLog.Partitions, d["SPIDER_LOG_PARTITIONS"]},
		{"streams.spider_feed.partitions", "SPIDER_FEED_PARTITIONS", cfg.Streams.SpiderFeed.Partitions, d["SPIDER_FEED_PARTITIONS"]},
		{"streams.scoring_log.partitions", "(none: one partition)", cfg.Streams.ScoringLog.Partitions, 1},
		{"codec", "MESSAGE_BUS_CODEC", cfg.Codec, last(d["MESSAGE_BUS_CODEC"])},
		{"identity.fingerprint", "URL_FINGERPRINT_FUNCTION", cfg.Identity.Fingerprint, last(d["URL_FINGERPRINT_FUNCTION"])},
		{"db_worker.feed_batch", "MAX_NEXT_REQUESTS", cfg.DBWorker.FeedBatch, d["MAX_NEXT_REQUESTS"]},
		{"db_worker.max_lag", "MAX_NEXT_REQUESTS", int(cfg.DBWorker.MaxLag), d["MAX_NEXT_REQUESTS"]},
		{"db_worker.per_host", "BC_MAX_REQUESTS_PER_HOST", cfg.DBWorker.PerHost, d["BC_MAX_REQUESTS_PER_HOST"]},
		{"db_worker.min_hosts", "BC_MIN_HOSTS", cfg.DBWorker.MinHosts, d["BC_MIN_HOSTS"]},
		{"db_worker.batch_size", "SPIDER_LOG_CONSUMER_BATCH_SIZE", cfg.DBWorker.BatchSize, d["SPIDER_LOG_CONSUMER_BATCH_SIZE"]},
		{"db_worker.batch_size", "SCORING_LOG_CONSUMER_BATCH_SIZE", cfg.DBWorker.BatchSize, d["SCORING_LOG_CONSUMER_BATCH_SIZE"]},
		{"db_worker.job_id", "(the DB worker's first job id)", int(cfg.DBWorker.JobID), 0},
		{"strategy_worker.strategy", "STRATEGY", cfg.StrategyWorker.Strategy, map[string]string{"BasicCrawlingStrategy": "basic"}[last(d["STRATEGY"])]},
		{"scope.follow", "(none: Frontera follows every link)", cfg.Scope.Follow, "any"},
		{"hbase.addr", "HBASE_THRIFT_HOST:HBASE_THRIFT_PORT", cfg.HBase.Addr, fmt.Sprintf("%s:%d", d["HBASE_THRIFT_HOST"], d["HBASE_THRIFT_PORT"])},
		// Consumer groups have no configuration keys: the roles use these names.
		{"(group) strategy worker, spider log", "SPIDER_LOG_SW_GROUP", bus.GroupStrategyWorkerSpiderLog, d["SPIDER_LOG_SW_GROUP"]},
		{"(group) DB worker, spider log", "SPIDER_LOG_DBW_GROUP", bus.GroupDBWorkerSpiderLog, d["SPIDER_LOG_DBW_GROUP"]},
		{"(group) DB worker, scoring log", "SCORING_LOG_DBW_GROUP", bus.GroupDBWorkerScoringLog, d["SCORING_LOG_DBW_GROUP"]},
		{"(group) spiders, spider feed", "SPIDER_FEED_GROUP", bus.GroupSpiderFeed, d["SPIDER_FEED_GROUP"]},
		{"(topology group) strategy worker, spider log", "SPIDER_LOG_SW_GROUP", group(bus.SpiderLog, "strategy worker"), d["SPIDER_LOG_SW_GROUP"]},
		{"(topology group) DB worker, spider log", "SPIDER_LOG_DBW_GROUP", group(bus.SpiderLog, "DB worker (links role)"), d["SPIDER_LOG_DBW_GROUP"]},
		{"(topology group) DB worker, scoring log", "SCORING_LOG_DBW_GROUP", group(bus.ScoringLog, "DB worker (scoring role)"), d["SCORING_LOG_DBW_GROUP"]},
		{"(topology group) spiders, spider feed", "SPIDER_FEED_GROUP", group(bus.SpiderFeed, "spider"), d["SPIDER_FEED_GROUP"]},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v (Frontera's %s)", c.key, c.got, c.want, c.setting)
		}
	}
}

// TestFronteraDefaultsRecorded reads default_settings.py of the Frontera installed in the oracle venv (by path,
// without importing frontera, whose package needs the harness's shims) and compares it with fronteraDefaults.
// Skipped where the venv is not built, except under CI=true, where deploy/test.sh builds it first.
func TestFronteraDefaultsRecorded(t *testing.T) {
	python, err := filepath.Abs(filepath.Join("..", ".venv", "oracle", "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no oracle venv (%v): run oracle/setup.sh", err)
		}
		t.Skipf("no oracle venv (%v): run oracle/setup.sh", err)
	}
	keys, err := json.Marshal(keysOf(fronteraDefaults))
	if err != nil {
		t.Fatal(err)
	}
	const script = `
import importlib.util, json, os, sys
spec = importlib.util.find_spec("frontera")
path = os.path.join(spec.submodule_search_locations[0], "settings", "default_settings.py")
ns = {}
exec(compile(open(path).read(), path, "exec"), ns)
from importlib.metadata import version
print(json.dumps({"version": version("frontera"), "values": {k: ns.get(k) for k in json.loads(sys.argv[1])}}))
`
	out, err := exec.Command(python, "-c", script, string(keys)).Output()
	if err != nil {
		t.Fatalf("reading Frontera's default_settings.py: %v", err)
	}
	var got struct {
		Version string         `json:"version"`
		Values  map[string]any `json:"values"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Version != "0.8.1" {
		t.Errorf("the oracle venv has frontera %s, want 0.8.1", got.Version)
	}
	for k, want := range fronteraDefaults {
		if fmt.Sprint(got.Values[k]) != fmt.Sprint(want) {
			t.Errorf("Frontera's %s = %v, recorded %v", k, got.Values[k], want)
		}
	}
}

func keysOf(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
