package crawl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// The loopback web runs in a child process (this test binary, re-executed with serveEnv set), so that the
// crawler's CPU and memory are measured apart from the servers'. The child prints one JSON line with the
// seeds, then answers each "check" line on its stdin with the crawl check, and exits at EOF.
const serveEnv = "FRONTIER_CRAWLBENCH_SERVE"

// webProfileEnv, if set, names the file the serving child writes its CPU profile to (-crawl.webprofile).
const webProfileEnv = "FRONTIER_CRAWLBENCH_WEBPROFILE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(serveEnv); spec != "" {
		os.Exit(serve(spec))
	}
	if spec := os.Getenv(crawlEnv); spec != "" {
		os.Exit(crawlChild(spec))
	}
	os.Exit(m.Run())
}

// webConfig is the plain loopback web of hosts × pages: no robots.txt, no feature pages, URLs by IP.
func webConfig(hosts, pages int) web.Config {
	c := web.DefaultConfig()
	c.Plain, c.UseIPs = true, true
	c.Hosts, c.PagesPerHost = hosts, pages
	return c
}

type served struct {
	Seeds []string `json:"seeds"`
	Err   string   `json:"err,omitempty"`
}

type checked struct {
	Reachable int `json:"reachable"`
	Missing   int `json:"missing"`
	Twice     int `json:"twice"`
	Requests  int `json:"requests"`
	// Unserved are reachable pages that never got a 2xx answer (failed once, never retried);
	// RobotsViolations are disallowed URLs that were requested.
	Unserved         int    `json:"unserved"`
	RobotsViolations int    `json:"robots_violations"`
	CPU              string `json:"cpu"`
	// ServeCPU is the CPU the web used from its start (the graph built, the listeners open) to this check: the
	// serving alone, without building the web or checking the crawl. Accepted is the connections the hosts
	// accepted; LargeBytes the body bytes the large pages' answers wrote (the rest of a truncated page
	// included, as far as the socket took it); Encoded the answers sent with a Content-Encoding, NotHTTP11 the
	// requests that came over another protocol than HTTP/1.1 (HTTP/2).
	ServeCPU   string `json:"serve_cpu"`
	Accepted   int    `json:"accepted"`
	LargeBytes int64  `json:"large_bytes"`
	Encoded    int    `json:"encoded"`
	NotHTTP11  int    `json:"not_http11"`
	// Reconnects are a host's requests on a new connection that neither its first request nor the end of a
	// large page (whose rest the crawler does not read) explains; ReconnectGap the longest idle time of the
	// host before one of them (an idle timeout's work, if long).
	Reconnects   int    `json:"reconnects"`
	ReconnectGap string `json:"reconnect_gap"`
	// Loop is what the servers saw of the crawler's loop (check-any only: the timing web's crawls).
	Loop loopStats `json:"loop"`
	Err  string    `json:"err,omitempty"`
}

func serve(spec string) int {
	out := json.NewEncoder(os.Stdout)
	cfg, err := specConfig(spec)
	if err != nil {
		_ = out.Encode(served{Err: err.Error()})
		return 1
	}
	site, err := web.New(cfg)
	if err != nil {
		_ = out.Encode(served{Err: err.Error()})
		return 1
	}
	defer site.Stop()
	if p := os.Getenv(webProfileEnv); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
		}
	}
	if err := out.Encode(served{Seeds: site.Seeds()}); err != nil {
		return 1
	}
	ready := cputime.Process()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		serving := cputime.Process() - ready
		var c web.CrawlCheck
		switch in.Text() {
		case "check":
			c, err = site.CheckCrawl(site.Seeds()...)
		case "check-any": // a crawl that follows links to every host (the timing web's late hosts)
			c, err = site.CheckCrawlWith(web.ReachOptions{}, site.Seeds()...)
		default:
			continue
		}
		res := checked{Reachable: c.Reachable, Missing: len(c.Missing), Twice: len(c.Twice),
			Unserved: len(c.Unserved), RobotsViolations: len(c.RobotsViolations),
			Requests: len(site.Requests()), CPU: cputime.Process().String()}
		res.ServeCPU = serving.String()
		for _, h := range slices.Concat(site.Hosts(), site.Special()) {
			res.Accepted += h.Accepted()
		}
		if in.Text() == "check-any" {
			reqs := site.Requests()
			res.Loop = measureLoop(reqs)
			res.Reconnects, res.ReconnectGap = reconnects(reqs)
			for _, r := range reqs {
				if strings.HasSuffix(r.Target, "/big.html") {
					res.LargeBytes += r.Bytes
				}
				if r.Encoding != "" {
					res.Encoded++
				}
				if r.Proto != "HTTP/1.1" {
					res.NotHTTP11++
				}
			}
		}
		if err != nil {
			res.Err = err.Error()
		}
		_ = out.Encode(res)
	}
	return 0
}

// reconnects counts the requests on a new connection of their host that come neither first nor after a large
// page, and the longest idle time before one of them. reqs are in start order.
func reconnects(reqs []web.Request) (int, string) {
	type last struct {
		conn  uint64
		large bool
		end   time.Time
	}
	prev := map[string]last{}
	n, gap := 0, time.Duration(0)
	for _, r := range reqs {
		p, ok := prev[r.Host]
		if ok && r.Conn != p.conn && !p.large {
			n++
			if !p.end.IsZero() {
				gap = max(gap, r.Start.Sub(p.end))
			}
		}
		prev[r.Host] = last{conn: r.Conn, large: strings.HasSuffix(r.Target, "/big.html"), end: r.End}
	}
	return n, gap.Round(time.Millisecond).String()
}

// parseSize reads "HOSTSxPAGES".
func parseSize(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "x")
	h, err1 := strconv.Atoi(a)
	p, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || h <= 0 || p <= 0 {
		return 0, 0, fmt.Errorf("size %q: want HOSTSxPAGES, e.g. 200x300", s)
	}
	return h, p, nil
}

// childWeb is the loopback web served by a child process.
type childWeb struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *json.Decoder
	Seeds []string
}

func startWeb(t *testing.T, hosts, pages int) *childWeb {
	t.Helper()
	return startWebSpec(t, strconv.Itoa(hosts)+"x"+strconv.Itoa(pages))
}

// specConfig is the web a child serves: "HOSTSxPAGES" (webConfig) or a JSON webSpec.
func specConfig(spec string) (web.Config, error) {
	if strings.HasPrefix(spec, "{") {
		var ws webSpec
		if err := json.Unmarshal([]byte(spec), &ws); err != nil {
			return web.Config{}, fmt.Errorf("web spec %q: %w", spec, err)
		}
		return ws.config(), nil
	}
	hosts, pages, err := parseSize(spec)
	if err != nil {
		return web.Config{}, err
	}
	return webConfig(hosts, pages), nil
}

// startWebSpec starts a child serving the web spec describes (see specConfig).
func startWebSpec(t *testing.T, spec string) *childWeb {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+spec)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &childWeb{cmd: cmd, in: in, out: json.NewDecoder(outp)}
	t.Cleanup(w.stop)
	var s served
	if err := w.out.Decode(&s); err != nil {
		t.Fatalf("loopback web: %v", err)
	}
	if s.Err != "" {
		t.Fatalf("loopback web: %s", s.Err)
	}
	w.Seeds = s.Seeds
	return w
}

// check asks the web what its servers saw.
func (w *childWeb) check(t *testing.T) checked {
	t.Helper()
	return w.checkWith(t, "check")
}

// checkWith sends the check command cmd ("check" or "check-any").
func (w *childWeb) checkWith(t *testing.T, cmd string) checked {
	t.Helper()
	if _, err := io.WriteString(w.in, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
	var c checked
	if err := w.out.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Err != "" {
		t.Fatal(c.Err)
	}
	return c
}

func (w *childWeb) stop() {
	if w.in != nil {
		_ = w.in.Close()
		w.in = nil
		done := make(chan struct{})
		go func() { _ = w.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = w.cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
	}
}

func writeSeeds(t *testing.T, seeds []string) string {
	t.Helper()
	p := t.TempDir() + "/seeds.txt"
	if err := os.WriteFile(p, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
