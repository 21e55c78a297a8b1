package crawl

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/standalone"
)

// The timing bench (TestTimingWeb) crawls the loopback web with the real web's timing (web.Timing) with
// Frontier's standalone mode and with the least crawler, each in a child process of its own (this test binary
// re-executed with crawlEnv set), so that the CPU time and the peak RSS of each come from the kernel's rusage of
// that child alone; the web is a third child, started afresh for each crawler so that both meet the same web
// (its pages that fail once fail for each).
const crawlEnv = "FRONTIER_CRAWLBENCH_CRAWL"

var (
	flagTimingWebs = flag.String("crawl.timing", "delay0:12x20,delay1s:30x3",
		"the timing webs to crawl, NAME:HOSTSxPAGES,...; NAME is a preset (delay0, delay1s; see timingPresets). The recorded run: delay0:200x300,delay1s:1000x20")
	flagTimingLatency  = flag.String("crawl.timing.latency", "", "override the presets' host latency: MIN-MAX (e.g. 1ms-500ms) or one duration for every host")
	flagTimingDelay    = flag.Duration("crawl.timing.delay", -1, "override the presets' politeness delay (both crawlers; e.g. to pace the least crawler at Frontier's rate when comparing what the servers spend)")
	flagTimingLarge    = flag.Int64("crawl.timing.large", 15<<20, "bytes of the large page every host serves (0: none)")
	flagTimingFail     = flag.Float64("crawl.timing.failonce", 0.01, "fraction of pages that answer 500 once, then 200")
	flagTimingSlow     = flag.Float64("crawl.timing.slowpages", 0.002, "fraction of pages that wait the latency maximum more")
	flagTimingRedirect = flag.Float64("crawl.timing.redirects", 0.05, "fraction of links written through a redirect")
	flagTimingCrawlers = flag.String("crawl.timing.crawlers", "frontier,least", "which crawlers run, in order")
	flagTimingFlow     = flag.Bool("crawl.timing.flow", true, "the DB worker's per-host flow control (db_worker.flow.enabled); false: the fixed per_host, for a before/after on one tree")
	flagChildProfile   = flag.String("crawl.childprofile", "", "write a CPU profile of each crawler's child crawl to this file (NAME-CRAWLER- is prefixed)")
	flagWebProfile     = flag.String("crawl.webprofile", "", "write a CPU profile of the web's serving child to this file (NAME-CRAWLER- is prefixed)")
)

// timingPreset is one web of the timing bench and the crawlers' politeness delay on it.
type timingPreset struct {
	delay  time.Duration
	latMin time.Duration
	latMax time.Duration
	late   float64
}

// timingPresets are the two webs issue 21 measures: delay 0 over hosts whose latency spreads from 1 ms to
// 500 ms with a few late hosts, and the default 1 s delay over hosts that all answer in 50 ms, every host
// seeded.
var timingPresets = map[string]timingPreset{
	"delay0":  {delay: 0, latMin: time.Millisecond, latMax: 500 * time.Millisecond, late: 0.05},
	"delay1s": {delay: time.Second, latMin: 50 * time.Millisecond, latMax: 50 * time.Millisecond},
}

// webSpec is a loopback web as the serving child builds it (JSON in serveEnv).
type webSpec struct {
	Hosts, Pages int
	Redirects    float64
	LargeBytes   int64
	Timing       web.Timing
}

func (s webSpec) config() web.Config {
	c := webConfig(s.Hosts, s.Pages)
	c.DisableRequestLog = false
	c.Hostile.Redirects = s.Redirects
	c.LargeBytes = s.LargeBytes
	c.Timing = s.Timing
	return c
}

// crawlSpec is what a crawling child does (JSON in crawlEnv).
type crawlSpec struct {
	Crawler string // "frontier" or "least"
	Seeds   string // the seed file
	Delay   time.Duration
	Dir     string // the Frontier child's data directory
	Timeout time.Duration
	Profile string // CPU profile of the child's crawl, if set (either crawler)
	Spiders int
	Batch   int
	NoFlow  bool // db_worker.flow.enabled false
}

// crawlResult is what a crawling child reports on its stdout.
type crawlResult struct {
	Responses int64         // responses handled (any status)
	Errors    int64         // fetches that failed without a response
	Wall      time.Duration // from the start to the last response
	// Quantiles are when the 50th, 90th and 99th percentiles of the responses had come: a crawl whose last
	// pages trail (retries waiting out their back-off, late hosts) shows it here.
	Quantiles [3]time.Duration
	Loop      string // what the Frontier child's metrics said of its loop (childLoop)
	// Finish is how long the Frontier child's crawl ran on after its last response: the finish detection
	// (standalone.Config.QuietPeriod and the progress checks) and the shutdown. Wall does not count it.
	Finish time.Duration
	Err    string
}

// arrivals notes when each response came, for crawlResult.Quantiles.
type arrivals struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
}

func (p *arrivals) note() {
	d := time.Since(p.start)
	p.mu.Lock()
	p.at = append(p.at, d)
	p.mu.Unlock()
}

func (p *arrivals) quantiles() (q [3]time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.at) == 0 {
		return q
	}
	slices.Sort(p.at)
	for i, f := range []float64{0.5, 0.9, 0.99} {
		q[i] = p.at[int(f*float64(len(p.at)-1))]
	}
	return q
}

// progressHandler is lastPage with progress notes.
type progressHandler struct {
	lastPage
	p *arrivals
}

func (h *progressHandler) HandleResponse(ctx context.Context, f *spider.Fetched) error {
	h.p.note()
	return h.lastPage.HandleResponse(ctx, f)
}

func crawlChild(raw string) int {
	out := json.NewEncoder(os.Stdout)
	var spec crawlSpec
	var res crawlResult
	err := json.Unmarshal([]byte(raw), &spec)
	if err == nil && spec.Profile != "" {
		var stop func()
		if stop, err = startCPUProfile(spec.Profile); err == nil {
			defer stop()
		}
	}
	if err == nil {
		switch spec.Crawler {
		case "frontier":
			res, err = crawlFrontier(spec)
		case "least":
			res, err = crawlLeast(spec)
		default:
			err = fmt.Errorf("crawler %q: want frontier or least", spec.Crawler)
		}
	}
	if err != nil {
		res.Err = err.Error()
	}
	_ = out.Encode(res)
	if err != nil {
		return 1
	}
	return 0
}

// startCPUProfile profiles the child's whole crawl into file (-crawl.childprofile); stop ends it.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// crawlFrontier is the standalone mode as cmd/standalone runs it by default, with the spec's delay, following
// links to any host (the late hosts are no seed's), stopping once done.
func crawlFrontier(spec crawlSpec) (crawlResult, error) {
	cfg, id, err := standaloneConfigFor(spec.Dir, spec.Spiders, spec.Batch)
	if err != nil {
		return crawlResult{}, err
	}
	cfg.Spider.Delay = spec.Delay
	cfg.DBWorker.Flow.Enabled = !spec.NoFlow
	cfg.StrategyWorker.Scope.Follow = scope.FollowAny
	// cmd/standalone's soft memory limit (the Go part of standalone.memory_limit) and the GOGC that goes with
	// it, which standalone.Run leaves to its caller; GOMEMLIMIT or GOGC in the environment wins, as there.
	// Without them the child's peak RSS and CPU were not those a user of cmd/standalone with the default
	// settings sees.
	cfg.Memory().SetRuntime(os.Getenv)
	ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout)
	defer cancel()
	start := time.Now()
	lp := &progressHandler{p: &arrivals{start: start}}
	cl := newChildLoop()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go cl.run(sctx)
	sum, err := standalone.Run(ctx, cfg, standalone.Deps{Seeds: spec.Seeds, Identity: id, Handler: lp, Registerer: cl.reg,
		Progress: cl.progress})
	ended := time.Now()
	stop()
	if err != nil {
		return crawlResult{}, err
	}
	if ctx.Err() != nil {
		return crawlResult{}, fmt.Errorf("the crawl did not finish in %v", spec.Timeout)
	}
	return crawlResult{Responses: sum.Pages, Errors: sum.Errors, Wall: time.Duration(lp.last.Load() - start.UnixNano()),
		Quantiles: lp.p.quantiles(), Loop: cl.summary(), Finish: ended.Sub(time.Unix(0, lp.last.Load()))}, nil
}

// childRun is one crawler's run as the parent measured it.
type childRun struct {
	res    crawlResult
	cpu    time.Duration
	maxRSS int64 // bytes
	web    checked
}

// runCrawler crawls w with the crawler spec names, in a child process, and reads the child's rusage.
func runCrawler(t *testing.T, w *childWeb, spec crawlSpec) childRun {
	t.Helper()
	spec.Seeds = writeSeeds(t, w.Seeds)
	spec.Timeout = *flagTimeout
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crawlEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	runErr := cmd.Run()
	var r childRun
	if err := json.Unmarshal(stdout.Bytes(), &r.res); err != nil {
		t.Fatalf("%s crawler: %v (exit: %v); stdout %q", spec.Crawler, err, runErr, stdout.String())
	}
	if r.res.Err != "" || runErr != nil {
		t.Fatalf("%s crawler: %s (exit: %v)", spec.Crawler, r.res.Err, runErr)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r.maxRSS = ru.Maxrss << 10 // kilobytes on Linux
	r.web = w.checkWith(t, "check-any")
	return r
}

// perRequest divides a duration in its String form by n requests.
func perRequest(d string, n int) string {
	v, err := time.ParseDuration(d)
	if err != nil || n <= 0 {
		return "?"
	}
	return (v / time.Duration(n)).Round(100 * time.Nanosecond).String()
}

// parseLatency reads "MIN-MAX" or one duration.
func parseLatency(s string) (time.Duration, time.Duration, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err := time.ParseDuration(a)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return lo, lo, nil
	}
	hi, err := time.ParseDuration(b)
	return lo, hi, err
}

// TestTimingWeb runs Frontier's standalone mode and the least crawler, one after the other and each in its own
// child process, on the same timing webs (-crawl.timing), and logs pages/s, CPU-seconds and the peak RSS of
// each and the ratios. The pages counted are the reachable URLs the web's servers were asked for.
func TestTimingWeb(t *testing.T) {
	for _, w := range strings.Split(*flagTimingWebs, ",") {
		name, size, ok := strings.Cut(w, ":")
		preset, known := timingPresets[name]
		if !ok || !known {
			t.Fatalf("-crawl.timing %q: want NAME:HOSTSxPAGES with NAME one of delay0, delay1s", w)
		}
		hosts, pages, err := parseSize(size)
		if err != nil {
			t.Fatal(err)
		}
		if *flagTimingLatency != "" {
			if preset.latMin, preset.latMax, err = parseLatency(*flagTimingLatency); err != nil {
				t.Fatalf("-crawl.timing.latency: %v", err)
			}
		}
		if *flagTimingDelay >= 0 {
			preset.delay = *flagTimingDelay
		}
		t.Run(name, func(t *testing.T) { timingRun(t, name+" "+size, preset, hosts, pages) })
	}
}

func timingRun(t *testing.T, what string, p timingPreset, hosts, pages int) {
	ws := webSpec{Hosts: hosts, Pages: pages, Redirects: *flagTimingRedirect, LargeBytes: *flagTimingLarge,
		Timing: web.Timing{LatencyMin: p.latMin, LatencyMax: p.latMax, LargePage: *flagTimingLarge > 0,
			FailOnce: *flagTimingFail, SlowPages: *flagTimingSlow, Robots: true, Broken: true, Late: p.late}}
	raw, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	desc := fmt.Sprintf("%s (delay %v, host latency %v-%v, large page %d MiB, fail once %.3f, slow pages %.3f, redirects %.2f, late hosts %.2f)",
		what, p.delay, p.latMin, p.latMax, ws.LargeBytes>>20, ws.Timing.FailOnce, ws.Timing.SlowPages, ws.Redirects, p.late)
	runs := map[string]childRun{}
	for _, crawler := range strings.Split(*flagTimingCrawlers, ",") {
		if *flagWebProfile != "" {
			t.Setenv(webProfileEnv, filepath.Join(filepath.Dir(*flagWebProfile),
				strings.Fields(what)[0]+"-"+crawler+"-"+filepath.Base(*flagWebProfile)))
		}
		w := startWebSpec(t, string(raw))
		spec := crawlSpec{Crawler: crawler, Delay: p.delay, Dir: filepath.Join(t.TempDir(), "data"),
			Spiders: *flagSpiders, Batch: *flagBatch, NoFlow: !*flagTimingFlow}
		if *flagChildProfile != "" {
			spec.Profile = filepath.Join(filepath.Dir(*flagChildProfile), strings.Fields(what)[0]+"-"+crawler+"-"+filepath.Base(*flagChildProfile))
		}
		load := loadAvg()
		r := runCrawler(t, w, spec)
		w.stop()
		if crawler == "frontier" {
			frontiertest.RequireStandaloneAccounted(t, spec.Dir) // after the child ended: not in its figures
		}
		runs[crawler] = r
		unique := int64(r.web.Reachable - r.web.Missing)
		name := crawler
		if crawler == "frontier" && !*flagTimingFlow {
			name += " (flow off)"
		}
		reportMem(t, nil, "timing web "+name+" "+desc, unique, r.res.Wall, r.cpu, r.maxRSS, load,
			"reachable", r.web.Reachable, "missing", r.web.Missing, "served twice", r.web.Twice,
			"unserved (failed, never retried)", r.web.Unserved, "robots violations", r.web.RobotsViolations,
			"responses", r.res.Responses, "fetch errors", r.res.Errors, "web server CPU", r.web.CPU,
			"responses by p50/p90/p99", fmt.Sprintf("%v/%v/%v", r.res.Quantiles[0].Round(time.Millisecond),
				r.res.Quantiles[1].Round(time.Millisecond), r.res.Quantiles[2].Round(time.Millisecond)))
		t.Logf("timing web %s %s: at the servers: %s; connections accepted %d (%d reconnects not after a large page, idle up to %s before); large pages' bytes written %d MiB; answers encoded %d, not HTTP/1.1 %d; web server CPU serving %s (%s per request; building the web and checking the crawl apart)",
			name, what, r.web.Loop, r.web.Accepted, r.web.Reconnects, r.web.ReconnectGap, r.web.LargeBytes>>20, r.web.Encoded, r.web.NotHTTP11, r.web.ServeCPU, perRequest(r.web.ServeCPU, r.web.Requests))
		t.Logf("timing web %s %s: requests/hosts per second: %s", name, what, r.web.Loop.Timeline)
		if r.res.Loop != "" {
			t.Logf("timing web %s %s: in the crawler: %s; the crawl ended %v after its last response (quiet period %v, not in pages/s)",
				name, what, r.res.Loop, r.res.Finish.Round(time.Millisecond), benchQuietPeriod)
		}
		if r.web.RobotsViolations != 0 {
			t.Errorf("%s: %d robots.txt violations", crawler, r.web.RobotsViolations)
		}
	}
	f, l := runs["frontier"], runs["least"]
	if f.res.Wall <= 0 || l.res.Wall <= 0 {
		return
	}
	rate := func(r childRun) float64 { return float64(r.web.Reachable-r.web.Missing) / r.res.Wall.Seconds() }
	line := fmt.Sprintf("timing web ratio Frontier/least %s: pages/s %.2f× (%.0f vs %.0f), CPU-s %.2f× (%.1f vs %.1f), peak RSS %.1f× (%d MiB vs %d MiB)",
		desc, rate(f)/rate(l), rate(f), rate(l), f.cpu.Seconds()/l.cpu.Seconds(), f.cpu.Seconds(), l.cpu.Seconds(),
		float64(f.maxRSS)/float64(l.maxRSS), f.maxRSS>>20, l.maxRSS>>20)
	t.Log(line)
	if p := os.Getenv("FRONTIER_BENCH_OUT"); p != "" {
		if fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			_, _ = fh.WriteString(time.Now().UTC().Format(time.RFC3339) + " " + line + "\n")
			_ = fh.Close()
		}
	}
}

// TestReconnects checks the count of unexplained new connections the timing log line reports.
func TestReconnects(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	reqs := []web.Request{
		{Host: "a", Conn: 1, Target: "/robots.txt", Start: at(0), End: at(1)},
		{Host: "b", Conn: 2, Target: "/", Start: at(0), End: at(1)},
		{Host: "a", Conn: 1, Target: "/big.html", Start: at(2), End: at(3)},
		{Host: "a", Conn: 3, Target: "/p1", Start: at(4), End: at(5)},   // after the large page: explained
		{Host: "b", Conn: 4, Target: "/p1", Start: at(41), End: at(42)}, // idle 40 ms, then a new connection
		{Host: "b", Conn: 4, Target: "/p2", Start: at(50), End: at(51)},
	}
	n, gap := reconnects(reqs)
	if n != 1 || gap != "40ms" {
		t.Errorf("reconnects = %d, %s; want 1, 40ms", n, gap)
	}
}
