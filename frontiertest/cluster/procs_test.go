package cluster

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestProcs(t *testing.T) {
	ps := NewProcs(t, "")
	ps.StrictStop = true
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	// A process that says READY, logs, and runs until SIGTERM.
	long := Cmd{Path: "/bin/sh", Args: []string{"-c", `echo starting >&2; echo READY now; echo "env=$X"; trap 'exit 0' TERM; while :; do sleep 0.05; done`},
		Env: []string{"X=42"}, Ready: "READY"}
	p := ps.Start("long", long)
	select {
	case line := <-p.Ready():
		if line != "READY now" {
			t.Errorf("ready line %q", line)
		}
	case <-ctx.Done():
		t.Fatal("no READY line")
	}
	WaitFor(t, ctx, "the log", func() bool { return p.LogCount("env=42") == 1 })
	if p.LogCount("starting") != 1 {
		t.Errorf("stderr not in the log: %q", p.Log())
	}

	// Killed and started again: the new run's log starts empty, the file keeps both.
	p.Kill()
	p2 := ps.Start("long", long)
	WaitFor(t, ctx, "the second run", func() bool { return p2.LogCount("env=42") == 1 })
	if n := strings.Count(readFile(p2.LogPath()), "env=42"); n != 2 {
		t.Errorf("log file holds %d runs, want 2", n)
	}
	if ps.Get("long") != p2 {
		t.Error("Get does not return the current run")
	}

	// A process that exits by itself is unexpected; a killed one is not.
	q := ps.Start("short", Cmd{Path: "/bin/sh", Args: []string{"-c", "exit 0"}})
	<-q.Done()
	if u := ps.Unexpected(); len(u) != 1 || u[0] != q {
		t.Errorf("Unexpected() = %v, want the short process only", u)
	}
	if s := ps.Summary(); !strings.Contains(s, "long running") || !strings.Contains(s, "short exited") {
		t.Errorf("Summary() = %q", s)
	}

	ps.Stop()
	if !p2.Exited() || p2.Err() != nil {
		t.Errorf("after Stop: exited %v, err %v", p2.Exited(), p2.Err())
	}
}

func TestCleanEnv(t *testing.T) {
	t.Setenv("FRONTIER_LOG_LEVEL", "debug")
	t.Setenv("FRONTIER_TEST_KAFKA", "k:1")
	ps := NewProcs(t, "")
	p := ps.Start("env", Cmd{Path: "/bin/sh", Args: []string{"-c", "env"}, CleanEnv: true})
	<-p.Done()
	log := p.Log()
	if strings.Contains(log, "FRONTIER_LOG_LEVEL") || !strings.Contains(log, "FRONTIER_TEST_KAFKA=k:1") {
		t.Errorf("CleanEnv: the environment was\n%s", log)
	}
}
