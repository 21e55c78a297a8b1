package hbase

import (
	"context"
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"

	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
)

// A capped host's rows are skipped by seeking, not read: 1,000 rows of a.example in the best bucket cost a
// couple of scans, not 250.
func TestNextSeeksPastCappedHost(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, fakeConfig()) // ScanBatch 4
	q := c.Queue()
	var items []queue.Item
	for i := range 1000 {
		items = append(items, queuetest.Item(0, "a.example", i, 0.9))
	}
	items = append(items, queuetest.Item(0, "b.example", 0, 0.9), queuetest.Item(0, "c.example", 0, 0.1))
	if err := q.Schedule(t.Context(), items); err != nil {
		t.Fatal(err)
	}
	before := f.calls["getScannerResults"]
	got, err := q.Next(t.Context(), 0, 0, queue.Limits{Max: 4, PerHost: 2})
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, it := range got {
		hosts[it.Host]++
	}
	if len(got) != 4 || hosts["a.example"] != 2 || hosts["b.example"] != 1 || hosts["c.example"] != 1 {
		t.Fatalf("Next = %v, want 2 of a.example, b.example and c.example", hosts)
	}
	if scans := f.calls["getScannerResults"] - before; scans > 4 {
		t.Errorf("Next made %d scans over a capped host's 1,000 rows; it should seek past them", scans)
	}
}

// A crash after Schedule's puts but before its deletes leaves the old row of a re-scheduled URL; replaying the
// batch (Kafka redelivers it) removes it, thanks to the replaced key kept in the index row.
func TestScheduleReplayAfterCrash(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, fakeConfig())
	q := c.Queue()
	ctx := t.Context()
	it := queuetest.Item(0, "a.example", 1, 0.5)
	if err := q.Schedule(ctx, []queue.Item{it}); err != nil {
		t.Fatal(err)
	}
	moved := it
	moved.Score = 0.9
	f.fail = func(op string) error {
		if op == "deleteMultiple" {
			return &thrift2.TIllegalArgument{Message: thrift2Str("crash")}
		}
		return nil
	}
	if err := q.Schedule(ctx, []queue.Item{moved}); err == nil {
		t.Fatal("the injected crash did not happen")
	}
	f.fail = nil
	if n, _ := q.Count(ctx, 0); n != 2 {
		t.Fatalf("after the crash: %d rows, want the old and the new", n)
	}
	if err := q.Schedule(ctx, []queue.Item{moved}); err != nil { // the replay
		t.Fatal(err)
	}
	if n, _ := q.Count(ctx, 0); n != 1 {
		t.Fatalf("after the replay: %d rows, want 1", n)
	}
	got, err := q.Next(ctx, 0, 0, queue.Limits{Max: 10})
	if err != nil || len(got) != 1 || got[0].Score != 0.9 {
		t.Fatalf("Next = %+v, %v", got, err)
	}
}

// An undecodable row is skipped (and logged), not fatal for the partition.
func TestNextSkipsCorruptRow(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, fakeConfig())
	q := c.Queue()
	if err := q.Schedule(t.Context(), []queue.Item{queuetest.Item(0, "a.example", 1, 0.5)}); err != nil {
		t.Fatal(err)
	}
	bad := queueKey(0, 0, "z.example", []byte{1})
	f.tables[q.name][string(bad)] = map[string][]byte{"q:v": []byte("short")}
	got, err := q.Next(t.Context(), 0, 0, queue.Limits{Max: 10})
	if err != nil || len(got) != 1 || got[0].Host != "a.example" {
		t.Fatalf("Next = %+v, %v", got, err)
	}
}

func TestSchedulePartitionRange(t *testing.T) {
	q := newFakeClient(newFakeHBase(), fakeConfig()).Queue()
	err := q.Schedule(t.Context(), []queue.Item{queuetest.Item(maxPartition+1, "a.example", 1, 0.5), queuetest.Item(0, "a.example", 2, 0.5)})
	se, ok := err.(*queue.ScheduleError)
	if !ok || len(se.Items) != 1 || se.Items[0].Index != 0 {
		t.Fatalf("Schedule with partition %d: %v", maxPartition+1, err)
	}
	if _, err := q.Next(t.Context(), maxPartition+1, 0, queue.Limits{Max: 1}); err == nil {
		t.Error("Next of an impossible partition: no error")
	}
}

func BenchmarkFakeNext(b *testing.B) {
	f := newFakeHBase()
	cfg := DefaultConfig()
	c := newFakeClient(f, cfg)
	q := c.Queue()
	var items []queue.Item
	for i := range 20_000 {
		items = append(items, queuetest.Item(0, fmt.Sprintf("h%d.example", i%500), i, float64(i%1000)/1000))
	}
	if err := q.Schedule(context.Background(), items); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := q.Next(context.Background(), 0, 0, queue.Limits{Max: 1024, PerHost: 8, MinHosts: 24}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(f.calls["getScannerResults"])/float64(b.N), "scans/op")
}
