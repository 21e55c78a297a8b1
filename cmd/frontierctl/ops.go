package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/control"
	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/standalone"
)

// exitCode is an error that carries the exit status of a command that did not fail (status's verdicts).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// clusterFlags are the flags of every command that talks to a cluster.
type clusterFlags struct {
	config  *string
	sets    setFlags
	timeout *time.Duration
}

func addClusterFlags(fs *flag.FlagSet, timeout time.Duration) *clusterFlags {
	c := &clusterFlags{}
	c.config = fs.String("config", "configs/common.yaml", "config file with the kafka.*, hbase.* and streams.* keys")
	c.timeout = fs.Duration("timeout", timeout, "bound on the whole operation")
	fs.Var(&c.sets, "set", "key=value override, as for every role (repeatable)")
	return c
}

func (c *clusterFlags) load(environ []string) (*configs.Config, error) {
	return configs.Load(configs.Options{Files: configs.FilesFor(*c.config), Env: environ, Sets: c.sets})
}

// newBus opens the cluster's Kafka bus as frontierctl.
func newBus(cfg *configs.Config) (*kafkabus.Bus, error) {
	return kafkabus.New(cfg.KafkaBus("frontierctl"), nil, nil)
}

// seedsAdd publishes the seeds of a file as add_seeds on the spider log, as a spider started with --seeds
// does (the same parser, the same per-line errors), so a running cluster crawls them.
func seedsAdd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return fmt.Errorf("%w: seeds: want `seeds add FILE`", errUsage)
	}
	fs := newFlags("seeds add", stderr)
	cf := addClusterFlags(fs, time.Minute)
	var sitemaps []string
	fs.Func("sitemap", "a sitemap `URL` to crawl: the pages (or sitemaps) it lists; repeatable, instead of FILE", func(v string) error {
		u, err := url.Parse(v)
		if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%q is not an absolute http(s) URL", v)
		}
		sitemaps = append(sitemaps, v)
		return nil
	})
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(sitemaps) > 0 && fs.NArg() != 0 || len(sitemaps) == 0 && fs.NArg() != 1 {
		return fmt.Errorf("%w: seeds add: want exactly one seed file or --sitemap URLs, got %d arguments and %d sitemaps", errUsage, fs.NArg(), len(sitemaps))
	}
	file := fs.Arg(0)
	cfg, err := cf.load(environ)
	if err != nil {
		return err
	}
	id, err := cfg.Identity.New()
	if err != nil {
		return err
	}
	c, err := codec.New(cfg.Codec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *cf.timeout)
	defer cancel()
	b, err := newBus(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	// The spider's own injector: a spider with no feed, whose only job is InjectSeeds (no marker: StateDir is
	// empty, so the same file can be added again on purpose).
	scfg := spider.DefaultConfig()
	scfg.StateDir = ""
	deps := spider.RoleDeps{Bus: b, Deps: spider.Deps{Codec: c, Identity: id, Logger: slog.New(slog.NewTextHandler(stderr, nil))}}
	if len(sitemaps) > 0 {
		if err := spider.InjectSitemaps(ctx, scfg, deps, sitemaps); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d sitemaps published on %s as seeds\n", len(sitemaps), cfg.Streams.SpiderLog.Topic)
		return nil
	}
	if err := spider.InjectSeeds(ctx, scfg, deps, file); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeds of %s published on %s (see the log line above for counts and skipped lines)\n", file, cfg.Streams.SpiderLog.Topic)
	return nil
}

// controlCmd sends block, unblock, pause or resume on the control stream.
func controlCmd(ctx context.Context, op string, args, environ []string, stdout, stderr io.Writer) error {
	fs := newFlags(op, stderr)
	cf := addClusterFlags(fs, 30*time.Second)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var cmds []control.Command
	id := fmt.Sprintf("ctl-%d", time.Now().UnixNano())
	switch op {
	case control.OpBlock, control.OpUnblock:
		if fs.NArg() == 0 {
			return fmt.Errorf("%w: %s: name at least one host or domain", errUsage, op)
		}
		for i, h := range fs.Args() {
			c := control.Command{Op: op, Target: strings.ToLower(h), ID: fmt.Sprintf("%s-%d", id, i), At: time.Now().UTC()}
			if err := c.Validate(); err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			cmds = append(cmds, c)
		}
	default:
		if fs.NArg() > 0 {
			return fmt.Errorf("%w: %s: unexpected argument %q", errUsage, op, fs.Arg(0))
		}
		cmds = append(cmds, control.Command{Op: op, ID: id, At: time.Now().UTC()})
	}
	cfg, err := cf.load(environ)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *cf.timeout)
	defer cancel()
	b, err := newBus(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := control.Send(ctx, b, cmds...); err != nil {
		return err
	}
	for _, c := range cmds {
		fmt.Fprintf(stdout, "%s %s sent on %s (id %s); each DB worker and spider logs \"control command applied\" with this id\n",
			c.Op, c.Target, cfg.Streams.Control.Topic, c.ID)
	}
	return nil
}

// statusCmd prints the status of a cluster (the config's Kafka and HBase) or of a standalone crawl (--data-dir).
func statusCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	cf := addClusterFlags(fs, 30*time.Second)
	dataDir := fs.String("data-dir", "", "a standalone crawl's data directory (standalone.data_dir) instead of a cluster")
	asJSON := fs.Bool("json", false, "print the status as JSON")
	watch := fs.Duration("watch", 0, "refresh every `interval` until interrupted or finished (0: once)")
	top := fs.Int("top", 10, "how many hosts the top lists show")
	if err := parse(fs, args); err != nil {
		return err
	}
	var get func(context.Context) (crawlstatus.Status, error)
	if *dataDir != "" {
		get = func(context.Context) (crawlstatus.Status, error) { return standaloneStatus(*dataDir) }
	} else {
		cfg, err := cf.load(environ)
		if err != nil {
			return err
		}
		cl, err := openCluster(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.close()
		get = func(ctx context.Context) (crawlstatus.Status, error) { return cl.status(ctx, *top) }
	}
	for {
		sctx, cancel := context.WithTimeout(ctx, *cf.timeout)
		s, err := get(sctx)
		cancel()
		if err != nil {
			return err
		}
		if *asJSON {
			b, _ := json.Marshal(s)
			fmt.Fprintln(stdout, string(b))
		} else {
			if *watch > 0 {
				fmt.Fprint(stdout, "\033[H\033[2J") // a terminal's clear screen, as watch(1) does
			}
			s.Write(stdout)
		}
		code := s.Verdict.ExitCode()
		if *watch <= 0 || s.Verdict.State == crawlstatus.Finished {
			if code != 0 {
				return exitCode(code)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return exitCode(code)
		case <-time.After(*watch):
		}
	}
}

// standaloneStatus reads the status file a running (or finished) standalone crawl writes.
func standaloneStatus(dir string) (crawlstatus.Status, error) {
	var s crawlstatus.Status
	path := filepath.Join(dir, standalone.StatusFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		// The demo keeps its data beside the configured directory.
		if b2, err2 := os.ReadFile(filepath.Join(dir+"-demo", standalone.StatusFile)); err2 == nil {
			b, err = b2, nil
		}
	}
	if err != nil {
		return s, fmt.Errorf("standalone status: %w (is %s the data_dir of a crawl that ran?)", err, dir)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("standalone status %s: %w", path, err)
	}
	if time.Since(s.Time) > 10*time.Second && s.Verdict.State != crawlstatus.Finished {
		s.Stale = true
		s.PagesPerSecond = 0
		s.Judge()
		s.Verdict.Reasons = append([]string{"the standalone process is not running (its status file is " +
			time.Since(s.Time).Round(time.Second).String() + " old): restart it to resume the crawl"}, s.Verdict.Reasons...)
	}
	return s, nil
}

// cluster is what status reads in a cluster.
type cluster struct {
	cfg  *configs.Config
	kcfg kafkabus.Config
	b    *kafkabus.Bus
	hb   *hbase.Client
}

func openCluster(ctx context.Context, cfg *configs.Config) (*cluster, error) {
	kcfg := cfg.KafkaBus("frontierctl")
	b, err := kafkabus.New(kcfg, nil, nil)
	if err != nil {
		return nil, err
	}
	hb, err := hbase.New(ctx, cfg.HBase, nil, nil)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &cluster{cfg: cfg, kcfg: kcfg, b: b, hb: hb}, nil
}

func (c *cluster) close() {
	c.hb.Close()
	c.b.Close()
}

// topScan is how many of the best-ranked queued rows of each partition the top-hosts-by-queue list counts.
const topScan = 2000

// statusTries bounds the snapshots status takes while a crawl that looks finished keeps moving.
const statusTries = 3

// status gathers a cluster's status (see collect). A snapshot is a sequence of reads while the work moves
// round a cycle (queue, spider feed, spider log, scoring log, queue again), so a URL that moves on just
// after its stream or table was read, and into one already read, is seen nowhere: a DB worker sends a row to
// the feed after the feed's lag was read and before the queue is counted, and the crawl looks finished with
// a request in flight. Every move produces a message on one of the streams (a feed batch, an outcome on the
// spider log, a score on the scoring log) before the message that caused it is committed, and a queue row is
// acknowledged only after its request is on the feed. So when no stream's end offset moved from before the
// first read to after the last one, the snapshot is exact. A snapshot that says nothing is unconsumed or in
// flight is trusted only then (see settled); a busy crawl's snapshot shows lag anyway and is not checked.
func (c *cluster) status(ctx context.Context, top int) (crawlstatus.Status, error) {
	return settled(ctx, func(ctx context.Context) (crawlstatus.Status, error) { return c.collect(ctx, top) }, c.endOffsets)
}

// settled calls collect until its status shows lag somewhere, or shows none with no stream's end offsets
// (ends) changed across it. After statusTries quiet-looking snapshots taken while messages were produced,
// it returns the last one, with a finished verdict turned into crawling: work is still moving.
func settled(ctx context.Context, collect func(context.Context) (crawlstatus.Status, error), ends func(context.Context) (map[bus.Stream]map[int]int64, error)) (crawlstatus.Status, error) {
	for try := 1; ; try++ {
		before, err := ends(ctx)
		if err != nil {
			return crawlstatus.Status{}, err
		}
		s, err := collect(ctx)
		if err != nil || !quiet(s) {
			return s, err
		}
		after, err := ends(ctx)
		if err != nil {
			return s, err
		}
		if fmt.Sprint(before) == fmt.Sprint(after) {
			return s, nil
		}
		if try == statusTries {
			if s.Verdict.State == crawlstatus.Finished {
				s.Verdict = crawlstatus.Verdict{State: crawlstatus.Crawling, Reasons: []string{fmt.Sprintf(
					"nothing queued, in flight or unconsumed at each read, but messages were produced while the status was read (%d times): work is still moving", try)}}
			}
			return s, nil
		}
	}
}

// quiet reports whether a status shows no message unconsumed by any group (nothing in flight either: the
// feed's lag is what is in flight).
func quiet(s crawlstatus.Status) bool {
	for _, l := range s.Lags {
		if l.Lag > 0 {
			return false
		}
	}
	return true
}

// endOffsets returns the end offset of every partition of every stream whose lag is the crawl's work.
func (c *cluster) endOffsets(ctx context.Context) (map[bus.Stream]map[int]int64, error) {
	out := map[bus.Stream]map[int]int64{}
	for _, sg := range bus.LagGroups() {
		if _, ok := out[sg.Stream]; ok {
			continue
		}
		e, err := c.b.EndOffsets(ctx, sg.Stream)
		if err != nil {
			return nil, err
		}
		out[sg.Stream] = e
	}
	return out, nil
}

// collect takes one snapshot of a cluster's status: lags from Kafka; queue depths from the queue table (a
// key-only count per partition); totals, pages/s and errors by host from the counters the DB worker keeps in
// the domain table; the control state by replaying the control stream.
func (c *cluster) collect(ctx context.Context, top int) (crawlstatus.Status, error) {
	now := time.Now()
	s := crawlstatus.Status{Mode: "cluster", Time: now}
	for _, sg := range bus.LagGroups() { // the stream/group pairs the topology declares
		lags, err := c.b.Lag(ctx, sg.Stream, sg.Group)
		if err != nil {
			return s, err
		}
		for p := range c.b.Partitions(sg.Stream) {
			s.Lags = append(s.Lags, crawlstatus.Lag{Stream: string(sg.Stream), Group: sg.Group, Partition: p, Lag: lags[p]})
			if sg.Stream == bus.SpiderFeed {
				s.Totals.InFlight += lags[p]
			}
		}
	}
	q := c.hb.Queue()
	queued := map[string]int64{}
	for p := range c.b.Partitions(bus.SpiderFeed) {
		n, err := q.Count(ctx, p)
		if err != nil {
			return s, err
		}
		s.Queue = append(s.Queue, crawlstatus.Depth{Partition: p, Queued: n})
		s.Totals.Queued += n
		if n == 0 {
			continue
		}
		items, err := q.Next(ctx, p, now.Unix()+365*24*3600, queue.Limits{Max: topScan})
		if err != nil {
			return s, err
		}
		for _, it := range items {
			queued[it.Host]++
		}
	}
	s.TopQueued = crawlstatus.Top(queued, top)
	d := c.hb.Domains()
	v, err := d.Get(ctx, dbworker.CounterCrawled, []string{dbworker.CounterRow})
	if err != nil {
		return s, err
	}
	s.Totals.Crawled = v[0]
	if v, err = d.Get(ctx, dbworker.CounterErrors, []string{dbworker.CounterRow}); err != nil {
		return s, err
	}
	s.Totals.Errors = v[0]
	if s.PagesPerSecond, err = dbworker.PagesPerSecond(ctx, d, now); err != nil {
		return s, err
	}
	errs := map[string]int64{}
	if err := d.Each(ctx, dbworker.CounterErrors, 0, func(host string, n int64) {
		if !strings.HasPrefix(host, "#") {
			errs[host] = n
		}
	}); err != nil {
		return s, err
	}
	s.TopErrors = crawlstatus.Top(errs, top)
	if st, err := c.control(ctx); err == nil {
		s.Control = crawlstatus.Control{Paused: st.Paused(), Blocked: st.BlockedList()}
	}
	s.Judge()
	return s, nil
}

// control replays the control stream into a state.
func (c *cluster) control(ctx context.Context) (*control.State, error) {
	f, err := control.Follow(ctx, c.b, fmt.Sprintf("frontierctl-status-%d", time.Now().UnixNano()), 2*time.Second, nil, nil)
	if err != nil {
		return nil, err
	}
	f.Stop()
	return f.State, nil
}
