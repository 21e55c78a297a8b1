package dbworker

import (
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/queue"
)

// TestFlowIdle: after a scan that went through the whole partition, the next scan is skipped while every host
// that took its whole cap has no room and no row was scheduled for another host; an outcome of such a host,
// rows of another host (or scheduled while a scan runs), a full batch or flowRescan make it due again.
func TestFlowIdle(t *testing.T) {
	items := func(host string, n int) []queue.Item {
		out := make([]queue.Item, n)
		for i := range out {
			out[i] = queue.Item{Partition: 0, Host: host}
		}
		return out
	}
	type step struct {
		name  string
		at    time.Duration // since the scan
		event func(w *Worker, now time.Time)
		want  bool // flowDue after the event
	}
	for _, tc := range []struct {
		name  string
		full  bool // the scan's batch was full
		steps []step
	}{
		{name: "every host at its cap", steps: []step{
			{name: "an outcome of a host at its cap, still at it", at: time.Second / 2,
				event: func(w *Worker, now time.Time) { w.flow.sentTo(now, 0, map[string]int{"a": 1}); w.flow.done(now, "a") }, want: false},
			{name: "a row of a host at its cap", at: time.Second / 2,
				event: func(w *Worker, now time.Time) { w.flowTouch(items("a", 1)...) }, want: false},
			{name: "flowRescan", at: flowRescan, event: func(w *Worker, now time.Time) { w.flowTouch(items("a", 1)...) }, want: true},
		}},
		{name: "room again", steps: []step{
			{name: "an outcome frees the host", at: time.Second / 2,
				event: func(w *Worker, now time.Time) { w.flow.done(now, "a") }, want: true},
		}},
		{name: "rows of another host", steps: []step{
			{name: "scheduled for the host whose rows were all taken", at: time.Second / 2,
				event: func(w *Worker, now time.Time) { w.flowTouch(items("b", 1)...) }, want: true},
		}},
		{name: "scheduled, not known where", steps: []step{
			{name: "flowTouch()", at: time.Second / 2, event: func(w *Worker, now time.Time) { w.flowTouch() }, want: true},
		}},
		{name: "full batch", full: true, steps: []step{
			{name: "scanned again at once", at: time.Millisecond, want: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.full {
				cfg.FeedBatch = 6
			}
			w := &Worker{cfg: cfg, flow: newFlow(cfg.Flow, 4)}
			w.flowOn.Store(true)
			t0 := time.Unix(1000, 0)
			// Keep the partition far from starved, so that the half-round spacing (not flowStarved) applies.
			w.flow.sentTo(t0, 0, map[string]int{"other.test": 10 * flowStarved(cfg.FeedBatch)})
			if !w.flowDue(0, t0) {
				t.Fatal("first scan not due")
			}
			// The scan: a has rows past its cap (4), b has 2 rows, both taken.
			lim := w.limits(0, t0)
			got := append(items("a", lim.HostCap("a")), items("b", min(lim.HostCap("b"), 2))...)
			w.flowScanned(0, t0, got, true)
			w.flowSent(t0, 0, got)
			w.flow.gen.Add(1) // an event since the scan: only idle keeps it from being due
			if w.flowDue(0, t0.Add(time.Second/2)) != tc.full {
				t.Fatalf("every host with rows left at its cap: due %v, want %v (a full batch)", !tc.full, tc.full)
			}
			for _, s := range tc.steps {
				now := t0.Add(s.at)
				if s.event != nil {
					s.event(w, now)
				}
				w.flow.gen.Add(1)
				if got := w.flowDue(0, now); got != s.want {
					t.Fatalf("%s: due %v, want %v", s.name, got, s.want)
				}
			}
		})
	}
	// A row scheduled while a scan runs makes the next scan due, whichever host it is for.
	cfg := DefaultConfig()
	w := &Worker{cfg: cfg, flow: newFlow(cfg.Flow, 4)}
	w.flowOn.Store(true)
	t0 := time.Unix(1000, 0)
	w.flow.sentTo(t0, 0, map[string]int{"other.test": 10 * flowStarved(cfg.FeedBatch)})
	w.flowDue(0, t0)
	lim := w.limits(0, t0)
	got := items("a", lim.HostCap("a"))
	w.flowTouch(items("a", 1)...)
	w.flowScanned(0, t0, got, true)
	w.flowSent(t0, 0, got)
	w.flow.gen.Add(1)
	if !w.flowDue(0, t0.Add(time.Second/2)) {
		t.Error("a row scheduled during the scan: not due")
	}
}

// TestFlowGuessShare: a guessed depth (slow start) is at most the host's share of its partition's outstanding
// budget; a measured one is not bounded by it, and without a budget the guess doubles to MaxDepth.
func TestFlowGuessShare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int
		hosts  int // hosts of the partition doubling together
		want   int // the depth they reach
	}{
		{name: "200 hosts, the default budget", budget: flowMaxOutstanding(DefaultConfig().FeedBatch), hosts: 200, want: 16384 / 200},
		{name: "10 hosts: MaxDepth", budget: flowMaxOutstanding(DefaultConfig().FeedBatch), hosts: 10, want: 512},
		{name: "no budget", hosts: 200, want: 512},
		{name: "a budget below PerHost per host", budget: 100, hosts: 200, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFlow(DefaultFlowConfig(), 4)
			f.budget = tc.budget
			now := time.Unix(1000, 0)
			hosts := make([]string, tc.hosts)
			for i := range hosts {
				hosts[i] = "h" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".test"
			}
			for range 12 { // rounds: every host gets its cap, all outcomes read together
				f.scanBegin(0, now)
				caps, per := f.capsFor(now, 0), map[string]int{}
				for _, h := range hosts {
					per[h] = caps(h)
				}
				f.sentTo(now, 0, per)
				now = now.Add(50 * time.Millisecond)
				for h, n := range per {
					for range n {
						f.done(now, h)
					}
				}
			}
			f.scanBegin(0, now)
			caps := f.capsFor(now, 0)
			if got := caps(hosts[0]); got != tc.want {
				t.Errorf("cap %d, want %d", got, tc.want)
			}
		})
	}
	// A measured host is sized by its interval, whatever the share.
	f := newFlow(DefaultFlowConfig(), 4)
	f.budget = 100
	now := time.Unix(1000, 0)
	f.sentTo(now, 0, map[string]int{"m.test": 4})
	for i := range 4 {
		f.done(now.Add(time.Duration(i+1)*time.Millisecond), "m.test")
	}
	if d := f.depthOf("m.test"); d != 301 {
		t.Errorf("measured at 1 ms: depth %d, want 301", d)
	}
}

// BenchmarkFlowIdle is the cost of the check that skips a scan (flow.idle) per host with rows left, against
// what it saves, a queue scan that seeks past every host's group: 200 hosts, every one at its cap.
func BenchmarkFlowIdle(b *testing.B) {
	cfg := DefaultConfig()
	w := &Worker{cfg: cfg, flow: newFlow(cfg.Flow, 4)}
	w.flowOn.Store(true)
	now := time.Unix(1000, 0)
	var got []queue.Item
	lim := w.limits(0, now)
	for i := range 200 {
		host := "h" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".test"
		for range lim.HostCap(host) {
			got = append(got, queue.Item{Host: host})
		}
	}
	w.flowScanned(0, now, got, true)
	w.flowSent(now, 0, got)
	n := 0
	for b.Loop() {
		if !w.flow.idle(0, now) {
			b.Fatal("not idle")
		}
		n += 200
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/host")
}

// TestFlowDueRow: a partition with a delayed row (a retry after its back-off) is scanned when the row's due
// second comes, without an outcome or a schedule to announce it and before flowRescan; once scanned for, the
// due time is forgotten; past flowMaxDue distinct due times the latest are left to flowRescan.
func TestFlowDueRow(t *testing.T) {
	cfg := DefaultConfig()
	w := &Worker{cfg: cfg, flow: newFlow(cfg.Flow, 4)}
	w.flowOn.Store(true)
	t0 := time.Unix(1000, 100_000_000)
	w.flow.sentTo(t0, 0, map[string]int{"other.test": 10 * flowStarved(cfg.FeedBatch)})
	if !w.flowDue(0, t0) {
		t.Fatal("first scan not due")
	}
	w.flowTouch(queue.Item{Partition: 0, Host: "a", NotBefore: 1001}, queue.Item{Partition: 1, Host: "b", NotBefore: 1001})
	scan := t0.Add(100 * time.Millisecond) // the scan the schedule made due: the row is not due yet
	if !w.flowDue(0, scan) {
		t.Fatal("scan after a schedule not due")
	}
	w.flowScanned(0, scan, nil, true)
	if w.flowDue(0, time.Unix(1000, 900_000_000)) {
		t.Error("due before the row's second")
	}
	at := time.Unix(1001, 10_000_000) // 0.71 s after the scan: before flowRescan, no event since
	if !w.flowDue(0, at) {
		t.Fatal("not due when the row's second came")
	}
	w.flowScanned(0, at, []queue.Item{{Partition: 0, Host: "a"}}, true)
	if w.flowDue(0, at.Add(time.Second/2)) {
		t.Error("due again after the row was scanned for")
	}
	if len(w.flow.due[1]) != 1 {
		t.Errorf("partition 1's due times %v, want its own row's", w.flow.due[1])
	}
	for i := range flowMaxDue + 10 {
		w.flowTouch(queue.Item{Partition: 2, Host: "c", NotBefore: int64(2000 + i)})
	}
	if d := w.flow.due[2]; len(d) != flowMaxDue || d[0] != 2000 || d[len(d)-1] != 2000+flowMaxDue-1 {
		t.Errorf("due times beyond flowMaxDue: %d kept, %v..%v", len(d), d[0], d[len(d)-1])
	}
}
