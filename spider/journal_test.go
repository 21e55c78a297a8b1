package spider

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/frontiercrawl/frontier/bus"
)

func TestParseJournal(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		partition int
		after     int64
		offs      []int64
		bad       bool
	}{
		{"header only", "frontier-spider-journal partition=1 after=-1\n", 1, -1, nil, false},
		{"offsets", "frontier-spider-journal partition=0 after=41\n42\n44\n", 0, 41, []int64{42, 44}, false},
		{"torn last line", "frontier-spider-journal partition=0 after=3\n4\n5\n1x", 0, 3, []int64{4, 5}, false},
		{"other partition", "frontier-spider-journal partition=2 after=3\n4\n", 0, 0, nil, true},
		{"no header", "4\n5\n", 0, 0, nil, true},
		{"empty", "", 0, 0, nil, true},
	} {
		after, offs, err := parseJournal([]byte(tc.in), tc.partition)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: parseJournal = %d %v, want an error", tc.name, after, offs)
			}
			continue
		}
		if err != nil || after != tc.after || !slices.Equal(offs, tc.offs) {
			t.Errorf("%s: parseJournal = %d %v %v, want %d %v", tc.name, after, offs, err, tc.after, tc.offs)
		}
	}
}

// flushProbe is a response handler that notes, at each Flush, what the journal held: nothing of the batch
// being reported may be journaled before the handler's records are durable.
type flushProbe struct {
	journal string
	seen    []string // the journal's content at each Flush
	fail    error
}

func (p *flushProbe) HandleResponse(context.Context, *Fetched) error { return nil }

func (p *flushProbe) Flush() error {
	b, _ := os.ReadFile(p.journal)
	p.seen = append(p.seen, string(b))
	return p.fail
}

func TestJournalAfterHandlerFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spider-feed-0.journal")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probe := &flushProbe{journal: path}
	s := &Spider{log: slog.New(slog.DiscardHandler), deps: Deps{Handler: probe}, tracker: newTracker(100),
		journal: &journal{path: path, f: f}}
	batch := func(offs ...int64) []*outcome {
		var out []*outcome
		for _, o := range offs {
			out = append(out, &outcome{entry: s.tracker.add(bus.Message{Offset: o})})
		}
		return out
	}
	s.reported(batch(1, 2))
	s.reported(batch(3))
	probe.fail = errors.New("disk full")
	s.reported(batch(4))
	if want := []string{"", "1\n2\n", "1\n2\n3\n"}; !slices.Equal(probe.seen, want) {
		t.Errorf("journal at each flush = %q, want %q (one flush per batch, before its offsets)", probe.seen, want)
	}
	if b, _ := os.ReadFile(path); string(b) != "1\n2\n3\n" {
		t.Errorf("journal = %q, want offsets 1-3 (4's flush failed: not journaled, fetched again after a crash)", b)
	}
}
