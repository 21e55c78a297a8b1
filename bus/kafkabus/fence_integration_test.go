//go:build integration

package kafkabus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
)

// TestFencedAfterPause: a process that owns a partition is stopped with SIGSTOP in the middle of a batch (it
// computed batch k and is about to send it), past its session timeout; a standby takes the partition over and
// sends batches k, k+1, …; the first process is resumed with SIGCONT and tries to send its batch k. The fence
// refuses it (bus.ErrFenced): the output holds every batch number once. Run for the DB workers' eager
// hand-over (processes sharing) and for a spider's or strategy worker's held partition (a standby).
func TestFencedAfterPause(t *testing.T) {
	brokers := kafkaBrokers(t)
	for _, mode := range []string{"shared", "held"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			b := realBus(t, brokers, map[bus.Stream]int{bus.SpiderFeed: 1, bus.ScoringLog: 1})
			group := fmt.Sprintf("fence-%s-%d", mode, time.Now().UnixNano())
			a := startFenceHelper(t, ctx, b, group, mode, "a", true)
			a.expect(t, "SENT 1")
			a.gate <- struct{}{} // batch 2 goes through
			a.expect(t, "SENT 2")
			a.expect(t, "ABOUT 3") // computed batch 3, waits at its gate to send it
			if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := true
			defer func() {
				if stopped {
					_ = a.cmd.Process.Signal(syscall.SIGCONT)
				}
			}()
			sb := startFenceHelper(t, ctx, b, group, mode, "b", false)
			sb.expect(t, "SENT 3") // the standby took over past a's session, and sent batch 3 itself
			sb.expect(t, "SENT 4")
			if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			stopped = false
			a.gate <- struct{}{}                      // a goes on with its batch 3, as a resumed process does
			line := a.expect(t, "FENCED 3", "SENT 3") // SENT: a duplicate batch 3, written by a process that lost the partition
			t.Logf("a after SIGCONT: %s", line)
			sb.expect(t, "SENT 6") // the standby keeps working
			a.stop(t)
			sb.stop(t)

			// Every batch number once, in order.
			n := total(t, ctx, b, bus.ScoringLog)
			c, err := b.Consumer(ctx, bus.ScoringLog, group+"-check", []int{0})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var got []string
			for int64(len(got)) < n {
				ms, err := c.Fetch(ctx, 100)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					got = append(got, string(m.Value))
				}
			}
			for i, v := range got {
				if num, _, _ := strings.Cut(v, " "); num != strconv.Itoa(i+1) {
					t.Fatalf("output %v: batch %d is %q, want every number once (a duplicate means a fenced process wrote)", got, i+1, v)
				}
			}
			if !slices.Contains(got, "3 b") || slices.Contains(got, "3 a") {
				t.Fatalf("output %v: want batch 3 from the standby only", got)
			}
			t.Logf("output: %v", got)
		})
	}
}

// total is the number of messages in partition 0 of s.
func total(t *testing.T, ctx context.Context, b *Bus, s bus.Stream) int64 {
	lag, err := b.Lag(ctx, s, fmt.Sprintf("count-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	return lag[0]
}

type fenceHelper struct {
	name  string
	cmd   *exec.Cmd
	lines chan string
	gate  chan struct{}
	stdin io.WriteCloser
}

// startFenceHelper runs TestFencedAfterPauseHelper in a child process; with gated, each batch after the first
// waits for a send on gate.
func startFenceHelper(t *testing.T, ctx context.Context, b *Bus, group, mode, name string, gated bool) *fenceHelper {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFencedAfterPauseHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "FRONTIER_FENCE_HELPER="+mode, "FRONTIER_FENCE_NAME="+name,
		"FRONTIER_FENCE_GROUP="+group, "FRONTIER_FENCE_GATED="+strconv.FormatBool(gated),
		"FRONTIER_FENCE_OWN="+b.cfg.SpiderFeed.Topic, "FRONTIER_FENCE_OUT="+b.cfg.ScoringLog.Topic)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &fenceHelper{name: name, cmd: cmd, lines: make(chan string, 1000), gate: make(chan struct{}), stdin: in}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-h.gate:
				if _, err := io.WriteString(in, "go\n"); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return h
}

// expect waits for a line starting with prefix, failing on a line saying the helper failed or starting with
// one of bad.
func (h *fenceHelper) expect(t *testing.T, prefix string, bad ...string) string {
	t.Helper()
	for line := range h.lines {
		t.Logf("helper %s: %s", h.name, line)
		if strings.HasPrefix(line, prefix) {
			return line
		}
		for _, b := range bad {
			if strings.HasPrefix(line, b) {
				t.Fatalf("helper %s: %s (waiting for %q)", h.name, line, prefix)
			}
		}
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "FENCED") || strings.HasPrefix(line, "ERROR") {
			t.Fatalf("helper %s: %s (waiting for %q)", h.name, line, prefix)
		}
	}
	t.Fatalf("helper %s ended before %q", h.name, prefix)
	return ""
}

func (h *fenceHelper) stop(t *testing.T) {
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	h.stdin.Close()
}

// TestFencedAfterPauseHelper is the child process of TestFencedAfterPause; it does nothing in a normal run. It
// owns partition 0 of the spider feed (shared, or held as partition 0) and, while it does, sends numbered
// batches to the scoring log: batch k is the number of messages already there plus one. It prints ABOUT k
// before it sends batch k (gated: after a line on stdin), SENT k after, and FENCED k with the error when the
// send is refused.
func TestFencedAfterPauseHelper(t *testing.T) {
	mode := os.Getenv("FRONTIER_FENCE_HELPER")
	if mode == "" {
		t.Skip("helper process of TestFencedAfterPause")
	}
	name := os.Getenv("FRONTIER_FENCE_NAME")
	gated := os.Getenv("FRONTIER_FENCE_GATED") == "true"
	cfg := DefaultConfig()
	cfg.Brokers = kafkaBrokers(t)
	cfg.SpiderFeed = StreamConfig{Topic: os.Getenv("FRONTIER_FENCE_OWN"), Partitions: 1}
	cfg.ScoringLog = StreamConfig{Topic: os.Getenv("FRONTIER_FENCE_OUT"), Partitions: 1}
	// The broker's minimum session; a short heartbeat, so the test is quick.
	cfg.Ownership.SessionTimeout, cfg.Ownership.HeartbeatInterval, cfg.Ownership.RebalanceTimeout = 6*time.Second, 500*time.Millisecond, 10*time.Second
	b, err := New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("helper", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	out, err := b.Producer(ctx, bus.ScoringLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	gate := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			gate <- struct{}{}
		}
	}()
	var want []int
	if mode == "held" {
		want = []int{0}
	}
	err = b.Own(ctx, bus.SpiderFeed, "fence-owners-"+os.Getenv("FRONTIER_FENCE_GROUP"), want, func(ctx context.Context, parts []int) error {
		lag, err := b.Lag(ctx, bus.ScoringLog, fmt.Sprintf("count-%d", time.Now().UnixNano()))
		if err != nil {
			return err
		}
		k := lag[0] + 1
		for first := true; ; first = false {
			fmt.Printf("ABOUT %d %s\n", k, name)
			if gated && !first {
				<-gate // a batch in flight: it goes on whatever happens to ctx
			} else {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(100 * time.Millisecond):
				}
			}
			dctx, cancel := bus.Grace(ctx, 30*time.Second)
			err := out.Send(dctx, bus.Message{Value: fmt.Appendf(nil, "%d %s", k, name)})
			cancel()
			if errors.Is(err, bus.ErrFenced) {
				fmt.Printf("FENCED %d %v\n", k, err)
				return err
			}
			if err != nil {
				fmt.Printf("ERROR %d %v\n", k, err)
				return err
			}
			fmt.Printf("SENT %d %s\n", k, name)
			k++
		}
	})
	if err != nil && !errors.Is(err, bus.ErrFenced) {
		fmt.Printf("ERROR own: %v\n", err)
	}
}
