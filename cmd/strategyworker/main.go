// Command strategyworker runs a strategy worker: it owns one spider-log partition (--partition-id), runs the URL-seen test through the state cache, scores new links with the configured strategy and publishes update_score to the scoring log (DESIGN.md §1, §5).
//
// Usage: strategyworker --config configs/strategyworker.yaml [--set key=value]…
//
// The role itself is not built yet: it arrives with the workers issue. Today the command loads and validates its
// configuration (so a broken config is caught) and then exits with an error that says so.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/frontiercrawl/frontier/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.Main(ctx, "strategyworker", os.Args[1:], run); err != nil {
		fmt.Fprintln(os.Stderr, "strategyworker:", err)
		os.Exit(1)
	}
}

func run(context.Context, cli.Env) error {
	return errors.New("not implemented yet: this role arrives with the workers issue")
}
