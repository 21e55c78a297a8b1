package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/configs"
)

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // substring of stderr
	}{
		{"no command", nil, 2, "no command"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"probe without target", []string{"probe"}, 2, "probe what?"},
		{"unknown probe", []string{"probe", "zookeeper"}, 2, `unknown probe "zookeeper"`},
		{"unknown flag", []string{"probe", "kafka", "--nope"}, 2, "flag provided but not defined: -nope"},
		{"stray argument", []string{"topics", "extra"}, 2, `unexpected argument "extra"`},
		{"help", []string{"help"}, 0, "usage:"},
		{"accept-loss without stream", []string{"accept-loss", "--group", "g"}, 2, `--stream ""`},
		{"accept-loss of control", []string{"accept-loss", "--stream", "control", "--group", "g"}, 2, `want spider-log, scoring-log or spider-feed`},
		{"accept-loss without group", []string{"accept-loss", "--stream", "spider-log"}, 2, "--group is required"},
		{"control retention", []string{"topics", "--set", "streams.control.retention=1h", "--brokers", "127.0.0.1:1"}, 1, "streams.control.retention: = 1h0m0s, want 0"},
		{"missing config", []string{"topics", "--config", "/nonexistent/common.yaml"}, 1, "nonexistent"},
		{"kafka down", []string{"probe", "kafka", "--brokers", "127.0.0.1:1", "--timeout", "2s"}, 1, "kafkabus: ping 127.0.0.1:1"},
		{"hbase down", []string{"probe", "hbase", "--addr", "127.0.0.1:1", "--timeout", "2s"}, 1, "hbase thrift2 at 127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tt.args, nil, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr: %s)", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.wantErr)
			}
		})
	}
}

// TestTopicsBadConfig checks that topics reports invalid partition counts from the config before it talks to
// any broker (the broker address is unreachable on purpose).
func TestTopicsBadConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "common.yaml")
	if err := os.WriteFile(cfg, []byte("streams:\n  spider_feed: {topic: frontier-todo, partitions: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"topics", "--config", cfg, "--brokers", "127.0.0.1:1"}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "streams.spider_feed") {
		t.Fatalf("exit %d, stderr %q; want 1 and an error naming streams.spider_feed", code, stderr.String())
	}
}

func TestSplitList(t *testing.T) {
	got := splitList(" a:1, ,b:2,")
	if strings.Join(got, "|") != "a:1|b:2" {
		t.Fatalf("splitList = %q", got)
	}
}

// TestSchemaConfig: hbase-schema reaches the gateway the way the roles do, with the whole hbase section
// (hbase.transport and hbase.protocol too), and its flags override the keys.
func TestSchemaConfig(t *testing.T) {
	cfg, err := configs.Load(loadOptions("", []string{"FRONTIER_HBASE_TRANSPORT=buffered"},
		[]string{"hbase.protocol=compact", "hbase.table_prefix=x_", "hbase.addr=h:1"}))
	if err != nil {
		t.Fatal(err)
	}
	hc := schemaConfig(cfg.HBase, "", "", "")
	if hc.Transport != "buffered" || hc.Protocol != "compact" || hc.TablePrefix != "x_" || hc.Addr != "h:1" {
		t.Errorf("from the configuration: %+v", hc)
	}
	hc = schemaConfig(cfg.HBase, "g:2", "framed", "binary")
	if hc.Transport != "framed" || hc.Protocol != "binary" || hc.Addr != "g:2" || hc.TablePrefix != "x_" {
		t.Errorf("with the flags: %+v", hc)
	}
}
