package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func timingConfig() Config {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Plain, cfg.UseIPs = 10, 12, true, true
	cfg.LargeBytes = 1 << 20
	cfg.Hostile.Redirects = 0.2
	cfg.Timing = Timing{LatencyMin: time.Millisecond, LatencyMax: 20 * time.Millisecond, LargePage: true,
		FailOnce: 0.3, SlowPages: 0.1, Robots: true, Broken: true, Late: 0.3}
	return cfg
}

func TestTimingValidate(t *testing.T) {
	for _, tm := range []Timing{{LatencyMin: -1}, {LatencyMin: 2, LatencyMax: 1}, {LatencyMax: time.Second},
		{FailOnce: -0.1}, {SlowPages: 2}, {Late: 1.5}} {
		cfg := DefaultConfig()
		cfg.Timing = tm
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: valid, want an error", tm)
		}
	}
}

func TestTimingLatency(t *testing.T) {
	tests := []struct {
		name     string
		min, max time.Duration
	}{
		{"off", 0, 0},
		{"fixed", 50 * time.Millisecond, 50 * time.Millisecond},
		{"spread", time.Millisecond, 500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := Timing{LatencyMin: tc.min, LatencyMax: tc.max}
			fast, slow := 0, 0
			for i := range 1000 {
				d := tm.hostLatency(1, i)
				if d < tc.min || d > tc.max {
					t.Fatalf("host %d: latency %v outside %v..%v", i, d, tc.min, tc.max)
				}
				if tc.max > tc.min {
					if d < tc.min+(tc.max-tc.min)/10 {
						fast++
					}
					if d > tc.max/2 {
						slow++
					}
				}
			}
			if tc.max > tc.min && (fast < 500 || slow == 0 || slow > 100) {
				t.Errorf("%d fast hosts, %d slow: want most fast and a few slow", fast, slow)
			}
		})
	}
}

// TestTimingShape: the late hosts are not seeded and are linked only from the last page of other hosts, yet
// reachable; every host has its large page, robots rules and broken link.
func TestTimingShape(t *testing.T) {
	cfg := timingConfig()
	s := Start(t, cfg)
	late := 0
	for _, h := range s.Hosts() {
		if h.Late() {
			late++
			for _, seed := range s.Seeds() {
				if seed == h.Origin+"/" {
					t.Errorf("late host %s is seeded", h.Name)
				}
			}
		}
		if h.Latency() < cfg.Timing.LatencyMin || h.Latency() > cfg.Timing.LatencyMax {
			t.Errorf("%s: latency %v", h.Name, h.Latency())
		}
		if h.Robots != RobotsStandard {
			t.Errorf("%s: robots %v, want standard", h.Name, h.Robots)
		}
	}
	if late != 3 || s.Hosts()[0].Late() {
		t.Errorf("%d late hosts (host1 late: %v), want 3 and never host1", late, s.Hosts()[0].Late())
	}
	deepKey := regularPath(cfg.PagesPerHost - 1)
	for _, p := range s.Pages() {
		for _, l := range p.Links {
			target := s.Page(l)
			if target == nil || !target.host.late || p.host.late {
				continue // a late host's own pages may link any page
			}
			if p.key != deepKey {
				t.Errorf("%s links late host page %s", p.URL, l)
			}
		}
	}
	reach, err := s.Reachable(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range s.Hosts() {
		for path, want := range map[string]Outcome{"/": OK, "/big.html": Large, "/gone.html": HTTPError,
			"/private/secret.html": RobotsDisallowed, "/private/open.html": OK} {
			if got := reach[h.Origin+path]; got != want {
				t.Errorf("%s%s: %q, want %q", h.Origin, path, got, want)
			}
		}
	}
}

// TestTimingFailOnce: a fail-once page answers 500, then 200.
func TestTimingFailOnce(t *testing.T) {
	s := Start(t, timingConfig())
	c := &http.Client{}
	var failing *Page
	for _, p := range s.Pages() {
		if p.failN == 1 && p.failStatus == 500 {
			failing = p
			break
		}
	}
	if failing == nil {
		t.Fatal("no fail-once page")
	}
	for _, want := range []int{500, 200, 200} {
		resp, err := c.Get(failing.URL)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", failing.URL, resp.StatusCode, want)
		}
	}
	c.CloseIdleConnections()
}

// TestTimingDefaultUnchanged: without Timing the plain site has no extra pages and no latency.
func TestTimingDefaultUnchanged(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Plain = 4, 5, true
	s := Start(t, cfg)
	if n := len(s.Pages()); n != 20 {
		t.Errorf("%d pages, want 20", n)
	}
	for _, h := range s.Hosts() {
		if h.Latency() != 0 || h.Late() || h.Robots != RobotsMissing {
			t.Errorf("%s: latency %v, late %v, robots %v", h.Name, h.Latency(), h.Late(), h.Robots)
		}
	}
	if len(s.Seeds()) != 4 || strings.Contains(strings.Join(s.Seeds(), " "), "big") {
		t.Errorf("seeds %v", s.Seeds())
	}
}
