package pebblebus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openDB opens a Pebble database in dir of fs, closed by t.Cleanup.
func openDB(t testing.TB, fs vfs.FS, dir string) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func config(partitions map[bus.Stream]int) Config {
	cfg := DefaultConfig()
	for s, n := range partitions {
		cfg.Partitions[s] = n
	}
	return cfg
}

func newTestBus(t *testing.T, partitions map[bus.Stream]int) bus.Bus {
	db := openDB(t, vfs.NewMem(), "db")
	cfg := config(partitions)
	cfg.Sync = false
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Close()
		_ = db.Close()
	})
	return b
}

func TestConformance(t *testing.T) {
	bustest.Run(t, newTestBus)
}

// TestConformanceOnDisk runs the suite once on a real directory with synced writes.
func TestConformanceOnDisk(t *testing.T) {
	bustest.Run(t, func(t *testing.T, partitions map[bus.Stream]int) bus.Bus {
		db := openDB(t, vfs.Default, t.TempDir())
		b, err := Open(db, config(partitions), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = b.Close()
			_ = db.Close()
		})
		return b
	})
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	cfg := Config{
		Partitions: map[bus.Stream]int{bus.SpiderLog: 0, "bogus": 1},
		Groups:     map[bus.Stream][]string{"other": {""}},
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate of a bad config = nil")
	}
	for _, want := range []string{"partitions of spider-log = 0", "partitions of scoring-log = 0", `unknown stream "bogus"`,
		`groups: unknown stream "other"`, "empty group name", "prefix is 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %q does not mention %q", err, want)
		}
	}
}

// reopen closes b and db and opens both again on the same files.
func reopen(t *testing.T, fs vfs.FS, b *Bus, db *pebble.DB, cfg Config) (*Bus, *pebble.DB) {
	t.Helper()
	_ = b.Close()
	if db != nil {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db = openDB(t, fs, "db")
	nb, err := Open(db, cfg, nil)
	if err != nil {
		_ = db.Close()
		t.Fatal(err)
	}
	return nb, db
}

func values(ms []bus.Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%d@%d:%s=%s", m.Partition, m.Offset, m.Key, m.Value))
	}
	return strings.Join(s, " ")
}

func fetchAll(t *testing.T, c bus.Consumer, n int) []bus.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []bus.Message
	for len(got) < n {
		ms, err := c.Fetch(ctx, n-len(got))
		if err != nil {
			t.Fatalf("Fetch after %d of %d: %v", len(got), n, err)
		}
		got = append(got, ms...)
	}
	return got
}

// TestReopen is the point of the package: messages, offsets and committed positions survive closing and
// reopening the database, and what a group fetched without committing comes again.
func TestReopen(t *testing.T) {
	fs := vfs.NewMem()
	cfg := config(map[bus.Stream]int{bus.SpiderLog: 2})
	db := openDB(t, fs, "db")
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.SpiderLog, func(k []byte, n int) int { return int(k[0]-'0') % n })
	var msgs []bus.Message
	for i := range 10 {
		msgs = append(msgs, bus.Message{Key: []byte(fmt.Sprint(i % 2)), Value: []byte(fmt.Sprint("v", i))})
	}
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	c, _ := b.Consumer(ctx, bus.SpiderLog, "g", []int{0, 1})
	got := fetchAll(t, c, 10)
	// Commit the first two of each partition.
	var first []bus.Message
	for _, m := range got {
		if m.Offset < 2 {
			first = append(first, m)
		}
	}
	if err := c.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	_ = p.Close()

	b, db = reopen(t, fs, b, db, cfg)
	defer func() { _ = b.Close(); _ = db.Close() }()
	lag, _ := b.Lag(ctx, bus.SpiderLog, "g")
	if lag[0] != 3 || lag[1] != 3 {
		t.Fatalf("after reopen Lag = %v, want 3 on each partition", lag)
	}
	c, _ = b.Consumer(ctx, bus.SpiderLog, "g", []int{0, 1})
	again := fetchAll(t, c, 6)
	for _, m := range again {
		if m.Offset < 2 {
			t.Fatalf("after reopen got committed message %s", values([]bus.Message{m}))
		}
		if want := fmt.Sprint("v", 2*m.Offset+int64(m.Partition)); string(m.Value) != want {
			t.Fatalf("after reopen partition %d offset %d holds %q, want %q", m.Partition, m.Offset, m.Value, want)
		}
	}
	// A new message continues the offsets.
	p, _ = b.Producer(ctx, bus.SpiderLog, nil)
	if err := p.Send(ctx, bus.Message{Value: []byte("new"), Partition: 1}); err != nil {
		t.Fatal(err)
	}
	n := fetchAll(t, c, 1)
	if n[0].Offset != 5 || string(n[0].Value) != "new" {
		t.Fatalf("message after reopen = %s, want 1@5:new", values(n))
	}
	if err := c.Commit(ctx, append(again, n...)); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	_ = p.Close()

	// Everything committed (and trimmed): offsets still continue after a reopen, never restart at 0.
	b, db = reopen(t, fs, b, db, cfg)
	if lag, _ := b.Lag(ctx, bus.SpiderLog, "g"); lag[0] != 0 || lag[1] != 0 {
		t.Fatalf("Lag after committing everything and reopening = %v, want 0", lag)
	}
	p, _ = b.Producer(ctx, bus.SpiderLog, nil)
	_ = p.Send(ctx, bus.Message{Value: []byte("later"), Partition: 1})
	c, _ = b.Consumer(ctx, bus.SpiderLog, "g", []int{1})
	if l := fetchAll(t, c, 1); l[0].Offset != 6 {
		t.Fatalf("first message after a full trim and reopen = %s, want offset 6", values(l))
	}
	_ = c.Close()
	_ = p.Close()
}

// TestRetentionOnDisk shows that committed messages are removed from the database once every interested group
// has committed them, and kept while one has not.
func TestRetentionOnDisk(t *testing.T) {
	db := openDB(t, vfs.NewMem(), "db")
	defer db.Close()
	cfg := DefaultConfig()
	cfg.Sync = false
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.SpiderLog, nil)
	defer p.Close()
	for i := range 100 {
		_ = p.Send(ctx, bus.Message{Value: []byte(fmt.Sprint(i))})
	}
	held := func() int { return spiderLogKeys(db) }
	sw, _ := b.Consumer(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog, []int{0})
	defer sw.Close()
	_ = sw.Commit(ctx, fetchAll(t, sw, 100))
	if n := held(); n != 100 {
		t.Fatalf("after one of two groups committed, %d messages held, want 100", n)
	}
	dbw, _ := b.Consumer(ctx, bus.SpiderLog, bus.GroupDBWorkerSpiderLog, []int{0})
	defer dbw.Close()
	got := fetchAll(t, dbw, 100)
	_ = dbw.Commit(ctx, got[:60])
	if n := held(); n != 40 {
		t.Fatalf("after both groups committed 60, %d messages held, want 40", n)
	}
}

// spiderLogKeys counts the spider log's message keys in db (prefix 'B', one segment per Send in these tests).
func spiderLogKeys(db *pebble.DB) int {
	it, _ := db.NewIter(&pebble.IterOptions{LowerBound: []byte("Bml"), UpperBound: []byte("Bmm")})
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

// TestPartitionCountChange: a stream that still holds messages cannot be reopened with another partition
// count; an empty one can.
func TestPartitionCountChange(t *testing.T) {
	fs := vfs.NewMem()
	cfg := config(map[bus.Stream]int{bus.SpiderFeed: 2})
	db := openDB(t, fs, "db")
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.SpiderFeed, nil)
	_ = p.Send(ctx, bus.Message{Value: []byte("x"), Partition: 1})
	_ = p.Close()
	_ = b.Close()
	for _, n := range []int{1, 3} {
		_, err := Open(db, config(map[bus.Stream]int{bus.SpiderFeed: n}), nil)
		if err == nil || !strings.Contains(err.Error(), "spider-feed") {
			t.Errorf("reopen with %d feed partitions = %v, want an error naming spider-feed", n, err)
		}
	}
	b, _ = Open(db, cfg, nil)
	c, _ := b.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{1})
	_ = c.Commit(ctx, fetchAll(t, c, 1))
	_ = c.Close()
	_ = b.Close()
	b, err = Open(db, config(map[bus.Stream]int{bus.SpiderFeed: 3}), nil)
	if err != nil {
		t.Fatalf("reopen of an empty stream with 3 partitions: %v", err)
	}
	_ = b.Close()
	_ = db.Close()
}

func TestClosedBusStopsFetch(t *testing.T) {
	b := newTestBus(t, nil)
	c, _ := b.Consumer(t.Context(), bus.SpiderFeed, "g", []int{0})
	done := make(chan error, 1)
	go func() { _, err := c.Fetch(t.Context(), 1); done <- err }()
	time.Sleep(10 * time.Millisecond)
	_ = b.(*Bus).Close()
	if err := <-done; !errors.Is(err, bus.ErrClosed) {
		t.Fatalf("Fetch when the bus closes = %v, want bus.ErrClosed", err)
	}
}

// quietLogger keeps Pebble's informational lines out of test and benchmark output.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// TestDeferredWritesDurableWithNextSync crashes the database (only what was fsynced survives) around writes
// deferred as package standalone defers them: a deferred Send and Commit are lost by a crash before any synced write,
// and survive one after the next synced write, which is what the spider's synced report guarantees for
// everything it depends on.
func TestDeferredWritesDurableWithNextSync(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DeferSends = []bus.Stream{bus.ScoringLog, bus.SpiderFeed}
	cfg.DeferCommits = []bus.Stream{bus.SpiderLog, bus.ScoringLog}
	fs := vfs.NewCrashableMem()
	db := openDB(t, fs, "db")
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	logP, _ := b.Producer(ctx, bus.SpiderLog, nil)
	scoreP, _ := b.Producer(ctx, bus.ScoringLog, nil)
	if !logP.(*producer).Durable() || scoreP.(*producer).Durable() {
		t.Fatalf("Durable: spider log %v, scoring log %v; want true, false", logP.(*producer).Durable(), scoreP.(*producer).Durable())
	}
	// A synced report, consumed and committed (deferred), then a deferred score.
	if err := logP.Send(ctx, bus.Message{Value: []byte("report-1")}); err != nil {
		t.Fatal(err)
	}
	c, _ := b.Consumer(ctx, bus.SpiderLog, "g", []int{0})
	if err := c.Commit(ctx, fetchAll(t, c, 1)); err != nil {
		t.Fatal(err)
	}
	if err := scoreP.Send(ctx, bus.Message{Value: []byte("score-1")}); err != nil {
		t.Fatal(err)
	}
	state := func(crashed *vfs.MemFS) (lag int64, scores int64) {
		t.Helper()
		cdb := openDB(t, crashed, "db")
		cb, err := Open(cdb, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cb.Close(); _ = cdb.Close() }()
		l, _ := cb.Lag(ctx, bus.SpiderLog, "g")
		s, _ := cb.Lag(ctx, bus.ScoringLog, "never-committed")
		return l[0], s[0]
	}
	noUnsynced := vfs.CrashCloneCfg{UnsyncedDataPercent: 0}
	if lag, scores := state(fs.CrashClone(noUnsynced)); lag != 1 || scores != 0 {
		t.Fatalf("crash before a synced write: spider-log lag %d, scoring-log messages %d; want 1 (commit lost), 0 (score lost)", lag, scores)
	}
	// The next synced write makes both durable.
	if err := logP.Send(ctx, bus.Message{Value: []byte("report-2")}); err != nil {
		t.Fatal(err)
	}
	if lag, scores := state(fs.CrashClone(noUnsynced)); lag != 1 || scores != 1 {
		t.Fatalf("crash after a synced write: spider-log lag %d, scoring-log messages %d; want 1 (report-2 only), 1", lag, scores)
	}
	_ = c.Close()
	_ = logP.Close()
	_ = scoreP.Close()
	_ = b.Close()
	_ = db.Close()
}

// TestCarve: messages share blocks of fetchChunk bytes without overlapping, an append to one never writes into
// the next, and a large message gets memory of its own.
func TestCarve(t *testing.T) {
	var arena []byte
	var got [][]byte
	for i, n := range []int{10, 0, 300, fetchChunk / 4, fetchChunk/4 + 1, fetchChunk / 4, fetchChunk / 4, 7} {
		b := carve(&arena, n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("carve %d: len %d cap %d, want both %d", n, len(b), cap(b), n)
		}
		for j := range b {
			b[j] = byte(i + 1)
		}
		got = append(got, b)
	}
	_ = append(got[0], 0xff) // must reallocate, not overwrite got[1] or got[2]
	for i, b := range got {
		for _, c := range b {
			if c != byte(i+1) {
				t.Fatalf("message %d overwritten: holds %d", i, c)
			}
		}
	}
}

// TestRetiredGroup: a group that committed once holds back the stream's retention across restarts until it is
// retired; Open then forgets it, the next commit of the running groups releases what only it held, and the
// offsets go on after everything ever written.
func TestRetiredGroup(t *testing.T) {
	fs := vfs.NewMem()
	db := openDB(t, fs, "db")
	cfg := DefaultConfig()
	cfg.Sync = false
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	send := func(b *Bus, n int) {
		p, _ := b.Producer(ctx, bus.SpiderLog, nil)
		defer p.Close()
		for i := range n {
			if err := p.Send(ctx, bus.Message{Value: []byte(fmt.Sprint(i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	held := func() int { return spiderLogKeys(db) }
	// consume has every running group read n messages and commit them; it returns the offsets read.
	consume := func(b *Bus, n int) []int64 {
		var offs []int64
		for _, g := range []string{bus.GroupStrategyWorkerSpiderLog, bus.GroupDBWorkerSpiderLog} {
			c, _ := b.Consumer(ctx, bus.SpiderLog, g, []int{0})
			got := fetchAll(t, c, n)
			if err := c.Commit(ctx, got); err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
			offs = offs[:0]
			for _, m := range got {
				offs = append(offs, m.Offset)
			}
		}
		return offs
	}
	send(b, 10)
	old, _ := b.Consumer(ctx, bus.SpiderLog, "old", []int{0})
	if err := old.Commit(ctx, fetchAll(t, old, 10)[:2]); err != nil {
		t.Fatal(err)
	}
	_ = old.Close()
	consume(b, 10)
	if n := held(); n != 8 {
		t.Fatalf("with the old group at offset 2, %d messages held, want 8", n)
	}
	b, db = reopen(t, fs, b, db, cfg)
	if n := held(); n != 8 {
		t.Fatalf("reopened: %d messages held, want 8 (the old group is remembered)", n)
	}
	retired := cfg
	retired.Retired = map[bus.Stream][]string{bus.SpiderLog: {"old"}}
	// Retired, the next commit releases what the old group held; reopened without it, nothing comes back and
	// the offsets go on.
	for _, step := range []struct {
		what string
		cfg  Config
		off  int64
	}{{"retired", retired, 10}, {"reopened without the retired group", cfg, 11}} {
		b, db = reopen(t, fs, b, db, step.cfg)
		send(b, 1)
		if got := consume(b, 1); len(got) != 1 || got[0] != step.off {
			t.Fatalf("%s: read offsets %v, want [%d]", step.what, got, step.off)
		}
		if n := held(); n != 0 {
			t.Fatalf("%s: %d messages held after a commit, want 0", step.what, n)
		}
	}
	_ = b.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	both := DefaultConfig()
	both.Retired = map[bus.Stream][]string{bus.SpiderLog: {bus.GroupDBWorkerSpiderLog}, "bogus": nil}
	err = both.Validate()
	for _, want := range []string{`retired: group "` + bus.GroupDBWorkerSpiderLog + `" of spider-log is also in groups`, `retired: unknown stream "bogus"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
}
