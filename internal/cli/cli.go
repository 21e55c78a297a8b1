// Package cli is the shared bootstrap of Frontier's programs: it parses the flags, loads
// the configuration, sets up slog, serves /metrics and /healthz, and runs the role's worker beside them in one
// run group, so that the first actor to stop stops the others.
//
// A main does nothing but call Main with a signal context:
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	if err := cli.Main(ctx, "dbworker", os.Args[1:], run); err != nil { … exit 1 }
//
// internal/cli is the only package that calls slog.SetDefault. It sits at level L5 with cmd/*.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/frontiercrawl/frontier/configs"
)

// Env is what a role's run function receives.
type Env struct {
	Config *configs.Config
	// PartitionID is --partition-id: the spider-feed partition of a spider, the spider-log partition of a
	// strategy worker; -1 when the role takes none.
	PartitionID int
	// Seeds is the --seeds file of the spider (or standalone process) that injects the seeds, or "".
	Seeds string
	// Demo is standalone's --demo: crawl a synthetic multi-host site served on loopback.
	Demo bool
	// URLFrontier is standalone's --urlfrontier: the address to serve the URLFrontier gRPC API on, or "".
	URLFrontier string
	Logger      *slog.Logger
	Registry    *prometheus.Registry
	// Health backs /readyz: the role adds a check per dependency (kafkabus.Bus.Unreachable,
	// hbase.Client.Unreachable) and its own (e.g. "not consuming yet").
	Health *Health
}

// Health is the readiness state of a process: named checks, each nil while its part is ready. /healthz answers
// 200 while the process runs (liveness: restart it only if this fails); /readyz answers 200 "ready" when every
// check passes and otherwise 503 with one line per failing check, saying what is waited for and since when.
// Safe for concurrent use. A nil *Health (a role run without the bootstrap, as in tests) accepts checks and
// ignores them.
type Health struct {
	mu     sync.Mutex
	names  []string
	checks map[string]func() error
}

// NewHealth returns a Health with no checks (ready).
func NewHealth() *Health { return &Health{checks: map[string]func() error{}} }

// Add adds or replaces the check called name.
func (h *Health) Add(name string, check func() error) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.checks[name]; !ok {
		h.names = append(h.names, name)
	}
	h.checks[name] = check
}

// Set makes the check called name report err (nil: ready), for a part that reports its state rather than being
// asked.
func (h *Health) Set(name string, err error) { h.Add(name, func() error { return err }) }

// Check runs every check and returns the failing ones as "name: error" lines, in the order they were added.
func (h *Health) Check() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	names := slices.Clone(h.names)
	checks := make([]func() error, len(names))
	for i, n := range names {
		checks[i] = h.checks[n]
	}
	h.mu.Unlock()
	var out []string
	for i, c := range checks {
		if err := c(); err != nil {
			out = append(out, names[i]+": "+err.Error())
		}
	}
	return out
}

// RunFunc runs a role until ctx ends or the work is done; it returns nil on a clean stop (drained, flushed and committed).
type RunFunc func(ctx context.Context, env Env) error

// ErrUsage is returned (wrapped) when the command line is wrong; Main has printed the usage already.
var ErrUsage = errors.New("cli: usage")

// flags are a role's command-line options.
type flags struct {
	config      string
	partitionID int
	seeds       string
	demo        bool
	urlfrontier string
	sets        []string
}

// partitioned roles take --partition-id, and say which stream's partition count bounds it.
var partitioned = map[string]func(*configs.Config) (string, int){
	"spider":         func(c *configs.Config) (string, int) { return "streams.spider_feed", c.Streams.SpiderFeed.Partitions },
	"strategyworker": func(c *configs.Config) (string, int) { return "streams.spider_log", c.Streams.SpiderLog.Partitions },
}

func parseFlags(role string, args []string, stderr io.Writer) (flags, error) {
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := flags{partitionID: -1}
	fs.StringVar(&f.config, "config", "",
		"role configuration `file` over the built-in defaults (configs/"+role+".yaml documents them); common.yaml beside it is loaded first")
	if _, ok := partitioned[role]; ok {
		fs.IntVar(&f.partitionID, "partition-id", -1, "the `partition` this process owns (required)")
	}
	if role == "spider" || role == "standalone" {
		fs.StringVar(&f.seeds, "seeds", "", "inject the seed URLs of `file` (one a line, # comments) and crawl")
	}
	if role == "standalone" {
		fs.BoolVar(&f.demo, "demo", false, "crawl a synthetic multi-host site served on 127.0.0.2… (no network needed)")
		fs.StringVar(&f.urlfrontier, "urlfrontier", "", "serve the URLFrontier gRPC API on `addr` (host:port); without --seeds no spider runs")
	}
	fs.Func("set", "override a configuration `key=value` (repeatable; after files and FRONTIER_* variables)",
		func(s string) error { f.sets = append(f.sets, s); return nil })
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n", role)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return f, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return f, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return f, nil
}

// Main runs role: it parses args, loads the configuration, and runs fn with the metrics endpoint beside it
// until ctx ends (SIGTERM) or fn returns. It returns fn's error, or the first setup error.
func Main(ctx context.Context, role string, args []string, fn RunFunc) error {
	return main(ctx, role, args, os.Environ(), os.Stderr, fn)
}

func main(ctx context.Context, role string, args, environ []string, stderr io.Writer, fn RunFunc) error {
	if !slices.Contains(configs.Roles, role) {
		return fmt.Errorf("cli: unknown role %q", role)
	}
	f, err := parseFlags(role, args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	opts := configs.Options{Role: role, Env: environ, Sets: f.sets}
	if f.config != "" {
		opts.Files = configs.FilesFor(f.config)
	}
	cfg, err := configs.Load(opts)
	if err != nil {
		return err
	}
	if bound, ok := partitioned[role]; ok {
		key, n := bound(cfg)
		if f.partitionID < 0 || f.partitionID >= n {
			return fmt.Errorf("cli: --partition-id %d is outside [0, %d) (%s.partitions = %d)", f.partitionID, n, key, n)
		}
	}

	logger := NewLogger(cfg.Log, stderr).With("role", role)
	if f.partitionID >= 0 {
		logger = logger.With("partition", f.partitionID)
	}
	slog.SetDefault(logger)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	health := NewHealth()
	env := Env{Config: cfg, PartitionID: f.partitionID, Seeds: f.seeds, Demo: f.demo, URLFrontier: f.urlfrontier, Logger: logger, Registry: reg, Health: health}

	var g run.Group
	workCtx, cancelWork := context.WithCancel(ctx)
	g.Add(func() error {
		err := fn(workCtx, env)
		if err == nil || errors.Is(err, context.Canceled) {
			logger.Info("stopped")
			return nil
		}
		return err
	}, func(error) { cancelWork() })

	if cfg.Metrics.Addr != "" {
		ln, err := net.Listen("tcp", cfg.Metrics.Addr)
		if err != nil {
			cancelWork()
			return fmt.Errorf("cli: metrics.addr: %w", err)
		}
		srv := &http.Server{Handler: HandlerWithHealth(reg, health), ReadHeaderTimeout: 10 * time.Second}
		logger.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
		g.Add(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("cli: metrics server: %w", err)
			}
			return nil
		}, func(error) {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		})
	}
	config := f.config
	if config == "" {
		config = "built-in defaults"
	}
	logger.Info("starting", "config", config)
	return g.Run()
}

// Handler serves /metrics from reg and /healthz (200 "ok" while the process runs).
func Handler(reg *prometheus.Registry) http.Handler { return HandlerWithHealth(reg, NewHealth()) }

// HandlerWithHealth serves /metrics from reg, /healthz (liveness: 200 "ok" while the process runs) and /readyz
// (readiness from h: 200 "ready", or 503 with the reasons, one a line).
func HandlerWithHealth(reg *prometheus.Registry, h *Health) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		failing := h.Check()
		if len(failing) == 0 {
			_, _ = io.WriteString(w, "ready\n")
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "not ready\n"+strings.Join(failing, "\n")+"\n")
	})
	return mux
}

// NewLogger builds the slog logger the configuration asks for, writing to w.
func NewLogger(c configs.LogConfig, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level)) // validated by configs
	opts := &slog.HandlerOptions{Level: lvl}
	if strings.EqualFold(c.Format, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
