// Command standalone runs Frontier in one process: spider, strategy worker and DB worker as goroutines over the in-process bus and Pebble (DESIGN.md §7).
//
// Usage: standalone --config configs/standalone.yaml [--set key=value]…
//
// The role itself is not built yet: it arrives with the standalone issue. Today the command loads and validates its
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
	if err := cli.Main(ctx, "standalone", os.Args[1:], run); err != nil {
		fmt.Fprintln(os.Stderr, "standalone:", err)
		os.Exit(1)
	}
}

func run(context.Context, cli.Env) error {
	return errors.New("not implemented yet: this role arrives with the standalone issue")
}
