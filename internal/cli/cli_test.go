package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier/frontiertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeConfig writes a common.yaml and a role file into a temp dir and returns the role file's path.
func writeConfig(t *testing.T, role, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "common.yaml"), []byte("streams: {spider_feed: {partitions: 3}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, role+".yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMainErrors(t *testing.T) {
	spider := writeConfig(t, "spider", "metrics: {addr: ''}\n")
	bad := writeConfig(t, "dbworker", "codec: nope\n")
	never := func(context.Context, Env) error { t.Error("run function called"); return nil }
	for _, tc := range []struct {
		name, role string
		args       []string
		want       string
	}{
		{"unknown role", "fetcher", nil, `unknown role "fetcher"`},
		{"partition missing", "spider", []string{"--config", spider}, "--partition-id -1 is outside [0, 3)"},
		{"partition too big", "spider", []string{"--config", spider, "--partition-id", "3"}, "streams.spider_feed.partitions = 3"},
		{"bad flag", "dbworker", []string{"--partition-id", "1"}, "flag provided but not defined"},
		{"stray argument", "dbworker", []string{"extra"}, `unexpected argument "extra"`},
		{"bad config", "dbworker", []string{"--config", bad}, `codec: "nope"`},
		{"bad set", "dbworker", []string{"--config", bad, "--set", "nope=1"}, `unknown key "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := main(t.Context(), tc.role, tc.args, nil, io.Discard, never)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMainRunsAndServesMetrics(t *testing.T) {
	cfgPath := writeConfig(t, "spider", "metrics: {addr: '127.0.0.1:0'}\n")
	logs := &frontiertest.SyncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan Env, 1)
	done := make(chan error, 1)
	go func() {
		done <- main(ctx, "spider", []string{"--config", cfgPath, "--partition-id", "2", "--seeds", "s.txt"},
			[]string{"FRONTIER_LOG_FORMAT=json"}, logs, func(ctx context.Context, env Env) error {
				got <- env
				<-ctx.Done()
				return ctx.Err()
			})
	}()
	env := <-got
	if env.PartitionID != 2 || env.Seeds != "s.txt" || env.Config.Log.Format != "json" {
		t.Errorf("env = %+v", env)
	}
	addr := waitForLog(t, logs, `"addr":"(http://[^"]+)/metrics"`)
	for _, path := range []string{"/healthz", "/metrics"} {
		resp, err := http.Get(addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}
	// Readiness follows the checks the role added, with the reason in the body.
	readyz := func() (int, string) {
		resp, err := http.Get(addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := readyz(); code != 200 || body != "ready\n" {
		t.Errorf("readyz with no checks: %d %q", code, body)
	}
	env.Health.Set("hbase", errors.New("waiting for HBase for 3s: connection refused"))
	if code, body := readyz(); code != 503 || !strings.Contains(body, "hbase: waiting for HBase for 3s: connection refused") {
		t.Errorf("readyz with HBase down: %d %q", code, body)
	}
	env.Health.Set("hbase", nil)
	if code, _ := readyz(); code != 200 {
		t.Errorf("readyz after recovery: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("clean stop returned %v", err)
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	var out bytes.Buffer
	err := main(t.Context(), "standalone", []string{"--help"}, nil, &out, func(context.Context, Env) error {
		t.Error("run function called")
		return nil
	})
	if err != nil || !strings.Contains(out.String(), "-demo") {
		t.Errorf("--help: err %v, usage %q", err, out.String())
	}
}

func TestMainReturnsWorkerError(t *testing.T) {
	cfgPath := writeConfig(t, "dbworker", "metrics: {addr: '127.0.0.1:0'}\n")
	boom := errors.New("boom")
	err := main(t.Context(), "dbworker", []string{"--config", cfgPath}, nil, io.Discard,
		func(context.Context, Env) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func waitForLog(t *testing.T, w *frontiertest.SyncBuffer, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for range 500 {
		if m := re.FindStringSubmatch(w.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no log line matching %s", pattern)
	return ""
}

func TestNilHealthIgnoresChecks(t *testing.T) {
	var h *Health
	h.Set("startup", errors.New("waiting"))
	if got := h.Check(); got != nil {
		t.Fatalf("nil Health reports %v", got)
	}
}
