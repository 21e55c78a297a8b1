package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
)

// Procs runs a test's child processes and watches them. Each process writes its stdout and stderr to
// Dir/<name>.log; a process started again under the same name appends to it, and Log reads only the current
// run's part. At the test's end Procs stops whatever still runs (Stop) and, if the test failed, shows the end
// of every log, also when the test had stopped them itself (a test usually stops its processes before it
// checks the crawl, so a failed check would otherwise come without the logs that explain it). Safe for
// concurrent use.
type Procs struct {
	tb  testing.TB
	dir string
	// StrictStop makes Stop fail the test for a process that exits non-zero after SIGTERM or takes more than
	// 30 s to stop.
	StrictStop bool
	mu         struct {
		sync.Mutex
		byName map[string]*Proc
		order  []*Proc // in start order, restarts included
		shown  bool    // the logs' ends were shown
	}
}

// NewProcs returns a supervisor writing logs under dir (a temporary directory when "").
func NewProcs(tb testing.TB, dir string) *Procs {
	tb.Helper()
	if dir == "" {
		dir = tb.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	ps := &Procs{tb: tb, dir: dir}
	ps.mu.byName = map[string]*Proc{}
	tb.Cleanup(func() {
		ps.Stop()
		ps.showLogs()
	})
	return ps
}

// showLogs shows the last 40 lines of the current run of every process, once, if the test failed.
func (ps *Procs) showLogs() {
	if !ps.tb.Failed() {
		return
	}
	ps.mu.Lock()
	if ps.mu.shown {
		ps.mu.Unlock()
		return
	}
	ps.mu.shown = true
	var procs []*Proc
	for _, p := range ps.mu.order {
		if ps.mu.byName[p.Name] == p {
			procs = append(procs, p)
		}
	}
	ps.mu.Unlock()
	for _, p := range procs {
		ps.tb.Logf("---- %s (%s) ----\n%s", p.Name, p.log, p.Tail(40))
	}
}

// Cmd is a process to start.
type Cmd struct {
	Path string
	Args []string
	// Env is added to the test's environment; with CleanEnv, the test's FRONTIER_* variables (but
	// FRONTIER_TEST_*) are left out first, so that the process runs on its own configuration.
	Env      []string
	CleanEnv bool
	// Dir is the working directory ("" is the test's).
	Dir string
	// Ready, if set, is the prefix of the stdout line that Proc.Ready delivers.
	Ready string
}

// Proc is one run of a process.
type Proc struct {
	Name     string
	cmd      *exec.Cmd
	log      string
	logStart int
	exited   chan struct{}
	ready    chan string
	err      error
	killed   atomic.Bool
	stopped  atomic.Bool
	metrics  string // http://host:port of /metrics and /readyz, read from the log
}

// Start starts c under name.
func (ps *Procs) Start(name string, c Cmd) *Proc {
	ps.tb.Helper()
	logPath := filepath.Join(ps.dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		ps.tb.Fatal(err)
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	env := os.Environ()
	if c.CleanEnv {
		env = env[:0:0]
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "FRONTIER_") || strings.HasPrefix(kv, "FRONTIER_TEST_") {
				env = append(env, kv)
			}
		}
	}
	cmd.Env = append(env, c.Env...)
	p := &Proc{Name: name, cmd: cmd, log: logPath, logStart: len(readFile(logPath)), exited: make(chan struct{}),
		ready: make(chan string, 1)}
	cmd.Stderr = f
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		ps.tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		ps.tb.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(f, line)
			if c.Ready != "" && strings.HasPrefix(line, c.Ready) {
				select {
				case p.ready <- line:
				default:
				}
			}
		}
		_, _ = io.Copy(f, stdout) // a line longer than the scanner's buffer
		p.err = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	ps.mu.Lock()
	ps.mu.byName[name] = p
	ps.mu.order = append(ps.mu.order, p)
	ps.mu.Unlock()
	return p
}

// Get returns the current run of the process name (nil if none was started).
func (ps *Procs) Get(name string) *Proc {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.mu.byName[name]
}

// running returns the current runs that have not exited, in start order.
func (ps *Procs) running() []*Proc {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []*Proc
	for _, p := range ps.mu.order {
		if ps.mu.byName[p.Name] == p && !p.Exited() {
			out = append(out, p)
		}
	}
	return out
}

// Unexpected returns the processes that exited without being killed or stopped by the test.
func (ps *Procs) Unexpected() []*Proc {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []*Proc
	for _, p := range ps.mu.order {
		if p.Exited() && !p.killed.Load() && !p.stopped.Load() {
			out = append(out, p)
		}
	}
	return out
}

// CheckAlive fails the test for every process that exited without being killed or stopped, with its log's end.
func (ps *Procs) CheckAlive() {
	ps.tb.Helper()
	for _, p := range ps.Unexpected() {
		ps.tb.Errorf("%s exited (%v); its log ends:\n%s", p.Name, p.err, p.Tail(30))
	}
}

// Summary says, for each current process, whether it runs or how it exited.
func (ps *Procs) Summary() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var s []string
	for _, p := range ps.mu.order {
		if ps.mu.byName[p.Name] != p {
			continue
		}
		if p.Exited() {
			s = append(s, fmt.Sprintf("%s exited: %v", p.Name, p.err))
		} else {
			s = append(s, p.Name+" running")
		}
	}
	return strings.Join(s, "; ")
}

// AllReady reports whether every running process answers /readyz with 200.
func (ps *Procs) AllReady() bool {
	for _, p := range ps.running() {
		if code, _ := p.Readyz(); code != http.StatusOK {
			return false
		}
	}
	return true
}

// Stop sends SIGTERM to every running process, the last started first (spiders, started last, flush the
// spider log while the workers still consume it), and waits up to 30 s for each before it kills it. If the
// test failed it shows the end of every log. It runs at the test's end; calling it again does nothing more.
func (ps *Procs) Stop() {
	ps.mu.Lock()
	var procs []*Proc // the current run of each name
	for _, p := range ps.mu.order {
		if ps.mu.byName[p.Name] == p && !p.stopped.Load() {
			procs = append(procs, p)
		}
	}
	ps.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		killed := p.killed.Load()
		if !p.Exited() {
			p.stopped.Store(true)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
				if ps.StrictStop {
					ps.tb.Errorf("%s did not stop within 30s of SIGTERM", p.Name)
				}
			}
		}
		p.stopped.Store(true)
		var ee *exec.ExitError
		if ps.StrictStop && !killed && p.err != nil && !(errors.As(p.err, &ee) && ee.Exited() && ee.ExitCode() == 0) {
			ps.tb.Errorf("%s: %v", p.Name, p.err)
		}
	}
	if len(procs) > 0 {
		ps.showLogs()
	}
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Done is closed when the process has exited; Err is then its exit error.
func (p *Proc) Done() <-chan struct{} { return p.exited }

// Err is how the process exited (nil: status 0); valid once Done is closed.
func (p *Proc) Err() error { return p.err }

// Ready delivers the first stdout line that starts with Cmd.Ready.
func (p *Proc) Ready() <-chan string { return p.ready }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits for the process to exit.
func (p *Proc) Kill() {
	p.killed.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Log returns this run's part of the process's log (stdout and stderr) so far.
func (p *Proc) Log() string {
	s := readFile(p.log)
	if len(s) < p.logStart {
		return ""
	}
	return s[p.logStart:]
}

// LogPath is the file that holds the log of every run of the process.
func (p *Proc) LogPath() string { return p.log }

// Tail returns the last n lines of the log.
func (p *Proc) Tail(n int) string { return Tail(readFile(p.log), n) }

// LogCount counts this run's log lines that contain s.
func (p *Proc) LogCount(s string) int {
	n := 0
	for _, l := range strings.Split(p.Log(), "\n") {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

var metricsAddrRE = regexp.MustCompile(`msg="serving metrics" .*addr=(http://\S+)/metrics`)

// Readyz returns the status and body of the process's /readyz (0 if it does not answer), at the address its
// log names ("serving metrics": internal/cli).
func (p *Proc) Readyz() (int, string) {
	if p.metrics == "" {
		m := metricsAddrRE.FindStringSubmatch(p.Log())
		if m == nil {
			return 0, ""
		}
		p.metrics = m[1]
	}
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(p.metrics + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Build builds the module's packages (e.g. "./cmd/spider") into a temporary directory, as an operator would,
// and returns the directory.
func Build(tb testing.TB, ctx context.Context, pkgs ...string) string {
	tb.Helper()
	bin := tb.TempDir()
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", bin + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = frontiertest.RepoRoot(tb)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return bin
}

// WaitFor polls cond every 200 ms until it holds; it fails the test, naming what, when ctx ends first.
func WaitFor(tb testing.TB, ctx context.Context, what string, cond func() bool) {
	tb.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			tb.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
