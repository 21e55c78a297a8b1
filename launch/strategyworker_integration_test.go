//go:build integration

package launch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/control"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/scope"
)

// TestStrategyWorkerFollowsControl runs the strategyworker role (runStrategyWorker, as cmd/strategyworker
// does) on a real Kafka and HBase:
//
//  1. started while the control topic does not exist, it scores nothing: it waits for the control stream like
//     for any outage, and the spider log stays uncommitted; once the topic is created, it starts;
//  2. a block sent while it runs is applied (frontier_control_commands_total);
//  3. a second run, started with the block on the control topic and a link to the blocked host waiting on the
//     spider log, has read the block before it scores that batch: the link is queued (held by the DB workers)
//     and counted in frontier_strategyworker_blocked_scheduled_total.
func TestStrategyWorkerFollowsControl(t *testing.T) {
	brokers := kafkaBrokers(t)
	hbaseAddr := frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	cfg := ownTopicsConfig(brokers, "sw-ctl", 1)
	cfg.HBase.Addr = hbaseAddr
	if v := os.Getenv("FRONTIER_TEST_HBASE_TRANSPORT"); v != "" {
		cfg.HBase.Transport = v
	}
	if v := os.Getenv("FRONTIER_TEST_HBASE_PROTOCOL"); v != "" {
		cfg.HBase.Protocol = v
	}
	cfg.HBase.TablePrefix = fmt.Sprintf("t%d_swctl_", time.Now().UnixNano()%1_000_000_000)
	cfg.StrategyWorker.Scope.Follow = scope.FollowAny
	cfg.Scope.Follow = scope.FollowAny
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if err := hbase.EnsureSchema(ctx, cfg.HBase); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := hbase.New(context.Background(), cfg.HBase, nil, nil)
		if err == nil {
			_ = c.DropTables(context.Background())
			c.Close()
		}
	})
	// Every topic but the control topic.
	if err := kafkabus.EnsureTopics(ctx, brokers, []kafkabus.TopicSpec{
		{Name: cfg.Streams.SpiderFeed.Topic, Partitions: 1},
		{Name: cfg.Streams.SpiderLog.Topic, Partitions: 1},
		{Name: cfg.Streams.ScoringLog.Topic, Partitions: 1},
	}); err != nil {
		t.Fatal(err)
	}
	kcfg := cfg.KafkaBus("sw-ctl-test")
	b, err := kafkabus.New(kcfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	enc := codec.Msgpack{}
	id, err := cfg.Identity.New()
	if err != nil {
		t.Fatal(err)
	}
	request := func(u string) *frontier.Request {
		r := &frontier.Request{URL: u, Method: "GET"}
		fp, err := id.Fingerprint(u)
		if err != nil {
			t.Fatal(err)
		}
		r.SetMetaFingerprint(fp)
		return r
	}
	publish := func(msgs ...frontier.Message) {
		t.Helper()
		p, err := b.Producer(ctx, bus.SpiderLog, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		for _, m := range msgs {
			v, err := enc.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Send(ctx, bus.Message{Value: v, Partition: 0}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lag := func() int64 {
		t.Helper()
		l, err := b.Lag(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog)
		if err != nil {
			t.Fatal(err)
		}
		return l[0]
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			case <-tick.C:
			}
		}
	}
	type run struct {
		reg     *prometheus.Registry
		cancel  context.CancelFunc
		done    chan error
		waiting chan struct{} // closed when the run logs "waiting for the control stream"
	}
	start := func() *run {
		rctx, rcancel := context.WithCancel(ctx)
		r := &run{reg: prometheus.NewRegistry(), cancel: rcancel, done: make(chan error, 1), waiting: make(chan struct{})}
		var once sync.Once
		log := slog.New(&watchHandler{Handler: frontiertest.NewLogHandler(t, slog.LevelInfo), msg: "waiting for the control stream",
			seen: func() { once.Do(func() { close(r.waiting) }) }})
		go func() {
			r.done <- runStrategyWorker(rctx, cli.Env{Config: &cfg, PartitionID: 0, Logger: log, Registry: r.reg, Health: cli.NewHealth()})
		}()
		return r
	}
	stop := func(r *run) {
		t.Helper()
		r.cancel()
		if err := <-r.done; err != nil {
			t.Fatal(err)
		}
	}
	page := request("http://open.test/")

	// 1. No control topic: nothing is scored.
	publish(&frontier.AddSeeds{Seeds: []*frontier.Request{page}})
	first := start()
	select {
	case <-first.waiting:
	case err := <-first.done:
		t.Fatalf("the worker returned while the control topic was missing: %v", err)
	case <-ctx.Done():
		t.Fatal("the worker never said it waits for the control stream")
	}
	if l := lag(); l != 1 {
		t.Fatalf("spider-log lag = %d while the control topic is missing, want 1: the worker scored without its control state", l)
	}
	if err := kafkabus.EnsureTopics(ctx, brokers, []kafkabus.TopicSpec{{Name: cfg.Streams.Control.Topic, Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	waitFor("the seed batch to be scored once the control topic exists", func() bool { return lag() == 0 })

	// 2. A block sent while it runs is applied.
	// This test's bus may still answer "does not exist" for the new topic: kafka-go's client serves topic
	// metadata from a cache it refreshes on a timer (the worker's own bus read the topic already). Retry until
	// the send is accepted; a send that fails for any other reason fails the test.
	waitFor("the block to be sent", func() bool {
		err := control.Send(ctx, b, control.Command{Op: control.OpBlock, Target: "blocked.test", ID: "it-1"})
		if err != nil && !strings.Contains(err.Error(), "does not exist") {
			t.Fatal(err)
		}
		return err == nil
	})
	waitFor("the block to be applied", func() bool {
		return metricValue(t, first.reg, "frontier_control_commands_total", control.OpBlock) == 1
	})
	stop(first)

	// 3. A new run reads the block before it scores the batch waiting for it.
	publish(&frontier.LinksExtracted{Request: page, Links: []*frontier.Request{request("http://www.blocked.test/a"), request("http://open.test/b")}})
	second := start()
	waitFor("the links batch to be scored", func() bool { return lag() == 0 })
	stop(second)
	if n := metricValue(t, second.reg, "frontier_strategyworker_blocked_scheduled_total", ""); n != 1 {
		t.Errorf("frontier_strategyworker_blocked_scheduled_total = %v, want 1: the first batch was scored before the block was read", n)
	}
	// Nothing was dropped: the blocked host's link is on the scoring log, for the queue.
	c, err := b.Consumer(ctx, bus.ScoringLog, cfg.Streams.ScoringLog.Topic+"-check", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	found := false
	for !found {
		msgs, err := c.Fetch(ctx, 100)
		if err != nil {
			t.Fatalf("the blocked host's link is not on the scoring log: %v", err)
		}
		for _, m := range msgs {
			dm, err := enc.DecodeMessage(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			if us, ok := dm.(*frontier.UpdateScore); ok && us.Request.URL == "http://www.blocked.test/a" && us.Schedule {
				found = true
			}
		}
	}
}

// watchHandler calls seen for every record whose message is msg.
type watchHandler struct {
	slog.Handler
	msg  string
	seen func()
}

func (h *watchHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.seen()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *watchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &watchHandler{Handler: h.Handler.WithAttrs(as), msg: h.msg, seen: h.seen}
}

func (h *watchHandler) WithGroup(g string) slog.Handler {
	return &watchHandler{Handler: h.Handler.WithGroup(g), msg: h.msg, seen: h.seen}
}

// metricValue returns the value of counter name in reg (the series whose one label has value label, when
// label is set); 0 when absent.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label == "" || (len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == label) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
