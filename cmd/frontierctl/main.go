// Command frontierctl is the operator's tool: it creates the Kafka topics with the partition counts of the
// configs and the HBase tables, checks that Kafka and HBase's Thrift2 gateway answer real requests, shows how
// a running crawl is going, and controls it at run time. The scripts in deploy/ call it; it is also safe to
// run by hand.
//
// Usage:
//
//	frontierctl topics [--config configs/common.yaml] [--brokers host:port,…] [--set key=value]… [--timeout 60s]
//	frontierctl hbase-schema [--config configs/common.yaml] [--addr host:port] [--transport framed|buffered]
//	                         [--protocol binary|compact] [--set key=value]… [--timeout 120s]
//	frontierctl probe kafka [--brokers host:port,…] [--timeout 5s]
//	frontierctl probe hbase [--addr host:port] [--timeout 5s]
//	frontierctl status [--config F] [--set k=v]… [--json] [--watch 5s] [--top 10]    a cluster
//	frontierctl status --data-dir DIR [--json] [--watch 5s]                          a standalone crawl
//	frontierctl seeds add [--config F] [--set k=v]… FILE | --sitemap URL…
//	frontierctl block|unblock [--config F] [--set k=v]… HOST_OR_DOMAIN…
//	frontierctl pause|resume [--config F] [--set k=v]…
//	frontierctl accept-loss --stream S --group G [--config F] [--set k=v]… [--dry-run]
//	frontierctl urlfrontier [--addr host:port] [--crawl ID] put|get|done|stats|queues|block|delay …
//
// urlfrontier is a small client of a URLFrontier service (standalone --urlfrontier ADDR, docs/urlfrontier.md):
// put seeds, lease and acknowledge URLs, read counters, block and slow queues; `frontierctl urlfrontier -h`
// lists its commands.
//
// status prints totals (queued, in flight, crawled, errors), pages/s over the last minute, the lag of every
// spider-feed, spider-log and scoring-log partition per consumer group, the queue depth of each spider-feed
// partition, the top hosts by queued URLs and by errors, the control state, and a verdict: crawling, idle (with
// the reasons it can see) or finished (nothing queued, nothing in flight, every log consumed). Its exit status
// is 0 when the crawl is finished, 3 while it is crawling and 4 when it is idle with work left, so a script
// can wait with `until frontierctl status >/dev/null; do sleep 10; done`. With --watch it refreshes until the
// crawl is finished. In a cluster the totals come from counters the DB worker keeps in the domain table,
// not from a scan of the states; the queue depth is a key-only count of the queue table. For a standalone
// crawl it reads DATA_DIR/status.json, which the running process rewrites every second.
//
// seeds add publishes the seeds of FILE on the spider log exactly as a spider started with --seeds does (the
// same parser; an invalid line is reported with its number and skipped); with --sitemap URL (repeatable) it
// publishes sitemaps instead, which the crawl fetches with the pages or sitemaps they list. block and unblock (a name covers its
// subdomains), pause and resume are appended to the control stream (streams.control); every DB worker and
// spider applies them, logs "control command applied" with the command's id and counts it in
// frontier_control_commands_total. A blocked host's queued URLs stay queued and are dispatched after unblock.
// These commands need a cluster: a standalone crawl has no control stream (stop it, edit, restart it with
// --seeds to add seeds).
//
// topics creates the spider log, scoring log, spider feed and control topics (streams.*.topic, streams.*.partitions in the
// config, with FRONTIER_* environment variables and --set applied as for every role), waits until every
// partition has a leader, and is idempotent; a topic that already exists with another partition count is an
// error naming both counts, and is never changed. Each topic gets the retention of streams.*.retention as its
// own retention.ms (0: forever; the control topic always), also on a topic that already exists, so the broker's
// default never decides. --brokers overrides kafka.brokers.
//
// accept-loss is the way on after a consumer stopped because its group's committed offset fell out of
// retention (the error names the topic, partition and offsets lost): it lists the partitions of --stream whose
// --group offset lies below the log start and commits the log start for them, so the group goes on from the
// oldest message held and the deleted ones are given up; --dry-run only lists them. Run it while the group's
// consumers are stopped (docs/reliability.md, "Retention").
//
// hbase-schema creates the namespace (hbase.namespace, if set) and Frontier's tables under hbase.table_prefix
// through the Thrift2 gateway (hbase.EnsureSchema); idempotent. --addr overrides hbase.addr; --transport and
// --protocol must match how the gateway was started (deploy/up: framed, binary).
//
// probe kafka sends ApiVersions and Metadata; probe hbase calls listNamespaces and exists on hbase:meta through
// the Thrift2 gateway (binary protocol, framed transport). Both exit 0 when the server answers, 1 otherwise.
//
// The exit status is 0 on success, 1 on failure and 2 on a usage error (status: 0, 3 or 4 as above).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/hbase"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// errUsage marks errors that are the caller's command line.
var errUsage = errors.New("usage")

const usage = `usage:
  frontierctl topics [--config configs/common.yaml] [--brokers host:port,...] [--set key=value]... [--timeout 60s]
  frontierctl hbase-schema [--config configs/common.yaml] [--addr host:port] [--transport framed|buffered]
                           [--protocol binary|compact] [--set key=value]... [--timeout 120s]
  frontierctl probe kafka [--brokers host:port,...] [--timeout 5s]
  frontierctl probe hbase [--addr host:port] [--timeout 5s]
  frontierctl status [--config F] [--set k=v]... [--json] [--watch 5s] [--top 10]
  frontierctl status --data-dir DIR [--json] [--watch 5s]
  frontierctl seeds add [--config F] [--set k=v]... FILE | --sitemap URL...
  frontierctl block|unblock [--config F] [--set k=v]... HOST_OR_DOMAIN...
  frontierctl pause|resume [--config F] [--set k=v]...
  frontierctl accept-loss --stream spider-log|scoring-log|spider-feed --group G [--config F] [--set k=v]... [--dry-run]
  frontierctl urlfrontier [--addr host:port] [--crawl ID] put|get|done|stats|queues|block|delay ...
status exits 0 when the crawl is finished, 3 while crawling, 4 when idle with work left.`

func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, environ, stdout, stderr)
	var code exitCode
	switch {
	case errors.As(err, &code):
		return int(code)
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, usage)
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "frontierctl: %v\n%s\n", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "frontierctl: %v\n", err)
		return 1
	}
}

func dispatch(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command", errUsage)
	}
	switch args[0] {
	case "topics":
		return topics(ctx, args[1:], environ, stdout, stderr)
	case "hbase-schema":
		return hbaseSchema(ctx, args[1:], environ, stdout, stderr)
	case "urlfrontier":
		return urlfrontierCmd(ctx, args[1:], stdout, stderr)
	case "probe":
		if len(args) < 2 {
			return fmt.Errorf("%w: probe what? (kafka or hbase)", errUsage)
		}
		switch args[1] {
		case "kafka":
			return probeKafkaCmd(ctx, args[2:], stdout, stderr)
		case "hbase":
			return probeHBaseCmd(ctx, args[2:], stdout, stderr)
		}
		return fmt.Errorf("%w: unknown probe %q (kafka or hbase)", errUsage, args[1])
	case "status":
		return statusCmd(ctx, args[1:], environ, stdout, stderr)
	case "seeds":
		return seedsAdd(ctx, args[1:], environ, stdout, stderr)
	case "accept-loss":
		return acceptLossCmd(ctx, args[1:], environ, stdout, stderr)
	case "block", "unblock", "pause", "resume":
		return controlCmd(ctx, args[0], args[1:], environ, stdout, stderr)
	case "help", "-h", "--help":
		return flag.ErrHelp
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses fs and rejects positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s: unexpected argument %q", errUsage, fs.Name(), fs.Arg(0))
	}
	return nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func topics(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newFlags("topics", stderr)
	config := fs.String("config", "", "config file with the streams.* keys over the built-in defaults (a role file also reads the common.yaml beside it)")
	brokers := fs.String("brokers", "", "comma-separated brokers; overrides kafka.brokers")
	timeout := fs.Duration("timeout", 60*time.Second, "bound on the whole operation, including the wait for partition leaders")
	var sets setFlags
	fs.Var(&sets, "set", "key=value override, as for every role (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := configs.Load(loadOptions(*config, environ, sets))
	if err != nil {
		return err
	}
	addrs := cfg.Kafka.Brokers
	if *brokers != "" {
		addrs = splitList(*brokers)
	}
	streams := []kafkabus.StreamConfig{cfg.Streams.SpiderLog, cfg.Streams.ScoringLog, cfg.Streams.SpiderFeed, cfg.Streams.Control}
	specs := make([]kafkabus.TopicSpec, len(streams))
	for i, s := range streams {
		specs[i] = kafkabus.TopicSpec{Name: s.Topic, Partitions: s.Partitions, Configs: kafkabus.RetentionConfigs(s.Retention)}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := kafkabus.EnsureTopics(ctx, addrs, specs); err != nil {
		return err
	}
	for i, s := range specs {
		keep := "forever"
		if r := streams[i].Retention; r > 0 {
			keep = r.String()
		}
		fmt.Fprintf(stdout, "topic %s: %d partitions, retention %s\n", s.Name, s.Partitions, keep)
	}
	return nil
}

func probeKafkaCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("probe kafka", stderr)
	brokers := fs.String("brokers", "127.0.0.1:9092", "comma-separated brokers")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on the probe")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := kafkabus.Ping(ctx, splitList(*brokers)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kafka at %s: ready\n", *brokers)
	return nil
}

func probeHBaseCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("probe hbase", stderr)
	addr := fs.String("addr", "127.0.0.1:9090", "HBase Thrift2 gateway (binary protocol, framed transport)")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on the probe")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	ns, err := probeHBase(ctx, *addr)
	if err != nil {
		return fmt.Errorf("hbase thrift2 at %s: %w", *addr, err)
	}
	fmt.Fprintf(stdout, "hbase thrift2 at %s: ready (namespaces: %s)\n", *addr, strings.Join(ns, ", "))
	return nil
}

func hbaseSchema(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newFlags("hbase-schema", stderr)
	config := fs.String("config", "", "config file with the hbase.* keys over the built-in defaults (a role file also reads the common.yaml beside it)")
	addr := fs.String("addr", "", "Thrift2 gateway host:port; overrides hbase.addr")
	transport := fs.String("transport", "", "gateway transport, framed or buffered; overrides hbase.transport")
	protocol := fs.String("protocol", "", "gateway protocol, binary or compact; overrides hbase.protocol")
	timeout := fs.Duration("timeout", 120*time.Second, "bound on the whole operation")
	var sets setFlags
	fs.Var(&sets, "set", "key=value override, as for every role (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := configs.Load(loadOptions(*config, environ, sets))
	if err != nil {
		return err
	}
	hc := schemaConfig(cfg.HBase, *addr, *transport, *protocol)
	if err := hc.Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := hbase.EnsureSchema(ctx, hc); err != nil {
		return err
	}
	ns := hc.Namespace
	if ns == "" {
		ns = "default"
	}
	fmt.Fprintf(stdout, "hbase schema at %s: namespace %s, tables %s*\n", hc.Addr, ns, hc.TablePrefix)
	return nil
}

// schemaConfig is the configuration's whole hbase section (transport and protocol included: a gateway that
// speaks another one than the default must be reached the same way the roles reach it), with the flags that
// were given over it.
func schemaConfig(hc hbase.Config, addr, transport, protocol string) hbase.Config {
	if addr != "" {
		hc.Addr = addr
	}
	if transport != "" {
		hc.Transport = transport
	}
	if protocol != "" {
		hc.Protocol = protocol
	}
	return hc
}

// loadOptions loads the built-in common.yaml, then config and the common.yaml beside it when given.
func loadOptions(config string, environ, sets []string) configs.Options {
	opts := configs.Options{Role: "common", Env: environ, Sets: sets}
	if config != "" {
		opts.Files = configs.FilesFor(config)
	}
	return opts
}
