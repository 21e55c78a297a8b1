//go:build integration

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest"
)

func TestProbeRealServers(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"kafka", []string{"probe", "kafka", "--brokers", frontiertest.Server(t, "FRONTIER_TEST_KAFKA")}, "ready"},
		{"hbase", []string{"probe", "hbase", "--addr", frontiertest.Server(t, "FRONTIER_TEST_HBASE")}, "namespaces: default, hbase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(t.Context(), tt.args, nil, &stdout, &stderr); code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("stdout = %q, want %q in it", stdout.String(), tt.want)
			}
		})
	}
}
