//go:build integration

package kafkabus

// Tests against a real broker: the conformance suite, and the "Show" tests of issue 3. Start the servers with
// deploy/up, then: export $(deploy/env); go test -tags integration ./bus/kafkabus/
//
// TestBrokerRestart starts a broker of its own with deploy/up on other ports (FRONTIER_TEST_DEPLOY_DIR, printed
// by deploy/env), so restarting it disturbs nobody else's tests.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
	"github.com/frontiercrawl/frontier/partition"

	"github.com/frontiercrawl/frontier/frontiertest"
)

// kafkaBrokers returns FRONTIER_TEST_KAFKA's brokers; unset, the test is skipped, or fails under CI=true.
func kafkaBrokers(t testing.TB) []string {
	t.Helper()
	return strings.Split(frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), ",")
}

// deleteTopics deletes the bus's topics when the test ends, so the broker does not fill up with test topics.
func deleteTopics(t testing.TB, b *Bus) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		topics := []string{b.cfg.SpiderLog.Topic, b.cfg.ScoringLog.Topic, b.cfg.SpiderFeed.Topic}
		if _, err := b.client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: topics}); err != nil {
			t.Logf("delete topics %v: %v", topics, err)
		}
	})
}

func realBus(t testing.TB, brokers []string, partitions map[bus.Stream]int) *Bus {
	b := openTestBus(t, brokers, partitions)
	deleteTopics(t, b)
	return b
}

func TestConformanceKafka(t *testing.T) {
	brokers := kafkaBrokers(t)
	bustest.Run(t, func(t *testing.T, partitions map[bus.Stream]int) bus.Bus {
		return realBus(t, brokers, partitions)
	})
}

// TestFronteraPartitionOnBroker: a feed message keyed by host lands on the partition Frontera's
// Crc32NamePartitioner picks, and a spider-log message keyed by a domain fingerprint on the one its
// FingerprintPartitioner picks, as read back from the broker.
func TestFronteraPartitionOnBroker(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	b := realBus(t, brokers, map[bus.Stream]int{bus.SpiderFeed: 10, bus.SpiderLog: 5})

	// Vectors of Frontera 0.8's Crc32NamePartitioner: crc32 of example.com is negative as a signed int, so Python's
	// floor-mod gives 9 where uint32 % 10 would give 5.
	feed := []struct {
		host string
		want int
	}{{"example.com", 9}, {"www.example.com", 3}}
	for i := range 40 {
		h := fmt.Sprintf("host-%d.example.org", i)
		feed = append(feed, struct {
			host string
			want int
		}{h, partition.Crc32Name([]byte(h), 10)})
	}
	p, err := b.Producer(ctx, bus.SpiderFeed, partition.Crc32Name)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []bus.Message
	for _, f := range feed {
		msgs = append(msgs, bus.Message{Key: []byte(f.host), Value: []byte(f.host)})
	}
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	where := readAllPartitions(t, ctx, brokers, b.cfg.SpiderFeed.Topic, 10, len(feed))
	for _, f := range feed {
		if got := where[f.host]; got != f.want {
			t.Errorf("host %s is on partition %d, Frontera's crc32_name picks %d", f.host, got, f.want)
		}
	}

	// The spider log: key = hex domain fingerprint; n=5 → 2 for this key (Frontera's tests/test_partitioners.py).
	lp, err := b.Producer(ctx, bus.SpiderLog, partition.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	key := "1be68ff556fd0bbe5802d1a100850da29f7f15b1"
	if err := lp.Send(ctx, bus.Message{Key: []byte(key), Value: []byte(key)}); err != nil {
		t.Fatal(err)
	}
	if got := readAllPartitions(t, ctx, brokers, b.cfg.SpiderLog.Topic, 5, 1)[key]; got != 2 {
		t.Errorf("fingerprint %s is on partition %d, Frontera's FingerprintPartitioner picks 2", key, got)
	}
}

// readAllPartitions reads n messages from topic with plain kafka-go partition readers (not our consumer) and
// returns the partition of each message, by value.
func readAllPartitions(t *testing.T, ctx context.Context, brokers []string, topic string, parts, n int) map[string]int {
	t.Helper()
	where := map[string]int{}
	for q := range parts {
		conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, q)
		if err != nil {
			t.Fatal(err)
		}
		last, err := conn.ReadLastOffset()
		if err != nil {
			t.Fatal(err)
		}
		if last > 0 {
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			batch := conn.ReadBatch(1, 10<<20)
			for range last {
				m, err := batch.ReadMessage()
				if err != nil {
					t.Fatalf("partition %d: %v", q, err)
				}
				if prev, dup := where[string(m.Value)]; dup {
					t.Errorf("%s is on partitions %d and %d", m.Value, prev, q)
				}
				where[string(m.Value)] = q
			}
			_ = batch.Close()
		}
		_ = conn.Close()
	}
	if len(where) != n {
		t.Fatalf("read %d messages from %s, want %d", len(where), topic, n)
	}
	return where
}

// TestKilledConsumer: a consumer process that fetched and processed messages is killed with SIGKILL before it
// commits: the group's next consumer gets the same messages again. After a consumer commits and is killed,
// the next one gets only what came after.
func TestKilledConsumer(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	b := realBus(t, brokers, map[bus.Stream]int{bus.SpiderFeed: 2})
	group := fmt.Sprintf("killed-%d", time.Now().UnixNano())
	p, err := b.Producer(ctx, bus.SpiderFeed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []bus.Message
	for i := range 20 {
		msgs = append(msgs, bus.Message{Value: []byte("m" + strconv.Itoa(i)), Partition: i % 2})
	}
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}

	first := runKilledConsumer(t, ctx, b, group, "process", 20)
	again := runKilledConsumer(t, ctx, b, group, "commit", 20)
	if strings.Join(first, " ") != strings.Join(again, " ") {
		t.Fatalf("after a kill before commit the next consumer got %v, want the same %v", again, first)
	}
	// The second consumer committed all 20 before it was killed: the next one sees only the new message.
	if err := p.Send(ctx, bus.Message{Value: []byte("after"), Partition: 1}); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consumer(ctx, bus.SpiderFeed, group, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Fetch(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Value) != "after" {
		t.Fatalf("after a committed consumer was killed the next got %v, want only [after]", valuesOf(got))
	}
}

// runKilledConsumer runs TestKilledConsumerHelper in a child process, reads the messages it reports as
// processed (and committed, in mode "commit"), then kills it with SIGKILL.
func runKilledConsumer(t *testing.T, ctx context.Context, b *Bus, group, mode string, n int) []string {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledConsumerHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "FRONTIER_BUS_HELPER="+mode, "FRONTIER_BUS_HELPER_TOPIC="+b.cfg.SpiderFeed.Topic,
		"FRONTIER_BUS_HELPER_GROUP="+group, "FRONTIER_BUS_HELPER_N="+strconv.Itoa(n))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []string
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "PROCESSED "); ok {
			got = append(got, v)
		}
		if line == "READY" {
			ready = true
			break
		}
	}
	_ = cmd.Process.Kill() // SIGKILL: no deferred Close, no commit
	_ = cmd.Wait()
	if !ready {
		t.Fatalf("helper (%s) ended before READY, after %v", mode, got)
	}
	slicesSort(got)
	return got
}

// TestKilledConsumerHelper is the child process of TestKilledConsumer; it does nothing in a normal run.
func TestKilledConsumerHelper(t *testing.T) {
	mode := os.Getenv("FRONTIER_BUS_HELPER")
	if mode == "" {
		t.Skip("helper process of TestKilledConsumer")
	}
	brokers := kafkaBrokers(t)
	n, _ := strconv.Atoi(os.Getenv("FRONTIER_BUS_HELPER_N"))
	cfg := DefaultConfig()
	cfg.Brokers = brokers
	cfg.SpiderFeed = StreamConfig{Topic: os.Getenv("FRONTIER_BUS_HELPER_TOPIC"), Partitions: 2}
	b, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := b.Consumer(ctx, bus.SpiderFeed, os.Getenv("FRONTIER_BUS_HELPER_GROUP"), []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	var all []bus.Message
	for len(all) < n {
		ms, err := c.Fetch(ctx, n-len(all))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ms...)
	}
	for _, m := range all {
		fmt.Printf("PROCESSED %d@%d:%s\n", m.Partition, m.Offset, m.Value)
	}
	if mode == "commit" {
		if err := c.Commit(ctx, all); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("READY")
	<-ctx.Done() // wait to be killed
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func valuesOf(ms []bus.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%d@%d:%s", m.Partition, m.Offset, m.Value)
	}
	return out
}

// TestMalformedMessage: a malformed message written to the topic by another client is counted, logged with its
// offset and skipped, while the rest of its batch is decoded; committing the batch moves past it.
func TestMalformedMessage(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var logs bytes.Buffer
	var mu sync.Mutex
	cfg := DefaultConfig()
	cfg.Brokers = brokers
	b0 := realBus(t, brokers, map[bus.Stream]int{bus.SpiderLog: 1})
	cfg.SpiderLog, cfg.ScoringLog, cfg.SpiderFeed = b0.cfg.SpiderLog, b0.cfg.ScoringLog, b0.cfg.SpiderFeed
	reg := prometheus.NewRegistry()
	b, err := New(cfg, slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// Another client (plain kafka-go) writes three good messages around a bad one.
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: cfg.SpiderLog.Topic, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, Transport: tr}
	defer w.Close()
	if err := w.WriteMessages(ctx,
		kafka.Message{Value: []byte(`{"url":"https://a.example/"}`)},
		kafka.Message{Value: []byte(`{"url":"https://b.example/"}`)},
		kafka.Message{Value: []byte("\x93\xa2pc\xc1 not json")},
		kafka.Message{Value: []byte(`{"url":"https://c.example/"}`)},
	); err != nil {
		t.Fatal(err)
	}
	c, err := b.NewConsumer(ctx, bus.SpiderLog, "malformed-"+strconv.FormatInt(time.Now().UnixNano(), 10), []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var msgs []bus.Message
	for len(msgs) < 4 {
		ms, err := c.Fetch(ctx, 4-len(msgs))
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, ms...)
	}
	type page struct {
		URL string `json:"url"`
	}
	pages := bus.Decode(c, msgs, func(m bus.Message) (page, error) {
		var p page
		err := json.Unmarshal(m.Value, &p)
		return p, err
	})
	if len(pages) != 3 || pages[0].URL != "https://a.example/" || pages[2].URL != "https://c.example/" {
		t.Fatalf("decoded %v, want the three good pages", pages)
	}
	if got := frontiertest.Counter(t, reg, "frontier_bus_malformed_messages_total"); got != 1 {
		t.Errorf("frontier_bus_malformed_messages_total = %v, want 1", got)
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, "malformed") || !strings.Contains(logged, "offset="+strconv.FormatInt(msgs[2].Offset, 10)) {
		t.Errorf("log does not name the malformed message's offset %d:\n%s", msgs[2].Offset, logged)
	}
	if err := c.Commit(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	lag, err := b.Lag(ctx, bus.SpiderLog, c.group)
	if err != nil || lag[0] != 0 {
		t.Fatalf("lag after committing the batch = %v, %v; want 0", lag, err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// restartBroker is a broker of this test's own, started and restarted with deploy/up and deploy/down on free
// ports and a data directory under a temporary directory, sharing the jars of the main deployment.
type restartBroker struct {
	t      *testing.T
	deploy string
	env    []string
	addr   string
}

func startRestartBroker(t *testing.T) *restartBroker {
	t.Helper()
	kafkaBrokers(t)
	deploy := frontiertest.Server(t, "FRONTIER_TEST_DEPLOY_DIR")
	root := filepath.Dir(deploy)
	infra := t.TempDir()
	// Reuse the jars and the frontierctl of the main deployment (deploy/up fetched and built them).
	if err := os.Symlink(filepath.Join(root, ".infra", "kafka"), filepath.Join(infra, "kafka")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(infra, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ctl, err := os.ReadFile(filepath.Join(root, ".infra", "bin", "frontierctl")); err == nil {
		dst := filepath.Join(infra, "bin", "frontierctl")
		if err := os.WriteFile(dst, ctl, 0o755); err != nil {
			t.Fatal(err)
		}
		// Written now, so newer than the sources: deploy/up does not rebuild it.
	}
	port, ctlPort := freePort(t), freePort(t)
	r := &restartBroker{
		t: t, deploy: deploy, addr: "127.0.0.1:" + strconv.Itoa(port),
		env: append(os.Environ(), "FRONTIER_TEST_INFRA_DIR="+infra, "FRONTIER_TEST_KAFKA_PORT="+strconv.Itoa(port),
			"FRONTIER_TEST_KAFKA_CONTROLLER_PORT="+strconv.Itoa(ctlPort), "FRONTIER_TEST_FRESH=0"),
	}
	r.run("up", "kafka")
	t.Cleanup(func() { r.run("down", "kafka") })
	return r
}

func (r *restartBroker) run(script string, args ...string) {
	r.t.Helper()
	start := time.Now()
	cmd := exec.Command(filepath.Join(r.deploy, script), args...)
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("deploy/%s %v: %v\n%s", script, args, err, out)
	}
	r.t.Logf("deploy/%s %s took %s", script, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestBrokerRestart: while a producer sends and a consumer fetches and commits, the broker is stopped and
// started again. The same producer and consumer objects carry on: every acknowledged message is consumed (none
// lost), and everything consumed was sent.
func TestBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a broker (about a minute)")
	}
	rb := startRestartBroker(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	b := realBus(t, []string{rb.addr}, map[bus.Stream]int{bus.SpiderLog: 2})
	p, err := b.Producer(ctx, bus.SpiderLog, partition.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := b.Consumer(ctx, bus.SpiderLog, "restart-"+strconv.FormatInt(time.Now().UnixNano(), 10), []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var (
		mu        sync.Mutex
		acked     = map[string]bool{}
		received  = map[string]int{}
		restarted = make(chan struct{})
		sendDone  = make(chan struct{})
	)
	const batch = 50
	// Producer: batches of 50 until 20 batches after the restart are acknowledged.
	var sendErr error
	go func() {
		defer close(sendDone)
		after := -1
		for i := 0; after < 20; i++ {
			msgs := make([]bus.Message, batch)
			for j := range msgs {
				v := fmt.Sprintf("m%06d", i*batch+j)
				msgs[j] = bus.Message{Key: []byte(fmt.Sprintf("%040x", i*batch+j)), Value: []byte(v)}
			}
			if err := p.Send(ctx, msgs...); err != nil {
				sendErr = err
				return
			}
			mu.Lock()
			for _, m := range msgs {
				acked[string(m.Value)] = true
			}
			mu.Unlock()
			select {
			case <-restarted:
				after++
			default:
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// Consumer: fetch and commit; commit errors while the broker is down are retried with the next batch.
	consumed := make(chan error, 1)
	cctx, stopConsumer := context.WithCancel(ctx)
	go func() {
		var pending []bus.Message
		for {
			ms, err := c.Fetch(cctx, 500)
			if err != nil {
				consumed <- err
				return
			}
			mu.Lock()
			for _, m := range ms {
				received[string(m.Value)]++
			}
			mu.Unlock()
			pending = append(pending, ms...)
			if err := c.Commit(cctx, pending); err != nil {
				if cctx.Err() == nil {
					t.Logf("commit failed (retried with the next batch): %v", err)
				}
				continue
			}
			pending = pending[:0]
		}
	}()
	waitFor(t, ctx, "200 messages before the restart", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(received) >= 200
	})
	rb.run("down", "kafka")
	rb.run("up", "kafka")
	close(restarted)
	select {
	case <-sendDone:
	case <-ctx.Done():
		t.Fatal("producer did not finish after the restart")
	}
	if sendErr != nil {
		t.Fatalf("Send across the restart: %v", sendErr)
	}
	waitFor(t, ctx, "every acknowledged message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for v := range acked {
			if received[v] == 0 {
				return false
			}
		}
		return true
	})
	stopConsumer()
	if err := <-consumed; !errors.Is(err, context.Canceled) {
		t.Fatalf("consumer ended with %v, want context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	dups := 0
	for v, n := range received {
		if !acked[v] {
			t.Errorf("received %s, which was never acknowledged", v)
		}
		dups += n - 1
	}
	t.Logf("%d messages acknowledged, all received across the broker restart; %d duplicates (at least once)", len(acked), dups)
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
