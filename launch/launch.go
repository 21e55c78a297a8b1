// Package launch builds and runs every role of Frontier (spider, strategyworker, dbworker, standalone, and
// urlfrontier, the cluster's URLFrontier gateway) from its configuration: each role's cmd/* main is one call
// to Main, and the roles are assembled in this one place. It is importable so that a program built outside
// this module runs them too: a custom main registers its own strategies with strategy.Register and calls
// Main, exactly as cmd/standalone and cmd/strategyworker do (docs/strategies.md, examples/customstrategy).
// The role then finds the strategy by the name strategy_worker.strategy gives, like a built-in one.
//
// It sits at level L6 with the mains' bootstrap (internal/cli) below it; cmd/* sit above it.
package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/strategy"
	_ "github.com/frontiercrawl/frontier/strategy/all" // the built-in strategies
)

// roles maps a role name to what runs it with the command line's arguments.
var roles = map[string]func(ctx context.Context, args []string) error{
	"spider":         role("spider", runSpider),
	"strategyworker": role("strategyworker", runStrategyWorker),
	"dbworker":       role("dbworker", runDBWorker),
	"standalone":     role("standalone", runStandalone),
	"urlfrontier":    runGatewayMain, // the spider role's configuration and flags, and --addr
}

// role runs fn through the mains' bootstrap as the configuration role name.
func role(name string, fn cli.RunFunc) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error { return cli.Main(ctx, name, args, fn) }
}

// Roles returns the role names Main and Run accept, sorted.
func Roles() []string {
	names := make([]string, 0, len(roles))
	for r := range roles {
		names = append(names, r)
	}
	sort.Strings(names)
	return names
}

// Main runs role with the process's arguments until SIGINT or SIGTERM, and exits with status 1 on an error
// (the usage was printed for a bad command line). It does not return on an error.
func Main(role string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, role, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		os.Exit(1)
	}
}

// Run runs role with args (flags as the role's usage says) until ctx ends or the work is done.
func Run(ctx context.Context, role string, args []string) error {
	run, ok := roles[role]
	if !ok {
		return fmt.Errorf("unknown role %q; known: %v", role, Roles())
	}
	return run(ctx, args)
}

// checkStrategy builds the configured strategy once, so that an unknown name or a bad option stops the
// program before it connects to anything, with the list of the strategies it knows.
func checkStrategy(cfg *configs.Config) error {
	if cfg.StrategyWorker.Strategy == "" {
		return errors.New("strategy_worker.strategy is empty")
	}
	if _, err := strategy.New(cfg.StrategyWorker.Strategy, cfg.StrategyWorker.Options); err != nil {
		return fmt.Errorf("strategy_worker: %w", err)
	}
	return nil
}
