package launch

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"

	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/internal/cli"
)

// TestSetMemoryLimit: standalone.memory_limit becomes the process's soft memory limit unless it is 0 or
// GOMEMLIMIT is set; the shipped standalone configuration sets the default.
func TestSetMemoryLimit(t *testing.T) {
	cfg, err := configs.Load(configs.Options{Role: "standalone"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Standalone.MemoryLimit != configs.DefaultStandaloneMemoryLimit {
		t.Errorf("standalone.memory_limit = %d, want the default %d", cfg.Standalone.MemoryLimit, configs.DefaultStandaloneMemoryLimit)
	}
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	env := cli.Env{Logger: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name      string
		gomemlim  string
		limit     int64
		wantLimit int64
	}{
		{"none configured", "", 0, math.MaxInt64},
		{"configured", "", 200 << 20, 200 << 20},
		{"GOMEMLIMIT wins", "1GiB", 200 << 20, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tc.gomemlim)
			debug.SetMemoryLimit(math.MaxInt64)
			setMemoryLimit(tc.limit, env)
			if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
				t.Errorf("memory limit = %d, want %d", got, tc.wantLimit)
			}
		})
	}
}
