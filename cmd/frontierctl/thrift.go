package main

import (
	"context"

	"github.com/frontiercrawl/frontier/hbase"
)

// probeHBase asks the Thrift2 gateway at addr (binary protocol over the framed transport, the way deploy/up
// starts it) for the namespaces, answered by the master once it has finished initialising, and whether a row
// exists in hbase:meta, answered by the region server that holds meta. It returns the namespaces. The calls go
// through the generated Thrift2 client in package hbase (hbase.Probe).
func probeHBase(ctx context.Context, addr string) ([]string, error) {
	cfg := hbase.DefaultConfig()
	cfg.Addr = addr
	return hbase.Probe(ctx, cfg)
}
