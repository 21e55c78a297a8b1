package launch

import (
	"slices"
	"strings"
	"testing"
)

// TestRoles: launch runs every role, so that each cmd/* main is one call to Main.
func TestRoles(t *testing.T) {
	if got, want := Roles(), []string{"dbworker", "spider", "standalone", "strategyworker", "urlfrontier"}; !slices.Equal(got, want) {
		t.Errorf("Roles() = %v, want %v", got, want)
	}
}

// TestUnknownStrategyListsTheKnownOnes: --set strategy_worker.strategy=nope stops either role that runs a
// strategy before it connects to anything, with the names it knows.
func TestUnknownStrategyListsTheKnownOnes(t *testing.T) {
	for _, role := range []string{"standalone", "strategyworker"} {
		args := []string{"--config", "../configs/" + role + ".yaml", "--set", "strategy_worker.strategy=nope",
			"--set", "metrics.addr=127.0.0.1:0"}
		if role == "strategyworker" {
			args = append(args, "--partition-id", "0")
		}
		err := Run(t.Context(), role, args)
		if err == nil {
			t.Fatalf("%s: an unknown strategy was accepted", role)
		}
		for _, want := range []string{`unknown strategy "nope"`, "basic, bfs, dfs, discovery, revisit"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", role, err, want)
			}
		}
	}
	if err := Run(t.Context(), "crawler", nil); err == nil || !strings.Contains(err.Error(), "[dbworker spider standalone strategyworker urlfrontier]") {
		t.Errorf("unknown role: %v", err)
	}
}

func TestBadStrategyOption(t *testing.T) {
	err := Run(t.Context(), "standalone", []string{"--config", "../configs/standalone.yaml", "--set",
		"strategy_worker.strategy=discovery", "--set", "strategy_worker.options.max_pages=-3", "--set", "metrics.addr=127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "max_pages = -3") {
		t.Errorf("a bad option: %v", err)
	}
}
