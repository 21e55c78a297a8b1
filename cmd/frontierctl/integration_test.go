//go:build integration

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// serverAddr returns the address in env (deploy/up prints it). Unset, the test is skipped on a developer's
// machine and fails under CI=true.
func serverAddr(t *testing.T, env string) string {
	t.Helper()
	addr := os.Getenv(env)
	if addr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is unset under CI=true: start the servers with deploy/up", env)
		}
		t.Skipf("%s is unset; run deploy/up and export $(deploy/env)", env)
	}
	return addr
}

func TestProbeRealServers(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"kafka", []string{"probe", "kafka", "--brokers", serverAddr(t, "FRONTIER_TEST_KAFKA")}, "ready"},
		{"hbase", []string{"probe", "hbase", "--addr", serverAddr(t, "FRONTIER_TEST_HBASE")}, "namespaces: default, hbase"},
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
