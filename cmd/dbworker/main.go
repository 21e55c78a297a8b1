// Command dbworker runs the DB worker: it persists the spider log's metadata and the scoring log's queue updates, and puts batches on each spider's feed partition when the partition's lag falls below the threshold (DESIGN.md §1, §7).
//
// Usage: dbworker --config configs/dbworker.yaml [--set key=value]…
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
	if err := cli.Main(ctx, "dbworker", os.Args[1:], run); err != nil {
		fmt.Fprintln(os.Stderr, "dbworker:", err)
		os.Exit(1)
	}
}

func run(context.Context, cli.Env) error {
	return errors.New("not implemented yet: this role arrives with the workers issue")
}
