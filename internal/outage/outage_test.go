package outage

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

func TestBackoffBoundedWithJitter(t *testing.T) {
	b := NewBackoff(10*time.Millisecond, 80*time.Millisecond)
	for i, wantMax := range []time.Duration{10, 20, 40, 80, 80, 80} {
		d := b.Next()
		wantMax *= time.Millisecond
		if d < wantMax/2 || d > wantMax {
			t.Errorf("wait %d = %v, want in [%v, %v]", i, d, wantMax/2, wantMax)
		}
	}
	b.Reset()
	if d := b.Next(); d > 10*time.Millisecond {
		t.Errorf("after Reset: %v, want <= 10ms", d)
	}
}

func TestTrackerOneOutage(t *testing.T) {
	tr := NewTracker("Kafka at x", slog.New(slog.DiscardHandler))
	var changes []bool
	var waited time.Duration
	tr.OnChange = func(down bool) { changes = append(changes, down) }
	tr.OnRecover = func(d time.Duration) { waited += d }
	if tr.Err() != nil {
		t.Fatal("up tracker reports an error")
	}
	tr.Succeeded()
	tr.Failed(errors.New("connection refused"), time.Millisecond)
	tr.Failed(errors.New("connection reset"), time.Millisecond)
	if err := tr.Err(); err == nil || !errors.Is(err, err) {
		t.Fatal("down tracker reports no error")
	} else if got := err.Error(); got[:len("waiting for Kafka at x")] != "waiting for Kafka at x" {
		t.Errorf("Err = %q", got)
	}
	tr.Succeeded()
	tr.Succeeded()
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Errorf("changes = %v, want [true false]", changes)
	}
	if waited <= 0 || tr.Err() != nil {
		t.Errorf("waited %v, err %v", waited, tr.Err())
	}
}
