package pebblebus

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/bus"
)

// heldKeys counts the message keys of the spider log's partition 0.
func heldKeys(t *testing.T, db *pebble.DB) int {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("Bml\x00\x00\x00\x00"), UpperBound: []byte("Bml\x00\x00\x00\x01")})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

func segMsg(i int) bus.Message {
	m := bus.Message{Value: bytes.Repeat([]byte{byte('a' + i%26)}, i%50)}
	if i%3 != 0 {
		m.Key = []byte(fmt.Sprint("k", i))
	}
	if i == 150 {
		m.Value = make([]byte, segMaxBytes) // cuts its segment short
	}
	return m
}

func checkMsgs(t *testing.T, got []bus.Message, from int) {
	t.Helper()
	for j, m := range got {
		i := from + j
		w := segMsg(i)
		if m.Offset != int64(i) || !bytes.Equal(m.Key, w.Key) || !bytes.Equal(m.Value, w.Value) {
			t.Fatalf("message %d = %d@%d key %q (%d value bytes), want offset %d key %q (%d value bytes)",
				j, m.Partition, m.Offset, m.Key, len(m.Value), i, w.Key, len(w.Value))
		}
	}
}

// TestSegments: one Send of 200 messages is a few keys (segMaxMsgs, segMaxBytes); Fetches that start and stop
// inside segments return every message once, in order; a commit releases only the segments wholly below
// what every interested group committed; a reopen resumes inside a segment.
func TestSegments(t *testing.T) {
	fs := vfs.NewMem()
	cfg := DefaultConfig()
	cfg.Sync = false
	cfg.Groups = map[bus.Stream][]string{bus.SpiderLog: {"a", "b"}}
	db := openDB(t, fs, "db")
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.SpiderLog, nil)
	var msgs []bus.Message
	for i := range 200 {
		msgs = append(msgs, segMsg(i))
	}
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	// 0-63, 64-127, 128-150 (the large message closes it), 151-199.
	if n := heldKeys(t, db); n != 4 {
		t.Fatalf("200 messages in %d keys, want 4", n)
	}
	ca, _ := b.Consumer(ctx, bus.SpiderLog, "a", []int{0})
	var got []bus.Message
	for len(got) < 200 {
		ms, err := ca.Fetch(ctx, 7)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ms...)
	}
	checkMsgs(t, got, 0)
	cb, _ := b.Consumer(ctx, bus.SpiderLog, "b", []int{0})
	gb := fetchAll(t, cb, 130)
	checkMsgs(t, gb, 0)
	if err := ca.Commit(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := cb.Commit(ctx, gb[:100]); err != nil {
		t.Fatal(err)
	}
	if n := heldKeys(t, db); n != 3 {
		t.Fatalf("after both groups committed 100 messages, %d keys held, want 3 (the first segment released)", n)
	}
	_ = ca.Close()
	_ = cb.Close()

	b, db = reopen(t, fs, b, db, cfg)
	cb, _ = b.Consumer(ctx, bus.SpiderLog, "b", []int{0})
	rest := fetchAll(t, cb, 100)
	checkMsgs(t, rest, 100)
	if err := cb.Commit(ctx, rest[:51]); err != nil { // up to 150: three segments wholly committed
		t.Fatal(err)
	}
	if n := heldKeys(t, db); n != 1 {
		t.Fatalf("after committing 150 messages, %d keys held, want 1", n)
	}
	if err := cb.Commit(ctx, rest); err != nil {
		t.Fatal(err)
	}
	if n := heldKeys(t, db); n != 0 {
		t.Fatalf("after committing everything, %d keys held, want 0", n)
	}
	_ = cb.Close()
	_ = b.Close()
	_ = db.Close()
}

// TestOneMessageKeys: a database written with one key per message (before segments) is read, continued and
// released as before.
func TestOneMessageKeys(t *testing.T) {
	fs := vfs.NewMem()
	cfg := DefaultConfig()
	cfg.Sync = false
	cfg.Groups = map[bus.Stream][]string{bus.SpiderLog: {"g"}}
	db := openDB(t, fs, "db")
	for i := range 5 {
		m := segMsg(i)
		k := binary.BigEndian.AppendUint64([]byte("Bml\x00\x00\x00\x00"), uint64(i))
		v := append(binary.AppendUvarint(nil, uint64(len(m.Key))), m.Key...)
		if err := db.Set(k, append(v, m.Value...), nil); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.SpiderLog, nil)
	var msgs []bus.Message
	for i := 5; i < 10; i++ {
		msgs = append(msgs, segMsg(i))
	}
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	b, db = reopen(t, fs, b, db, cfg) // both layouts at Open
	c, _ := b.Consumer(ctx, bus.SpiderLog, "g", []int{0})
	got := fetchAll(t, c, 3)
	checkMsgs(t, got, 0)
	if err := c.Commit(ctx, got); err != nil {
		t.Fatal(err)
	}
	if n := heldKeys(t, db); n != 3 {
		t.Fatalf("after committing 3 one-message keys, %d keys held, want 3 (2 of them, 1 segment)", n)
	}
	got = fetchAll(t, c, 7)
	checkMsgs(t, got, 3)
	if err := c.Commit(ctx, got); err != nil {
		t.Fatal(err)
	}
	if n := heldKeys(t, db); n != 0 {
		t.Fatalf("after committing everything, %d keys held, want 0", n)
	}
	_ = c.Close()
	_ = b.Close()
	_ = db.Close()
}
