package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/urlfrontier"
)

func TestURLFrontierCommands(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	cfg := urlfrontier.ServeConfig{Addr: "127.0.0.1:0", Store: urlfrontier.DefaultStoreConfig(), Listening: func(a string) { addrc <- a }}
	cfg.Store.Dir = t.TempDir()
	go func() { done <- urlfrontier.Serve(ctx, cfg, nil, nil) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	os.WriteFile(seeds, []byte("# seeds\nhttp://a.test/1\n\nhttp://a.test/2 0.5\nhttp://b.test/\nhttp://a.test/1\n"), 0o644)
	ctl := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"urlfrontier", "--addr", addr, "--crawl", "c"}, args...), nil, &out, &errb)
		return out.String() + errb.String(), code
	}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"delay", "0"}, "", 0},
		{[]string{"put", seeds}, "4 sent: 3 OK, 1 SKIPPED (known or invalid), 0 FAIL", 0},
		{[]string{"queues"}, "a.test\nb.test\n", 0},
		{[]string{"block", "b.test", "1h"}, "b.test blocked until", 0},
		{[]string{"get", "--max-urls", "1"}, "a.test\thttp://a.test/1\n", 0},
		{[]string{"done", "http://a.test/1"}, "1 sent: 1 OK", 0},
		{[]string{"stats"}, "crawl c: 2 URLs queued or leased, 0 leased, 2 queues\n  active_queues 2\n  completed 1\n", 0},
		{[]string{"block", "b.test", "0"}, "b.test unblocked", 0},
		{[]string{"get", "--key", "b.test"}, "b.test\thttp://b.test/\n", 0},
		{[]string{"delay", "--key", "a.test", "nope"}, "not a number of seconds", 2},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, 2},
	} {
		got, code := ctl(tc.args...)
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("urlfrontier %v = %q (exit %d), want %q (exit %d)", tc.args, got, code, tc.want, tc.code)
		}
	}
}

func TestParseUntil(t *testing.T) {
	now := time.Unix(1000, 0)
	for in, want := range map[string]uint64{"0": 0, "1234": 1234, "10m": 1600} {
		if got, err := parseUntil(in, now); got != want || err != nil {
			t.Errorf("parseUntil(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseUntil("soon", now); err == nil {
		t.Error("parseUntil(soon) accepted")
	}
}
