package dbworker

import (
	"fmt"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/partition"
)

// TestDepth is the sizing rule: Little's law over one round, with headroom, within bounds.
func TestDepth(t *testing.T) {
	const round = 200 * time.Millisecond
	tests := []struct {
		name     string
		interval time.Duration
		want     int
	}{
		{"1 ms host without delay: hundreds", time.Millisecond, 301},
		{"100 µs: capped", 100 * time.Microsecond, 512},
		{"50 ms latency without delay", 50 * time.Millisecond, 7},
		{"500 ms latency", 500 * time.Millisecond, 2},
		{"1 s delay: two", time.Second, 2},
		// The interval is the service time plus the delay in effect (the delay counts from the answer).
		{"50 ms answers at the 1 s delay", 50*time.Millisecond + time.Second, 2},
		{"1 ms answers at a 100 ms delay", time.Millisecond + 100*time.Millisecond, 4},
		{"20 ms answers without delay", 20 * time.Millisecond, 16},
		{"a 10 s Crawl-delay: the minimum", 10 * time.Second, 2},
		{"not measured (0): the maximum", 0, 512},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := depth(tc.interval, round, 1.5, 2, 512); got != tc.want {
				t.Errorf("depth(%v, %v) = %d, want %d", tc.interval, round, got, tc.want)
			}
		})
	}
	if got := depth(time.Second, 2*time.Second, 1.5, 2, 512); got != 4 {
		t.Errorf("1 s host, 2 s round: %d, want 4 (ceil(3)+1)", got)
	}
}

// TestFlowAccounting: the caps follow what is outstanding and the measured interval; the time a host waited
// with nothing outstanding is not measured; outcomes of requests not sent here are ignored; expiry frees a host.
func TestFlowAccounting(t *testing.T) {
	f := newFlow(DefaultFlowConfig(), 4)
	t0 := time.Unix(1000, 0)
	caps := func(at time.Time, host string) int { return f.caps(at)(host) }
	type step struct {
		name     string
		at       time.Duration // since t0
		sent     int           // requests of host a sent at this step
		done     int           // outcomes of host a read at this step, 1 ms apart after at
		wantCap  int
		wantOuts int
	}
	steps := []step{
		{name: "unknown host: PerHost", wantCap: 4},
		{name: "four sent: no room", sent: 4, wantCap: 0, wantOuts: 4},
		{name: "first outcome after a wait: not measured", at: time.Second, done: 1, wantCap: 1, wantOuts: 3},
		// Three more outcomes 1 ms apart while busy: interval 1 ms, depth 301.
		{name: "busy outcomes 1 ms apart: hundreds", at: time.Second + time.Millisecond, done: 3, wantCap: 301, wantOuts: 0},
		{name: "sent 301: none left", at: 2 * time.Second, sent: 301, wantCap: 0, wantOuts: 301},
		{name: "after expiry: room again", at: 2*time.Second + DefaultFlowConfig().Expire + time.Second, wantCap: 301},
	}
	out := 0
	for _, s := range steps {
		now := t0.Add(s.at)
		if s.sent > 0 {
			f.sent(now, map[string]int{"a": s.sent})
			out += s.sent
		}
		for i := range s.done {
			f.done(now.Add(time.Duration(i+1)*time.Millisecond), "a")
		}
		if got := caps(now.Add(10*time.Millisecond), "a"); got != s.wantCap {
			t.Fatalf("%s: cap %d, want %d", s.name, got, s.wantCap)
		}
		if s.wantOuts > 0 {
			if got := f.hosts["a"].outstanding; got != s.wantOuts {
				t.Fatalf("%s: outstanding %d, want %d", s.name, got, s.wantOuts)
			}
		}
	}
	f.done(t0, "b") // never sent here
	if _, ok := f.hosts["b"]; ok {
		t.Error("an outcome of a host never sent created it")
	}
	if d := f.depthOf("b"); d != 4 {
		t.Errorf("depth of an unknown host %d, want PerHost 4", d)
	}
}

// TestFlowSlowHost: a host whose outcomes come a second apart keeps two requests at the spider, however many
// rounds pass.
func TestFlowSlowHost(t *testing.T) {
	f := newFlow(DefaultFlowConfig(), 4)
	now := time.Unix(1000, 0)
	f.sent(now, map[string]int{"slow": 4})
	for range 8 {
		now = now.Add(time.Second)
		f.done(now, "slow")
		if c := f.caps(now)("slow"); c > 0 {
			f.sent(now, map[string]int{"slow": c})
		}
	}
	if d, o := f.depthOf("slow"), f.hosts["slow"].outstanding; d != 2 || o != 2 {
		t.Errorf("depth %d, outstanding %d; want 2 and 2", d, o)
	}
}

func TestFlowConfigValidate(t *testing.T) {
	for _, mod := range []func(*FlowConfig){
		func(c *FlowConfig) { c.Round = 0 },
		func(c *FlowConfig) { c.Headroom = 0.5 },
		func(c *FlowConfig) { c.MinDepth = 0 },
		func(c *FlowConfig) { c.MaxDepth = 1 },
	} {
		cfg := DefaultConfig()
		mod(&cfg.Flow)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: valid", cfg.Flow)
		}
		cfg.Flow.Enabled = false
		if err := cfg.Validate(); err != nil {
			t.Errorf("disabled %+v: %v", cfg.Flow, err)
		}
	}
}

// TestFlowWorker: with every role in one process, a host gets PerHost requests, then nothing more until the
// spider log shows their outcomes, whatever the feed's lag; then it gets more.
func TestFlowWorker(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PerHost, cfg.MinHosts = 3, 0
	r := start(t, cfg)
	host := "h.test"
	p := partition.Crc32Name([]byte(host), 2)
	var msgs []frontier.Message
	for i := range 20 {
		msgs = append(msgs, &frontier.UpdateScore{Request: req(fmt.Sprintf("http://h.test/%d", i), host), Score: 0.5, Schedule: true})
	}
	r.send(t, bus.ScoringLog, msgs...)
	got := r.feed(t, p, 3)
	waitFor(t, "the flow to run", r.w.flowActive)
	waitFor(t, "17 to stay queued", func() bool { n, _ := r.queue.Count(t.Context(), p); return n == 17 })
	time.Sleep(3 * cfg.PollInterval)
	if n, _ := r.queue.Count(t.Context(), p); n != 17 {
		t.Fatalf("%d queued after the first batch, want 17: the host's 3 are outstanding", n)
	}
	var outcomes []frontier.Message
	for _, rq := range got {
		outcomes = append(outcomes, &frontier.PageCrawled{Response: &frontier.Response{URL: rq.URL, Status: 200, Request: rq}})
	}
	r.send(t, bus.SpiderLog, outcomes...)
	waitFor(t, "more for the host once its outcomes are read", func() bool { n, _ := r.queue.Count(t.Context(), p); return n < 17 })
}

// TestFlowDue: while the flow runs, a partition is scanned again at once after a full batch, otherwise at most
// once every half round and only when something was read or scheduled, or a second passed.
func TestFlowDue(t *testing.T) {
	w := &Worker{cfg: DefaultConfig(), flow: newFlow(DefaultFlowConfig(), 4)}
	w.flowOn.Store(true)
	t0 := time.Unix(1000, 0)
	poll := w.cfg.Flow.Round // the scans' spacing: half of it
	// The spider holds far more than flowStarved: the half-round spacing rules (TestFlowDueStarved: the other case).
	w.flow.sentTo(t0, 0, map[string]int{"busy.test": 10 * flowStarved(w.cfg.FeedBatch)})
	steps := []struct {
		name  string
		at    time.Duration
		touch bool
		scan  bool // run the scan if due
		full  bool // the scan came back full
		want  bool
	}{
		{name: "first scan", want: true, scan: true},
		{name: "nothing happened", at: poll, want: false},
		{name: "scheduled, but within half a round", at: poll / 4, touch: true, want: false},
		{name: "scheduled, a round later", at: poll, want: true, scan: true, full: true},
		{name: "the batch was full: at once", at: poll + time.Millisecond, want: true, scan: true},
		{name: "quiet", at: 3 * poll, want: false},
		{name: "a second without events", at: poll + time.Millisecond + flowRescan, want: true},
	}
	for _, s := range steps {
		if s.touch {
			w.flowTouch()
		}
		now := t0.Add(s.at)
		if got := w.flowDue(0, now); got != s.want {
			t.Fatalf("%s: due %v, want %v", s.name, got, s.want)
		}
		if s.scan {
			w.flowNexted(0, now, s.full)
		}
	}
	w.flowOn.Store(false)
	if !w.flowDue(0, t0.Add(poll+2*time.Millisecond)) {
		t.Error("without the flow running every poll scans")
	}
}

// TestFlowDueStarved: a partition whose spider holds fewer than flowStarved requests is scanned on an event
// (an outcome read, an item scheduled) without waiting half a round, flowStarvedGap apart, and not without one.
func TestFlowDueStarved(t *testing.T) {
	w := &Worker{cfg: DefaultConfig(), flow: newFlow(DefaultFlowConfig(), 4)}
	w.flowOn.Store(true)
	t0 := time.Unix(1000, 0)
	low := flowStarved(w.cfg.FeedBatch) - 1
	w.flow.sentTo(t0, 0, map[string]int{"a.test": low})
	if !w.flowDue(0, t0) {
		t.Fatal("first scan: not due")
	}
	w.flowNexted(0, t0, false)
	at := t0.Add(flowStarvedGap)
	if w.flowDue(0, at) {
		t.Fatal("starved, nothing read or scheduled: due")
	}
	w.flowTouch()
	if w.flowDue(0, t0.Add(flowStarvedGap/2)) {
		t.Fatal("starved, scheduled, within flowStarvedGap: due")
	}
	if !w.flowDue(0, at) {
		t.Fatal("starved, scheduled: not due before half a round")
	}
	w.flowNexted(0, at, false)
	w.flow.sentTo(at, 0, map[string]int{"b.test": 1}) // now at flowStarved: not starved
	w.flowTouch()
	if w.flowDue(0, at.Add(flowStarvedGap)) {
		t.Error("at flowStarved outstanding, scheduled, within half a round: due")
	}
}

// TestFlowSlowStart: a host whose outcomes the links role reads all at once (no gap timed, so no interval) gets
// twice its depth each time it answered everything it was sent, up to MaxDepth; a host whose outcomes come
// apart is sized by its interval, not the doubling.
func TestFlowSlowStart(t *testing.T) {
	cfg := DefaultFlowConfig()
	f := newFlow(cfg, 4)
	now := time.Unix(1000, 0)
	want := 4
	for round := range 10 {
		c := f.caps(now)("fast")
		if c != want {
			t.Fatalf("round %d: cap %d, want %d", round, c, want)
		}
		f.sent(now, map[string]int{"fast": c})
		now = now.Add(50 * time.Millisecond)
		for range c { // read together: one time for all
			f.done(now, "fast")
		}
		want = min(2*want, cfg.MaxDepth)
	}
	if d := f.depthOf("fast"); d != cfg.MaxDepth {
		t.Errorf("depth after ten rounds %d, want MaxDepth %d", d, cfg.MaxDepth)
	}
	// One outcome of a round read apart from the others: the interval rules (the sizing rule, not the doubling).
	f.sent(now, map[string]int{"slow": 4})
	for i := range 4 {
		f.done(now.Add(time.Duration(i+1)*time.Second), "slow")
	}
	if d := f.depthOf("slow"); d != 2 {
		t.Errorf("a host answering once a second: depth %d, want 2", d)
	}
	// A host that answered only part of what it was sent keeps its depth.
	f.sent(now, map[string]int{"part": 4})
	f.done(now.Add(time.Millisecond), "part")
	f.done(now.Add(time.Millisecond), "part")
	if d := f.depthOf("part"); d != 4 {
		t.Errorf("half answered: depth %d, want PerHost 4", d)
	}
}

// TestFlowReady: while the flow runs, a partition gets a batch while what it was sent and has not answered is
// below flowMaxOutstanding, however far its committed offset lags (a slow request holds the spider's commit,
// not its work); a lag past flowMaxLag stops it (a spider gone after its hosts' outstanding expired).
func TestFlowReady(t *testing.T) {
	cfg := DefaultConfig()
	w := &Worker{cfg: cfg, flow: newFlow(cfg.Flow, 4)}
	w.flowOn.Store(true)
	now := time.Unix(1000, 0)
	maxOut := flowMaxOutstanding(cfg.FeedBatch)
	steps := []struct {
		name    string
		sent    map[string]int // sent to partition 0 at this step
		done    map[string]int // outcomes read
		expire  bool           // the hosts' outstanding expires (no outcome for FlowConfig.Expire)
		lag     int64
		want    bool
		wantOut int
	}{
		{name: "nothing sent", want: true},
		{name: "a batch out", sent: map[string]int{"a": maxOut / 2, "b": maxOut/2 - 1}, lag: int64(maxOut), want: true, wantOut: maxOut - 1},
		{name: "one more: the partition is full", sent: map[string]int{"c": 1}, lag: int64(maxOut), want: false, wantOut: maxOut},
		{name: "outcomes read, the commit held far behind", done: map[string]int{"a": 100}, lag: flowMaxLag(cfg.FeedBatch) - 1, want: true, wantOut: maxOut - 100},
		{name: "lag past the guard", lag: flowMaxLag(cfg.FeedBatch), want: false, wantOut: maxOut - 100},
		{name: "outstanding expired (spider gone): room again below the guard", expire: true, lag: 10, want: true, wantOut: 0},
	}
	for _, s := range steps {
		if s.sent != nil {
			w.flow.sentTo(now, 0, s.sent)
		}
		for host, n := range s.done {
			for range n {
				now = now.Add(time.Millisecond)
				w.flow.done(now, host)
			}
		}
		if s.expire {
			now = now.Add(cfg.Flow.Expire + time.Second)
			caps := w.flow.caps(now)
			for _, h := range []string{"a", "b", "c"} {
				caps(h)
			}
		}
		if got := w.flowReady(0, s.lag); got != s.want {
			t.Errorf("%s: ready %v, want %v", s.name, got, s.want)
		}
		if got := w.flow.outstandingIn(0); got != s.wantOut {
			t.Errorf("%s: outstanding %d, want %d", s.name, got, s.wantOut)
		}
		if !w.flowReady(1, 0) {
			t.Errorf("%s: partition 1 (nothing sent) not ready", s.name)
		}
	}
}

// simHost plays one host without delay that answers in service, behind a loop that takes latency from a send
// to the spider's queue and latency again from a fetch's end to the links role's read of its outcome; the
// batch generator scans every scan. It returns the host's depth and its outcomes read in the last half of d.
func simHost(f *flow, service, latency, scan, d time.Duration) (int, int) {
	t0 := time.Unix(1000, 0)
	var free time.Time    // when the spider's runner for the host is free
	var reads []time.Time // outcome reads scheduled, in order (FIFO at one connection: ends are ordered)
	n := 0
	for now := t0; now.Before(t0.Add(d)); now = now.Add(scan) {
		for len(reads) > 0 && !reads[0].After(now) {
			f.done(reads[0], "h")
			if reads[0].After(t0.Add(d / 2)) {
				n++
			}
			reads = reads[1:]
		}
		if c := f.caps(now)("h"); c > 0 {
			f.sent(now, map[string]int{"h": c})
			for range c {
				start := now.Add(latency)
				if free.After(start) {
					start = free
				}
				free = start.Add(service)
				reads = append(reads, free.Add(latency))
			}
		}
	}
	return f.depthOf("h"), n
}

// TestFlowLoopSlowerThanRound: when the loop takes longer than Headroom × Round to bring a host's outcomes
// back, the depth follows the measured round and the host is kept busy, not held at the few requests whose
// outcomes come at the loop's pace.
func TestFlowLoopSlowerThanRound(t *testing.T) {
	const (
		service = 2 * time.Millisecond
		scan    = 100 * time.Millisecond
		d       = 20 * time.Second
	)
	tests := []struct {
		name    string
		latency time.Duration // each way
		minRate float64       // outcomes per second over the last half, at least
	}{
		{"the loop within the round", 50 * time.Millisecond, 0.5 / service.Seconds()},
		{"a loop of 600 ms", 300 * time.Millisecond, 0.5 / service.Seconds()},
		{"a loop of 1.6 s", 800 * time.Millisecond, 0.25 / service.Seconds()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFlow(DefaultFlowConfig(), 4)
			dep, n := simHost(f, service, tc.latency, scan, d)
			rate := float64(n) / (d / 2).Seconds()
			if rate < tc.minRate {
				t.Errorf("%.0f outcomes/s at depth %d, want ≥ %.0f/s (the host answers %.0f/s)",
					rate, dep, tc.minRate, 1/service.Seconds())
			}
		})
	}
}

// BenchmarkFlowOutcome is the flow's cost per fetch outcome the links role reads (flow.done) and per request
// a batch sends (flow.sentTo): 100 hosts sent 64 each, then answered, 8 outcomes to a read.
func BenchmarkFlowOutcome(b *testing.B) {
	f := newFlow(DefaultFlowConfig(), 4)
	hosts := make([]string, 100)
	per := map[string]int{}
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%d.test", i)
		per[hosts[i]] = 64
	}
	now := time.Unix(1000, 0)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		f.sentTo(now, 0, per)
		for k := range 64 {
			if k%8 == 0 {
				now = now.Add(time.Millisecond)
			}
			for _, h := range hosts {
				f.done(now, h)
			}
		}
		n += 64 * len(hosts)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/outcome")
}
