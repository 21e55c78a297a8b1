package urlfrontier

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
)

// ServeConfig configures Serve.
type ServeConfig struct {
	// Addr is the address to listen on (host:port; port 0 picks one).
	Addr  string
	Store StoreConfig
	// Registerer receives the service's metrics (nil: none).
	Registerer prometheus.Registerer
	// Listening, if set, is called with the address the service listens on once it accepts calls.
	Listening func(addr string)
	// PutBatch is ServerDeps.PutBatch (0: DefaultPutBatch; ServeBackend over a Gateway: GatewayPutBatch).
	PutBatch int
}

// Serve opens the store, serves the URLFrontier API on cfg.Addr until ctx ends, then stops the server
// (calls in progress get a few seconds to finish) and closes the store.
func Serve(ctx context.Context, cfg ServeConfig, log *slog.Logger, level *slog.LevelVar) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := OpenStore(cfg.Store, log)
	if err != nil {
		return err
	}
	defer st.Close()
	return ServeBackend(ctx, st, cfg, log, level)
}

// ServeBackend serves the URLFrontier API over b on cfg.Addr until ctx ends, then stops the server as Serve
// does; cfg.Store is not used. The caller opens and closes b.
func ServeBackend(ctx context.Context, st Backend, cfg ServeConfig, log *slog.Logger, level *slog.LevelVar) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("urlfrontier: listen on %s: %w", cfg.Addr, err)
	}
	addr := ln.Addr().String()
	batch := cfg.PutBatch
	if _, ok := st.(*Gateway); ok && batch == 0 {
		batch = GatewayPutBatch
	}
	srv := NewServer(ServerDeps{Backend: st, Logger: log, Level: level, Nodes: []string{addr}, Registerer: cfg.Registerer, PutBatch: batch})
	g := grpc.NewServer(srv.Interceptors()...)
	srv.Register(g)
	done := make(chan error, 1)
	go func() { done <- g.Serve(ln) }()
	log.Info("URLFrontier API listening", "addr", addr, "backend", fmt.Sprintf("%T", st))
	if cfg.Listening != nil {
		cfg.Listening(addr)
	}
	select {
	case err := <-done:
		return fmt.Errorf("urlfrontier: serve: %w", err)
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { g.GracefulStop(); close(stopped) }()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		g.Stop()
		<-stopped
	}
	<-done
	return nil
}
