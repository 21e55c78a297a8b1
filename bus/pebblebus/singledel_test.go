package pebblebus

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/bus"
)

// TestConsumedLeaveNoTombstones: a message written and then released by a Commit within one memtable leaves
// nothing in the table the memtable is flushed to, neither the message nor a tombstone (each message key is
// written once, so Commit removes it with a single deletion, which cancels out with its write), while the
// messages not yet released are flushed as they are.
func TestConsumedLeaveNoTombstones(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, vfs.NewMem(), "db")
	defer db.Close()
	cfg := DefaultConfig()
	cfg.Sync = false
	cfg.Groups = map[bus.Stream][]string{bus.SpiderLog: {"g"}}
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.Producer(ctx, bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range 100 {
		if err := p.Send(ctx, bus.Message{Key: []byte{byte(i)}, Value: []byte("value")}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := b.Consumer(ctx, bus.SpiderLog, "g", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msgs, err := c.Fetch(ctx, 60)
	if err != nil || len(msgs) != 60 {
		t.Fatalf("Fetch: %d messages, %v", len(msgs), err)
	}
	if err := c.Commit(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	pfx := []byte{cfg.Prefix, 'm'}
	var sets, dels int
	err = db.ScanInternal(ctx, block.CategoryUnknown, pfx, prefixEnd(pfx),
		func(key *pebble.InternalKey, _ pebble.LazyValue, _ pebble.IteratorLevel) error {
			if key.Kind() == pebble.InternalKeyKindSet {
				sets++
			} else {
				dels++
			}
			return nil
		}, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sets != 40 || dels != 0 {
		t.Fatalf("after the flush the messages' keys are %d sets and %d deletions, want the 40 unreleased messages and no deletion", sets, dels)
	}
	if m := db.Metrics(); m.Levels[0].TablesCount == 0 {
		t.Fatal("nothing flushed")
	}
}
