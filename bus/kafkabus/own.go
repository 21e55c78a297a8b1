package kafkabus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

// OwnershipConfig tunes the consumer groups through which the processes of a role share partitions (Own).
type OwnershipConfig struct {
	// SessionTimeout is how long a process may go without a heartbeat before the group declares it dead and
	// gives its partitions to the others (within the broker's group.min/max.session.timeout.ms: 6 s to 30 min
	// by default). It is about how long the partitions of a killed process stay idle.
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	// HeartbeatInterval is how often a member tells the group it is alive; well under SessionTimeout.
	HeartbeatInterval time.Duration `mapstructure:"heartbeat_interval"`
	// RebalanceTimeout is how long the group waits for every member to rejoin when the membership changes.
	RebalanceTimeout time.Duration `mapstructure:"rebalance_timeout"`
}

// ownerProtocol is the group protocol name of Own's balancer; every member of an ownership group uses it.
const ownerProtocol = "frontier-owner"

// memberData is what a member tells the group leader when it joins: the partitions it asks for (nil: any
// share) and those it owned in the previous generation (so they stay put).
type memberData struct {
	Want []int `json:"want"`
	Own  []int `json:"own"`
}

// ownerBalancer assigns each partition to exactly one member: its previous owner if that member still asks
// for it (and, among members sharing, is within its fair share), else the eligible member with the fewest
// partitions (ties by member id). A partition nobody asks for stays unassigned.
type ownerBalancer struct {
	want []int
	mu   sync.Mutex
	own  []int
}

func (ob *ownerBalancer) ProtocolName() string { return ownerProtocol }

func (ob *ownerBalancer) UserData() ([]byte, error) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return json.Marshal(memberData{Want: ob.want, Own: ob.own})
}

func (ob *ownerBalancer) setOwned(parts []int) {
	ob.mu.Lock()
	ob.own = slices.Clone(parts)
	ob.mu.Unlock()
}

func (ob *ownerBalancer) AssignGroups(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	return assignOwners(members, partitions)
}

// assignOwners is ownerBalancer's assignment, on its own for tests.
func assignOwners(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	type member struct {
		id     string
		topics []string
		data   memberData
		n      int
	}
	ms := make([]*member, 0, len(members))
	for _, m := range members {
		var d memberData
		if err := json.Unmarshal(m.UserData, &d); err != nil {
			d = memberData{} // an unreadable member shares
		}
		ms = append(ms, &member{id: m.ID, topics: m.Topics, data: d})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].id < ms[j].id })
	out := kafka.GroupMemberAssignments{}
	for _, m := range ms {
		out[m.id] = map[string][]int{}
	}
	byTopic := map[string][]int{}
	for _, p := range partitions {
		byTopic[p.Topic] = append(byTopic[p.Topic], p.ID)
	}
	for topic, ids := range byTopic {
		slices.Sort(ids)
		for _, m := range ms {
			m.n = 0
		}
		subscribed := func(m *member) bool { return len(m.topics) == 0 || slices.Contains(m.topics, topic) }
		wants := func(m *member, p int) bool {
			return subscribed(m) && (m.data.Want == nil || slices.Contains(m.data.Want, p))
		}
		sharers := 0
		for _, m := range ms {
			if m.data.Want == nil && subscribed(m) {
				sharers++
			}
		}
		quota := len(ids)
		if sharers > 0 {
			quota = (len(ids) + sharers - 1) / sharers
		}
		owner := map[int]*member{}
		// Keep previous owners (a sharer up to its fair share, so a newcomer gets partitions).
		for _, p := range ids {
			for _, m := range ms {
				if wants(m, p) && slices.Contains(m.data.Own, p) && (m.data.Want != nil || m.n < quota) {
					owner[p] = m
					m.n++
					break
				}
			}
		}
		for _, p := range ids {
			if owner[p] != nil {
				continue
			}
			var best *member
			for _, m := range ms {
				if wants(m, p) && (best == nil || m.n < best.n) {
					best = m
				}
			}
			if best != nil {
				owner[p] = best
				best.n++
			}
		}
		for _, p := range ids {
			if m := owner[p]; m != nil {
				out[m.id][topic] = append(out[m.id][topic], p)
			}
		}
	}
	return out
}

// Own implements bus.Owner with a Kafka consumer group of its own (group and topic, e.g.
// "dbw-scoring-log-owners.frontier-score"),
// separate from the group whose offsets the work commits: the work's consumers stay simple consumers of
// explicit partitions, and the ownership group only decides which process has which partitions. Joining and
// syncing retry through outages; a member that misses heartbeats for SessionTimeout loses its partitions.
//
// Processes that share (want == nil, the DB workers) hand partitions over eagerly: each generation's work runs
// under kafka-go's Generation.Start, so the group does not move to the next generation, and no other process
// gets the partitions, until the work has returned. A stop costs them little (between two batches).
//
// Processes that ask for given partitions (a spider, a strategy worker) keep working through a change of
// generation that gives them the same partitions again (a standby joining, a broker restart): the previous
// owner is kept by the balancer, so no other process can have them meanwhile. If no new generation confirms
// the partitions within half the session timeout (the group may have declared this process dead), the work is
// stopped. Callers give each such partition a group of its own, so that processes of other partitions never
// disturb it.
func (b *Bus) Own(ctx context.Context, s bus.Stream, group string, want []int, work func(context.Context, []int) error) error {
	sc, err := b.stream(s)
	if err != nil {
		return err
	}
	if want != nil {
		if err := bus.CheckPartitions(s, want, sc.Partitions); err != nil {
			return err
		}
	}
	if err := b.checkTopic(ctx, s, sc); err != nil {
		return err
	}
	oc := b.cfg.Ownership
	bal := &ownerBalancer{want: slices.Clone(want)}
	log := b.log.With("stream", string(s), "ownership_group", group)
	// The group is per topic, so that crawls on other topics of the same cluster never share it.
	group = group + "." + sc.Topic
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                group,
		Brokers:           b.cfg.Brokers,
		Dialer:            b.dialer,
		Topics:            []string{sc.Topic},
		GroupBalancers:    []kafka.GroupBalancer{bal},
		HeartbeatInterval: oc.HeartbeatInterval,
		SessionTimeout:    oc.SessionTimeout,
		RebalanceTimeout:  oc.RebalanceTimeout,
		JoinGroupBackoff:  b.cfg.Consumer.RetryBackoffMax,
		Timeout:           b.cfg.RequestTimeout,
		Logger:            kafkaLogger(log, slog.LevelDebug),
		ErrorLogger:       kafkaLogger(log, slog.LevelDebug),
	})
	if err != nil {
		return fmt.Errorf("kafkabus: %s: ownership group %q: %w", s, group, err)
	}
	defer cg.Close()
	o := &owning{b: b, group: group, log: log, want: want, bal: bal, work: work, result: make(chan error, 1), fenced: make(chan *task, 1)}
	if want == nil {
		return o.eager(ctx, cg, sc.Topic)
	}
	return o.hold(ctx, cg, sc.Topic, oc.SessionTimeout/2)
}

type owning struct {
	b      *Bus
	group  string // the ownership group, with its topic suffix
	fenced chan *task
	log    *slog.Logger
	want   []int
	bal    *ownerBalancer
	work   func(context.Context, []int) error
	result chan error // what work returned when it ended on its own
	last   []int
	logged bool
}

func (o *owning) assigned(gen *kafka.Generation, topic string) []int {
	var parts []int
	for _, pa := range gen.Assignments[topic] {
		parts = append(parts, pa.ID)
	}
	slices.Sort(parts)
	o.bal.setOwned(parts)
	if !o.logged || !slices.Equal(parts, o.last) {
		if len(parts) == 0 {
			o.log.Info("standby: no partition to own (another process owns those asked for, or there are more processes than partitions); waiting to take over",
				"want", o.want, "generation", gen.ID)
		} else {
			o.log.Info("owning partitions", "partitions", parts, "generation", gen.ID)
		}
	}
	o.logged, o.last = true, parts
	return parts
}

// ended reports work's own end (its context still live) to Own's caller.
func (o *owning) ended(err error, stop func()) {
	select {
	case o.result <- err:
	default:
	}
	stop()
}

func (o *owning) eager(ctx context.Context, cg *kafka.ConsumerGroup, topic string) error {
	nctx, stop := context.WithCancel(ctx)
	defer stop()
	for {
		gen, err := cg.Next(nctx)
		if err != nil {
			select {
			case err := <-o.result:
				return err
			default:
			}
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return nil
			}
			// Joining failed (the coordinator is moving or Kafka is restarting, or a rebalance is under way);
			// the group retries by itself.
			o.log.Debug("kafkabus: ownership group: no assignment yet", "err", err)
			continue
		}
		parts := o.assigned(gen, topic)
		gen.Start(func(gctx context.Context) {
			if len(parts) == 0 {
				<-gctx.Done()
				return
			}
			wctx, cancel := context.WithCancel(gctx)
			defer cancel()
			f := newFence(o.b, o.group, topic, parts, true, gen, o.log, func() { o.bal.setOwned(nil); cancel() })
			err := o.work(bus.WithFence(wctx, f.check), parts)
			if f.fenced.Load() != nil {
				return // the group moves on without this process; nothing to report
			}
			if gctx.Err() == nil {
				o.ended(err, stop)
				return
			}
			if err != nil {
				o.log.Debug("kafkabus: work stopped with the end of its assignment", "err", err)
			}
		})
	}
}

// task is work running on some partitions.
type task struct {
	parts  []int
	cancel context.CancelFunc
	done   chan struct{}
	fence  *fence
}

func (t *task) stop() {
	if t != nil {
		t.cancel()
		<-t.done
	}
}

func (o *owning) hold(ctx context.Context, cg *kafka.ConsumerGroup, topic string, hold time.Duration) error {
	nctx, stop := context.WithCancel(ctx)
	defer stop()
	gens := make(chan *kafka.Generation)
	pumpDone := make(chan struct{})
	go func() {
		defer close(pumpDone)
		for {
			gen, err := cg.Next(nctx)
			if err != nil {
				if nctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
					return
				}
				o.log.Debug("kafkabus: ownership group: no assignment yet", "err", err)
				continue
			}
			select {
			case gens <- gen:
			case <-nctx.Done():
				return
			}
		}
	}()
	var cur *task
	defer func() {
		cur.stop()
		stop()
		<-pumpDone
	}()
	start := func(parts []int, gen *kafka.Generation) *task {
		wctx, cancel := context.WithCancel(nctx)
		t := &task{parts: parts, cancel: cancel, done: make(chan struct{})}
		t.fence = newFence(o.b, o.group, topic, parts, false, gen, o.log, func() { o.bal.setOwned(nil); cancel() })
		go func() {
			defer close(t.done)
			err := o.work(bus.WithFence(wctx, t.fence.check), parts)
			if t.fence.fenced.Load() != nil {
				select {
				case o.fenced <- t:
				case <-nctx.Done():
				}
				return
			}
			if wctx.Err() == nil {
				o.ended(err, stop)
			} else if err != nil {
				o.log.Debug("kafkabus: work stopped with the end of its ownership", "err", err)
			}
		}()
		return t
	}
	var genEnded chan struct{}
	var holdC <-chan time.Time
	for {
		select {
		case <-nctx.Done():
			select {
			case err := <-o.result:
				return err
			default:
			}
			return nil
		case gen := <-gens:
			if cur != nil && cur.fence.fenced.Load() != nil {
				<-cur.done // fenced: its work has stopped (or is stopping); start afresh if the partitions are ours
				cur = nil
			}
			parts := o.assigned(gen, topic)
			ended := make(chan struct{})
			// Learn when this generation ends without holding the group back (the function returns at once).
			gen.Start(func(gctx context.Context) { <-gctx.Done(); close(ended) })
			genEnded, holdC = ended, nil
			if cur != nil && slices.Equal(cur.parts, parts) {
				cur.fence.setGen(gen) // its writes are checked in this generation now
				continue              // confirmed: keep working without a pause
			}
			if cur != nil {
				cur.fence.released.Store(true) // writes of its grace period are refused
			}
			cur.stop()
			cur = nil
			if len(parts) > 0 {
				cur = start(parts, gen)
			}
		case t := <-o.fenced:
			if t == cur {
				cur = nil // it stopped; a later generation that gives the partitions back starts it again
			}
		case <-genEnded:
			genEnded = nil
			if cur != nil {
				holdC = time.After(hold)
			}
		case <-holdC:
			holdC = nil
			if cur != nil {
				o.log.Warn("no new generation of the ownership group confirmed the partitions; stopping until one does",
					"partitions", cur.parts, "after", hold)
				cur.fence.released.Store(true)
				cur.stop()
				cur = nil
				o.bal.setOwned(nil)
			}
		}
	}
}
