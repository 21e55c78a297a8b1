// Package control carries run-time commands to a running cluster (frontierctl block, unblock, pause, resume)
// over the control stream, a Kafka topic every DB worker, strategy worker and spider follows.
//
// Commands are facts appended to the topic, and a process's control state is the fold of every command from
// the start of the topic: a process that starts later, or restarts, replays them and ends in the same state as
// the others. So the topic must keep its messages (retention.ms=-1, which frontierctl topics sets; it stays
// tiny; not compacted, since the messages are keyed by op and compaction would keep only the last block). A
// follower never commits offsets: it always reads from the earliest message (a consumer group that never
// committed starts there).
//
// A worker's follower cannot be skipped: it reads to the end offset the stream had when the process started,
// with no deadline, before the worker dispatches, scores or fetches anything, and a stream that cannot be read
// yet is waited out like an outage of Kafka (FollowWait). Otherwise a worker could act against a block or pause
// it has not read.
//
// What the state means to the workers:
//   - paused: the DB worker generates no batch; spiders finish what they hold. Nothing is dropped.
//   - a blocked host or domain (a name blocks itself and every subdomain): the DB worker leaves its queued URLs
//     in the queue instead of dispatching them, and a spider that still holds requests of the host (dispatched
//     before the block) puts them back into the queue through the scoring log instead of fetching them. A
//     strategy worker scores and queues the host's new links and retries as usual (dropping them would lose
//     them), counting them in frontier_strategyworker_blocked_scheduled_total. Unblocking lets the next
//     batches take them.
//   - paused, for a strategy worker: nothing changes. It drains the spider log, so that a paused crawl reaches
//     the point where every lag is 0 (the consistent point a backup waits for, docs/operations.md).
//
// Every applied command is acknowledged in the follower's log ("control command applied", with its id) and
// counted in frontier_control_commands_total{op}; frontier_control_paused and frontier_control_blocked show
// the state. frontierctl status replays the same topic to show it.
//
// control sits at level L2: it uses the bus (L1) and is used by the mains and the workers' wiring.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/internal/outage"
)

// The operations.
const (
	OpBlock   = "block"
	OpUnblock = "unblock"
	OpPause   = "pause"
	OpResume  = "resume"
)

// Command is one control message. On the wire it is JSON: {"op":"block","target":"example.com","id":"…","at":"…"}.
type Command struct {
	Op     string    `json:"op"`
	Target string    `json:"target,omitempty"` // host or domain, for block and unblock
	ID     string    `json:"id,omitempty"`     // chosen by the sender, echoed in the acknowledgements
	At     time.Time `json:"at,omitzero"`
}

// Validate reports what is wrong with c.
func (c Command) Validate() error {
	switch c.Op {
	case OpBlock, OpUnblock:
		t := c.Target
		if t == "" {
			return fmt.Errorf("control: %s needs a host or domain", c.Op)
		}
		if t != strings.ToLower(t) || strings.ContainsAny(t, "/:@ \t") || strings.HasPrefix(t, ".") || strings.HasSuffix(t, ".") {
			return fmt.Errorf("control: %s %q: want a lower-case host name or domain (no scheme, port or path)", c.Op, t)
		}
	case OpPause, OpResume:
		if c.Target != "" {
			return fmt.Errorf("control: %s takes no target (got %q)", c.Op, c.Target)
		}
	default:
		return fmt.Errorf("control: unknown op %q (want block, unblock, pause or resume)", c.Op)
	}
	return nil
}

// Encode returns the wire form of c.
func Encode(c Command) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(c)
}

// Decode parses and validates one control message.
func Decode(b []byte) (Command, error) {
	var c Command
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Command{}, fmt.Errorf("control: message is not a command: %w", err)
	}
	if dec.More() {
		return Command{}, errors.New("control: message holds more than one JSON value")
	}
	return c, c.Validate()
}

// State is the fold of the commands applied so far. Safe for concurrent use; the zero value is ready (not
// paused, nothing blocked).
type State struct {
	mu      sync.RWMutex
	paused  bool
	blocked map[string]bool
}

// Apply folds c into the state.
func (s *State) Apply(c Command) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.Op {
	case OpPause:
		s.paused = true
	case OpResume:
		s.paused = false
	case OpBlock:
		if s.blocked == nil {
			s.blocked = make(map[string]bool)
		}
		s.blocked[c.Target] = true
	case OpUnblock:
		delete(s.blocked, c.Target)
	}
}

// Paused reports whether dispatch is paused.
func (s *State) Paused() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.paused
}

// Blocked reports whether host, or a domain it belongs to, is blocked.
func (s *State) Blocked(host string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.blocked) == 0 {
		return false
	}
	for h := host; h != ""; {
		if s.blocked[h] {
			return true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	return false
}

// BlockedList returns the blocked hosts and domains, sorted.
func (s *State) BlockedList() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.blocked))
	for h := range s.blocked {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// Send publishes commands on the control stream of b, in order.
func Send(ctx context.Context, b bus.Bus, cmds ...Command) error {
	msgs := make([]bus.Message, len(cmds))
	for i, c := range cmds {
		v, err := Encode(c)
		if err != nil {
			return err
		}
		msgs[i] = bus.Message{Key: []byte(c.Op), Value: v, Partition: 0}
	}
	p, err := bus.OpenProducer(ctx, b, bus.Control) // one partition: every command on partition 0
	if err != nil {
		return fmt.Errorf("control: open the control stream: %w", err)
	}
	defer p.Close()
	if err := p.Send(ctx, msgs...); err != nil {
		return fmt.Errorf("control: send: %w", err)
	}
	return nil
}

type metrics struct {
	commands *prometheus.CounterVec
	bad      prometheus.Counter
	paused   prometheus.Gauge
	blocked  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_control_commands_total",
			Help: "Control commands applied (acknowledged), by op."}, []string{"op"}),
		bad: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_control_rejected_total",
			Help: "Control messages that are not valid commands, skipped."}),
		paused: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_control_paused",
			Help: "1 while dispatch is paused by frontierctl pause."}),
		blocked: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_control_blocked",
			Help: "Hosts and domains blocked by frontierctl block."}),
	}
	if reg != nil {
		register(reg, &m.commands)
		register(reg, &m.bad)
		register(reg, &m.paused)
		register(reg, &m.blocked)
	}
	return m
}

// register registers *c, or replaces it with the collector already registered under its name (a follower
// opened again after a failed replay shares its series with the first).
func register[C prometheus.Collector](reg prometheus.Registerer, c *C) {
	if err := reg.Register(*c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			panic(err)
		}
		if existing, ok := are.ExistingCollector.(C); ok {
			*c = existing
		}
	}
}

// Follower keeps a State up to date from the control stream. Build it with Follow; Stop it before closing
// the bus.
type Follower struct {
	State *State
	log   *slog.Logger
	m     *metrics
	in    bus.Consumer
	stop  context.CancelFunc
	done  chan struct{}
}

// Follow opens the control stream of b in group (a name of this process's own: it never commits, so it
// replays the whole stream), applies every command the stream held when Follow started to a new State before
// it returns, and keeps applying new ones in the background until Stop. The replay has no deadline of its own:
// a process that returned from Follow early could dispatch or fetch for a host an earlier command blocked, so
// Follow reads to the end offset however long a slow or restarting broker takes (the consumer waits out
// outages), logging every remind how far it got, until ctx ends. It returns an error when the stream cannot be
// opened (Kafka unreachable past kafka.startup_wait, the topic missing); FollowWait waits that out too.
func Follow(ctx context.Context, b bus.Bus, group string, remind time.Duration, log *slog.Logger, reg prometheus.Registerer) (*Follower, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if remind <= 0 {
		remind = 30 * time.Second
	}
	lags, err := b.Lag(ctx, bus.Control, group)
	if err != nil {
		return nil, fmt.Errorf("control: read the control stream's length: %w", err)
	}
	in, err := b.Consumer(ctx, bus.Control, group, []int{0})
	if err != nil {
		return nil, fmt.Errorf("control: open the control stream: %w", err)
	}
	f := &Follower{State: &State{}, log: log, m: newMetrics(reg), in: in, done: make(chan struct{})}
	if err := f.replay(ctx, lags[0], remind); err != nil {
		in.Close()
		return nil, err
	}
	f.log.Info("control state replayed", "commands", lags[0], "paused", f.State.Paused(), "blocked", len(f.State.BlockedList()))
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	f.stop = stop
	go f.run(rctx)
	return f, nil
}

// replay applies the first n messages of the stream: every message it held when Follow started.
func (f *Follower) replay(ctx context.Context, n int64, remind time.Duration) error {
	start := time.Now()
	for read := int64(0); read < n; {
		fctx, cancel := context.WithTimeout(ctx, remind)
		msgs, err := f.in.Fetch(fctx, int(min(1024, n-read)))
		cancel()
		f.apply(msgs)
		read += int64(len(msgs))
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded):
			// No deadline: a worker that stopped replaying now could act against a command it has not read.
			f.log.Warn("control state replay still waiting for the control stream; nothing is dispatched or fetched until it is read",
				"read", read, "of", n, "waited", time.Since(start).Round(time.Second))
		default:
			return fmt.Errorf("control: replay: %w", err)
		}
	}
	return nil
}

// FollowWait is Follow for a worker: when the control stream cannot be opened or replayed (Kafka down, the
// control topic not created yet), it waits and tries again with backoff, like a wait for any other outage
// (one Warn when the wait starts, a reminder every remind, one Info when it ends), until ctx ends. A worker
// therefore never runs without its control state: it starts once every command so far is applied.
func FollowWait(ctx context.Context, b bus.Bus, group string, remind time.Duration, log *slog.Logger, reg prometheus.Registerer) (*Follower, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if remind <= 0 {
		remind = 30 * time.Second
	}
	tracker := outage.NewTracker("the control stream", log)
	bo := outage.NewBackoff(100*time.Millisecond, 5*time.Second)
	lastWarn := time.Now()
	for {
		f, err := Follow(ctx, b, group, remind, log, reg)
		if err == nil {
			tracker.Succeeded()
			return f, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		d := bo.Next()
		tracker.Failed(err, d)
		if time.Since(lastWarn) >= remind {
			lastWarn = time.Now()
			log.Warn("still waiting for the control stream; this process does not start its work until it has read it "+
				"(create the control topic with frontierctl topics if it is missing)", "err", err, "retry_in", d.Round(time.Millisecond))
		}
		if !outage.Sleep(ctx, d) {
			return nil, ctx.Err()
		}
	}
}

func (f *Follower) run(ctx context.Context) {
	defer close(f.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		msgs, err := f.in.Fetch(ctx, 1024)
		f.apply(msgs)
		if err != nil && ctx.Err() == nil {
			f.log.Warn("control stream fetch; retrying", "err", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
	}
}

func (f *Follower) apply(msgs []bus.Message) {
	for _, m := range msgs {
		c, err := Decode(m.Value)
		if err != nil {
			f.m.bad.Inc()
			f.log.Warn("control message skipped", "offset", m.Offset, "err", err)
			continue
		}
		f.State.Apply(c)
		f.m.commands.WithLabelValues(c.Op).Inc()
		f.log.Info("control command applied", "op", c.Op, "target", c.Target, "id", c.ID, "offset", m.Offset)
	}
	if len(msgs) > 0 {
		f.State.mu.RLock()
		f.m.blocked.Set(float64(len(f.State.blocked)))
		f.m.paused.Set(map[bool]float64{true: 1}[f.State.paused])
		f.State.mu.RUnlock()
	}
}

// Stop stops following and closes the consumer.
func (f *Follower) Stop() {
	f.stop()
	<-f.done
	f.in.Close()
}

// Holder is a spider's spider.Holder: it answers Blocked from State and returns a held request to the queue
// as an update_score (Schedule true, the score it was dispatched with) on the scoring log, which Out writes
// (a scoring-log producer partitioned by hostname, as the strategy workers' is).
type Holder struct {
	*State
	Out   bus.Producer
	Codec interface {
		EncodeMessage(frontier.Message) ([]byte, error)
	}
}

// Return sends r back to the queue.
func (h *Holder) Return(ctx context.Context, r *frontier.Request) error {
	score, err := r.MetaScore()
	if err != nil || score < 0 || score > 1 {
		score = 0.5
	}
	v, err := h.Codec.EncodeMessage(&frontier.UpdateScore{Request: r, Score: score, Schedule: true})
	if err != nil {
		return fmt.Errorf("control: return %s to the queue: %w", r.URL, err)
	}
	if err := h.Out.Send(ctx, bus.Message{Key: []byte(r.Hostname()), Value: v}); err != nil {
		return fmt.Errorf("control: return %s to the queue: %w", r.URL, err)
	}
	return nil
}
