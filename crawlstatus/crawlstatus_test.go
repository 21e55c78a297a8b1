package crawlstatus

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     Status
		state string
		why   string // a substring of some reason
	}{
		{name: "empty", s: Status{}, state: Finished},
		{name: "fetching", s: Status{PagesPerSecond: 2, Totals: Totals{Queued: 5}, Queue: []Depth{{0, 5}}}, state: Crawling},
		{name: "log behind", s: Status{Lags: []Lag{{"spider-log", "sw-spider-log", 1, 7}}}, state: Idle,
			why: "no sw-spider-log consumer is reading spider-log partition 1"},
		{name: "no spider", s: Status{Totals: Totals{InFlight: 3}, Lags: []Lag{{"spider-feed", "fetchers-spider-feed", 2, 3}}},
			state: Idle, why: "no spider is consuming spider-feed partition 2"},
		{name: "paused", s: Status{Control: Control{Paused: true}, Totals: Totals{Queued: 1}, Queue: []Depth{{0, 1}}},
			state: Idle, why: "paused"},
		{name: "blocked", s: Status{Control: Control{Blocked: []string{"example.com"}}, Totals: Totals{Queued: 1},
			Queue: []Depth{{0, 1}}, TopQueued: []HostCount{{"www.example.com", 1}}}, state: Idle, why: "every queued host is blocked"},
		{name: "not due", s: Status{Totals: Totals{Queued: 1}, Queue: []Depth{{1, 1}}}, state: Idle, why: "politeness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Judge()
			if tc.s.Verdict.State != tc.state {
				t.Fatalf("state %q, want %q (%v)", tc.s.Verdict.State, tc.state, tc.s.Verdict.Reasons)
			}
			if tc.why != "" && !strings.Contains(strings.Join(tc.s.Verdict.Reasons, "\n"), tc.why) {
				t.Fatalf("reasons %q, want one containing %q", tc.s.Verdict.Reasons, tc.why)
			}
			var buf bytes.Buffer
			tc.s.Write(&buf)
			if !strings.Contains(buf.String(), "verdict: "+tc.state) {
				t.Fatalf("printed:\n%s", buf.String())
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	for state, want := range map[string]int{Finished: 0, Crawling: 3, Idle: 4} {
		if got := (Verdict{State: state}).ExitCode(); got != want {
			t.Errorf("%s: exit %d, want %d", state, got, want)
		}
	}
}

func TestRate(t *testing.T) {
	var r Rate
	t0 := time.Unix(1000, 0)
	for i := range 120 {
		r.Observe(t0.Add(time.Duration(i)*time.Second), int64(i)*2) // 2 pages a second
	}
	if got := r.PerSecond(); got != 2 {
		t.Fatalf("rate %v, want 2", got)
	}
	if n := len(r.samples); n > 62 {
		t.Fatalf("%d samples kept for a one-minute window", n)
	}
	for i := 120; i < 200; i++ {
		r.Observe(t0.Add(time.Duration(i)*time.Second), 238) // stopped
	}
	if got := r.PerSecond(); got != 0 {
		t.Fatalf("rate %v after a quiet minute, want 0", got)
	}
}

func TestBlockedAndTop(t *testing.T) {
	if !Blocked("a.example.com", []string{"example.com"}) || Blocked("badexample.com", []string{"example.com"}) {
		t.Fatal("Blocked matches by domain suffix at a dot")
	}
	top := Top(map[string]int64{"a": 1, "b": 3, "c": 3, "d": 0}, 2)
	if len(top) != 2 || top[0].Host != "b" || top[1].Host != "c" {
		t.Fatalf("top %v", top)
	}
}
