package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// roleBinaries are the packages of the role binaries.
var roleBinaries = []string{"./cmd/dbworker", "./cmd/strategyworker", "./cmd/spider"}

// Binaries runs the cluster's role binaries (cmd/dbworker, cmd/strategyworker, cmd/spider, built as an operator
// builds them) as processes on e's topics and tables, watched by its Procs.
type Binaries struct {
	*Procs
	// Bin holds the binaries; ConfigDir the configuration files every process loads: common.yaml (the run's
	// streams, kafka and hbase sections, then the test's common text) and an empty <role>.yaml.
	Bin, ConfigDir string
}

// NewBinaries builds the role binaries and writes the configuration files under dir (logs in dir/logs).
func NewBinaries(tb testing.TB, ctx context.Context, e *Env, dir, common string) *Binaries {
	tb.Helper()
	b := &Binaries{Bin: Build(tb, ctx, roleBinaries...), ConfigDir: filepath.Join(dir, "configs")}
	e.WriteConfig(tb, b.ConfigDir, "common.yaml", common)
	for _, role := range roleBinaries {
		writeFile(tb, filepath.Join(b.ConfigDir, filepath.Base(role)+".yaml"), "")
	}
	b.Procs = NewProcs(tb, filepath.Join(dir, "logs"))
	return b
}

// StartRole starts the binary of role ("dbworker", "strategyworker", "spider") under name, with its
// configuration file and args.
func (b *Binaries) StartRole(name, role string, args ...string) *Proc {
	return b.Start(name, Cmd{Path: filepath.Join(b.Bin, role), Args: append([]string{"--config", filepath.Join(b.ConfigDir, role+".yaml")}, args...)})
}

// ProcessConfig is the common configuration tests give the role binaries: text logs at info, metrics on a
// free port (the log names it: Proc.Readyz), spiders with delay, a 10 s request timeout and 256 KiB bodies,
// stats every 5 s and a 10 s shutdown.
func ProcessConfig(delay time.Duration) string {
	return fmt.Sprintf(`log: {level: info, format: text}
metrics: {addr: "127.0.0.1:0"}
spider: {delay: %s, request_timeout: 10s, max_body_bytes: 262144}
stats_interval: 5s
shutdown_timeout: 10s
`, delay)
}
