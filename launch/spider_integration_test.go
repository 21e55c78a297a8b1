//go:build integration

package launch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/internal/cli"
)

// kafkaBrokers returns FRONTIER_TEST_KAFKA's brokers; unset, the test is skipped, or fails under CI=true.
func kafkaBrokers(t *testing.T) []string {
	return strings.Split(frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), ",")
}

// ownTopicsConfig returns the default configuration on brokers with each stream on a topic of this run's own,
// named prefix-todo|done|score|control-<now>: the spider feed and the spider log with parts partitions, the
// scoring log and the control stream with one. It creates no topic.
func ownTopicsConfig(brokers []string, prefix string, parts int) configs.Config {
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	cfg := configs.DefaultConfig()
	cfg.Kafka.Brokers = brokers
	cfg.Streams.SpiderFeed = kafkabus.StreamConfig{Topic: prefix + "-todo-" + suffix, Partitions: parts}
	cfg.Streams.SpiderLog = kafkabus.StreamConfig{Topic: prefix + "-done-" + suffix, Partitions: parts}
	cfg.Streams.ScoringLog = kafkabus.StreamConfig{Topic: prefix + "-score-" + suffix, Partitions: 1}
	cfg.Streams.Control = kafkabus.StreamConfig{Topic: prefix + "-control-" + suffix, Partitions: 1}
	return cfg
}

// TestSpiderOverKafka runs the spider role (runSpider, as cmd/spider does) on fresh topics of a real broker:
// seeds go to the spider log as add_seeds, a feed request is fetched and reported, the WARC file is written, and the feed
// offset is committed.
func TestSpiderOverKafka(t *testing.T) {
	brokers := kafkaBrokers(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/next">next</a> <a href="http://other.test/">other</a>`)
	}))
	defer srv.Close()

	// The spider waits for its control stream before it fetches: a topic of this run's own, like the others.
	cfg := ownTopicsConfig(brokers, "spider-it", 2)
	cfg.Spider.Delay = 0
	cfg.Spider.StateDir = t.TempDir()
	cfg.WARC.Dir = t.TempDir()
	cfg.StatsInterval = time.Second
	ctx := t.Context()
	if err := kafkabus.EnsureTopics(ctx, brokers, []kafkabus.TopicSpec{
		{Name: cfg.Streams.SpiderFeed.Topic, Partitions: 2},
		{Name: cfg.Streams.SpiderLog.Topic, Partitions: 2},
		{Name: cfg.Streams.ScoringLog.Topic, Partitions: 1},
		{Name: cfg.Streams.Control.Topic, Partitions: 1},
	}); err != nil {
		t.Fatal(err)
	}
	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers = brokers
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: cfg.Streams.SpiderFeed.Topic, Partitions: 2}
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: cfg.Streams.SpiderLog.Topic, Partitions: 2}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: cfg.Streams.ScoringLog.Topic, Partitions: 1}
	b, err := kafkabus.New(kcfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	feedP, err := b.Producer(ctx, bus.SpiderFeed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer feedP.Close()
	enc := codec.Msgpack{}
	page := srv.URL + "/page"
	v, err := enc.EncodeRequest(&frontier.Request{URL: page, Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	if err := feedP.Send(ctx, bus.Message{Key: []byte("127.0.0.1"), Value: v, Partition: 1}); err != nil {
		t.Fatal(err)
	}
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://seed.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- runSpider(rctx, cli.Env{Config: &cfg, PartitionID: 1, Seeds: seeds, Logger: frontiertest.Logger(t), Registry: prometheus.NewRegistry()})
	}()

	logC, err := b.Consumer(ctx, bus.SpiderLog, "spider-it", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer logC.Close()
	seen := map[string]bool{}
	guard := time.After(time.Minute)
	for !(seen["add_seeds"] && seen["page_crawled"] && seen["links_extracted"]) {
		select {
		case <-guard:
			t.Fatalf("spider log so far: %v", seen)
		default:
		}
		fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
		msgs, _ := logC.Fetch(fctx, 100)
		fcancel()
		for _, m := range msgs {
			dm, err := enc.DecodeMessage(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			seen[dm.Name()] = true
			if pc, ok := dm.(*frontier.PageCrawled); ok && (pc.Response.URL != page || pc.Response.Status != 200) {
				t.Errorf("page_crawled %s %d", pc.Response.URL, pc.Response.Status)
			}
		}
	}
	// Let a commit happen, then stop.
	time.Sleep(2 * cfg.Spider.CommitInterval)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lag, err := b.Lag(ctx, bus.SpiderFeed, bus.GroupSpiderFeed)
	if err != nil {
		t.Fatal(err)
	}
	if lag[1] != 0 {
		t.Errorf("feed lag after the run: %v, want partition 1 at 0", lag)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.WARC.Dir, "*.warc.gz"))
	if len(files) != 1 {
		t.Errorf("WARC files %v, want one", files)
	}
}
