package pebblebus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"

	"github.com/frontiercrawl/frontier/bus"
)

// Config sizes the durable bus.
type Config struct {
	// Partitions per stream; every one of bus.Streams must be present and positive.
	Partitions map[bus.Stream]int
	// Groups lists, per stream, the consumer groups whose uncommitted messages must be kept even before they
	// open a consumer or commit. Defaults to the committing groups the topology declares (bus.RetainedGroups).
	Groups map[bus.Stream][]string
	// Prefix is the first byte of every key the bus writes; no other user of the database may write under it.
	Prefix byte
	// Sync fsyncs Pebble's WAL before Send and Commit return (see the package doc), except for the writes
	// DeferSends and DeferCommits name.
	Sync bool
	// DeferSends and DeferCommits list the streams whose Sends, and whose consumers' Commits, are committed
	// without an fsync of their own even with Sync: each becomes durable with the next synced write to the
	// database (one WAL, synced whole, recovered as a prefix; see the package doc, "Durability"). A producer
	// of a deferred stream is not Durable. Empty by default: every write synced.
	DeferSends   []bus.Stream
	DeferCommits []bus.Stream
	// Retired lists, per stream, consumer groups that no longer run. Open deletes their committed offsets,
	// which would otherwise hold back the stream's retention for good (a group that committed once is
	// remembered), so what only they had not consumed goes with the next Commit of a group that runs. A group
	// may not be both retired and in Groups.
	Retired map[bus.Stream][]string
}

// DefaultConfig returns one partition per stream, Frontera's groups, prefix 'B' and synced writes.
func DefaultConfig() Config {
	return Config{
		Partitions: map[bus.Stream]int{bus.SpiderLog: 1, bus.ScoringLog: 1, bus.SpiderFeed: 1},
		Groups:     bus.RetainedGroups(),
		Prefix:     'B',
		Sync:       true,
	}
}

// Validate reports every problem with the configuration.
func (c Config) Validate() error {
	errs := bus.CheckLayout(c.Partitions, c.Groups)
	for _, s := range append(slices.Clone(c.DeferSends), c.DeferCommits...) {
		if !slices.Contains(bus.Streams, s) {
			errs = append(errs, fmt.Errorf("defer: unknown stream %q", s))
		}
	}
	for s, gs := range c.Retired {
		if !slices.Contains(bus.Streams, s) {
			errs = append(errs, fmt.Errorf("retired: unknown stream %q", s))
		}
		for _, g := range gs {
			if slices.Contains(c.Groups[s], g) {
				errs = append(errs, fmt.Errorf("retired: group %q of %s is also in groups", g, s))
			}
		}
	}
	if c.Prefix == 0 {
		errs = append(errs, errors.New("prefix is 0, want a byte no other user of the database writes under"))
	}
	return errors.Join(errs...)
}

// streamByte is the one-byte key tag of each stream.
var streamByte = map[bus.Stream]byte{bus.SpiderLog: 'l', bus.ScoringLog: 's', bus.SpiderFeed: 'f'}

// Bus is the durable in-process bus. Safe for concurrent use. Close it after its producers and consumers and
// before the database.
type Bus struct {
	malformed atomic.Int64
	db        *pebble.DB
	wo        *pebble.WriteOptions
	cfg       Config
	log       *slog.Logger
	streams   map[bus.Stream]*stream
}

// stream is one stream's partitions and groups.
type stream struct {
	name bus.Stream
	tag  byte
	b    *Bus
	// sendWO and commitWO are the write options of Send and Commit (Config.Sync, DeferSends, DeferCommits).
	sendWO, commitWO *pebble.WriteOptions
	// writeMu serialises appends, so that offsets are assigned in the order the batches are written.
	writeMu sync.Mutex
	// commitMu serialises commits, so that a range deletion is never written before the offsets it relies on.
	commitMu sync.Mutex
	mu       sync.Mutex
	// changed is closed and replaced whenever messages are appended or committed, waking waiters.
	changed   chan struct{}
	parts     []part
	committed bus.Offsets
	closed    bool
}

// part is one partition: its messages are the offsets [start, end), held in the segments segs (oldest first;
// the first may begin below start, with messages no interested group needs any more).
type part struct {
	start, end int64
	segs       []seg
}

// seg is one segment key: the messages first … first+n−1. single marks a key of the one-message layout
// (written before segments; read and trimmed as a segment of one).
type seg struct {
	first  int64
	n      int32
	single bool
}

// segKey is the key of s in partition p.
func (st *stream) segKey(p int, s seg) []byte {
	if s.single {
		return st.msgKey(p, s.first)
	}
	return binary.BigEndian.AppendUint32(st.msgKey(p, s.first), uint32(s.n))
}

// batchHeaderLen is the length of a Pebble batch's header (sequence number u64, count u32).
const batchHeaderLen = batchrepr.HeaderLen

// segKeyLen is the length of a segment's key (not a single message's): prefix, 'm', stream, partition u32,
// first u64, count u32.
const segKeyLen = 3 + 4 + 8 + 4

// appendSegKey appends the key of the segment s (not single) of partition p to k.
func (st *stream) appendSegKey(k []byte, p int, s seg) []byte {
	k = append(k, st.b.cfg.Prefix, 'm', st.tag)
	k = binary.BigEndian.AppendUint32(k, uint32(p))
	k = binary.BigEndian.AppendUint64(k, uint64(s.first))
	return binary.BigEndian.AppendUint32(k, uint32(s.n))
}

// segMsgLen is the bytes m takes in a segment's value.
func segMsgLen(m bus.Message) int {
	return uvarintLen(uint64(len(m.Key))) + uvarintLen(uint64(len(m.Value))) + len(m.Key) + len(m.Value)
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// segFor returns the index in segs of the segment holding offset off (segs sorted, off held).
func segFor(segs []seg, off int64) int {
	i, _ := slices.BinarySearchFunc(segs, off+1, func(s seg, o int64) int {
		switch {
		case s.first < o:
			return -1
		case s.first > o:
			return 1
		}
		return 0
	})
	return max(i-1, 0)
}

var _ bus.Bus = (*Bus)(nil)

// Open opens the bus kept in db under cfg.Prefix, creating its streams when absent. log may be nil.
func Open(db *pebble.DB, cfg Config, log *slog.Logger) (*Bus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("pebblebus: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bus{db: db, wo: pebble.NoSync, cfg: cfg, log: log, streams: make(map[bus.Stream]*stream)}
	if cfg.Sync {
		b.wo = pebble.Sync
	}
	for _, s := range bus.Streams {
		st, err := b.load(s)
		if err != nil {
			return nil, err
		}
		b.streams[s] = st
	}
	return b, nil
}

func (b *Bus) key(parts ...[]byte) []byte {
	k := []byte{b.cfg.Prefix}
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func (st *stream) msgKey(p int, off int64) []byte {
	k := make([]byte, 0, 19)
	k = append(k, st.b.cfg.Prefix, 'm', st.tag)
	k = binary.BigEndian.AppendUint32(k, uint32(p))
	return binary.BigEndian.AppendUint64(k, uint64(off))
}

func (st *stream) offsetKey(p int, group string) []byte {
	k := make([]byte, 0, 7+len(group))
	k = append(k, st.b.cfg.Prefix, 'o', st.tag)
	k = binary.BigEndian.AppendUint32(k, uint32(p))
	return append(k, group...)
}

// load reads a stream's partition bounds and committed offsets, checking its partition count.
func (b *Bus) load(s bus.Stream) (*stream, error) {
	n := b.cfg.Partitions[s]
	st := &stream{name: s, tag: streamByte[s], b: b, changed: make(chan struct{}), committed: make(map[string]map[int]int64)}
	st.sendWO, st.commitWO = b.wo, b.wo
	if slices.Contains(b.cfg.DeferSends, s) {
		st.sendWO = pebble.NoSync
	}
	if slices.Contains(b.cfg.DeferCommits, s) {
		st.commitWO = pebble.NoSync
	}
	for _, g := range b.cfg.Groups[s] {
		st.committed[g] = make(map[int]int64)
	}
	// Committed offsets: P 'o' tag partition group.
	opfx := b.key([]byte{'o', st.tag})
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: opfx, UpperBound: prefixEnd(opfx)})
	if err != nil {
		return nil, fmt.Errorf("pebblebus: read %s offsets: %w", s, err)
	}
	maxCommitted := map[int]int64{}
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		if len(k) < len(opfx)+4 || len(v) != 8 {
			_ = it.Close()
			return nil, fmt.Errorf("pebblebus: %s: malformed offset record %x", s, k)
		}
		p := int(binary.BigEndian.Uint32(k[len(opfx):]))
		g := string(k[len(opfx)+4:])
		o := int64(binary.BigEndian.Uint64(v))
		if st.committed[g] == nil {
			st.committed[g] = make(map[int]int64)
		}
		st.committed[g][p] = o
		maxCommitted[p] = max(maxCommitted[p], o)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblebus: read %s offsets: %w", s, err)
	}
	if err := st.retire(b.cfg.Retired[s]); err != nil {
		return nil, err
	}
	// The segments of every partition that holds messages (whatever the count was).
	mpfx := b.key([]byte{'m', st.tag})
	bounds := map[int]part{}
	it, err = b.db.NewIter(&pebble.IterOptions{LowerBound: mpfx, UpperBound: prefixEnd(mpfx)})
	if err != nil {
		return nil, fmt.Errorf("pebblebus: read %s: %w", s, err)
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		sg, ok := parseSegKey(k[len(mpfx):])
		if !ok {
			_ = it.Close()
			return nil, fmt.Errorf("pebblebus: %s: malformed message key %x", s, k)
		}
		p := int(binary.BigEndian.Uint32(k[len(mpfx):]))
		pb, held := bounds[p]
		switch {
		case !held:
			pb.start = sg.first
		case sg.first != pb.end:
			_ = it.Close()
			return nil, fmt.Errorf("pebblebus: %s: partition %d: offsets %d to %d missing", s, p, pb.end, sg.first-1)
		}
		pb.end = sg.first + int64(sg.n)
		pb.segs = append(pb.segs, sg)
		bounds[p] = pb
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblebus: read %s: %w", s, err)
	}
	held := int64(0)
	for p, pb := range bounds {
		held += pb.end - pb.start
		if p >= n {
			return nil, fmt.Errorf("pebblebus: %s holds %d unconsumed messages on partition %d, beyond the %d partitions configured; "+
				"finish the crawl with the partition count it was started with", s, pb.end-pb.start, p, n)
		}
	}
	countKey := b.key([]byte{'n', st.tag})
	if v, closer, err := b.db.Get(countKey); err == nil {
		was := int(binary.BigEndian.Uint32(v))
		closer.Close()
		if was != n && held > 0 {
			return nil, fmt.Errorf("pebblebus: %s was written with %d partitions and still holds %d unconsumed messages; "+
				"it cannot be reopened with %d partitions", s, was, held, n)
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("pebblebus: read %s partition count: %w", s, err)
	}
	if err := b.db.Set(countKey, binary.BigEndian.AppendUint32(nil, uint32(n)), pebble.Sync); err != nil {
		return nil, fmt.Errorf("pebblebus: write %s partition count: %w", s, err)
	}
	st.parts = make([]part, n)
	for p := range st.parts {
		pb, ok := bounds[p]
		if !ok {
			// Empty: the next offset continues after everything ever committed, so offsets never repeat.
			pb = part{start: maxCommitted[p], end: maxCommitted[p]}
		}
		pb.end = max(pb.end, maxCommitted[p])
		st.parts[p] = pb
	}
	return st, nil
}

// retire deletes the committed offsets of the retired groups (Config.Retired) and forgets them. Their offsets
// still counted in load's maxCommitted, so an emptied partition's offsets go on after them (and no segment key
// is ever written twice, as SingleDelete needs); an empty partition has every group committed at its end in
// any case, since retention removes only what every remembered group has consumed.
func (st *stream) retire(groups []string) error {
	batch := st.b.db.NewBatch()
	defer batch.Close()
	for _, g := range groups {
		for p := range st.committed[g] {
			if err := batch.Delete(st.offsetKey(p, g), nil); err != nil {
				return fmt.Errorf("pebblebus: %s: retire group %s: %w", st.name, g, err)
			}
		}
		delete(st.committed, g)
	}
	if batch.Empty() {
		return nil
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblebus: %s: retire groups %v: %w", st.name, groups, err)
	}
	st.b.log.Info("pebblebus: retired consumer groups", "stream", st.name, "groups", groups)
	return nil
}

// parseSegKey reads a message key after its stream prefix: partition, first offset and, in a segment key, the
// message count (a key without one holds one message).
func parseSegKey(k []byte) (seg, bool) {
	switch len(k) {
	case 12:
		return seg{first: int64(binary.BigEndian.Uint64(k[4:])), n: 1, single: true}, true
	case 16:
		n := binary.BigEndian.Uint32(k[12:])
		if n == 0 || n > segMaxMsgs {
			return seg{}, false
		}
		return seg{first: int64(binary.BigEndian.Uint64(k[4:])), n: int32(n)}, true
	}
	return seg{}, false
}

// prefixEnd returns the smallest key greater than every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Malformed is how many messages callers reported as malformed (bus.Decode) through this bus's consumers.
func (b *Bus) Malformed() int64 { return b.malformed.Load() }

// Partitions is the partition count of s (0 for an unknown stream).
func (b *Bus) Partitions(s bus.Stream) int { return b.cfg.Partitions[s] }

func (b *Bus) stream(s bus.Stream) (*stream, error) {
	st, ok := b.streams[s]
	if !ok {
		return nil, fmt.Errorf("pebblebus: unknown stream %q", s)
	}
	return st, nil
}

// Close wakes every waiting Fetch, which returns bus.ErrClosed, as do later calls. It does not close the
// database.
func (b *Bus) Close() error {
	for _, st := range b.streams {
		st.mu.Lock()
		if !st.closed {
			st.closed = true
			st.notifyLocked()
		}
		st.mu.Unlock()
	}
	return nil
}

func (st *stream) notifyLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// lowLocked is the lowest offset of partition p an interested group still needs.
func (st *stream) lowLocked(p int) int64 {
	return st.committed.Low(p, st.parts[p].start, st.parts[p].end)
}

// Producer opens a producer of s. See bus.Bus.
func (b *Bus) Producer(_ context.Context, s bus.Stream, p bus.Partitioner) (bus.Producer, error) {
	st, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	return &producer{st: st, part: p}, nil
}

type producer struct {
	st     *stream
	part   bus.Partitioner
	closed atomic.Bool
}

// Send writes msgs to their partitions in one Pebble batch; they are acknowledged once it is committed
// (fsynced with Config.Sync).
func (p *producer) Send(ctx context.Context, msgs ...bus.Message) error {
	if p.closed.Load() {
		return bus.ErrClosed
	}
	if len(msgs) == 0 {
		return nil
	}
	st := p.st
	n := len(st.parts)
	parts, err := bus.Route(st.name, msgs, p.part, n)
	if err != nil {
		return fmt.Errorf("pebblebus: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return bus.ErrClosed
	}
	next := make([]int64, n)
	for q := range n {
		next[q] = st.parts[q].end
	}
	st.mu.Unlock()

	// Each partition's messages, in order, cut into segments (segMaxMsgs, segMaxBytes). The segments are laid
	// out first, so that the batch is allocated once at its final size and each segment's value is written in
	// place: a Send of thousands of messages (the gateway's, the strategy worker's) grew its batch by doubling
	// and copying, and copied every segment once more from a staging buffer.
	type span struct {
		part, from, to, size int // messages order[from:to] of partition part, size bytes of value
	}
	order := make([]int, 0, len(msgs))
	var spans []span
	total := batchHeaderLen
	for q := range n {
		from := len(order)
		for i := range msgs {
			if parts[i] == q {
				order = append(order, i)
			}
		}
		for start := from; start < len(order); {
			size, end := 0, start
			for end < len(order) {
				size += segMsgLen(msgs[order[end]])
				end++
				if end-start == segMaxMsgs || size >= segMaxBytes {
					break
				}
			}
			spans = append(spans, span{part: q, from: start, to: end, size: size})
			total += 1 + segKeyLen + 2*binary.MaxVarintLen64 + size
			start = end
		}
	}
	// Pebble sizes a new batch's buffer at its first write, to a power of two from 1 KiB that holds that
	// write: ask for at least as much, or that first write allocates again.
	first := 1 << 10
	for len(spans) > 0 && first < batchHeaderLen+segKeyLen+2*binary.MaxVarintLen64+spans[0].size {
		first *= 2
	}
	batch := st.b.db.NewBatchWithSize(max(total, first))
	defer batch.Close()
	segs := make([]seg, 0, len(spans))
	key := make([]byte, 0, segKeyLen)
	for _, sp := range spans {
		cur := seg{first: next[sp.part], n: int32(sp.to - sp.from)}
		key = st.appendSegKey(key[:0], sp.part, cur)
		op := batch.SetDeferred(len(key), sp.size)
		copy(op.Key, key)
		val := op.Value[:0]
		for _, i := range order[sp.from:sp.to] {
			m := msgs[i]
			val = binary.AppendUvarint(val, uint64(len(m.Key)))
			val = binary.AppendUvarint(val, uint64(len(m.Value)))
			val = append(val, m.Key...)
			val = append(val, m.Value...)
		}
		if err := op.Finish(); err != nil {
			return fmt.Errorf("pebblebus: %s: %w", st.name, err)
		}
		segs = append(segs, cur)
		next[sp.part] = cur.first + int64(cur.n)
	}
	if err := batch.Commit(st.sendWO); err != nil {
		return fmt.Errorf("pebblebus: %s: write %d messages: %w", st.name, len(msgs), err)
	}
	st.mu.Lock()
	for q := range n {
		st.parts[q].end = next[q]
	}
	for i, sg := range segs {
		st.parts[spans[i].part].segs = append(st.parts[spans[i].part].segs, sg)
	}
	st.notifyLocked()
	st.mu.Unlock()
	return nil
}

// segMaxMsgs and segMaxBytes bound a segment: a Send writes each partition's messages as one Pebble key per
// run of up to segMaxMsgs messages (cut earlier once the run holds segMaxBytes), instead of one key per
// message. A message key cost a memtable insertion, a single deletion when released (another insertion),
// and a step of every iterator that read or flushed it; a crawl sends hundreds of thousands. The bounds keep a
// Fetch that starts inside a segment from decoding much before its first message, and a segment that one
// slow group still needs from pinning much more than that group's backlog.
const (
	segMaxMsgs  = 64
	segMaxBytes = 64 << 10
)

// Durable reports whether Send returns only once its messages survive the process being killed: true with
// Config.Sync when the stream's Sends are not deferred (the spider then journals what it reported, see
// spider.DurableProducer).
func (p *producer) Durable() bool { return p.st.sendWO == pebble.Sync }

func (p *producer) Close() error {
	p.closed.Store(true)
	return nil
}

// Consumer opens a consumer of partitions of s in group. See bus.Bus.
func (b *Bus) Consumer(_ context.Context, s bus.Stream, group string, partitions []int) (bus.Consumer, error) {
	st, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	if group == "" {
		return nil, fmt.Errorf("pebblebus: %s: empty consumer group", s)
	}
	if err := bus.CheckPartitions(s, partitions, len(st.parts)); err != nil {
		return nil, err
	}
	c := &consumer{st: st, group: group, parts: slices.Clone(partitions), pos: make(map[int]int64)}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, bus.ErrClosed
	}
	for _, p := range partitions {
		c.pos[p] = st.committed.Next(group, p, st.parts[p].start)
	}
	return c, nil
}

type consumer struct {
	st     *stream
	group  string
	parts  []int
	pos    map[int]int64 // next offset to fetch, per partition
	next   int           // index in parts where the next Fetch starts, for fairness
	closed atomic.Bool
}

// span is a range of offsets of one partition to read; seg0 is the first offset of the segment holding from.
type span struct {
	p                int
	from, till, seg0 int64
}

// Fetch returns up to limit messages from the owned partitions, waiting for at least one.
func (c *consumer) Fetch(ctx context.Context, limit int) ([]bus.Message, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("pebblebus: fetch max = %d, want > 0", limit)
	}
	st := c.st
	var spans []span
	st.mu.Lock()
	for {
		if c.closed.Load() || st.closed {
			st.mu.Unlock()
			return nil, bus.ErrClosed
		}
		left := int64(limit)
		for i := range c.parts {
			p := c.parts[(c.next+i)%len(c.parts)]
			pt := st.parts[p]
			from := max(c.pos[p], pt.start) // trimmed below us only if this group committed past pos
			if from >= pt.end {
				continue
			}
			till := min(pt.end, from+left)
			seg0 := from
			if len(pt.segs) > 0 {
				seg0 = pt.segs[segFor(pt.segs, from)].first
			}
			spans = append(spans, span{p, from, till, seg0})
			left -= till - from
			if left == 0 {
				break
			}
		}
		c.next = (c.next + 1) % len(c.parts)
		if len(spans) > 0 {
			break
		}
		ch := st.changed
		st.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
		st.mu.Lock()
	}
	st.mu.Unlock()

	n := 0
	for _, sp := range spans {
		n += int(sp.till - sp.from)
	}
	out := make([]bus.Message, 0, n) // what is there, not limit: a poll that finds one message costs one slot
	var arena []byte
	for _, sp := range spans {
		got, err := st.read(sp, out, &arena)
		if err != nil {
			return nil, err
		}
		out = got
		c.pos[sp.p] = sp.till
	}
	return out, nil
}

// fetchChunk is the size of the blocks Fetch copies small messages into, several to a block, instead of
// allocating each message on its own (an allocation per message was most of a Fetch's garbage). A message
// held after the others of its Fetch were dropped holds its block: at most fetchChunk bytes. A message larger
// than a quarter of a block gets a block of its own.
const fetchChunk = 8 << 10

// read appends the messages of sp to out, copying their bytes into *arena (see fetchChunk).
func (st *stream) read(sp span, out []bus.Message, arena *[]byte) ([]bus.Message, error) {
	// A segment key sorts after its first offset's 12-byte key and before the next offset's: the bounds take
	// in every segment from the one holding from to the last one starting before till.
	it, err := st.b.db.NewIter(&pebble.IterOptions{LowerBound: st.msgKey(sp.p, sp.seg0), UpperBound: st.msgKey(sp.p, sp.till)})
	if err != nil {
		return out, fmt.Errorf("pebblebus: %s: read partition %d: %w", st.name, sp.p, err)
	}
	const plen = 3                 // prefix, 'm', stream tag
	want, next := sp.from, sp.seg0 // next: the first offset the next segment must hold
	for it.First(); it.Valid() && want < sp.till; it.Next() {
		k, v := it.Key(), it.Value()
		sg, ok := parseSegKey(k[plen:])
		if !ok || sg.first != next {
			_ = it.Close()
			return out, fmt.Errorf("pebblebus: %s: partition %d: offset %d missing (next key held is %x)", st.name, sp.p, next, k)
		}
		next = sg.first + int64(sg.n)
		for off := sg.first; off < next && off < sp.till; off++ {
			rec, kl, ok := nextRecord(&v, sg.single)
			if !ok {
				_ = it.Close()
				return out, fmt.Errorf("pebblebus: %s: partition %d offset %d: malformed record", st.name, sp.p, off)
			}
			if off < want {
				continue
			}
			m := bus.Message{Partition: sp.p, Offset: off}
			buf := carve(arena, len(rec))
			copy(buf, rec)
			if kl > 0 {
				m.Key = buf[:kl:kl]
			}
			m.Value = buf[kl:]
			out = append(out, m)
			want++
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return out, fmt.Errorf("pebblebus: %s: read partition %d: %w", st.name, sp.p, err)
	}
	if want != sp.till {
		return out, fmt.Errorf("pebblebus: %s: partition %d: offsets %d to %d missing", st.name, sp.p, want, sp.till-1)
	}
	return out, nil
}

// nextRecord takes the next message from a segment's value *v: its key and value bytes (key first, kl bytes).
// A one-message key's value is uvarint(len(key)) key value; a segment's is uvarint(len(key)) uvarint(len(value))
// key value per message.
func nextRecord(v *[]byte, single bool) (rec []byte, kl int, ok bool) {
	b := *v
	k, n := binary.Uvarint(b)
	if n <= 0 || k > uint64(len(b)-n) {
		return nil, 0, false
	}
	b = b[n:]
	l := uint64(len(b)) - k
	if !single {
		if l, n = binary.Uvarint(b); n <= 0 || l > uint64(len(b)-n) || k > uint64(len(b)-n)-l {
			return nil, 0, false
		}
		b = b[n:]
	}
	end := int(k + l)
	*v = b[end:]
	return b[:end:end], int(k), true
}

// carve returns n bytes for one message: the next n bytes of *arena (a new block when it lacks room), or an
// allocation of its own for a large message. Its capacity is n, so an append by a reader never writes into the
// next message.
func carve(arena *[]byte, n int) []byte {
	if n > fetchChunk/4 {
		return make([]byte, n)
	}
	a := *arena
	if cap(a)-len(a) < n {
		a = make([]byte, 0, fetchChunk)
	}
	l := len(a)
	a = a[:l+n]
	*arena = a
	return a[l : l+n : l+n]
}

// pointTrimMax is the longest run of released segments a Commit removes with point deletions rather than one
// range deletion. Every range deletion in the memtable makes each new iterator of the database (every Fetch,
// every queue scan) fragment all of the memtable's range deletions again: in a slow crawl, whose memtable
// fills slowly, that was 29% of the process's CPU (issue 21, bench/results/throughput.md). Point deletions cost
// nothing to iterators that start above them, and they are single deletions (a segment key is written once):
// one that meets its segment's write in a flush or a compaction drops with it, so a segment released before
// its memtable is flushed leaves no tombstone in the tables (TestConsumedLeaveNoTombstones).
const pointTrimMax = 4096

// Commit records, per partition, one past the highest offset of msgs as the group's committed offset, and
// removes what no interested group needs any more, in one Pebble batch. A commit never moves a group's offset
// backwards. Messages of partitions this consumer does not own are an error.
func (c *consumer) Commit(_ context.Context, msgs []bus.Message) error {
	if c.closed.Load() {
		return bus.ErrClosed
	}
	if len(msgs) == 0 {
		return nil
	}
	next, err := bus.OwnedCommitOffsets(c.st.name, msgs, c.parts)
	if err != nil {
		return fmt.Errorf("pebblebus: %w", err)
	}
	st := c.st
	st.commitMu.Lock()
	defer st.commitMu.Unlock()
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return bus.ErrClosed
	}
	offs := st.committed[c.group]
	type trim struct {
		p    int
		segs []seg // the segments released, oldest first
	}
	var trims []trim
	moved := map[int]int64{}
	for p, o := range next {
		if o > st.parts[p].end {
			st.mu.Unlock()
			return fmt.Errorf("pebblebus: %s: commit of offset %d in partition %d, past its end %d", st.name, o, p, st.parts[p].end)
		}
		if cur, ok := offs[p]; ok && o <= cur {
			continue
		}
		moved[p] = o
	}
	if len(moved) == 0 {
		st.mu.Unlock()
		return nil
	}
	if offs == nil {
		offs = make(map[int]int64)
		st.committed[c.group] = offs
	}
	for p, o := range moved {
		offs[p] = o
		if low := st.lowLocked(p); low > st.parts[p].start {
			st.parts[p].start = low
			// Only whole segments go: one that still holds a message at or above low stays.
			segs := st.parts[p].segs
			k := 0
			for k < len(segs) && segs[k].first+int64(segs[k].n) <= low {
				k++
			}
			if k > 0 {
				trims = append(trims, trim{p, segs[:k:k]})
				st.parts[p].segs = segs[k:]
			}
		}
	}
	// The in-memory offsets move first, so a concurrent Fetch of this group never goes back; the write
	// below makes them durable before Commit returns.
	batch := st.b.db.NewBatch()
	defer batch.Close()
	for p, o := range moved {
		if err := batch.Set(st.offsetKey(p, c.group), binary.BigEndian.AppendUint64(nil, uint64(o)), nil); err != nil {
			st.mu.Unlock()
			return fmt.Errorf("pebblebus: %s: %w", st.name, err)
		}
	}
	for _, t := range trims {
		var err error
		if len(t.segs) <= pointTrimMax {
			for _, sg := range t.segs {
				if err = batch.SingleDelete(st.segKey(t.p, sg), nil); err != nil {
					break
				}
			}
		} else {
			last := t.segs[len(t.segs)-1]
			err = batch.DeleteRange(st.msgKey(t.p, t.segs[0].first), st.msgKey(t.p, last.first+int64(last.n)), nil)
		}
		if err != nil {
			st.mu.Unlock()
			return fmt.Errorf("pebblebus: %s: %w", st.name, err)
		}
	}
	st.notifyLocked()
	st.mu.Unlock()
	if err := batch.Commit(st.commitWO); err != nil {
		return fmt.Errorf("pebblebus: %s: commit offsets of group %s: %w", st.name, c.group, err)
	}
	return nil
}

// Close ends the consumer without committing.
func (c *consumer) Close() error {
	c.closed.Store(true)
	c.st.mu.Lock()
	c.st.notifyLocked()
	c.st.mu.Unlock()
	return nil
}

// Malformed counts m (see Bus.Malformed) and logs its stream, group, partition and offset.
func (c *consumer) Malformed(m bus.Message, err error) {
	c.st.b.malformed.Add(1)
	c.st.b.log.Warn("pebblebus: skipping malformed message", "stream", c.st.name, "group", c.group,
		"partition", m.Partition, "offset", m.Offset, "err", err)
}

// Lag returns, per partition of s, the latest offset minus the group's committed offset (or minus the earliest
// offset held, when the group never committed there).
func (b *Bus) Lag(_ context.Context, s bus.Stream, group string) (map[int]int64, error) {
	st, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.committed.Lag(group, len(st.parts), func(p int) (int64, int64) { return st.parts[p].start, st.parts[p].end }), nil
}
