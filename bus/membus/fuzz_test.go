package membus

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier/bus"
)

// FuzzOps drives one membus stream with an operation script decoded from the fuzz input and checks it against
// a model: every partition is a gap-free log; a consumer sees exactly the messages after its group's commit,
// in order; reopening without a commit redelivers; Lag is end − committed; trimming never loses what a group
// has not committed. Run: go test -fuzz FuzzOps -parallel 1 ./bus/membus/
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 3, 1, 5, 2, 1, 3, 1, 9, 4})
	f.Add([]byte{0, 1, 0, 2, 1, 9, 3, 1, 9, 2, 4, 0, 7, 1, 2, 2})
	f.Add([]byte{0, 200, 1, 50, 2, 3, 1, 255, 2, 4, 3, 0, 1})
	f.Fuzz(func(t *testing.T, script []byte) {
		const parts = 3
		cfg := DefaultConfig()
		cfg.Partitions[bus.SpiderFeed] = parts
		cfg.Groups = map[bus.Stream][]string{bus.SpiderFeed: {"g"}}
		cfg.MaxBacklog = 0
		b, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ctx := context.Background()
		done, cancel := context.WithCancel(ctx)
		cancel() // Fetch with a done context returns what is there without waiting

		p, _ := b.Producer(ctx, bus.SpiderFeed, nil)
		sent := make([][]string, parts) // the model: values per partition
		committed := make([]int64, parts)
		open := func() bus.Consumer {
			c, err := b.Consumer(ctx, bus.SpiderFeed, "g", []int{0, 1, 2})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := open()
		pos := append([]int64(nil), committed...) // what this consumer has fetched up to
		var fetched []bus.Message
		seq := 0
		for i := 0; i+1 < len(script); i += 2 {
			op, arg := script[i]%5, int(script[i+1])
			switch op {
			case 0: // send arg%20 messages to partition arg%parts
				q := arg % parts
				var ms []bus.Message
				for range arg % 20 {
					v := fmt.Sprintf("v%d", seq)
					seq++
					ms = append(ms, bus.Message{Value: []byte(v), Partition: q})
					sent[q] = append(sent[q], v)
				}
				if err := p.Send(ctx, ms...); err != nil {
					t.Fatal(err)
				}
			case 1: // fetch up to arg+1
				ms, err := c.Fetch(done, arg+1)
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatal(err)
				}
				if len(ms) > arg+1 {
					t.Fatalf("Fetch(%d) returned %d", arg+1, len(ms))
				}
				for _, m := range ms {
					if m.Offset != pos[m.Partition] {
						t.Fatalf("partition %d: got offset %d, want %d", m.Partition, m.Offset, pos[m.Partition])
					}
					if want := sent[m.Partition][m.Offset]; string(m.Value) != want {
						t.Fatalf("partition %d offset %d = %q, want %q", m.Partition, m.Offset, m.Value, want)
					}
					pos[m.Partition]++
				}
				fetched = append(fetched, ms...)
			case 2: // commit the first arg% of what was fetched
				n := len(fetched) * (arg % 101) / 100
				if err := c.Commit(ctx, fetched[:n]); err != nil {
					t.Fatal(err)
				}
				for q, o := range bus.CommitOffsets(fetched[:n]) {
					committed[q] = max(committed[q], o)
				}
			case 3: // crash and restart the consumer: it resumes at the commit
				_ = c.Close()
				c = open()
				copy(pos, committed)
				fetched = nil
			case 4: // lag
				lag, err := b.Lag(ctx, bus.SpiderFeed, "g")
				if err != nil {
					t.Fatal(err)
				}
				for q := range parts {
					if want := int64(len(sent[q])) - committed[q]; lag[q] != want {
						t.Fatalf("lag of partition %d = %d, want %d", q, lag[q], want)
					}
				}
			}
		}
		_ = c.Close()
	})
}
