package launch

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"

	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/standalone"
)

// TestSetRuntime: standalone.memory_limit becomes the process's soft memory limit, with GOGC
// standalone.GCPercent, unless it is 0 or GOMEMLIMIT or GOGC is set; the shipped standalone configuration sets
// the default.
func TestSetRuntime(t *testing.T) {
	cfg, err := configs.Load(configs.Options{Role: "standalone"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Standalone.MemoryLimit != configs.DefaultStandaloneMemoryLimit {
		t.Errorf("standalone.memory_limit = %d, want the default %d", cfg.Standalone.MemoryLimit, configs.DefaultStandaloneMemoryLimit)
	}
	prevLimit, prevGC := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(prevLimit); debug.SetGCPercent(prevGC) })
	env := cli.Env{Logger: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name      string
		gomemlim  string
		gogc      string
		limit     int64
		wantLimit int64
		wantGC    int
	}{
		{"none configured", "", "", 0, math.MaxInt64, 100},
		{"configured", "", "", 200 << 20, 200 << 20, standalone.GCPercent},
		{"GOMEMLIMIT wins", "1GiB", "", 200 << 20, math.MaxInt64, 100},
		{"GOGC wins", "", "50", 200 << 20, math.MaxInt64, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tc.gomemlim)
			t.Setenv("GOGC", tc.gogc)
			debug.SetMemoryLimit(math.MaxInt64)
			debug.SetGCPercent(100)
			setRuntime(standalone.MemoryPlan{Total: tc.limit, GoLimit: tc.limit}, env)
			if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
				t.Errorf("memory limit = %d, want %d", got, tc.wantLimit)
			}
			got := debug.SetGCPercent(100)
			if got != tc.wantGC {
				t.Errorf("GOGC = %d, want %d", got, tc.wantGC)
			}
		})
	}
}
